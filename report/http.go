package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/httpprof"
)

// CSV is a format for tables.
const CSV = "csv"

// HTTPFormats are the formats HTTP renders.
var HTTPFormats = []string{Text, JSON, Markdown, CSV, HTML}

// httpColumns are the profile table's columns, shared by every format.
var httpColumns = []struct {
	head string
	cell func(e *httpprof.Endpoint) string
}{
	{"Rank", func(e *httpprof.Endpoint) string { return strconv.Itoa(e.Rank) }},
	{"Count", func(e *httpprof.Endpoint) string { return Count(e.Count) }},
	{"Share", func(e *httpprof.Endpoint) string { return Percent(e.Share) }},
	{"Total", func(e *httpprof.Endpoint) string { return Duration(e.TimeTotal) }},
	{"Avg", func(e *httpprof.Endpoint) string { return Duration(e.TimeAvg) }},
	{"Min", func(e *httpprof.Endpoint) string { return Duration(e.TimeMin) }},
	{"p50", func(e *httpprof.Endpoint) string { return Duration(e.TimeP50) }},
	{"p90", func(e *httpprof.Endpoint) string { return Duration(e.TimeP90) }},
	{"p95", func(e *httpprof.Endpoint) string { return Duration(e.TimeP95) }},
	{"p99", func(e *httpprof.Endpoint) string { return Duration(e.TimeP99) }},
	{"Max", func(e *httpprof.Endpoint) string { return Duration(e.TimeMax) }},
	{"Upstream", func(e *httpprof.Endpoint) string {
		if e.Upstream == nil {
			return "-"
		}
		return Duration(e.Upstream.Avg)
	}},
	{"2xx", func(e *httpprof.Endpoint) string { return Count(e.Status.S2xx) }},
	{"3xx", func(e *httpprof.Endpoint) string { return Count(e.Status.S3xx) }},
	{"4xx", func(e *httpprof.Endpoint) string { return Count(e.Status.S4xx) }},
	{"5xx", func(e *httpprof.Endpoint) string { return Count(e.Status.S5xx) }},
	{"499", func(e *httpprof.Endpoint) string { return Count(e.Status.ClientClosed) }},
	{"Bytes", func(e *httpprof.Endpoint) string { return Bytes(e.BytesTotal) }},
	{"Method", func(e *httpprof.Endpoint) string { return e.Method }},
	{"Path", func(e *httpprof.Endpoint) string { return e.Path }},
}

// HTTP renders an access-log profile.
func HTTP(w io.Writer, r *httpprof.Report, format string) error {
	if r == nil {
		r = &httpprof.Report{}
	}
	switch format {
	case JSON:
		return WriteJSON(w, r)
	case CSV:
		return httpCSV(w, r)
	case Markdown:
		return httpMarkdown(w, r)
	case HTML:
		return httpHTML(w, r)
	case Text, "":
		return httpText(w, r)
	}
	return CheckFormat(format, HTTPFormats...)
}

// httpSummary is the summary without the notes: each line is one line.
// The notes, which may hold line breaks, are written after it.
func httpSummary(r *httpprof.Report) []string {
	o := r.Overall
	head := fmt.Sprintf("%s requests in %s endpoints, %s of request time", Count(o.Requests), Count(int64(o.Endpoints)), Duration(o.TimeTotal))
	if o.EndpointsShown < o.Endpoints {
		head += fmt.Sprintf(" (top %d shown)", o.EndpointsShown)
	}
	lines := []string{head}
	if len(o.Inputs) > 0 {
		lines = append(lines, fmt.Sprintf("source: %s (%s, %s)", strings.Join(o.Inputs, ", "), r.Format, Bytes(o.Bytes)))
	}
	if o.FirstSeen != nil && o.LastSeen != nil {
		lines = append(lines, fmt.Sprintf("window: %s to %s (%s), %s requests/s", o.FirstSeen.Format(time.RFC3339),
			o.LastSeen.Format(time.RFC3339), Duration(o.LastSeen.Sub(*o.FirstSeen).Seconds()), PerSecond(o.Rate)))
	}
	lines = append(lines, fmt.Sprintf("static: %s of requests, %s of time; dynamic: %s of requests, %s of time",
		Percent(o.Static.RequestShare), Percent(o.Static.TimeShare), Percent(o.Dynamic.RequestShare), Percent(o.Dynamic.TimeShare)))
	if o.ClientClosed > 0 {
		lines = append(lines, fmt.Sprintf("client closed: %s requests (499; not counted as 4xx or as errors)", Count(o.ClientClosed)))
	}
	if o.Filtered > 0 {
		lines = append(lines, fmt.Sprintf("outside --since/--until: %s requests", Count(o.Filtered)))
	}
	if r.Skipped.Count > 0 {
		lines = append(lines, fmt.Sprintf("skipped: %s lines (%s)", Count(r.Skipped.Count), SkipLine(r.Skipped.Reasons)))
	} else {
		lines = append(lines, "skipped: nothing")
	}
	for _, g := range r.GroupsLearned {
		ex := ""
		if len(g.Examples) > 0 {
			ex = ", e.g. " + strings.Join(g.Examples, ", ")
		}
		if g.Distinct > 0 {
			lines = append(lines, fmt.Sprintf("grouped: %s (more than %d distinct values%s)", g.Pattern, g.Distinct-1, ex))
		} else {
			lines = append(lines, fmt.Sprintf("grouped: %s (as in the other profile)", g.Pattern))
		}
	}
	return lines
}

