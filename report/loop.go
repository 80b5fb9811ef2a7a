package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/stats"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/tune"
)

// LoopFormats are the formats Loop renders. Its HTML is an HTMLPage (see
// WriteHTMLPage), its chart drawn from the steps.
var LoopFormats = []string{Text, Markdown, JSON, HTML}

// LoopReportFormat is the format of a demo loop report file, from its
// extension: .md or .markdown (Markdown), .html or .htm (HTML).
func LoopReportFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown":
		return Markdown, nil
	case ".html", ".htm":
		return HTML, nil
	}
	return "", fmt.Errorf("report %s: use a .md or .html file", path)
}

// Loop writes the demo loop's transition table, the findings behind each
// step and what was not applied, in one of LoopFormats. Markdown links the
// chart of the transitions (LoopChart, an SVG file) as chartRef when it is
// not ""; HTML is one self-contained page with its own chart inline (a bar
// per step up to its median, each run a dot). JSON is the
// tune.Result as it is.
func Loop(w io.Writer, r *tune.Result, format, chartRef string) error {
	if err := CheckFormat(format, LoopFormats...); err != nil {
		return err
	}
	if r == nil {
		r = &tune.Result{}
	}
	switch format {
	case JSON:
		return WriteJSON(w, r)
	case HTML:
		return WriteHTMLPage(w, loopHTMLPage(r))
	}
	bw := bufio.NewWriter(w)
	switch format {
	case Text:
		loopText(bw, r)
	case Markdown:
		loopMarkdown(bw, r, chartRef)
	}
	return bw.Flush()
}

