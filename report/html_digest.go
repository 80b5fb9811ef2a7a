package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/digest"
)

// htmlChartBars is the most bars a report's chart shows; the table below
// it has every row.
const htmlChartBars = 25

// htmlFingerprintMax is the longest fingerprint the classes table shows
// whole, in characters; the class's details have it all.
const htmlFingerprintMax = 160

// DigestHTMLPage is the HTML page of a query digest (what Digest writes
// for the "html" format), for callers that put several digests on one
// page: the summary, a chart of each class's share of the total time,
// the classes table, and each class's details with its slowest sample.
func DigestHTMLPage(r *digest.Report) *HTMLPage {
	if r == nil {
		r = &digest.Report{}
	}
	p := &HTMLPage{Title: "Query digest", Summary: digestSummary(r)}

	chart := HTMLBarChart{Caption: "Share of the total query time by class", Max: 1}
	if len(r.Classes) > htmlChartBars {
		chart.Caption += fmt.Sprintf(" (the top %d)", htmlChartBars)
	}
	for i, c := range r.Classes {
		if i == htmlChartBars {
			break
		}
		chart.Bars = append(chart.Bars, HTMLBar{
			Label: fmt.Sprintf("%d. %s", c.Rank, c.Fingerprint),
			Value: c.Share,
			Text:  Percent(c.Share) + " · " + Duration(c.TimeTotal),
			Tip:   fmt.Sprintf("0x%s, %s of the total time, %s calls: %s", c.ID, Percent(c.Share), Count(c.Count), c.Fingerprint),
		})
	}

	table := HTMLTable{Empty: "No query classes."}
	for _, h := range []string{"Rank", "Query ID", "Total", "Share", "Calls", "Avg", "Median", "p95", "Max", "V/M", "Rows ex/sent"} {
		table.Columns = append(table.Columns, HTMLColumn{Head: h, Numeric: h != "Query ID", Code: h == "Query ID", NoWrap: h == "Query ID"})
	}
	table.Columns = append(table.Columns, HTMLColumn{Head: "Type"}, HTMLColumn{Head: "Fingerprint", Code: true})
	for _, c := range r.Classes {
		table.Rows = append(table.Rows, []string{strconv.Itoa(c.Rank), "0x" + c.ID, Duration(c.TimeTotal),
			Percent(c.Share), Count(c.Count), Duration(c.TimeAvg), optDuration(c.TimeMedian), optDuration(c.TimeP95),
			Duration(c.TimeMax), Ratio(c.VM), Ratio(c.RowsExaminedPerSent), c.StatementType, htmlCut(c.Fingerprint, htmlFingerprintMax)})
	}
	p.Sections = append(p.Sections,
		HTMLSection{Title: "Where the time goes", ID: "chart", Blocks: []HTMLBlock{chart}},
		HTMLSection{Title: "Query classes", ID: "classes", Blocks: []HTMLBlock{table}})

	if len(r.Classes) > 0 {
		details := HTMLSection{Title: "Classes in detail", ID: "details"}
		for _, c := range r.Classes {
			details.Blocks = append(details.Blocks, HTMLSection{
				Title:  fmt.Sprintf("Query %d: 0x%s, %s of total time, %s calls", c.Rank, c.ID, Percent(c.Share), Count(c.Count)),
				ID:     "class-" + strconv.Itoa(c.Rank),
				Blocks: []HTMLBlock{HTMLList(classLines(&c)...), HTMLPre(strings.TrimRight(c.Sample, "\n"))},
			})
		}
		p.Sections = append(p.Sections, details)
	}
	return p
}

func digestHTML(w io.Writer, r *digest.Report) error { return WriteHTMLPage(w, DigestHTMLPage(r)) }