// httpTable is the profile table's heads and cells, every column
// right-aligned but the last. Text writes the method and the path as one
// last column ("GET /friends", as in the log), Markdown as two.
func httpTable(r *httpprof.Report, md bool) (heads []string, cols string, rows [][]string) {
	n := len(httpColumns)
	if !md {
		n--
	}
	for _, c := range httpColumns[:n] {
		heads = append(heads, c.head)
	}
	for i := range r.Endpoints {
		var row []string
		for _, c := range httpColumns[:n] {
			row = append(row, c.cell(&r.Endpoints[i]))
		}
		rows = append(rows, row)
	}
	if !md {
		last := httpColumns[n]
		heads[n-1] += " " + last.head
		for i := range rows {
			rows[i][n-1] += " " + last.cell(&r.Endpoints[i])
		}
	}
	if md {
		return heads, strings.Repeat(string(colRight), n), rows
	}
	return heads, strings.Repeat(string(colRight), n-1) + string(colLeft), rows
}

func httpText(w io.Writer, r *httpprof.Report) error {
	sw := sectionWriter{e: &errWriter{w: w}}
	summary := httpSummary(r)
	sw.title(summary[0], summary[1:])
	for _, n := range r.Notes {
		sw.e.printf("# %s\n", block{n, "#   "})
	}
	sw.e.printf("\n")
	sw.table(httpTable(r, false))
	if len(r.Slowest) > 0 {
		// No header row: the time, then the request.
		var rows [][]string
		for _, s := range r.Slowest {
			at := ""
			if s.Time != nil {
				at = s.Time.Format(time.RFC3339) + " "
			}
			rows = append(rows, []string{Duration(s.RequestTime), fmt.Sprintf("%s%d %s %s", at, s.Status, s.Method, s.URI)})
		}
		sw.e.printf("\nSlowest requests:\n")
		sw.table(nil, "rl", rows)
	}
	return sw.e.err
}

func httpMarkdown(w io.Writer, r *httpprof.Report) error {
	sw := sectionWriter{e: &errWriter{w: w}, md: true}
	notes := make([]string, len(r.Notes))
	for i, n := range r.Notes {
		notes[i] = strings.ReplaceAll(n, "\n", " ")
	}
	sw.title("Access-log profile", append(httpSummary(r), notes...))
	sw.e.printf("\n")
	sw.table(httpTable(r, true))
	if len(r.Slowest) > 0 {
		sw.heading("Slowest requests")
		var rows [][]string
		for _, s := range r.Slowest {
			rows = append(rows, []string{Duration(s.RequestTime), strconv.Itoa(s.Status), s.Method, s.URI})
		}
		sw.table([]string{"Time", "Status", "Method", "URI"}, "rrlc", rows)
	}
	return sw.e.err
}