// LoopChart draws the transitions of the loop's recorded runs as SVG
// (TransitionsChart); nil when no run was recorded.
func LoopChart(r *tune.Result) ([]byte, error) {
	if r == nil || len(r.Runs) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	if err := TransitionsChart(&b, history.Transitions(r.Runs), r.Runs, ChartSVG); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// loopAfterBaseline are the steps after the baseline (none when the loop
// failed before measuring it).
func loopAfterBaseline(r *tune.Result) []tune.StepResult {
	if len(r.Steps) == 0 {
		return nil
	}
	return r.Steps[1:]
}

// loopStack says what was measured, in one line.
func loopStack(r *tune.Result) string {
	s := r.Stack
	q := ""
	if s.Quick {
		q = ", quick"
	}
	runs := fmt.Sprintf("%d to %d", s.MinRuns, s.Runs)
	if s.MinRuns == s.Runs || s.MinRuns == 0 {
		runs = strconv.Itoa(s.Runs)
	}
	what := s.Description
	if what == "" {
		what = fmt.Sprintf("reference app at scale %d behind nginx, memcached", s.Scale)
	}
	if s.MariaDB != "" { // unknown when the loop stopped before its diagnosis
		what += ", " + s.MariaDB
	}
	return fmt.Sprintf("%s; runs of %s, the state before and after each step interleaved (%s runs each), %d connections, %d cores%s",
		what, Duration(s.DurationS), runs, s.Connections, s.Cores, q)
}

// loopTitle is the report's title: the demo's, or tune's on a user's
// stack.
func loopTitle(r *tune.Result) string {
	if r.Stack.Description != "" {
		return "stacktune tune: score transitions"
	}
	return "stacktune demo: score transitions"
}

// LoopHeadline is the loop's one number in one line: the tuned stack
// against the one found, interleaved ("" before the final comparison
// ran).
func LoopHeadline(r *tune.Result) string {
	f := r.Final
	if f == nil {
		if len(r.Steps) > 1 && r.Restart == nil && !loopKeptAny(r) {
			return "Result: no step was kept: the stack is as it was found"
		}
		return ""
	}
	line := fmt.Sprintf("Result: tuned against the stack as found, interleaved: %s (%.0f%% interval %s to %s): %s, %d runs each",
		RatioX(f.Ratio), f.Level*100, RatioX(f.Interval[0]), RatioX(f.Interval[1]), VerdictText(f.Decision), len(f.Tuned)) + detectableText(f.Detectable, f.Test)
	if f.RolledBack {
		line += "; the tuned stack was slower, so every kept step was rolled back: the stack is as it was found"
	}
	return line
}

// RatioX writes a ratio as "1.29x".
func RatioX(v float64) string { return Ratio(v) + "x" }

// loopKeptAny reports whether a measured step was kept.
func loopKeptAny(r *tune.Result) bool {
	for _, s := range loopAfterBaseline(r) {
		if s.Decision != nil && s.RolledBack == "" {
			return true
		}
	}
	return false
}

// noiseLine says what the loop did about its noise: the floors it
// measured (each with runs twice as long as the one before) and the
// causes it saw.
func noiseLine(n *tune.Noise) string {
	var tries []string
	for _, t := range n.Tries {
		tries = append(tries, fmt.Sprintf("±%.0f%% with %gs runs", t.Width*100, t.RunS))
	}
	s := fmt.Sprintf("Noise: %s (limit ±%.0f%%)", strings.Join(tries, ", then "), n.Limit*100)
	if n.Noisy {
		s += fmt.Sprintf("; still wider than the limit, the loop went on with %gs runs and every decision says the smallest effect it could tell", n.RunS)
	}
	var cs []string
	for _, c := range n.Causes {
		cs = append(cs, NoiseCauseText(c))
	}
	if len(cs) > 0 {
		s += "; seen: " + strings.Join(cs, "; ")
	}
	return s
}

// loopChecks are the loop's statements beside its table: where the
// my.cnf drop-in went and why, the noise floor, and what the restart at
// the end found.
func loopChecks(r *tune.Result) []string {
	var out []string
	if r.Stack.MySQLConf != "" {
		out = append(out, r.Stack.MySQLConf)
	}
	if r.NoiseFloor != nil {
		out = append(out, "Noise floor (the baseline against itself): "+r.NoiseFloor.Reason)
	}
	if n := r.Noise; n != nil && (len(n.Tries) > 1 || len(n.Causes) > 0) {
		out = append(out, noiseLine(n))
	}
	if rc := r.Restart; rc != nil {
		restarted := "nothing restarted (no restart command known)"
		if len(rc.Restarted) > 0 {
			restarted = "restarted " + strings.Join(rc.Restarted, " and ")
		}
		held := "none"
		if len(rc.Held) > 0 {
			held = strings.Join(rc.Held, ", ")
		}
		out = append(out, fmt.Sprintf("Restart check: %s; one run cold scored %s, one warm %s (after reading %d indexes into the buffer pool); still in force: %s",
			restarted, Score(rc.ColdScore), Score(rc.WarmScore), len(rc.Warmed), held))
		labels := make([]string, 0, len(rc.Lost))
		for label := range rc.Lost {
			labels = append(labels, label)
		}
		sort.Strings(labels)
		for _, label := range labels {
			out = append(out, fmt.Sprintf("LOST after the restart: %s: %s", label, rc.Lost[label]))
		}
	}
	return out
}

var loopHeader = []string{"#", "step", "scores", "median", "x baseline", "req/s", "p99 ms"}

// loopCols lays out the table: the figures from the median on
// right-aligned (see sectionWriter.table).
const loopCols = "lllrrrr"

// loopRows are the table's cells, raw.
func loopRows(r *tune.Result) [][]string {
	var rows [][]string
	for i, s := range r.Steps {
		if s.Skipped != "" {
			rows = append(rows, []string{strconv.Itoa(i + 1), s.Label, "(not run: " + firstWords(StepSkipText(&s)) + ")", "-", "-", "-", "-"})
			continue
		}
		scores := scoreList(s.Scores)
		if s.Failed > 0 {
			scores += fmt.Sprintf(" (%d failed)", s.Failed)
		}
		if s.RolledBack != "" {
			scores += " (slower: rolled back)"
		}
		rows = append(rows, []string{strconv.Itoa(i + 1), s.Label, scores, Score(s.Median),
			xBaseline(s.XBaseline), fmt.Sprintf("%.1f", s.RPS), fmt.Sprintf("%.0f", s.P99MS)})
	}
	if f := r.Final; f != nil {
		rows = append(rows, []string{"=", "tuned against the stack as found", scoreList(f.Tuned) + " (as found: " + scoreList(f.Original) + ")",
			Score(stats.Median(f.Tuned)), xBaseline(f.Ratio), "-", "-"})
	}
	return rows
}

// xBaseline writes a step's chained ratio; a step with none (rolled
// back) shows "-".
func xBaseline(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v)
}

// firstWords is a reason up to its first colon.
func firstWords(s string) string {
	if i := strings.Index(s, ":"); i > 0 {
		return s[:i]
	}
	return s
}

