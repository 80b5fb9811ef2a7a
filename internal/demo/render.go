package demo

import (
	"bufio"
	"bytes"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/report"
)

// LoopFormats are the formats of WriteLoop.
var LoopFormats = []string{report.Text, report.Markdown, report.JSON, "html"}

// ReportFormat is the report format of a file, from its extension:
// .md (Markdown) or .html/.htm.
func ReportFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown":
		return report.Markdown, nil
	case ".html", ".htm":
		return "html", nil
	}
	return "", fmt.Errorf("report %s: use a .md or .html file", path)
}

// WriteLoop writes the loop's transition table, the findings behind each
// step and what was not applied. chart, when given, is an SVG of the
// transitions: Markdown links it (chartRef), HTML inlines it.
func WriteLoop(w io.Writer, r *LoopResult, format string, chart []byte, chartRef string) error {
	if err := report.CheckFormat(format, LoopFormats...); err != nil {
		return err
	}
	if format == report.JSON {
		return report.WriteJSON(w, r)
	}
	bw := bufio.NewWriter(w)
	switch format {
	case report.Text:
		loopText(bw, r)
	case report.Markdown:
		loopMarkdown(bw, r, chartRef)
	case "html":
		loopHTML(bw, r, chart)
	}
	return bw.Flush()
}

// afterBaseline are the steps after the baseline (none when the loop
// failed before measuring it).
func (r *LoopResult) afterBaseline() []StepResult {
	if len(r.Steps) == 0 {
		return nil
	}
	return r.Steps[1:]
}

func (r *LoopResult) header() string {
	s := r.Stack
	q := ""
	if s.Quick {
		q = ", quick"
	}
	return fmt.Sprintf("reference app at scale %d behind nginx, MariaDB %s, memcached; %d runs of %s per step, %d connections, %d cores%s",
		s.Scale, s.MariaDB, s.Runs, report.Duration(s.DurationS), s.Connections, s.Cores, q)
}

var loopHeader = []string{"#", "step", "scores", "median", "x baseline", "req/s", "p99 ms"}

func (r *LoopResult) rows() [][]string {
	var rows [][]string
	for i, s := range r.Steps {
		if s.Skipped != "" {
			rows = append(rows, []string{strconv.Itoa(i + 1), s.Label, "(not run: " + firstWords(s.Skipped) + ")", "-", "-", "-", "-"})
			continue
		}
		sc := make([]string, len(s.Scores))
		for j, v := range s.Scores {
			sc[j] = history.Score(v)
		}
		scores := strings.Join(sc, " / ")
		if s.Failed > 0 {
			scores += fmt.Sprintf(" (%d failed)", s.Failed)
		}
		if s.RolledBack != "" {
			scores += " (slower: rolled back)"
		}
		rows = append(rows, []string{strconv.Itoa(i + 1), s.Label, scores, history.Score(s.Median),
			fmt.Sprintf("%.2fx", s.XBaseline), fmt.Sprintf("%.1f", s.RPS), fmt.Sprintf("%.0f", s.P99MS)})
	}
	return rows
}

func firstWords(s string) string {
	if i := strings.Index(s, ":"); i > 0 {
		return s[:i]
	}
	return s
}

func loopText(w *bufio.Writer, r *LoopResult) {
	fmt.Fprintf(w, "Score transitions: %s\n\n", r.header())
	rows := r.rows()
	width := make([]int, len(loopHeader))
	for i, h := range loopHeader {
		width[i] = len(h)
	}
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(cells []string) {
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i >= 3 { // numbers right-aligned
				c = pad + c
			} else {
				c += pad
			}
			w.WriteString("  " + c)
		}
		w.WriteString("\n")
	}
	line(loopHeader)
	for _, row := range rows {
		line(row)
	}
	for i, s := range r.afterBaseline() {
		fmt.Fprintf(w, "\nStep %d: %s\n", i+2, s.Label)
		if s.Skipped != "" {
			fmt.Fprintf(w, "  not run: %s\n", s.Skipped)
		}
		if s.RolledBack != "" {
			fmt.Fprintf(w, "  rolled back: %s\n", s.RolledBack)
		}
		for _, a := range s.Applied {
			fmt.Fprintf(w, "  changed  %s\n", a)
		}
		for _, f := range s.Findings {
			fmt.Fprintf(w, "  finding  %s: %s\n", f.ID, f.Title)
			for _, e := range f.Evidence {
				fmt.Fprintf(w, "           - %s\n", e)
			}
			if f.Change != "" {
				fmt.Fprintf(w, "           change: %s\n", f.Change)
			}
		}
	}
	if len(r.NotApplied) > 0 {
		fmt.Fprintf(w, "\nNot applied (%d):\n", len(r.NotApplied))
		for _, f := range r.NotApplied {
			fmt.Fprintf(w, "  %s: %s\n           %s\n", f.ID, f.Title, f.Reason)
		}
	}
}

