package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"unicode/utf8"
)

// HTML is a format: one self-contained page (inline CSS, charts as inline
// SVG, no script, nothing loaded from anywhere), to open in a browser or
// attach to a ticket. See WriteHTMLPage.
const HTML = "html"

// An HTML page is built from plain strings as they came from logs and
// servers: the page cleans each one exactly once (Clean for one line,
// CleanBlock for multi-line text), so a control, bidirectional or invalid
// byte is shown as its \xNN escape as in the other formats, and
// html/template escapes the result for where it lands (text, attribute,
// SVG). Multi-line text keeps its layout in the browser, but its newlines
// and tabs are written as character references (&#10; and &#9;), so a
// line of the HTML source never starts with text from the data. The page
// carries a Content-Security-Policy that allows no script and no network
// load at all, should anything ever get past the escaping.

// HTMLPage is a self-contained HTML report: a title, summary lines, notes
// and sections of blocks (text, lists, tables, bar charts, preformatted
// text). Every string is raw: the page cleans and escapes it.
type HTMLPage struct {
	// Title is the document's title and its heading.
	Title string
	// Summary is one line each, listed under the title.
	Summary []string
	// Notes are multi-line texts, listed after the summary with their
	// line breaks kept.
	Notes []string
	// Sections follow the summary, each with an <h2> heading.
	Sections []HTMLSection
}

// HTMLBlock is one piece of a section: an HTMLSection (nested, with a
// smaller heading), HTMLTable, HTMLBarChart, or what HTMLText, HTMLList,
// HTMLPre and HTMLCode return. Only this package makes blocks, so
// everything on a page went through its escaping.
type HTMLBlock interface {
	htmlNode(level int) htmlNode
}

// HTMLSection is a heading and its blocks. A section in a page's Sections
// has an <h2>; one among another section's blocks has the next level
// (down to <h4>).
type HTMLSection struct {
	Title string
	// ID, if set, is the section's anchor (id attribute): letters,
	// digits, '-' and '_' are kept, anything else is dropped.
	ID     string
	Blocks []HTMLBlock
}

// HTMLColumn is a column of an HTMLTable.
type HTMLColumn struct {
	Head string
	// Numeric right-aligns the column, with figures of equal width.
	Numeric bool
	// Code shows the cells in a monospace font, long ones wrapped
	// anywhere (fingerprints, URL paths).
	Code bool
	// NoWrap keeps each cell on one line (short codes: query IDs,
	// timestamps).
	NoWrap bool
}

// HTMLTable is a table with a header row. A row with fewer cells than
// columns is padded with empty cells; extra cells are dropped.
type HTMLTable struct {
	// Caption, if set, is shown above the table.
	Caption string
	Columns []HTMLColumn
	Rows    [][]string
	// Empty is shown instead of the table when it has no rows ("" for
	// "Nothing to show.").
	Empty string
	// Links, for the served pages (WriteServePage), make cells links:
	// Links[row][column] is a path on the same server ("" for none).
	// Pages written to files have none.
	Links [][]string
	// Select, for the served pages, puts a checkbox named Select before
	// each row, valued SelectValues[row] (a form around the table sends
	// the rows checked).
	Select       string
	SelectValues []string
	// ID is the table's id attribute (letters, digits, '-', '_').
	ID string
}

type textBlock string

// HTMLText is a paragraph of one line of text (a newline in s shows as
// \x0a, as Clean writes it).
func HTMLText(s string) HTMLBlock { return textBlock(s) }

type listBlock []string

// HTMLList is a bulleted list, one line of text per item.
func HTMLList(items ...string) HTMLBlock { return listBlock(items) }

type preBlock string

// HTMLPre is multi-line text shown as is, in a monospace font (a query
// sample, a multi-line message): its newlines and tabs are kept, and
// every other control is escaped as CleanBlock does.
func HTMLPre(s string) HTMLBlock { return preBlock(s) }

type codeBlock string

// HTMLCode is one line of code shown in a monospace box (a statement, a
// setting's change): unlike HTMLPre, its newlines and tabs are escaped
// too, as Clean does, since the text is one line in the other formats.
func HTMLCode(s string) HTMLBlock { return codeBlock(s) }

// summaryBlock and notesBlock are a page's summary and notes as blocks of
// a section (HTMLPage.Section).
type (
	summaryBlock []string
	notesBlock   []string
)