func loopText(w *bufio.Writer, r *tune.Result) {
	if h := LoopHeadline(r); h != "" {
		fprintf(w, "%s\n\n", Clean(h))
	}
	fprintf(w, "Score transitions: %s\n\n", loopStack(r))
	sw := sectionWriter{e: &errWriter{w: w}}
	sw.table(loopHeader, loopCols, loopRows(r))
	if checks := loopChecks(r); len(checks) > 0 {
		w.WriteString("\n")
		for _, c := range checks {
			fprintf(w, "%s\n", c)
		}
	}
	for i, s := range loopAfterBaseline(r) {
		fprintf(w, "\nStep %d: %s\n", i+2, s.Label)
		if s.Skipped != "" {
			fprintf(w, "  not run: %s\n", StepSkipText(&s))
		}
		if s.RolledBack != "" {
			fprintf(w, "  rolled back: %s\n", StepUndoText(&s))
		}
		if d := decisionLine(s); d != "" {
			fprintf(w, "  decision: %s\n", d)
			fprintf(w, "  %s\n", runsLine(s))
		}
		// What changed and each finding, its evidence and change under it.
		var rows, under [][]string
		for _, a := range s.Applied {
			rows, under = append(rows, []string{"changed", a}), append(under, nil)
		}
		for _, f := range s.Findings {
			var lines []string
			for _, e := range f.Evidence {
				lines = append(lines, "- "+e)
			}
			if f.Change != "" {
				lines = append(lines, "change: "+f.Change)
			}
			rows, under = append(rows, []string{"finding", f.ID + ": " + f.Title}), append(under, lines)
		}
		sw.tableUnder(nil, "ll", rows, func(i int) []string { return under[i] })
	}
	if q := loopProfiled(r); q != nil {
		requestsProfileBlock(sw, q)
	}
	if len(r.NotApplied) > 0 {
		fprintf(w, "\nNot applied (%d):\n", len(r.NotApplied))
		rows := make([][]string, len(r.NotApplied))
		for i, f := range r.NotApplied {
			rows[i] = []string{f.ID + ": " + f.Title}
		}
		sw.tableUnder(nil, "l", rows, func(i int) []string { return []string{fixReason(r.NotApplied[i])} })
		fixesText(w, r)
	}
	for _, label := range loopPlanLabels(r) {
		fprintf(w, "\nPlan of step %s (dry run):\n", label)
		_ = ApplyDryRun(w, r.Plans[label], Text)
	}
}

// loopProfiled is the per-request view of the first diagnosis when its
// trace run profiled the app (nil otherwise): the loop report shows where
// each endpoint's time went in the stack as found.
func loopProfiled(r *tune.Result) *reqtrace.Report {
	if r.First == nil || r.First.Requests == nil || r.First.Requests.Profile == nil {
		return nil
	}
	return r.First.Requests
}

// loopPlanLabels are the labels of a dry run's plans, in step order.
func loopPlanLabels(r *tune.Result) []string {
	var out []string
	for _, s := range r.Steps {
		if _, ok := r.Plans[s.Label]; ok {
			out = append(out, s.Label)
		}
	}
	return out
}

// loopPlanText is a dry run's plan of one step as text (cleaned).
func loopPlanText(p *apply.Plan) string {
	var b strings.Builder
	_ = ApplyDryRun(&b, p, Text)
	return b.String()
}

// loopMarkdownText is text for the Markdown report: escaped, then cleaned
// (written as is after that).
func loopMarkdownText(s string) string { return Clean(mdEscape(s)) }