// httpCSV writes raw numbers (seconds, bytes), one row per endpoint, for
// spreadsheets and scripts.
func httpCSV(w io.Writer, r *httpprof.Report) error {
	cw := newCSV(w)
	cw.Write([]string{"rank", "method", "path", "count", "time_share", "time_total_s", "time_avg_s", "time_min_s",
		"time_p50_s", "time_p90_s", "time_p95_s", "time_p99_s", "time_max_s", "upstream_avg_s", "2xx", "3xx", "4xx", "5xx", "499",
		"bytes_total", "bytes_avg", "static"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 9, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, e := range r.Endpoints {
		up := ""
		if e.Upstream != nil {
			up = f(e.Upstream.Avg)
		}
		cw.Write([]string{strconv.Itoa(e.Rank), e.Method, e.Path, i(e.Count), f(e.Share), f(e.TimeTotal), f(e.TimeAvg),
			f(e.TimeMin), f(e.TimeP50), f(e.TimeP90), f(e.TimeP95), f(e.TimeP99), f(e.TimeMax), up, i(e.Status.S2xx),
			i(e.Status.S3xx), i(e.Status.S4xx), i(e.Status.S5xx), i(e.Status.ClientClosed), i(e.BytesTotal), f(e.BytesAvg), strconv.FormatBool(e.Static)})
	}
	cw.Flush()
	return cw.Error()
}

// HTTPDiff renders a comparison of two profiles.
func HTTPDiff(w io.Writer, d *httpprof.DiffReport, format string, limit int) error {
	if d == nil {
		d = &httpprof.DiffReport{}
	}
	rows := d.Endpoints
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	switch format {
	case JSON:
		out := *d
		out.Endpoints = rows
		return WriteJSON(w, &out)
	case CSV:
		cw := newCSV(w)
		cw.Write([]string{"method", "path", "status", "count_a", "count_b", "p99_a_s", "p99_b_s", "p99_ratio",
			"time_total_a_s", "time_total_b_s", "time_total_change_s", "5xx_a", "5xx_b",
			"count_b_scaled", "time_total_b_scaled_s", "time_total_change_raw_s", "499_a", "499_b"})
		for _, r := range rows {
			f := func(v float64) string { return strconv.FormatFloat(v, 'g', 9, 64) }
			cw.Write([]string{r.Method, r.Path, DiffStatusText(r.Status), strconv.FormatInt(r.CountA, 10), strconv.FormatInt(r.CountB, 10),
				f(r.P99A), f(r.P99B), f(r.P99Ratio), f(r.TimeTotalA), f(r.TimeTotalB), f(r.TimeTotalChange),
				strconv.FormatInt(r.ErrorsA, 10), strconv.FormatInt(r.ErrorsB, 10),
				f(r.CountBScaled), f(r.TimeTotalBScaled), f(r.TimeTotalChangeRaw), strconv.FormatInt(r.ClosedA, 10), strconv.FormatInt(r.ClosedB, 10)})
		}
		cw.Flush()
		return cw.Error()
	case HTML:
		return WriteHTMLPage(w, HTTPDiffHTMLPage(d, limit))
	case Text, Markdown, "":
	default:
		return CheckFormat(format, HTTPFormats...)
	}
	ew := &errWriter{w: w}
	md := format == Markdown
	summary := []string{
		fmt.Sprintf("A: %s requests, %s of request time, %s requests/s (%s)", Count(d.A.Requests), Duration(d.A.TimeTotal), PerSecond(d.A.Rate), strings.Join(d.A.Inputs, ", ")),
		fmt.Sprintf("B: %s requests, %s of request time, %s requests/s (%s)", Count(d.B.Requests), Duration(d.B.TimeTotal), PerSecond(d.B.Rate), strings.Join(d.B.Inputs, ", ")),
	}
	scaled := d.Scale != 0 && d.Scale != 1
	heads := []string{"Calls A", "Calls B", "p99 A", "p99 B", "p99 B/A", "Total A", "Total B"}
	if scaled {
		heads = append(heads, "Total B scaled")
	}
	heads = append(heads, "Total change", "5xx A", "5xx B", "499 A", "499 B", "Endpoint")
	cells := func(r httpprof.DiffRow) []string {
		ep := r.Method + " " + r.Path
		if r.Status != httpprof.InBoth {
			ep += " (" + DiffStatusText(r.Status) + ")"
		}
		c := []string{Count(r.CountA), Count(r.CountB), Duration(r.P99A), Duration(r.P99B), Ratio(r.P99Ratio),
			Duration(r.TimeTotalA), Duration(r.TimeTotalB)}
		if scaled {
			c = append(c, Duration(r.TimeTotalBScaled))
		}
		return append(c, signedDuration(r.TimeTotalChange), Count(r.ErrorsA), Count(r.ErrorsB), Count(r.ClosedA), Count(r.ClosedB), ep)
	}
	sw := sectionWriter{e: ew, md: md}
	var table [][]string
	for _, r := range rows {
		table = append(table, cells(r))
	}
	cols := strings.Repeat(string(colRight), len(heads))
	if md {
		for _, n := range d.Notes {
			summary = append(summary, "Note: "+n)
		}
		sw.title("Access-log comparison", summary)
		ew.printf("\n")
		sw.table(heads, cols, table)
		return ew.err
	}
	sw.title(summary[0], summary[1:])
	for _, n := range d.Notes {
		ew.printf("# note: %s\n", n)
	}
	ew.printf("\n")
	// The endpoint, last, has no head in text and is left-aligned.
	heads[len(heads)-1] = ""
	cols = cols[:len(cols)-1] + string(colLeft)
	sw.table(heads, cols, table)
	return ew.err
}

func signedDuration(v float64) string {
	switch {
	case v > 0:
		return "+" + Duration(v)
	case v < 0:
		return "-" + Duration(-v)
	}
	return "0"
}
