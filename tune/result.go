package tune

import (
	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/fixplan"
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
	// Noise is how wide the noise floor was against the limit, the causes
	// the loop saw and what it did (longer runs).
	Noise *Noise `json:"noise,omitempty"`
	// Final is the stack as found against the tuned one, interleaved: the
	// loop's one number (nil when no step was kept, or the loop stopped
	// before it).
	Final *Final `json:"final,omitempty"`
	// Restart is the end-of-loop check that the kept changes survive a
	// restart of the services they changed (the ISUCON5 runner-up: files, not
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
	// MySQLConf says where the my.cnf drop-in goes and why
	// (Services.MySQLConfWhere; empty when not said).
	MySQLConf string `json:"mysql_conf,omitempty"`
}

// StepResult is one step: its runs, the test that decided it and the
// findings it applied.
type StepResult struct {
	Label string `json:"label"`
	// Scores are the runs of the step's state (B), Before those of the
	// state before it (A), measured interleaved with them, and Decision
	// the test that compared them. The baseline's Scores are both arms
	// of the noise floor.
	Scores   []float64        `json:"scores"`
	Before   []float64        `json:"before_scores,omitempty"`
	Decision *abtest.Decision `json:"decision,omitempty"`
	Median   float64          `json:"median"`
	// XBaseline is the kept steps' interleaved ratios chained up to this
	// one (each measured against the state right before it, not against a
	// baseline measured at another time); 0 for a step that was not kept
	// (no ratio: the stack is as before it). The final comparison
	// measures the whole.
	XBaseline float64 `json:"x_baseline"`
	// Detectable is the smallest effect the step's test could tell from
	// noise, as a fraction (half its interval's width).
	Detectable float64   `json:"detectable,omitempty"`
	Findings   []Finding `json:"findings"`
	// Applied lists what changed: files written, DDL run, restarts.
	Applied []string `json:"applied,omitempty"`
	// Skipped says why a step did not run (no finding, a dry run, or its
	// change failed and was rolled back): a code; Why the detail.
	Skipped StepSkip `json:"skipped,omitempty"`
	// Failed counts the step's runs that did not pass (a broken page,
	// errors).
	Failed  int     `json:"failed_runs"`
	RPS     float64 `json:"rps_median"`
	P99MS   float64 `json:"p99_ms_median"`
	ApplyID string  `json:"apply_id,omitempty"`
	// RolledBack says why the step was undone after it was measured: a
	// code; Why the detail.
	RolledBack StepUndo `json:"rolled_back,omitempty"`
	// Why is the detail of Skipped or RolledBack, for people: the
	// step's own word on why it has nothing to apply, the error, the
	// decision.
	Why string `json:"why,omitempty"`
}

// StepSkip is why a step did not run (StepResult.Skipped).
type StepSkip string

// The reasons a step did not run.
const (
	SkipNothingToApply StepSkip = "nothing_to_apply" // no finding for the step (Why: the step's word)
	SkipCannotApply    StepSkip = "cannot_apply"     // its changes cannot be applied on this stack (Why: the error)
	SkipApplyFailed    StepSkip = "apply_failed"     // applying failed and was rolled back (Why: the error)
	SkipDryRunBaseline StepSkip = "dry_run_baseline" // a dry run: the baseline is not measured
	SkipDryRun         StepSkip = "dry_run"          // a dry run: planned, not applied
)

// Codes lists the reasons (docs/json.md).
func (StepSkip) Codes() []string {
	return []string{string(SkipNothingToApply), string(SkipCannotApply), string(SkipApplyFailed), string(SkipDryRunBaseline), string(SkipDryRun)}
}

// StepUndo is why a step measured was rolled back (StepResult.RolledBack).
type StepUndo string

// The reasons a measured step was rolled back.
const (
	UndoSlower  StepUndo = "slower"  // the test found it worse (Why: the decision)
	UndoStopped StepUndo = "stopped" // the loop stopped during the step (Why: the error)
)

// Codes lists the reasons (docs/json.md).
func (StepUndo) Codes() []string { return []string{string(UndoSlower), string(UndoStopped)} }

// Finding is a finding behind a step, or one no step took.
type Finding struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Evidence []string `json:"evidence"`
	Change   string   `json:"change,omitempty"`
	Source   string   `json:"source,omitempty"`
	// Reason is why a finding was not applied (Result.NotApplied).
	Reason LeftReason `json:"reason,omitempty"`
	// Fix is, for an N+1 pattern or a hot function left to the user,
	// what the change is worth, the one query that replaces a loop
	// (checked) and the command that proves the change.
	Fix *fixplan.Fix `json:"fix,omitempty"`
}

// LeftReason is why a finding is left to the user (Finding.Reason): a
// code; report says it in words.
type LeftReason string

// The reasons a finding is left to the user.
const (
	LeftAppCode       LeftReason = "app_code"       // an N+1 loop or a hot function: the application's code
	LeftAppSetting    LeftReason = "app_setting"    // the application's code or settings, for its developers
	LeftObservability LeftReason = "observability"  // worth having on a real server, at a cost this loop measures
	LeftInformation   LeftReason = "information"    // no setting to change
	LeftHostWide      LeftReason = "host_wide"      // kernel settings, service units: only with leave (--host-wide)
	LeftServiceConfig LeftReason = "service_config" // memcached and Redis options, set in their own configuration
	LeftMount         LeftReason = "mount"          // a mount option, set in /etc/fstab
	LeftNoStep        LeftReason = "no_step"        // no step of the loop applies this kind of change
)

// Codes lists the reasons (docs/json.md).
func (LeftReason) Codes() []string {
	return []string{string(LeftAppCode), string(LeftAppSetting), string(LeftObservability), string(LeftInformation),
		string(LeftHostWide), string(LeftServiceConfig), string(LeftMount), string(LeftNoStep)}
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
	// read once, as the 2015 tpcc-mysql contest entry did with count(*)): what a cold start costs.
	ColdScore float64  `json:"cold_score"`
	WarmScore float64  `json:"warm_score"`
	Warmed    []string `json:"warmed,omitempty"`
}