func loopMarkdown(w *bufio.Writer, r *tune.Result, chartRef string) {
	md := loopMarkdownText
	w.WriteString("# " + loopTitle(r) + "\n\n")
	if h := LoopHeadline(r); h != "" {
		w.WriteString("**" + md(h) + "**\n\n")
	}
	w.WriteString(md(loopStack(r)) + "\n\n")
	sectionWriter{e: &errWriter{w: w}, md: true}.table(loopHeader, loopCols, loopRows(r))
	if chartRef != "" {
		fmt.Fprintf(w, "\n![score transitions](%s)\n", chartRef)
	}
	for i, c := range loopChecks(r) {
		if i == 0 {
			w.WriteString("\n")
		}
		w.WriteString(md(c) + "\n\n")
	}
	writeLoopSteps(w, r, loopMarkdownMarkup)
	if q := loopProfiled(r); q != nil {
		requestsProfileBlock(sectionWriter{e: &errWriter{w: w}, md: true}, q)
	}
	if len(r.NotApplied) > 0 {
		fmt.Fprintf(w, "\n## Not applied (%d)\n\n", len(r.NotApplied))
		rows := make([][]string, len(r.NotApplied))
		for i, f := range r.NotApplied {
			rows[i] = []string{f.ID, f.Title, fixReason(f)}
		}
		sectionWriter{e: &errWriter{w: w}, md: true}.table([]string{"finding", "title", "why"}, "cll", rows)
		fixesMarkdown(w, r)
	}
	for _, label := range loopPlanLabels(r) {
		fmt.Fprintf(w, "\n## Plan of step %s (dry run)\n\n```\n%s```\n", md(label), strings.ReplaceAll(loopPlanText(r.Plans[label]), "```", "` ` `"))
	}
}

// loopMarkup is how writeLoopSteps marks up the step sections in
// Markdown: format strings taking text already escaped and cleaned (esc,
// code), written as they are.
type loopMarkup struct {
	esc     func(string) string
	code    func(string) string // a code span
	step    string              // "Step %d: %s"
	para    string              // one line of text
	listIn  string              // "Changed:" and the list after it
	item    string
	listOut string
	finding string // id (a code span) and title; opens the evidence list
	labeled string // "Change: ...", "Source: ..." items: label, text
	findEnd string
}

var loopMarkdownMarkup = loopMarkup{
	esc:     loopMarkdownText,
	code:    mdCodeSpan,
	step:    "\n## Step %d: %s\n\n",
	para:    "%s\n\n",
	listIn:  "Changed:\n\n",
	item:    "- %s\n",
	listOut: "\n",
	finding: "### %s: %s\n\n",
	labeled: "- **%s:** %s\n",
	findEnd: "\n",
}

// writeLoopSteps writes every step after the baseline: why it did not run
// or was rolled back, what changed, and its findings with their evidence.
func writeLoopSteps(w *bufio.Writer, r *tune.Result, m loopMarkup) {
	for i, s := range loopAfterBaseline(r) {
		fmt.Fprintf(w, m.step, i+2, m.esc(s.Label))
		if s.Skipped != "" {
			fmt.Fprintf(w, m.para, m.esc("Not run: "+StepSkipText(&s)))
		}
		if s.RolledBack != "" {
			fmt.Fprintf(w, m.para, m.esc("Rolled back: "+StepUndoText(&s)))
		}
		if d := decisionLine(s); d != "" {
			fmt.Fprintf(w, m.para, m.esc("Decision: "+d))
			fmt.Fprintf(w, m.para, m.esc(runsLine(s)))
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

// runsLine lists a decided step's runs of both states.
func runsLine(s tune.StepResult) string {
	return fmt.Sprintf("Runs before the step: %s; with it: %s", scoreList(s.Before), scoreList(s.Scores))
}

// scoreList is scores joined with " / ".
func scoreList(scores []float64) string {
	sc := make([]string, len(scores))
	for j, v := range scores {
		sc[j] = Score(v)
	}
	return strings.Join(sc, " / ")
}

// decisionLine states a step's A/B decision: the verdict, the ratio of
// medians with its interval, the second opinion and the runs ("" when
// the step has none).
func decisionLine(s tune.StepResult) string {
	d := s.Decision
	if d == nil {
		return ""
	}
	line := fmt.Sprintf("%s: median ratio %s, %.0f%% interval [%s, %s], Mann-Whitney p = %.3g, %d runs before and %d after, interleaved",
		VerdictText(d.Verdict), Ratio(d.RatioMedian), d.Level*100, Ratio(d.CILow), Ratio(d.CIHigh), d.PValue, d.RunsA, d.RunsB)
	return line + detectableText(tune.Detectable(d), d)
}

// detectableText says how small an effect a decision could tell from
// noise ("" when its interval has no upper end).
func detectableText(v float64, d *abtest.Decision) string {
	if v <= 0 {
		if d != nil && d.CIHigh > 0 && d.CIHigh == d.CILow {
			return "; its runs did not vary: it could tell any effect"
		}
		return "; its interval has no upper end: it could tell nothing"
	}
	return fmt.Sprintf("; it could tell about ±%.0f%% from noise", v*100)
}