// htmlNode is a block as the page template sees it: every string already
// cleaned, or HTML this package made.
type htmlNode struct {
	Kind  string // "p", "ul", "pre", "notes", "table", "chart", "section"
	Text  string
	Items []string
	// Class is a list's class ("summary"), or "".
	Class string
	Pre   template.HTML
	// Notes are multi-line items, escaped (a "notes" list).
	Notes []template.HTML
	Table *htmlTableView
	Chart *htmlChartView
	// Served pages' links, form and flame graph.
	Links []htmlLinkView
	Form  *htmlFormView
	// A section's heading level (2-4), anchor and blocks.
	Level int
	ID    string
	Nodes []htmlNode
}

type htmlTableView struct {
	Caption string
	Empty   string
	ID      string
	Select  string
	Heads   []htmlCell
	Rows    []htmlRow
}

type htmlRow struct {
	Check string // the checkbox's value ("" without Select)
	Cells []htmlCell
}

type htmlCell struct {
	Text  string
	Class string // "", or "num", "code" and "nowrap" separated by spaces
	Href  string // a link on the same server, or ""
}

func (b textBlock) htmlNode(int) htmlNode { return htmlNode{Kind: "p", Text: Clean(string(b))} }

func (b listBlock) htmlNode(int) htmlNode { return htmlNode{Kind: "ul", Items: cleanAll(b)} }

func (b preBlock) htmlNode(int) htmlNode { return htmlNode{Kind: "pre", Pre: htmlBlockText(string(b))} }

// A line of code is a pre-formatted block of one cleaned line.
func (b codeBlock) htmlNode(int) htmlNode { return htmlNode{Kind: "pre", Pre: htmlLineText(string(b))} }

func (b summaryBlock) htmlNode(int) htmlNode {
	return htmlNode{Kind: "ul", Class: "summary", Items: cleanAll(b)}
}

func (b notesBlock) htmlNode(int) htmlNode { return htmlNode{Kind: "notes", Notes: htmlNotes(b)} }

func (s HTMLSection) htmlNode(level int) htmlNode {
	level = min(max(level, 2), 4)
	n := htmlNode{Kind: "section", Text: Clean(s.Title), Level: level, ID: htmlID(s.ID)}
	for _, b := range s.Blocks {
		if b != nil {
			n.Nodes = append(n.Nodes, b.htmlNode(level+1))
		}
	}
	return n
}

func (t HTMLTable) htmlNode(int) htmlNode {
	v := &htmlTableView{Caption: Clean(t.Caption), Empty: Clean(t.Empty), ID: htmlID(t.ID), Select: htmlID(t.Select)}
	if v.Empty == "" {
		v.Empty = "Nothing to show."
	}
	class := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		var cl []string
		if c.Numeric {
			cl = append(cl, "num")
		}
		if c.Code {
			cl = append(cl, "code")
		}
		if c.NoWrap {
			cl = append(cl, "nowrap")
		}
		class[i] = strings.Join(cl, " ")
		v.Heads = append(v.Heads, htmlCell{Text: Clean(c.Head), Class: class[i]})
	}
	for n, r := range t.Rows {
		row := make([]htmlCell, len(t.Columns))
		for i := range row {
			row[i].Class = class[i]
			if i < len(r) {
				row[i].Text = Clean(r[i])
			}
			if n < len(t.Links) && i < len(t.Links[n]) {
				row[i].Href = localHref(t.Links[n][i])
			}
		}
		hr := htmlRow{Cells: row}
		if v.Select != "" && n < len(t.SelectValues) {
			hr.Check = Clean(t.SelectValues[n])
		}
		v.Rows = append(v.Rows, hr)
	}
	return htmlNode{Kind: "table", Table: v}
}

// htmlPageView is the page as its template sees it.
type htmlPageView struct {
	Title   string
	Summary []string
	Notes   []template.HTML
	Nodes   []htmlNode
}

