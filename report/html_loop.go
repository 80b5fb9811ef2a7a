package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/tune"
)

// loopHTMLPage is the demo loop's report as a page (Loop's "html"): the
// stack in the summary; the transition table and a chart of each step's
// median score (each run a dot, the median and its ratio to the baseline's
// beside the bar, a rolled-back step in red); then each step after the
// baseline with why it did not run or was rolled back, what changed, and
// its findings with their evidence and change; and the findings no step
// applied, with why.
func loopHTMLPage(r *tune.Result) *HTMLPage {
	p := &HTMLPage{Title: loopTitle(r), Summary: []string{loopStack(r)}}
	if h := LoopHeadline(r); h != "" {
		p.Summary = append([]string{h}, p.Summary...)
	}
	if r.History != "" {
		p.Summary = append(p.Summary, "Runs recorded in "+r.History)
	}

	table := HTMLTable{Empty: "No step was measured."}
	for i, h := range loopHeader {
		table.Columns = append(table.Columns, HTMLColumn{Head: h, Numeric: i == 0 || i >= 3})
	}
	table.Rows = loopRows(r)
	transitions := HTMLSection{Title: "Score transitions", ID: "transitions", Blocks: []HTMLBlock{table}}
	if len(r.Steps) > 0 {
		transitions.Blocks = append(transitions.Blocks, loopHTMLChart(r))
	}
	for _, c := range loopChecks(r) {
		transitions.Blocks = append(transitions.Blocks, HTMLText(c))
	}
	p.Sections = append(p.Sections, transitions)

	for i, s := range loopAfterBaseline(r) {
		sec := HTMLSection{Title: fmt.Sprintf("Step %d: %s", i+2, s.Label), ID: "step-" + strconv.Itoa(i+2)}
		if s.Skipped != "" {
			sec.Blocks = append(sec.Blocks, HTMLText("Not run: "+StepSkipText(&s)))
		}
		if s.RolledBack != "" {
			sec.Blocks = append(sec.Blocks, HTMLText("Rolled back: "+StepUndoText(&s)))
		}
		if d := decisionLine(s); d != "" {
			sec.Blocks = append(sec.Blocks, HTMLText("Decision: "+d), HTMLText(runsLine(s)))
		}
		if len(s.Applied) > 0 {
			sec.Blocks = append(sec.Blocks, HTMLText("Changed:"), HTMLList(s.Applied...))
		}
		for _, f := range s.Findings {
			fs := HTMLSection{Title: f.ID + ": " + f.Title}
			items := append([]string(nil), f.Evidence...)
			if f.Source != "" {
				items = append(items, "Source: "+f.Source)
			}
			if len(items) > 0 {
				fs.Blocks = append(fs.Blocks, HTMLList(items...))
			}
			if f.Change != "" {
				fs.Blocks = append(fs.Blocks, HTMLText("Change:"), HTMLCode(f.Change))
			}
			sec.Blocks = append(sec.Blocks, fs)
		}
		p.Sections = append(p.Sections, sec)
	}

	for _, label := range loopPlanLabels(r) {
		p.Sections = append(p.Sections, HTMLSection{Title: "Plan of step " + label + " (dry run)", Blocks: []HTMLBlock{HTMLCode(loopPlanText(r.Plans[label]))}})
	}
	if q := loopProfiled(r); q != nil {
		if s, ok := htmlProfileSection(q); ok {
			s.Title += " (the first diagnosis's trace run)"
			p.Sections = append(p.Sections, s)
		}
	}
	if len(r.NotApplied) > 0 {
		t := HTMLTable{Columns: []HTMLColumn{{Head: "finding", Code: true, NoWrap: true}, {Head: "title"}, {Head: "why"}}}
		for _, f := range r.NotApplied {
			t.Rows = append(t.Rows, []string{f.ID, f.Title, fixReason(f)})
		}
		p.Sections = append(p.Sections, HTMLSection{Title: fmt.Sprintf("Not applied (%d)", len(r.NotApplied)), ID: "not-applied",
			Blocks: append([]HTMLBlock{t}, fixesHTML(r)...)})
	}
	return p
}

// loopHTMLChart is a bar per step up to its median score, each run a dot,
// the median and its ratio to the baseline's beside it; a step that was
// not run has no bar, and one rolled back for being slower is red.
func loopHTMLChart(r *tune.Result) HTMLBarChart {
	c := HTMLBarChart{Caption: "Median score per step (each run a dot) and its ratio to the baseline's"}
	for i, s := range r.Steps {
		label := fmt.Sprintf("%d. %s", i+1, s.Label)
		if s.Skipped != "" {
			c.Bars = append(c.Bars, HTMLBar{Label: label, Text: "not run", Tip: label + ": not run: " + firstWords(StepSkipText(&s))})
			continue
		}
		text := Score(s.Median) + " · " + fmt.Sprintf("%.2fx", s.XBaseline)
		sc := make([]string, len(s.Scores))
		for j, v := range s.Scores {
			sc[j] = Score(v)
		}
		tip := fmt.Sprintf("%s: median %s, %.2fx the baseline; runs %s", label, Score(s.Median), s.XBaseline, strings.Join(sc, " / "))
		if s.Failed > 0 {
			text += fmt.Sprintf(" · %d failed", s.Failed)
			tip += fmt.Sprintf(" (%d failed)", s.Failed)
		}
		b := HTMLBar{Label: label, Value: s.Median, Text: text, Tip: tip, Points: s.Scores}
		if s.RolledBack != "" {
			b.Text += " · rolled back"
			b.Tip += "; slower: rolled back"
			b.Tone = HTMLToneBad
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}
