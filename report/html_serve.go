package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/ledger"
)

// The pages of `stacktune serve`: built of the same blocks as the HTML
// reports (every string cleaned once and escaped by html/template), with
// what a served page adds: links between pages (paths on the same
// server only), forms that filter and select runs (GET, to the same
// server), and one script of the server's own (/static/live.js, for the
// live page: it adds rows with textContent, never markup). The
// Content-Security-Policy allows scripts and connections to the same
// origin only.

// ServePage is a page of the served UI.
type ServePage struct {
	Title string
	// Nav are the links at the top.
	Nav []HTMLLink
	// Summary is one line each, under the title.
	Summary []string
	Blocks  []HTMLBlock
	// Live, when set, is the server-sent events URL the page follows
	// (the live page of a running session).
	Live string
}

// HTMLLink is a link to a path on the same server.
type HTMLLink struct {
	Text, Href string
	// ID is the link's id attribute, for tests and scripts.
	ID string
}

type linksBlock []HTMLLink

// HTMLLinks is a line of links (paths on the same server).
func HTMLLinks(links ...HTMLLink) HTMLBlock { return linksBlock(links) }

func (b linksBlock) htmlNode(int) htmlNode {
	n := htmlNode{Kind: "links"}
	for _, l := range b {
		if h := localHref(l.Href); h != "" { // a link anywhere else is left out
			n.Links = append(n.Links, htmlLinkView{Text: Clean(l.Text), Href: h, ID: htmlID(l.ID)})
		}
	}
	return n
}

type htmlLinkView struct{ Text, Href, ID string }

// HTMLForm is a GET form to a path on the same server: text fields, then
// the blocks inside it (a table with Select), then its button.
type HTMLForm struct {
	Action string
	ID     string
	Fields []HTMLField
	Blocks []HTMLBlock
	Submit string
}

// HTMLField is a text field of an HTMLForm.
type HTMLField struct{ Name, Label, Value string }

func (f HTMLForm) htmlNode(level int) htmlNode {
	n := htmlNode{Kind: "form", Form: &htmlFormView{Action: localHref(f.Action), ID: htmlID(f.ID), Submit: Clean(f.Submit)}}
	for _, fl := range f.Fields {
		n.Form.Fields = append(n.Form.Fields, htmlFieldView{Name: htmlID(fl.Name), Label: Clean(fl.Label), Value: Clean(fl.Value)})
	}
	for _, b := range f.Blocks {
		if b != nil {
			n.Nodes = append(n.Nodes, b.htmlNode(level))
		}
	}
	return n
}

type htmlFormView struct {
	Action, ID, Submit string
	Fields             []htmlFieldView
}

type htmlFieldView struct{ Name, Label, Value string }

// HTMLFlame is a ledger run's flame graph, drawn by FlameGraph (the one
// flame graph of every report): the tree's paths are its stacks, each
// frame's own samples (its value less its children's) the stack's weight.
type HTMLFlame struct {
	Caption string
	Root    *ledger.Frame
}

func (f HTMLFlame) htmlNode(int) htmlNode {
	if f.Root == nil || f.Root.Value <= 0 {
		return htmlNode{Kind: "p", Text: "No profile."}
	}
	var stacks []appcpu.Stack
	var walk func(fr *ledger.Frame, path []string)
	walk = func(fr *ledger.Frame, path []string) {
		path = append(path, fr.Name)
		self := fr.Value
		for _, c := range fr.Children {
			self -= c.Value
			walk(c, path)
		}
		if self > 0 {
			stacks = append(stacks, appcpu.Stack{Frames: slices.Clone(path), Ms: float64(self)})
		}
	}
	// The ledger's root is the whole profile, not a frame of the app.
	for _, c := range f.Root.Children {
		walk(c, nil)
	}
	return svgBlock(flameSVG(f.Caption, stacks)).htmlNode(0)
}

type servePageView struct {
	Title   string
	Nav     []htmlLinkView
	Summary []string
	Nodes   []htmlNode
	Live    string
}

