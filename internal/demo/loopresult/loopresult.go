// Package loopresult holds what the demo loop (package demo, `stacktune
// demo`) produces: the steps measured, the findings behind each, what was
// not applied and the runs recorded. It is data only, so package report
// renders it without depending on the loop's servers, and the loop
// produces it without depending on how it is shown. Its JSON is the shape
// of `stacktune demo --format json`.
package loopresult

import (
	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/history"
)

// Result is the loop: the shape of `stacktune demo --format json`.
type Result struct {
	Steps []Step `json:"steps"`
	// NotApplied are the diagnosis's findings no step took, with why.
	NotApplied []Finding `json:"not_applied"`
	Stack      Stack     `json:"stack"`
	// History is the SQLite file the runs are in (empty when it was in a
	// temporary directory).
	History string `json:"history,omitempty"`

	// Runs are the bench runs recorded in the history, oldest first, for
	// the chart (report.LoopChart); not part of the JSON.
	Runs []history.Run `json:"-"`
}

// Stack says what was measured.
type Stack struct {
	// Description names a stack that is not the reference app ("the
	// bookshop scenario against http://..."); empty for the demo's.
	Description string  `json:"description,omitempty"`
	MariaDB     string  `json:"mariadb"`
	Scale       int     `json:"scale"`
	Runs        int     `json:"runs"`
	DurationS   float64 `json:"duration_s"`
	Connections int     `json:"connections"`
	Cores       int     `json:"cores"`
	Quick       bool    `json:"quick"`
}

// Step is one step: its runs and the findings it applied.
type Step struct {
	Label     string    `json:"label"`
	Scores    []float64 `json:"scores"`
	Median    float64   `json:"median"`
	XBaseline float64   `json:"x_baseline"`
	Findings  []Finding `json:"findings"`
	// Applied lists what changed: files written, DDL run, restarts.
	Applied []string `json:"applied,omitempty"`
	// Skipped says why a step did not run (no finding, or its change
	// failed and was rolled back).
	Skipped string `json:"skipped,omitempty"`
	// Failed counts runs that did not pass (a broken page, errors).
	Failed  int     `json:"failed_runs"`
	RPS     float64 `json:"rps_median"`
	P99MS   float64 `json:"p99_ms_median"`
	ApplyID string  `json:"apply_id,omitempty"`
	// RolledBack says why the step was undone after it was measured.
	RolledBack string `json:"rolled_back,omitempty"`
	// Before are the scores of the state before the step, measured
	// interleaved with Scores, and Decision the test that compared them
	// (stacktune tune; the demo leaves them empty).
	Before   []float64        `json:"before_scores,omitempty"`
	Decision *abtest.Decision `json:"decision,omitempty"`
}

// Finding is a finding behind a step.
type Finding struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Evidence []string `json:"evidence"`
	Change   string   `json:"change,omitempty"`
	Source   string   `json:"source,omitempty"`
	// Reason is why a finding was not applied (Result.NotApplied).
	Reason string `json:"reason,omitempty"`
}
