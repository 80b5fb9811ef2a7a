package demo

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/demo/loopresult"
	"github.com/stacktune/stacktune/internal/refapp"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/report"
)

// LoopOptions configures Loop. The zero value is the full loop.
type LoopOptions struct {
	// Quick is the shortened loop (QuickDuration runs, a shorter
	// diagnosis), under three minutes on two cores.
	Quick bool
	// Scale is the data scale (refapp.Generate); default 1.
	Scale int
	// Runs is the bench runs per step; default 3.
	Runs int
	// Duration is one bench run; default 30 s (Quick: 5 s).
	Duration time.Duration
	// Connections is the bench's virtual users; default 8.
	Connections int
	// Dir holds the servers, the files the loop applies, the apply
	// journal and the history. Empty means a temporary directory removed
	// at the end.
	Dir string
	// HistoryPath is the SQLite history the runs are recorded in;
	// default Dir/history.db.
	HistoryPath string
	// AllowDurabilityLoss lets the my.cnf step take the audit's
	// durability changes (the demo's database is throwaway).
	AllowDurabilityLoss bool
	// Progress receives one line per step; nil for none.
	Progress io.Writer
}

// Default durations.
const (
	FullDuration  = 30 * time.Second
	QuickDuration = 5 * time.Second
)

// The loop's result types live in package loopresult, data only, so
// package report renders them without importing the loop.
type (
	// LoopResult is the loop: the shape of `stacktune demo --format json`.
	LoopResult = loopresult.Result
	// StackInfo says what was measured.
	StackInfo = loopresult.Stack
	// StepResult is one step: its runs and the findings it applied.
	StepResult = loopresult.Step
	// StepFinding is a finding behind a step.
	StepFinding = loopresult.Finding
)

// loop is one run of Loop.
type loop struct {
	opt      LoopOptions
	st       *stack
	dir      string
	scenario string
	hist     *history.Store
	runs     []history.Run
	say      func(string, ...any)
}

// Loop starts the reference stack, measures a baseline, diagnoses it and
// applies the findings step by step, measuring each.
func Loop(ctx context.Context, opt LoopOptions) (res *LoopResult, err error) {
	if opt.Scale <= 0 {
		opt.Scale = 1
	}
	if opt.Runs <= 0 {
		opt.Runs = 3
	}
	if opt.Duration <= 0 {
		opt.Duration = FullDuration
		if opt.Quick {
			opt.Duration = QuickDuration
		}
	}
	if opt.Connections <= 0 {
		opt.Connections = 8
	}
	l := &loop{opt: opt, say: func(format string, a ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "stacktune demo: "+format+"\n", a...)
		}
	}}
	l.dir = opt.Dir
	if l.dir == "" {
		// Short: unix socket paths live under it.
		if l.dir, err = os.MkdirTemp("", "stdemo-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(l.dir)
	} else if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return nil, err
	}
	histPath := opt.HistoryPath
	if histPath == "" {
		histPath = filepath.Join(l.dir, "history.db")
	}
	if l.hist, err = history.Open(histPath); err != nil {
		return nil, err
	}
	defer l.hist.Close()
	l.scenario = filepath.Join(l.dir, "scenario.yaml")
	if err := os.WriteFile(l.scenario, refapp.Scenario, 0o644); err != nil {
		return nil, err
	}
	if l.st, err = startStack(ctx, l.dir, opt.Scale, l.say); err != nil {
		return nil, err
	}
	defer l.st.stop()
	defer func() {
		if res != nil {
			res.Runs = l.runs
		}
	}()

	res = &LoopResult{Steps: []StepResult{}, NotApplied: []StepFinding{}, Stack: StackInfo{
		MariaDB: l.st.db.Version(), Scale: opt.Scale, Runs: opt.Runs, DurationS: opt.Duration.Seconds(),
		Connections: opt.Connections, Cores: runtime.NumCPU(), Quick: opt.Quick,
	}}
	if opt.Dir != "" || opt.HistoryPath != "" {
		res.History = histPath
	}

	base := StepResult{Label: "baseline", Findings: []StepFinding{}}
	if err := l.measure(ctx, &base); err != nil {
		return res, err
	}
	base.XBaseline = 1
	res.Steps = append(res.Steps, base)
	if base.Median <= 0 {
		return res, fmt.Errorf("the baseline scored %v: the reference stack does not work (see the failed runs)", base.Scores)
	}

	d, err := l.diagnose(ctx)
	if err != nil {
		return res, fmt.Errorf("diagnosis: %w", err)
	}
	if err := l.runSteps(ctx, d, "", false, res); err != nil {
		return res, err
	}
	// The tuned stack has other bottlenecks: audit it again and apply
	// what is new, step by step as before.
	l.say("second audit: diagnosing the tuned stack")
	if d, err = l.diagnose(ctx); err != nil {
		return res, fmt.Errorf("second diagnosis: %w", err)
	}
	n := len(res.Steps)
	if err := l.runSteps(ctx, d, " (2nd audit)", true, res); err != nil {
		return res, err
	}
	if len(res.Steps) == n {
		l.say("second audit: nothing new to apply")
	}
	res.NotApplied = d.notApplied()
	return res, nil
}

