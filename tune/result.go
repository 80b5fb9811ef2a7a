package tune

import (
	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/history"
)

// Result is one loop: the shape of `stacktune tune --format json` and of
// `stacktune demo --format json`. It is data only: package report renders
// it.
type Result struct {
	// Steps are the steps in the order run, the baseline first.
	Steps []StepResult `json:"steps"`
	// NotApplied are the last diagnosis's findings no step took, with
	// why.
	NotApplied []Finding `json:"not_applied"`
	Stack      Stack     `json:"stack"`
	// History is the SQLite file the runs are in (empty when it was in a
	// temporary directory).
	History string `json:"history,omitempty"`
	// NoiseFloor is the baseline measured against itself (A against A):
	// the interval a step's effect must clear.
	NoiseFloor *abtest.Decision `json:"noise_floor,omitempty"`
	// Restart is the end-of-loop check that the kept changes survive a
	// restart of the services they changed (seed 001: files, not
	// runtime only).
	Restart *RestartCheck `json:"restart_check,omitempty"`
	// Plans are the dry run's plans by step label (DryRun only).
	Plans map[string]*apply.Plan `json:"plans,omitempty"`
	// First and Second are the diagnoses before the steps and of the
	// tuned stack (whose new findings the second round of steps took).
	First  *diagnose.Result `json:"first_diagnosis,omitempty"`
	Second *diagnose.Result `json:"second_diagnosis,omitempty"`

	// Runs are the measured runs of each step's state (the baseline's
	// and every step's B arm, not the runs of the state before a step),
	// oldest first, for the chart (report.LoopChart); every run of both
	// arms is in the history. Not part of the JSON.
	Runs []history.Run `json:"-"`
}

// Stack says what was measured.
type Stack struct {
	// Description names what was measured ("stacktune tune: the scenario
	// shop.yaml against http://..."); empty for the demo's reference
	// stack.
	Description string `json:"description,omitempty"`
	MariaDB     string `json:"mariadb"`
	// Scale is the reference app's data scale (the demo only).
	Scale int `json:"scale,omitempty"`
	// MinRuns and Runs bound the runs per state of a step's test.
	MinRuns     int     `json:"min_runs"`
	Runs        int     `json:"runs"`
	DurationS   float64 `json:"duration_s"`
	Connections int     `json:"connections"`
	Cores       int     `json:"cores"`
	Quick       bool    `json:"quick"`
}

// StepResult is one step: its runs, the test that decided it and the
// findings it applied.
type StepResult struct {
	Label string `json:"label"`
	// Scores are the runs of the step's state (B), Before those of the
	// state before it (A), measured interleaved with them, and Decision
	// the test that compared them. The baseline's Scores are both arms
	// of the noise floor.
	Scores    []float64        `json:"scores"`
	Before    []float64        `json:"before_scores,omitempty"`
	Decision  *abtest.Decision `json:"decision,omitempty"`
	Median    float64          `json:"median"`
	XBaseline float64          `json:"x_baseline"`
	Findings  []Finding        `json:"findings"`
	// Applied lists what changed: files written, DDL run, restarts.
	Applied []string `json:"applied,omitempty"`
	// Skipped says why a step did not run (no finding, a dry run, or its
	// change failed and was rolled back).
	Skipped string `json:"skipped,omitempty"`
	// Failed counts the step's runs that did not pass (a broken page,
	// errors).
	Failed  int     `json:"failed_runs"`
	RPS     float64 `json:"rps_median"`
	P99MS   float64 `json:"p99_ms_median"`
	ApplyID string  `json:"apply_id,omitempty"`
	// RolledBack says why the step was undone after it was measured.
	RolledBack string `json:"rolled_back,omitempty"`
}

// Finding is a finding behind a step, or one no step took.
type Finding struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Evidence []string `json:"evidence"`
	Change   string   `json:"change,omitempty"`
	Source   string   `json:"source,omitempty"`
	// Reason is why a finding was not applied (Result.NotApplied).
	Reason string `json:"reason,omitempty"`
}

// RestartCheck is what the restart at the end found.
type RestartCheck struct {
	// Restarted names what was restarted ("mysql", "app").
	Restarted []string `json:"restarted"`
	// Held are the kept steps whose every value is in force after the
	// restart; Lost says, by step, what is not.
	Held []string          `json:"held"`
	Lost map[string]string `json:"lost,omitempty"`
	// ColdScore and WarmScore are one run right after the restart and
	// one after the buffer pool was warmed (every index of the tables
	// read once, as seed 002 did with count(*)): what a cold start costs.
	ColdScore float64  `json:"cold_score"`
	WarmScore float64  `json:"warm_score"`
	Warmed    []string `json:"warmed,omitempty"`
}
