package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/history"
)

// TransitionsHTMLPage is the score transitions of history.Transitions as
// a page (what Transitions writes for "html", and `stacktune history
// --format html`): a chart of each step's median score (each run a dot,
// the median and its ratio to the first step's beside the bar, a step
// with failed runs in red), the transition table, and, when runs are
// given (the runs steps were made from), every run in a table (its
// scenario column only when a run has one) and the target, scenario and
// dates they share in the summary.
func TransitionsHTMLPage(steps []history.Step, runs []history.Run) *HTMLPage {
	p := &HTMLPage{Title: scoreChartTitle}
	if len(steps) == 0 {
		p.Summary = []string{"No runs."}
		return p
	}
	n := 0
	for _, s := range steps {
		n += s.Runs
	}
	line := fmt.Sprintf("%d runs in %d steps", n, len(steps))
	if sub := chartSubtitle(runs); sub != "" {
		line += ": " + sub // the target and scenario they share, their dates
	}
	p.Summary = append(p.Summary, line)
	if !steps[0].HasFirst {
		p.Notes = append(p.Notes, "Note: "+baselineNote+".")
	}

	chart := HTMLBarChart{Caption: "Median score per step (each run a dot) and its ratio to the first step's"}
	for i, s := range steps {
		label := fmt.Sprintf("%d. %s", i+1, stepLabel(s))
		sc := make([]string, len(s.Scores))
		for j, v := range s.Scores {
			sc[j] = Score(v)
		}
		text := Score(s.Median)
		tip := fmt.Sprintf("%s: median %s of %d runs (%s)", label, Score(s.Median), s.Runs, strings.Join(sc, " / "))
		if s.HasFirst {
			x := strconv.FormatFloat(s.XFirst, 'f', 2, 64) + "x"
			text += " · " + x
			tip += ", " + x + " the first step's"
		}
		b := HTMLBar{Label: label, Value: s.Median, Points: s.Scores}
		if f := s.Runs - s.Passed; f > 0 {
			text += fmt.Sprintf(" · %d failed", f)
			tip += fmt.Sprintf("; %d of %d runs failed", f, s.Runs)
			b.Tone = HTMLToneBad
		}
		b.Text, b.Tip = text, tip
		chart.Bars = append(chart.Bars, b)
	}

	var table HTMLTable
	for i, h := range transitionsHeader {
		table.Columns = append(table.Columns, HTMLColumn{Head: h, Numeric: i != 1})
	}
	table.Rows = transitionRows(steps)
	p.Sections = append(p.Sections,
		HTMLSection{Title: "Scores", ID: "chart", Blocks: []HTMLBlock{chart}},
		HTMLSection{Title: "Steps", ID: "steps", Blocks: []HTMLBlock{table}})

	if len(runs) > 0 {
		t := HTMLTable{Columns: []HTMLColumn{{Head: "started", NoWrap: true}, {Head: "label"}, {Head: "score", Numeric: true},
			{Head: "passed"}, {Head: "requests", Numeric: true}, {Head: "errors", Numeric: true}, {Head: "rps", Numeric: true},
			{Head: "p99", Numeric: true}, {Head: "target", Code: true}}}
		scenarios := false
		for _, r := range runs {
			scenarios = scenarios || r.Scenario != ""
		}
		if scenarios {
			t.Columns = append(t.Columns, HTMLColumn{Head: "scenario"})
		}
		for _, r := range runs {
			passed := "no"
			if r.Passed {
				passed = "yes"
			}
			started := ""
			if !r.Started.IsZero() {
				started = r.Started.Format(time.DateTime)
			}
			t.Rows = append(t.Rows, []string{started, stepLabel(history.Step{Label: r.Label}), Score(r.Score), passed,
				Count(r.Requests), Count(r.Errors), PerSecond(r.RPS), Duration(r.P99.Seconds()),
				history.StripCredentials(r.Target), r.Scenario})
		}
		p.Sections = append(p.Sections, HTMLSection{Title: "Runs", ID: "runs", Blocks: []HTMLBlock{t}})
	}
	return p
}