// runSteps plans, applies and measures each step on d's findings, adding
// them to res; onlyChanges leaves out the steps with nothing to apply. A
// step whose every run scores below the worst run of the last step kept
// is rolled back (apply.Rollback) and reported so.
func (l *loop) runSteps(ctx context.Context, d *diagnosis, suffix string, onlyChanges bool, res *LoopResult) error {
	for _, s := range steps {
		sr := StepResult{Label: s.label + suffix, Findings: []StepFinding{}}
		plan, err := s.plan(ctx, l, d)
		if err != nil {
			return fmt.Errorf("step %s: %w", sr.Label, err)
		}
		sr.Findings = append(sr.Findings, plan.findings...)
		if len(plan.targets) == 0 {
			if onlyChanges {
				continue
			}
			sr.Skipped = "nothing to apply: " + orText(plan.why, "no finding for this step")
			l.say("step %q: %s", sr.Label, sr.Skipped)
			res.Steps = append(res.Steps, sr)
			continue
		}
		l.say("step %q: applying %d finding(s)", sr.Label, len(plan.findings))
		aopt := apply.Options{StateDir: filepath.Join(l.dir, "apply"), Label: sr.Label,
			Log: func(format string, a ...any) { l.say("  apply: "+format, a...) }}
		ar, err := apply.Run(ctx, plan.targets, aopt)
		if err != nil {
			sr.Skipped = "the change failed and was rolled back: " + err.Error()
			l.say("step %q: %s", sr.Label, sr.Skipped)
			res.Steps = append(res.Steps, sr)
			if ar == nil || !ar.RolledBack {
				return err // the stack is in an unknown state
			}
			continue
		}
		sr.ApplyID = ar.ID
		sr.Applied = append(ar.Changed(), plan.notes...)
		if err := l.warmUp(ctx, sr.Label); err != nil {
			return err
		}
		if err := l.measure(ctx, &sr); err != nil {
			return err
		}
		sr.XBaseline = sr.Median / res.Steps[0].Median
		if prev := lastKept(res); slower(sr.Scores, prev) {
			sr.RolledBack = fmt.Sprintf("every run scored below the worst run of the step before (best %s < %s) and the median fell %.0f%%: the change made it slower, so it was rolled back",
				report.Score(slices.Max(sr.Scores)), report.Score(slices.Min(prev)), 100*(1-history.Median(sr.Scores)/history.Median(prev)))
			l.say("step %q: %s", sr.Label, sr.RolledBack)
			if _, err := apply.Rollback(ctx, plan.targets, aopt); err != nil {
				return fmt.Errorf("rolling back %s: %w", sr.Label, err)
			}
		}
		res.Steps = append(res.Steps, sr)
	}
	return nil
}

// lastKept is the scores of the last step measured and not rolled back
// (the baseline first).
func lastKept(r *LoopResult) []float64 {
	for i := len(r.Steps) - 1; i >= 0; i-- {
		if s := r.Steps[i]; s.Skipped == "" && s.RolledBack == "" {
			return s.Scores
		}
	}
	return nil
}

