package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/httpprof"
)

// HTTPHTMLPage is the HTML page of an access-log profile (what HTTP
// writes for the "html" format): the summary and notes, a chart of each
// endpoint's share of the request time, the endpoints table and the
// slowest requests.
func HTTPHTMLPage(r *httpprof.Report) *HTMLPage {
	if r == nil {
		r = &httpprof.Report{}
	}
	p := &HTMLPage{Title: "Access-log profile", Summary: httpSummary(r), Notes: r.Notes}

	chart := HTMLBarChart{Caption: "Share of the request time by endpoint, in the table's order", Max: 1}
	if len(r.Endpoints) > htmlChartBars {
		chart.Caption += fmt.Sprintf(" (the first %d)", htmlChartBars)
	}
	for i := range r.Endpoints {
		if i == htmlChartBars {
			break
		}
		e := &r.Endpoints[i]
		chart.Bars = append(chart.Bars, HTMLBar{
			Label: e.Method + " " + e.Path,
			Value: e.Share,
			Text:  Percent(e.Share) + " · " + Duration(e.TimeTotal),
			Tip: fmt.Sprintf("%s %s: %s of the request time, %s requests, p99 %s", e.Method, e.Path, Percent(e.Share),
				Count(e.Count), Duration(e.TimeP99)),
		})
	}

	// The columns of the other formats, the endpoint (method and path)
	// moved from the end to after the rank: a wide table scrolls, and
	// the endpoint stays in view.
	table := HTMLTable{Empty: "No endpoints."}
	var order []int
	for _, first := range []bool{true, false} {
		for i, c := range httpColumns {
			if (c.head == "Rank" || c.head == "Method" || c.head == "Path") == first {
				order = append(order, i)
			}
		}
	}
	for _, i := range order {
		h := httpColumns[i].head
		text := h == "Method" || h == "Path"
		table.Columns = append(table.Columns, HTMLColumn{Head: h, Numeric: !text, Code: h == "Path"})
	}
	for i := range r.Endpoints {
		row := make([]string, 0, len(order))
		for _, j := range order {
			row = append(row, httpColumns[j].cell(&r.Endpoints[i]))
		}
		table.Rows = append(table.Rows, row)
	}

	slow := HTMLTable{
		Columns: []HTMLColumn{{Head: "Time", Numeric: true}, {Head: "At", NoWrap: true}, {Head: "Status", Numeric: true}, {Head: "Method"}, {Head: "URI", Code: true}},
		Empty:   "No timed requests.",
	}
	for _, s := range r.Slowest {
		at := "-"
		if s.Time != nil {
			at = s.Time.Format(time.RFC3339)
		}
		slow.Rows = append(slow.Rows, []string{Duration(s.RequestTime), at, strconv.Itoa(s.Status), s.Method, s.URI})
	}

	p.Sections = []HTMLSection{
		{Title: "Where the time goes", ID: "chart", Blocks: []HTMLBlock{chart}},
		{Title: "Endpoints", ID: "endpoints", Blocks: []HTMLBlock{table}},
		{Title: "Slowest requests", ID: "slowest", Blocks: []HTMLBlock{slow}},
	}
	return p
}

func httpHTML(w io.Writer, r *httpprof.Report) error { return WriteHTMLPage(w, HTTPHTMLPage(r)) }

// HTTPDiffHTMLPage is the HTML page of a comparison of two profiles
// (what HTTPDiff writes for the "html" format), rows as HTTPDiff limits
// them: the summary, a chart of each endpoint's change of total request
// time, and the comparison table.
func HTTPDiffHTMLPage(d *httpprof.DiffReport, limit int) *HTMLPage {
	if d == nil {
		d = &httpprof.DiffReport{}
	}
	rows := d.Endpoints
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	p := &HTMLPage{
		Title: "Access-log comparison",
		Summary: []string{
			fmt.Sprintf("A: %s requests, %s of request time, %s requests/s (%s)", Count(d.A.Requests), Duration(d.A.TimeTotal), PerSecond(d.A.Rate), strings.Join(d.A.Inputs, ", ")),
			fmt.Sprintf("B: %s requests, %s of request time, %s requests/s (%s)", Count(d.B.Requests), Duration(d.B.TimeTotal), PerSecond(d.B.Rate), strings.Join(d.B.Inputs, ", ")),
		},
		Notes: d.Notes,
	}
	scaled := d.Scale != 0 && d.Scale != 1

	chart := HTMLBarChart{Caption: "Change of total request time from A to B, in the table's order (green: less time, red: more)"}
	if len(rows) > htmlChartBars {
		chart.Caption += fmt.Sprintf(" (the first %d)", htmlChartBars)
	}
	table := HTMLTable{Empty: "No endpoints.", Columns: []HTMLColumn{{Head: "Endpoint", Code: true}}}
	heads := []string{"Calls A", "Calls B", "p99 A", "p99 B", "p99 B/A", "Total A", "Total B"}
	if scaled {
		heads = append(heads, "Total B scaled")
	}
	heads = append(heads, "Total change", "5xx A", "5xx B", "499 A", "499 B")
	for _, h := range heads {
		table.Columns = append(table.Columns, HTMLColumn{Head: h, Numeric: true})
	}
	for i, r := range rows {
		ep := r.Method + " " + r.Path
		if r.Status != httpprof.InBoth {
			ep += " (" + DiffStatusText(r.Status) + ")"
		}
		c := []string{ep, Count(r.CountA), Count(r.CountB), Duration(r.P99A), Duration(r.P99B), Ratio(r.P99Ratio),
			Duration(r.TimeTotalA), Duration(r.TimeTotalB)}
		if scaled {
			c = append(c, Duration(r.TimeTotalBScaled))
		}
		table.Rows = append(table.Rows, append(c, signedDuration(r.TimeTotalChange), Count(r.ErrorsA), Count(r.ErrorsB),
			Count(r.ClosedA), Count(r.ClosedB)))
		if i < htmlChartBars {
			tone := HTMLToneDefault
			switch {
			case r.TimeTotalChange > 0:
				tone = HTMLToneBad
			case r.TimeTotalChange < 0:
				tone = HTMLToneGood
			}
			chart.Bars = append(chart.Bars, HTMLBar{Label: ep, Value: r.TimeTotalChange, Text: signedDuration(r.TimeTotalChange), Tone: tone,
				Tip: fmt.Sprintf("%s: total %s → %s, p99 %s → %s", ep, Duration(r.TimeTotalA), Duration(r.TimeTotalB),
					Duration(r.P99A), Duration(r.P99B))})
		}
	}
	p.Sections = []HTMLSection{
		{Title: "What changed", ID: "chart", Blocks: []HTMLBlock{chart}},
		{Title: "Endpoints", ID: "endpoints", Blocks: []HTMLBlock{table}},
	}
	return p
}