// WriteServePage writes p as a page of the served UI.
func WriteServePage(w io.Writer, p *ServePage) error {
	v := servePageView{Title: Clean(p.Title), Summary: cleanAll(p.Summary), Live: localHref(p.Live)}
	v.Nav = linksBlock(p.Nav).htmlNode(0).Links
	for _, b := range p.Blocks {
		if b != nil {
			v.Nodes = append(v.Nodes, b.htmlNode(2))
		}
	}
	var b bytes.Buffer
	if err := htmlTemplates.ExecuteTemplate(&b, "serve", v); err != nil {
		return fmt.Errorf("rendering the page: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// ServeCSP is the served pages' Content-Security-Policy (in the page, and
// sent as a header by the server with frame-ancestors 'none', which only
// a header may carry).
const ServeCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'"

const serveCSS = `
nav { margin: 0 0 16px; padding-bottom: 8px; border-bottom: 1px solid var(--line); }
nav a, .links a { margin-right: 14px; }
a { color: var(--accent); }
form.filters label { margin-right: 10px; }
form input[type=text] { font: inherit; padding: 2px 4px; width: 12em; }
button { font: inherit; padding: 3px 12px; margin: 6px 0; }
#live-status { font-weight: 600; }
`

const serveTemplate = `{{define "serve"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="` + ServeCSP + `">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="stacktune">
<title>{{.Title}}</title>
<style>` + htmlCSS + serveCSS + `</style>
{{if .Live}}<script src="/static/live.js" defer></script>
{{end}}</head>
<body>
{{if .Nav}}<nav>{{range .Nav}}<a href="{{.Href}}"{{if .ID}} id="{{.ID}}"{{end}}>{{.Text}}</a>{{end}}</nav>
{{end}}<h1>{{.Title}}</h1>
{{if .Summary}}<ul class="summary">
{{range .Summary}}<li>{{.}}</li>
{{end}}</ul>
{{end}}{{if .Live}}<p>Status: <span id="live-status" data-events="{{.Live}}">running</span></p>
{{end}}{{range .Nodes}}{{template "node" .}}{{end}}<footer>stacktune serve</footer>
</body>
</html>
{{end}}

{{define "links"}}<p class="links">{{range .Links}}<a href="{{.Href}}"{{if .ID}} id="{{.ID}}"{{end}}>{{.Text}}</a>{{end}}</p>
{{end}}

{{define "form"}}<form method="get" action="{{.Form.Action}}"{{if .Form.ID}} id="{{.Form.ID}}"{{end}}{{if .Form.Fields}} class="filters"{{end}}>
{{range .Form.Fields}}<label>{{.Label}} <input type="text" name="{{.Name}}" value="{{.Value}}"></label>
{{end}}{{range .Nodes}}{{template "node" .}}{{end}}<button type="submit">{{.Form.Submit}}</button>
</form>
{{end}}`

func init() {
	template.Must(htmlTemplates.Parse(serveTemplate))
}

// ServeNav is the navigation of every served page.
func ServeNav() []HTMLLink {
	return []HTMLLink{{Text: "Runs", Href: "/", ID: "nav-runs"}, {Text: "Sessions", Href: "/sessions", ID: "nav-sessions"}, {Text: "API", Href: "/api/", ID: "nav-api"}}
}

// ServeList is what the run list shows.
type ServeList struct {
	Runs []history.Run
	// Label, Commit, Scenario are the filter as given.
	Label, Commit, Scenario string
	// Steps are the score transitions of the runs the filter selects
	// (oldest first); Total how many runs they hold.
	Steps []history.Step
	// More is the link to the next (older) page, "" at the end.
	More string
}

// ServeRunsPage is the run list: filters, the score transitions chart,
// the runs (newest first, each a link to its page) with a checkbox each
// and a button comparing the two checked.
func ServeRunsPage(l *ServeList) *ServePage {
	p := &ServePage{Title: "Runs", Nav: ServeNav()}
	filters := HTMLForm{Action: "/", ID: "filters", Submit: "Filter", Fields: []HTMLField{
		{Name: "label", Label: "label", Value: l.Label}, {Name: "commit", Label: "commit", Value: l.Commit}, {Name: "scenario", Label: "scenario", Value: l.Scenario}}}
	p.Blocks = append(p.Blocks, filters)
	if len(l.Steps) > 0 {
		steps := l.Steps
		if len(steps) > 40 {
			steps = steps[len(steps)-40:]
		}
		page := TransitionsHTMLPage(steps, nil)
		for _, s := range page.Sections {
			if s.ID == "chart" {
				s.Title = "Score transitions"
				if len(steps) < len(l.Steps) {
					s.Blocks = append([]HTMLBlock{HTMLText(fmt.Sprintf("The last %d of %d steps.", len(steps), len(l.Steps)))}, s.Blocks...)
				}
				p.Blocks = append(p.Blocks, s)
			}
		}
	}
	t := HTMLTable{ID: "runs", Select: "run", Empty: "No runs recorded yet: run stacktune bench, diagnose, tune, ab or tpcc run.",
		Columns: []HTMLColumn{{Head: "id", Numeric: true}, {Head: "started", NoWrap: true}, {Head: "command"}, {Head: "label"},
			{Head: "score", Numeric: true}, {Head: "passed"}, {Head: "rps", Numeric: true}, {Head: "p99", Numeric: true},
			{Head: "scenario", Code: true}, {Head: "commit", Code: true, NoWrap: true}, {Head: "session", Numeric: true}}}
	for _, r := range l.Runs {
		id := strconv.FormatInt(r.ID, 10)
		sess, sessLink := "", ""
		if r.Session != 0 {
			sess, sessLink = strconv.FormatInt(r.Session, 10), "/sessions/"+strconv.FormatInt(r.Session, 10)
		}
		t.Rows = append(t.Rows, []string{id, r.Started.Format(time.DateTime), orDash(r.Command), stepLabel(history.Step{Label: r.Label}),
			Score(r.Score), yesNo(r.Passed), PerSecond(r.RPS), Duration(r.P99.Seconds()), scenarioName(r), shortCommit(r.AppCommit), sess})
		t.Links = append(t.Links, []string{"/runs/" + id, "/runs/" + id, "", "/?label=" + url.QueryEscape(r.Label), "", "", "", "",
			"/?scenario=" + url.QueryEscape(r.ScenarioHash), "/?commit=" + url.QueryEscape(r.AppCommit), sessLink})
		t.SelectValues = append(t.SelectValues, id)
	}
	p.Blocks = append(p.Blocks, HTMLSection{Title: "Runs", ID: "runs-section", Blocks: []HTMLBlock{
		HTMLText("Check two runs and compare them."),
		HTMLForm{Action: "/diff", ID: "compare", Submit: "Compare", Blocks: []HTMLBlock{t}}}})
	if l.More != "" {
		p.Blocks = append(p.Blocks, HTMLLinks(HTMLLink{Text: "Older runs", Href: l.More, ID: "more"}))
	}
	return p
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func scenarioName(r history.Run) string {
	switch {
	case r.Scenario != "" && r.ScenarioHash != "":
		return r.Scenario + " " + shortCommit(r.ScenarioHash)
	case r.Scenario != "":
		return r.Scenario
	}
	return shortCommit(r.ScenarioHash)
}

// runSummary are a run's lines.
func runSummary(r history.Run) []string {
	out := []string{
		fmt.Sprintf("%s run %d, %s, started %s, %s", orDash(r.Command), r.ID, stepLabel(history.Step{Label: r.Label}), r.Started.Format(time.DateTime), Duration(r.Duration.Seconds())),
		fmt.Sprintf("score %s, %s: %s requests, %s errors, %s req/s, p50 %s, p99 %s", Score(r.Score), map[bool]string{true: "passed", false: "failed"}[r.Passed],
			Count(r.Requests), Count(r.Errors), PerSecond(r.RPS), Duration(r.P50.Seconds()), Duration(r.P99.Seconds())),
	}
	if r.Failure != "" {
		out = append(out, "failure: "+r.Failure)
	}
	if r.Target != "" || r.Scenario != "" {
		out = append(out, "target "+r.Target+", scenario "+orDash(scenarioName(r)))
	}
	if r.DataReset != "" {
		out = append(out, "data reset: "+r.DataReset)
	}
	if r.AppCommit != "" {
		out = append(out, "app commit "+r.AppCommit)
	}
	if len(r.Versions) > 0 {
		var vs []string
		for _, k := range sortedKeys(r.Versions) {
			vs = append(vs, k+" "+r.Versions[k])
		}
		out = append(out, "versions: "+strings.Join(vs, ", "))
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// ServeRunPage is a run's page: its summary, endpoints, query classes,
// per-request SQL, findings, profile, artefacts.
func ServeRunPage(v *ledger.View) *ServePage {
	r := v.Run
	p := &ServePage{Title: fmt.Sprintf("Run %d: %s", r.ID, stepLabel(history.Step{Label: r.Label})), Nav: ServeNav(), Summary: runSummary(r)}
	links := []HTMLLink{{Text: "JSON", Href: fmt.Sprintf("/api/runs/%d", r.ID), ID: "run-json"}}
	if r.Session != 0 {
		links = append(links, HTMLLink{Text: fmt.Sprintf("session %d", r.Session), Href: fmt.Sprintf("/sessions/%d", r.Session), ID: "run-session"})
	}
	p.Blocks = append(p.Blocks, HTMLLinks(links...))
	ep := HTMLTable{ID: "endpoints", Empty: "No endpoints recorded.", Columns: []HTMLColumn{{Head: "source"}, {Head: "endpoint", Code: true},
		{Head: "count", Numeric: true}, {Head: "errors", Numeric: true}, {Head: "p50", Numeric: true}, {Head: "p99", Numeric: true}, {Head: "total", Numeric: true}}}
	for _, e := range v.Endpoints {
		ep.Rows = append(ep.Rows, []string{sourceName(e.Source), e.Name, Count(e.Count), Count(e.Errors), Duration(e.P50), Duration(e.P99), Duration(e.Total)})
	}
	cl := HTMLTable{ID: "classes", Empty: "No query digest recorded.", Columns: []HTMLColumn{{Head: "class", NoWrap: true, Code: true}, {Head: "query", Code: true},
		{Head: "count", Numeric: true}, {Head: "p95", Numeric: true}, {Head: "total", Numeric: true}, {Head: "rows examined", Numeric: true}}}
	for _, c := range v.Classes {
		cl.Rows = append(cl.Rows, []string{c.ID, c.Fingerprint, Count(c.Count), Duration(c.P95), Duration(c.Total), Count(c.RowsExam)})
	}
	p.Blocks = append(p.Blocks, HTMLSection{Title: "Endpoints", ID: "endpoints-section", Blocks: []HTMLBlock{ep}},
		HTMLSection{Title: "Query classes", ID: "classes-section", Blocks: []HTMLBlock{cl}})
	if v.Requests != nil {
		var b bytes.Buffer
		if err := Requests(&b, v.Requests, Text); err == nil {
			p.Blocks = append(p.Blocks, HTMLSection{Title: "Per-request SQL", ID: "requests", Blocks: []HTMLBlock{HTMLPre(b.String())}})
		}
	}
	fi := HTMLTable{ID: "findings", Empty: "No audit recorded.", Columns: []HTMLColumn{{Head: "severity"}, {Head: "layer"}, {Head: "finding", NoWrap: true, Code: true}, {Head: "title"}}}
	for _, f := range v.Findings {
		fi.Rows = append(fi.Rows, []string{f.Severity, f.Layer, f.ID, f.Title})
	}
	p.Blocks = append(p.Blocks, HTMLSection{Title: "Findings", ID: "findings-section", Blocks: []HTMLBlock{fi}})
	if v.Flame != nil {
		fn := HTMLTable{ID: "functions", Columns: []HTMLColumn{{Head: "function", Code: true}, {Head: "self", Numeric: true}, {Head: "total", Numeric: true}}}
		for i, f := range v.Functions {
			if i == 50 {
				break
			}
			fn.Rows = append(fn.Rows, []string{f.Name, Count(f.Self), Count(f.Total)})
		}
		p.Blocks = append(p.Blocks, HTMLSection{Title: "Profile", ID: "profile-section", Blocks: []HTMLBlock{HTMLFlame{Caption: "Flame graph", Root: v.Flame}, fn}})
	}
	if len(v.Hosts) > 0 {
		ht := HTMLTable{ID: "hosts", Columns: []HTMLColumn{{Head: "role"}, {Head: "host", Code: true}, {Head: "collected"}, {Head: "layers"}, {Head: "problems"}}}
		for _, h := range v.Hosts {
			status, problems := "yes", strings.Join(h.CollectorErrors, "; ")
			if !h.OK {
				status, problems = "FAILED ("+h.Stage+")", h.Error
			}
			ht.Rows = append(ht.Rows, []string{orDash(h.Role), h.Name, status, strings.Join(h.Layers, ", "), problems})
		}
		p.Blocks = append(p.Blocks, HTMLSection{Title: "Hosts", ID: "hosts-section", Blocks: []HTMLBlock{
			HTMLText(fmt.Sprintf("%d hosts collected over the run (--hosts), by role.", len(v.Hosts))), ht}})
	}
	var arts []string
	for _, a := range v.Artefacts {
		s := fmt.Sprintf("%s: %s bytes", a.Kind, Count(a.Size))
		if a.TooLarge {
			s += " (over the limit: not kept)"
		}
		arts = append(arts, s)
	}
	arts = append(arts, v.Problems...)
	for _, e := range v.CollectorErrors {
		arts = append(arts, "collector: "+e)
	}
	if len(arts) == 0 {
		arts = []string{"No artefacts (a run recorded before the ledger, or pruned)."}
	}
	p.Blocks = append(p.Blocks, HTMLSection{Title: "Artefacts", ID: "artefacts-section", Blocks: []HTMLBlock{HTMLList(arts...)}})
	return p
}

func sourceName(s string) string {
	switch s {
	case ledger.SourceBench:
		return "bench"
	case ledger.SourceAccessLog:
		return "access log"
	}
	return s
}

// ReasonText words a verdict's reason.
func ReasonText(r ledger.Reason) string {
	switch r.Code {
	case ledger.ReasonScenarioDiffers:
		return fmt.Sprintf("different loads: scenario hash %s against %s", r.A, r.B)
	case ledger.ReasonScenarioUnknown:
		return "a run has no scenario hash (recorded before the ledger): the loads cannot be told the same"
	case ledger.ReasonDataResetDiffers:
		return fmt.Sprintf("different data resets: %q against %q", r.A, r.B)
	case ledger.ReasonDurationDiffers:
		return fmt.Sprintf("durations %s and %s differ by %s (more than %s)", r.A, r.B, Percent(r.Value), Percent(r.Limit))
	case ledger.ReasonRunFailed:
		return fmt.Sprintf("run %q failed: %s", r.A, r.B)
	case ledger.ReasonCollectorFailed:
		return fmt.Sprintf("run %s: %.0f collector(s) failed or saw part of their layer (%s)", strings.ToUpper(r.A), r.Value, r.B)
	case ledger.ReasonWithinNoise:
		return fmt.Sprintf("the score changed by %+.1f%%, within the noise floor (±%.1f%%)", r.Value*100, r.Limit*100)
	case ledger.ReasonNoiseUnknown:
		return "no noise floor was measured for these runs: a small change may be noise"
	case ledger.ReasonCommitDiffers:
		return fmt.Sprintf("the app's code differs: %s against %s", shortCommit(r.A), shortCommit(r.B))
	case ledger.ReasonSameSession:
		return fmt.Sprintf("both runs belong to session %.0f: its interleaved decision is the judge", r.Value)
	}
	return r.Code
}

// ServeDiffPage is run B against run A: the verdict, the session's
// decision, then endpoints, query classes and functions, the largest
// change in total time first.
func ServeDiffPage(c *ledger.Comparison) *ServePage {
	ra, rb := c.A.Run, c.B.Run
	p := &ServePage{Title: fmt.Sprintf("Run %d against run %d", rb.ID, ra.ID), Nav: ServeNav(),
		Summary: []string{
			fmt.Sprintf("A: run %d, %s, %s, score %s", ra.ID, orDash(ra.Command), stepLabel(history.Step{Label: ra.Label}), Score(ra.Score)),
			fmt.Sprintf("B: run %d, %s, %s, score %s", rb.ID, orDash(rb.Command), stepLabel(history.Step{Label: rb.Label}), Score(rb.Score)),
		}}
	if ra.Score != 0 {
		p.Summary = append(p.Summary, fmt.Sprintf("B/A score: %.3f", rb.Score/ra.Score))
	}
	p.Blocks = append(p.Blocks, HTMLLinks(HTMLLink{Text: "A", Href: fmt.Sprintf("/runs/%d", ra.ID), ID: "diff-a"},
		HTMLLink{Text: "B", Href: fmt.Sprintf("/runs/%d", rb.ID), ID: "diff-b"},
		HTMLLink{Text: "swap", Href: fmt.Sprintf("/diff?a=%d&b=%d", rb.ID, ra.ID), ID: "diff-swap"},
		HTMLLink{Text: "JSON", Href: fmt.Sprintf("/api/diff?a=%d&b=%d", ra.ID, rb.ID), ID: "diff-json"}))
	head := "These runs may be compared."
	if !c.Verdict.Comparable {
		head = "These runs may NOT be compared."
	}
	var reasons []string
	for _, r := range c.Verdict.Reasons {
		reasons = append(reasons, ReasonText(r))
	}
	vb := []HTMLBlock{HTMLText(head)}
	if len(reasons) > 0 {
		vb = append(vb, HTMLList(reasons...))
	}
	if d := c.Decision; d != nil {
		vb = append(vb, HTMLText(fmt.Sprintf("Interleaved decision of the session: %s against %s: %s, B/A %.3f [%.3f, %.3f] over %d runs%s",
			d.LabelB, d.LabelA, VerdictText(abtest.Verdict(d.Outcome)), d.Ratio, d.Low, d.High, d.Runs, map[bool]string{true: ", kept", false: ""}[d.Kept])))
	}
	p.Blocks = append(p.Blocks, HTMLSection{Title: "Verdict", ID: "verdict", Blocks: vb})
	ep := diffTable("endpoint-diff", "endpoint", true, c.Endpoints, Duration)
	cl := diffTable("class-diff", "query class", false, c.Classes, Duration)
	fn := diffTable("function-diff", "function", false, c.Functions, func(v float64) string { return Count(int64(v)) })
	p.Blocks = append(p.Blocks,
		HTMLSection{Title: "Endpoints", ID: "endpoints-section", Blocks: []HTMLBlock{HTMLText("Largest change in time first: the change of the mean per request, times B's count."), ep}},
		HTMLSection{Title: "Query classes", ID: "classes-section", Blocks: []HTMLBlock{cl}})
	if len(c.Functions) > 0 {
		p.Blocks = append(p.Blocks, HTMLSection{Title: "Functions (samples)", ID: "functions-section", Blocks: []HTMLBlock{fn}})
	}
	return p
}

func diffTable(id, what string, source bool, rows []ledger.Diff, total func(float64) string) HTMLTable {
	t := HTMLTable{ID: id, Empty: "Neither run recorded any."}
	if source {
		t.Columns = append(t.Columns, HTMLColumn{Head: "source"})
	}
	t.Columns = append(t.Columns, HTMLColumn{Head: what, Code: true}, HTMLColumn{Head: "count A", Numeric: true}, HTMLColumn{Head: "count B", Numeric: true},
		HTMLColumn{Head: "p99 A", Numeric: true}, HTMLColumn{Head: "p99 B", Numeric: true},
		HTMLColumn{Head: "total A", Numeric: true}, HTMLColumn{Head: "total B", Numeric: true}, HTMLColumn{Head: "change", Numeric: true})
	for _, d := range rows {
		var row []string
		if source {
			row = append(row, sourceName(d.Source))
		}
		name := d.Name
		switch d.Missing {
		case "a":
			name += " (only in B)"
		case "b":
			name += " (only in A)"
		}
		sign := "+"
		switch {
		case d.Delta < 0:
			sign = "-"
		case d.Delta == 0:
			sign = ""
		}
		row = append(row, name, Count(d.CountA), Count(d.CountB), Duration(d.P99A), Duration(d.P99B), total(d.TotalA), total(d.TotalB), sign+total(math.Abs(d.Delta)))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// ServeSessionsPage lists the sessions, newest first.
func ServeSessionsPage(ss []history.Session) *ServePage {
	p := &ServePage{Title: "Sessions", Nav: ServeNav()}
	t := HTMLTable{ID: "sessions", Empty: "No tune or ab recorded yet.", Columns: []HTMLColumn{{Head: "id", Numeric: true}, {Head: "command"}, {Head: "label"},
		{Head: "started", NoWrap: true}, {Head: "status"}, {Head: "decisions", Numeric: true}}}
	for _, s := range ss {
		id := strconv.FormatInt(s.ID, 10)
		t.Rows = append(t.Rows, []string{id, s.Command, s.Label, s.Started.Format(time.DateTime), s.Status, strconv.Itoa(len(s.Decisions))})
		t.Links = append(t.Links, []string{"/sessions/" + id})
	}
	p.Blocks = append(p.Blocks, t)
	return p
}

// ServeSessionPage is a tune's or ab's page: its decisions and runs, and,
// while it runs, live (the page follows events).
func ServeSessionPage(s *history.Session, runs []history.Run) *ServePage {
	p := &ServePage{Title: fmt.Sprintf("Session %d: %s %s", s.ID, s.Command, s.Label), Nav: ServeNav(),
		Summary: []string{fmt.Sprintf("started %s, %s", s.Started.Format(time.DateTime), s.Status)}}
	if s.Noise > 0 {
		p.Summary = append(p.Summary, fmt.Sprintf("noise floor ±%.1f%%", s.Noise*100))
	}
	if s.Status == history.SessionRunning {
		p.Live = fmt.Sprintf("/api/sessions/%d/events", s.ID)
	}
	d := HTMLTable{ID: "decisions", Empty: "No decision yet.", Columns: []HTMLColumn{{Head: "A"}, {Head: "B"}, {Head: "outcome"}, {Head: "B/A", Numeric: true},
		{Head: "interval", Numeric: true}, {Head: "runs", Numeric: true}, {Head: "kept"}}}
	for _, x := range s.Decisions {
		d.Rows = append(d.Rows, []string{x.LabelA, x.LabelB, VerdictText(abtest.Verdict(x.Outcome)), fmt.Sprintf("%.3f", x.Ratio), fmt.Sprintf("[%.3f, %.3f]", x.Low, x.High), strconv.Itoa(x.Runs), yesNo(x.Kept)})
	}
	t := HTMLTable{ID: "session-runs", Empty: "No run yet.", Columns: []HTMLColumn{{Head: "id", Numeric: true}, {Head: "started", NoWrap: true}, {Head: "command"},
		{Head: "label"}, {Head: "arm"}, {Head: "score", Numeric: true}, {Head: "passed"}}}
	for _, r := range runs {
		id := strconv.FormatInt(r.ID, 10)
		t.Rows = append(t.Rows, []string{id, r.Started.Format(time.DateTime), r.Command, r.Label, r.Arm, Score(r.Score), yesNo(r.Passed)})
		t.Links = append(t.Links, []string{"/runs/" + id})
	}
	p.Blocks = append(p.Blocks, HTMLSection{Title: "Decisions", ID: "decisions-section", Blocks: []HTMLBlock{d}},
		HTMLSection{Title: "Runs", ID: "runs-section", Blocks: []HTMLBlock{t}})
	return p
}

// LiveRun is a run as the live page's script adds it (every string
// cleaned; the script sets them as text).
type LiveRun struct {
	ID      int64  `json:"id"`
	Href    string `json:"href"`
	Started string `json:"started"`
	Command string `json:"command"`
	Label   string `json:"label"`
	Arm     string `json:"arm"`
	Score   string `json:"score"`
	Passed  string `json:"passed"`
}

// ServeLiveRun is r as a row of the live page.
func ServeLiveRun(r history.Run) LiveRun {
	return LiveRun{ID: r.ID, Href: fmt.Sprintf("/runs/%d", r.ID), Started: r.Started.Format(time.DateTime), Command: Clean(r.Command),
		Label: Clean(r.Label), Arm: Clean(r.Arm), Score: Score(r.Score), Passed: yesNo(r.Passed)}
}