// slower tells whether a step made things slower beyond the noise of its
// runs: every run below the worst run of the step before, and the median
// at least slowerBy lower. (Three runs against three all on one side
// happens by chance one time in twenty; the median drop keeps that chance
// from rolling back a change that does nothing measurable.)
func slower(cur, prev []float64) bool {
	if len(cur) == 0 || len(prev) == 0 {
		return false
	}
	return slices.Max(cur) < slices.Min(prev) && history.Median(cur) < (1-slowerBy)*history.Median(prev)
}

// slowerBy is the median drop from which a step counts as slower.
const slowerBy = 0.10

// warmUp runs the bench once, unscored and unrecorded, after a change:
// a restarted server or app starts with cold caches, and the step's runs
// should measure the change, not the restart.
func (l *loop) warmUp(ctx context.Context, label string) error {
	if err := l.initialize(ctx); err != nil {
		return err
	}
	bo := l.benchOptions(label + " (warm-up)")
	bo.Load.Duration = min(l.opt.Duration, warmUpMax)
	if l.opt.Quick {
		bo.Load.Duration = min(l.opt.Duration, quickWarmUp)
	}
	_, err := benchrun.Run(ctx, bo)
	return err
}

// Warm-up bounds.
const (
	warmUpMax   = 10 * time.Second
	quickWarmUp = 2 * time.Second
)

// measure runs the bench opt.Runs times on a freshly initialised app and
// records every run in the history under the step's label.
func (l *loop) measure(ctx context.Context, sr *StepResult) error {
	var rps, p99 []float64
	for i := 1; i <= l.opt.Runs; i++ {
		if err := l.initialize(ctx); err != nil {
			return err
		}
		sum, err := benchrun.Run(ctx, l.benchOptions(sr.Label))
		if err != nil {
			return fmt.Errorf("%s run %d: %w", sr.Label, i, err)
		}
		for _, r := range history.FromSummary(sum) {
			if _, err := l.hist.Add(ctx, &r); err != nil {
				return err
			}
			l.runs = append(l.runs, r)
		}
		sr.Scores = append(sr.Scores, sum.Score)
		rps = append(rps, sum.RPS)
		p99 = append(p99, sum.LatencyMS.P99)
		if !sum.Passed {
			sr.Failed++
		}
		l.say("%s run %d/%d: score %s, %.1f req/s, p99 %.0f ms%s", sr.Label, i, l.opt.Runs, report.Score(sum.Score), sum.RPS, sum.LatencyMS.P99, failNote(sum))
	}
	sr.Median = history.Median(sr.Scores)
	sr.RPS = history.Median(rps)
	sr.P99MS = history.Median(p99)
	return nil
}

func (l *loop) benchOptions(label string) benchrun.Options {
	return benchrun.Options{
		Scenario: l.scenario, BaseURL: l.st.nginx.URL(), Label: label, Runs: 1,
		Load: loadgen.Options{Connections: l.opt.Connections, Duration: l.opt.Duration, KeepAlive: true, Timeout: 30 * time.Second},
	}
}

func failNote(s *benchrun.Summary) string {
	if s.Passed {
		return ""
	}
	if len(s.FailReasons) > 0 {
		return " (failed: " + s.FailReasons[0] + ")"
	}
	return " (failed)"
}

// initialize resets the app's data to the generated set (GET
// /initialize), so every run starts from the same data.
func (l *loop) initialize(ctx context.Context) error {
	if err := getOK(ctx, &http.Client{Timeout: 5 * time.Minute}, l.st.nginx.URL()+"initialize", "initialize through nginx"); err != nil {
		return err
	}
	return l.waitPurge(ctx)
}

// waitPurge waits (at most purgeWait) until InnoDB has purged the rows
// /initialize deleted: until then every scan of those tables still walks
// the delete-marked rows, and a run started at once would be slower than
// one started after a pause (a step's apply): the runs would not be
// comparable.
func (l *loop) waitPurge(ctx context.Context) error {
	deadline := time.Now().Add(purgeWait)
	for {
		var name string
		var n int64
		if err := l.st.db.DB().QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'").Scan(&name, &n); err != nil {
			return fmt.Errorf("reading the purge backlog: %w", err)
		}
		if n <= purgeDone || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// The purge wait's bound and the backlog counted as done.
const (
	purgeWait = 30 * time.Second
	purgeDone = 10
)

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
