package report

import (
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/tune"
)

// Hostile values of the renderers that moved here from history, the demo
// loop and the apply command (see renderers in clean_test.go).

// transitionsTable is the steps as Transitions' JSON shows them.
type transitionsTable struct {
	Steps []history.Step `json:"steps"`
}

func (t *transitionsTable) steps() []history.Step {
	if t == nil {
		return nil
	}
	return t.Steps
}

func hostileTransitions(h string) *transitionsTable {
	runs := []history.Run{{Label: h, Score: 10, Passed: true}, {Label: "plain", Score: 20}, {Label: h, Score: 30}}
	return &transitionsTable{Steps: history.Transitions(runs)}
}

func hostileLoop(h string) *tune.Result {
	f := tune.Finding{ID: h, Title: h, Evidence: []string{h}, Change: h, Source: h, Reason: tune.LeftReason(h)}
	return &tune.Result{
		Stack: tune.Stack{MariaDB: h, Scale: 1, Runs: 1, DurationS: 5, MySQLConf: h},
		Steps: []tune.StepResult{
			{Label: h, Scores: []float64{1}, Median: 1, XBaseline: 1, Findings: []tune.Finding{}},
			{Label: h, Findings: []tune.Finding{f}, Skipped: tune.StepSkip(h), Why: h},
			{Label: h, Scores: []float64{2}, Median: 2, XBaseline: 2, Findings: []tune.Finding{f},
				Applied: []string{h}, RolledBack: tune.StepUndo(h), Why: h, ApplyID: h},
		},
		NotApplied: []tune.Finding{f},
		History:    h,
	}
}

func hostileApplyResult(h string) *apply.Result {
	return &apply.Result{
		ID: h, Label: h, Recovered: h, RolledBack: true,
		Targets: []apply.TargetOutcome{{Name: h, Files: []string{h}, Where: h,
			Before: apply.State{h: h, "gone": h}, After: apply.State{h: h, "new": h}}},
		Plan:      []apply.Step{{Target: h, Key: h, Running: h, To: h, How: apply.How(h)}},
		Skipped:   []string{h},
		Leftovers: []apply.Leftover{{Target: h, Key: h, Now: h, Want: h, Fix: h, Why: h}},
	}
}

// dryRunView is ApplyDryRun's JSON.
type dryRunView struct {
	DryRun bool        `json:"dry_run"`
	Plan   *apply.Plan `json:"plan"`
}

func (d *dryRunView) plan() *apply.Plan {
	if d == nil {
		return nil
	}
	return d.Plan
}

func hostileDryRun(h string) *dryRunView {
	// The diff is the files' own multi-line text, shown as a block: a
	// plain one here, since its lines start lines of the output.
	const diff = "--- a\n+++ b\n-x = 1\n+x = 2\n"
	return &dryRunView{DryRun: true, Plan: &apply.Plan{
		Files: []apply.Preview{
			{Target: h, Path: h, Diff: diff, Exists: true, Where: h},
			{Target: h, Path: h, Diff: diff},
			{Target: h, Path: h},
			{Target: h, Path: h, Skipped: true},
		},
		Steps: []apply.Step{
			{Target: h, Key: h, Running: h, To: h, Expect: h, How: apply.How(h), Command: h, Note: h, Problem: h},
			{Target: "mysql", Key: "max_connections", To: "200", How: "set"},
		},
		Problems: []string{h},
		Unread:   map[string]string{h: h},
	}}
}