func loopMarkdown(w *bufio.Writer, r *LoopResult, chartRef string) {
	md := report.MarkdownText
	w.WriteString("# stacktune demo: score transitions\n\n")
	w.WriteString(md(r.header()) + "\n\n")
	w.WriteString("| " + strings.Join(loopHeader, " | ") + " |\n|---|---|---|---:|---:|---:|---:|\n")
	for _, row := range r.rows() {
		for i := range row {
			row[i] = strings.ReplaceAll(md(row[i]), "|", `\|`)
		}
		w.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	if chartRef != "" {
		fmt.Fprintf(w, "\n![score transitions](%s)\n", chartRef)
	}
	writeSteps(w, r, markdownMarkup)
	if len(r.NotApplied) > 0 {
		fmt.Fprintf(w, "\n## Not applied (%d)\n\n| finding | title | why |\n|---|---|---|\n", len(r.NotApplied))
		for _, f := range r.NotApplied {
			fmt.Fprintf(w, "| `%s` | %s | %s |\n", f.ID, strings.ReplaceAll(md(f.Title), "|", `\|`), strings.ReplaceAll(md(f.Reason), "|", `\|`))
		}
	}
}

func loopHTML(w *bufio.Writer, r *LoopResult, chart []byte) {
	e := html.EscapeString
	w.WriteString("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>stacktune demo</title>\n")
	w.WriteString("<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}td.n{text-align:right}li{margin:2px 0}.why{color:#555}</style>\n</head><body>\n")
	w.WriteString("<h1>stacktune demo: score transitions</h1>\n<p>" + e(r.header()) + "</p>\n<table>\n<tr>")
	for _, h := range loopHeader {
		w.WriteString("<th>" + e(h) + "</th>")
	}
	w.WriteString("</tr>\n")
	for _, row := range r.rows() {
		w.WriteString("<tr>")
		for i, c := range row {
			cls := ""
			if i >= 3 {
				cls = ` class="n"`
			}
			w.WriteString("<td" + cls + ">" + e(c) + "</td>")
		}
		w.WriteString("</tr>\n")
	}
	w.WriteString("</table>\n")
	if len(chart) > 0 {
		// The SVG is drawn by gonum/plot: inline it after its XML header.
		if i := bytes.Index(chart, []byte("<svg")); i >= 0 {
			chart = chart[i:]
		}
		w.WriteString("<div>")
		w.Write(chart)
		w.WriteString("</div>\n")
	}
	writeSteps(w, r, htmlMarkup)
	if len(r.NotApplied) > 0 {
		fmt.Fprintf(w, "<h2>Not applied (%d)</h2>\n<table><tr><th>finding</th><th>title</th><th>why</th></tr>\n", len(r.NotApplied))
		for _, f := range r.NotApplied {
			fmt.Fprintf(w, "<tr><td><code>%s</code></td><td>%s</td><td class=\"why\">%s</td></tr>\n", e(f.ID), e(f.Title), e(f.Reason))
		}
		w.WriteString("</table>\n")
	}
	w.WriteString("</body></html>\n")
}

// markup is how writeSteps marks up the step sections in Markdown or
// HTML: format strings taking escaped text.
type markup struct {
	esc     func(string) string
	code    func(string) string // a code span, its text raw
	step    string              // "Step %d: %s"
	para    string              // one line of text
	listIn  string              // "Changed:" and the list after it
	item    string
	listOut string
	finding string // id (a code span) and title; opens the evidence list
	labeled string // "Change: ...", "Source: ..." items: label, text
	findEnd string
}

var markdownMarkup = markup{
	esc:     report.MarkdownText,
	code:    func(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" },
	step:    "\n## Step %d: %s\n\n",
	para:    "%s\n\n",
	listIn:  "Changed:\n\n",
	item:    "- %s\n",
	listOut: "\n",
	finding: "### %s: %s\n\n",
	labeled: "- **%s:** %s\n",
	findEnd: "\n",
}

var htmlMarkup = markup{
	esc:     html.EscapeString,
	code:    func(s string) string { return "<code>" + html.EscapeString(s) + "</code>" },
	step:    "<h2>Step %d: %s</h2>\n",
	para:    "<p>%s</p>\n",
	listIn:  "<p>Changed:</p><ul>\n",
	item:    "<li>%s</li>\n",
	listOut: "</ul>\n",
	finding: "<h3>%s: %s</h3>\n<ul>\n",
	labeled: "<li><b>%s:</b> %s</li>\n",
	findEnd: "</ul>\n",
}

// writeSteps writes every step after the baseline: why it did not run
// or was rolled back, what changed, and its findings with their evidence.
func writeSteps(w *bufio.Writer, r *LoopResult, m markup) {
	for i, s := range r.afterBaseline() {
		fmt.Fprintf(w, m.step, i+2, m.esc(s.Label))
		if s.Skipped != "" {
			fmt.Fprintf(w, m.para, m.esc("Not run: "+s.Skipped))
		}
		if s.RolledBack != "" {
			fmt.Fprintf(w, m.para, m.esc("Rolled back: "+s.RolledBack))
		}
		if len(s.Applied) > 0 {
			w.WriteString(m.listIn)
			for _, a := range s.Applied {
				fmt.Fprintf(w, m.item, m.esc(a))
			}
			w.WriteString(m.listOut)
		}
		for _, f := range s.Findings {
			fmt.Fprintf(w, m.finding, m.code(f.ID), m.esc(f.Title))
			for _, e := range f.Evidence {
				fmt.Fprintf(w, m.item, m.esc(e))
			}
			if f.Change != "" {
				fmt.Fprintf(w, m.labeled, "Change", m.code(f.Change))
			}
			if f.Source != "" {
				fmt.Fprintf(w, m.labeled, "Source", m.esc(f.Source))
			}
			w.WriteString(m.findEnd)
		}
	}
}

// Chart draws the transitions of the loop's recorded runs as SVG.
func (r *LoopResult) Chart() ([]byte, error) {
	if len(r.runs) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	if err := history.WriteChart(&b, history.Transitions(r.runs), r.runs, history.SVG); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