// WriteHTMLPage writes p as one self-contained HTML document.
func WriteHTMLPage(w io.Writer, p *HTMLPage) error {
	if p == nil {
		p = &HTMLPage{}
	}
	v := htmlPageView{Title: Clean(p.Title), Summary: cleanAll(p.Summary), Notes: htmlNotes(p.Notes)}
	for _, s := range p.Sections {
		v.Nodes = append(v.Nodes, s.htmlNode(2))
	}
	var b bytes.Buffer
	if err := htmlTemplates.ExecuteTemplate(&b, "page", v); err != nil {
		return fmt.Errorf("rendering the HTML page: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Section is the page as a section of another page, for several reports
// on one page: titled title (the page's own title when title is ""), its
// summary and notes first, then its sections one level down. The section's
// anchor is id, and every anchor of the page gets id and '-' in front, so
// the anchors of two pages on one page stay apart.
func (p *HTMLPage) Section(title, id string) HTMLSection {
	if p == nil {
		p = &HTMLPage{}
	}
	if title == "" {
		title = p.Title
	}
	s := HTMLSection{Title: title, ID: id}
	if len(p.Summary) > 0 {
		s.Blocks = append(s.Blocks, summaryBlock(p.Summary))
	}
	if len(p.Notes) > 0 {
		s.Blocks = append(s.Blocks, notesBlock(p.Notes))
	}
	for _, sub := range p.Sections {
		s.Blocks = append(s.Blocks, prefixIDs(sub, id))
	}
	return s
}

// prefixIDs is s with prefix and '-' in front of its anchor and of every
// anchor of the sections among its blocks (none when prefix is "").
func prefixIDs(s HTMLSection, prefix string) HTMLSection {
	if prefix == "" {
		return s
	}
	if s.ID != "" {
		s.ID = prefix + "-" + s.ID
	}
	blocks := make([]HTMLBlock, len(s.Blocks))
	for i, b := range s.Blocks {
		if sub, ok := b.(HTMLSection); ok {
			b = prefixIDs(sub, prefix)
		}
		blocks[i] = b
	}
	s.Blocks = blocks
	return s
}

func htmlNotes(notes []string) []template.HTML {
	var out []template.HTML
	for _, n := range notes {
		out = append(out, htmlBlockText(n))
	}
	return out
}

func cleanAll(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Clean(s)
	}
	return out
}

// htmlLayout writes the newlines and tabs CleanBlock keeps as character
// references: the browser shows the same text, and no line of the source
// starts inside data.
var htmlLayout = strings.NewReplacer("\n", "&#10;", "\t", "&#9;")

// htmlBlockText is multi-line text for a pre-formatted element: cleaned
// (CleanBlock), escaped for HTML (htmlEscape), its layout as character
// references.
func htmlBlockText(s string) template.HTML {
	return template.HTML(htmlLayout.Replace(htmlEscape(CleanBlock(s))))
}

// htmlLineText is one line of text for a pre-formatted element: cleaned
// (Clean: newlines and tabs escaped too), escaped for HTML.
func htmlLineText(s string) template.HTML { return template.HTML(htmlEscape(Clean(s))) }

// localHref keeps a link only when it is a path on the same server
// ("/runs/3"), never a scheme or another host.
func localHref(s string) string {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.ContainsAny(s, "\\\x00\n\r\t") {
		return ""
	}
	return s
}

// htmlID keeps the characters of an anchor that need no escaping.
func htmlID(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return -1
	}, s)
}

// htmlCut shortens text to n characters (runes; a byte that is not
// UTF-8 counts as one), ending with an ellipsis. It works on raw and on
// cleaned text alike, and never splits a character.
func htmlCut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == n-1 {
			break
		}
		k++
	}
	return s[:i] + "…"
}

// htmlCSS is the page's style: readable on screen and on paper, wide
// tables scroll sideways in their own box.
const htmlCSS = `
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --head: #f6f8fa; --stripe: #fafbfc;
  --accent: #2f6fde; --neg: #d9822b; --good: #2da44e; --bad: #cf222e; --mark: #1f2328; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 24px 48px; color: var(--fg); background: #fff;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
h1 { font-size: 24px; margin: 0 0 12px; }
h2 { font-size: 19px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 24px 0 8px; }
h4 { font-size: 14px; margin: 18px 0 6px; }
p, ul { margin: 6px 0 10px; }
ul { padding-left: 22px; }
li { margin: 2px 0; overflow-wrap: anywhere; }
code, pre, svg text.label { font-family: "DejaVu Sans Mono", ui-monospace, Menlo, Consolas, monospace; }
.summary { background: var(--head); border: 1px solid var(--line); border-radius: 6px; padding: 10px 16px 10px 34px; margin: 0 0 8px; }
.notes li { white-space: pre-wrap; color: var(--muted); }
pre { background: var(--head); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px;
  font-size: 13px; white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0 12px; }
.tablebox { overflow-x: auto; margin: 6px 0 12px; }
table { border-collapse: collapse; font-size: 12.5px; }
caption { text-align: left; color: var(--muted); padding: 0 0 4px; }
th, td { border: 1px solid var(--line); padding: 3px 6px; vertical-align: top; text-align: left; }
th { background: var(--head); font-weight: 600; white-space: nowrap; }
tbody tr:nth-child(even) td { background: var(--stripe); }
td.num, th.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.code { font-family: "DejaVu Sans Mono", ui-monospace, Menlo, Consolas, monospace; font-size: 12px;
  min-width: 14em; max-width: 48em; overflow-wrap: anywhere; }
td.nowrap { white-space: nowrap; min-width: 0; max-width: none; overflow-wrap: normal; }
.empty { color: var(--muted); font-style: italic; }
figure { margin: 8px 0 16px; }
figcaption { color: var(--muted); margin: 0 0 4px; }
svg.chart { display: block; max-width: 100%; height: auto; }
svg.chart text { font-size: 12px; fill: var(--fg); }
svg.chart text.value { fill: var(--muted); }
svg.chart rect.bar { fill: var(--accent); }
svg.chart rect.bar.neg { fill: var(--neg); }
svg.chart rect.bar.good { fill: var(--good); }
svg.chart rect.bar.bad { fill: var(--bad); }
svg.chart rect.track { fill: var(--head); }
svg.chart line.zero { stroke: var(--muted); stroke-width: 1; }
svg.chart circle.point { fill: #fff; stroke: var(--mark); stroke-width: 1.5; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
@media print { body { padding: 0; } .tablebox { overflow: visible; } }
`

// htmlPageTemplate is the page, its blocks and the bar chart. Layout in
// the template is ours; every value is escaped by html/template.
const htmlPageTemplate = `{{define "page"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="stacktune">
<title>{{.Title}}</title>
<style>` + htmlCSS + `</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Summary}}<ul class="summary">
{{range .Summary}}<li>{{.}}</li>
{{end}}</ul>
{{end}}{{if .Notes}}<ul class="notes">
{{range .Notes}}<li>{{.}}</li>
{{end}}</ul>
{{end}}{{range .Nodes}}{{template "node" .}}{{end}}<footer>Generated by stacktune.</footer>
</body>
</html>
{{end}}

{{define "node"}}{{if eq .Kind "section"}}<section{{if .ID}} id="{{.ID}}"{{end}}>
{{if eq .Level 2}}<h2>{{.Text}}</h2>{{else if eq .Level 3}}<h3>{{.Text}}</h3>{{else}}<h4>{{.Text}}</h4>{{end}}
{{range .Nodes}}{{template "node" .}}{{end}}</section>
{{else if eq .Kind "p"}}<p>{{.Text}}</p>
{{else if eq .Kind "ul"}}<ul{{if .Class}} class="{{.Class}}"{{end}}>
{{range .Items}}<li>{{.}}</li>
{{end}}</ul>
{{else if eq .Kind "notes"}}<ul class="notes">
{{range .Notes}}<li>{{.}}</li>
{{end}}</ul>
{{else if eq .Kind "pre"}}<pre>{{.Pre}}</pre>
{{else if eq .Kind "svg"}}{{.Pre}}
{{else if eq .Kind "table"}}{{template "table" .Table}}{{else if eq .Kind "chart"}}{{template "chart" .Chart}}{{else if eq .Kind "links"}}{{template "links" .}}{{else if eq .Kind "form"}}{{template "form" .}}{{end}}{{end}}

{{define "table"}}{{if .Rows}}<div class="tablebox"><table{{if .ID}} id="{{.ID}}"{{end}}>
{{if .Caption}}<caption>{{.Caption}}</caption>
{{end}}<thead><tr>{{if .Select}}<th></th>{{end}}{{range .Heads}}<th{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>
{{$sel := .Select}}{{range .Rows}}<tr>{{if $sel}}<td><input type="checkbox" name="{{$sel}}" value="{{.Check}}"></td>{{end}}{{range .Cells}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{else}}{{if .Caption}}<p>{{.Caption}}</p>
{{end}}<p class="empty">{{.Empty}}</p>
{{end}}{{end}}

{{define "chart"}}<figure>
{{if .Caption}}<figcaption>{{.Caption}}</figcaption>
{{end}}{{if .Bars}}<svg class="chart" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{{.Caption}}" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}">
{{range .Bars}}<g>
<title>{{.Tip}}</title>
<rect class="track" x="{{.TrackX}}" y="{{.Y}}" width="{{.TrackW}}" height="{{.H}}"></rect>
<rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"></rect>
{{range .Points}}<circle class="point" cx="{{.CX}}" cy="{{.CY}}" r="3.5"></circle>
{{end}}<text class="label" x="{{.LabelX}}" y="{{.TextY}}" text-anchor="end">{{.Label}}</text>
<text class="value" x="{{.ValueX}}" y="{{.TextY}}">{{.Value}}</text>
</g>
{{end}}{{if .ZeroLine}}<line class="zero" x1="{{.ZeroX}}" y1="{{.Top}}" x2="{{.ZeroX}}" y2="{{.Bottom}}"></line>
{{end}}</svg>
{{else}}<p class="empty">{{.Empty}}</p>
{{end}}</figure>
{{end}}`

var htmlTemplates = template.Must(template.New("report").Parse(htmlPageTemplate))
