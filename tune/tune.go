package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/atomicfile"
	"github.com/stacktune/stacktune/internal/stats"
	"github.com/stacktune/stacktune/loadgen"
)

// Options configure Run.
type Options struct {
	// Diagnose is the stack and its bench: the server (DSN), the bench
	// run (a scenario or a URL; one measured run is one run of it), what
	// is collected, the access logs, how the app reconnects (AppRestart:
	// a reload or a restart that makes it open new connections) and what
	// runs before each bench run. Its Audit carries the constraints
	// (fixed settings, durability).
	Diagnose diagnose.Options
	// DiagnoseDuration is the diagnosis run's duration; 0 means a
	// measured run's (Diagnose.Bench.Load.Duration).
	DiagnoseDuration time.Duration
	// Services say how apply reaches and changes the stack (my.cnf
	// drop-in, restart and check commands, nginx.conf, sysctl.d, systemd
	// drop-ins).
	Services apply.Services
	// Steps are the loop's steps in order; nil means DefaultSteps. The
	// demo adds its own (unix sockets, the cache client, N+1 fixes).
	Steps []Step
	// HostWide lets the host-wide step (sysctl.d, systemd limits) run.
	HostWide bool
	// StateDir is apply's journal directory.
	StateDir string
	// History records every measured run when set, in a session of the
	// ledger (command tune) with the noise floor and each decision, and
	// each diagnosis as a run with its artefacts.
	History *history.Store
	// Ledger is what the caller knows of the runs (the scenario's hash,
	// the app's commit, versions), set on each run recorded.
	Ledger history.Meta
	// AB is the test deciding each step (interleaved runs, stopping
	// rule, level); its zero value is abtest's defaults.
	AB abtest.Options
	// WarmUp is the length of one unrecorded bench run after every
	// switch between a step's states (and of the baseline's), so a run
	// measures the state, not a restart's cold caches; 0 for none. A
	// switch that restarted the server also warms its buffer pool (every
	// index read once) whatever WarmUp is.
	WarmUp time.Duration
	// AppRestart restarts the app for the end-of-loop restart check (a
	// real restart: files, not runtime); AppRestartName says what it is.
	// Nil leaves the app out of the check.
	AppRestart     func(ctx context.Context) error
	AppRestartName string
	// KeepDir, when set, keeps each diagnosis (JSON, its snapshot apart)
	// and each step's change set (changes.json and its views, which
	// `stacktune apply` takes again).
	KeepDir string
	// DryRun diagnoses and prints each step's plan, and changes nothing.
	DryRun bool
	// Label prefixes the runs' labels in the history.
	Label string
	// Progress receives one line per event; nil for none.
	Progress func(line string)
	// NoiseLimit is the widest noise floor (half its interval, as a
	// fraction: 0.1 is ±10%) the loop goes on with as it is: past it, the
	// loop says so with the causes it sees and measures again with runs
	// twice as long (within Budget), and stops past ±50%. 0 means
	// DefaultNoiseLimit; negative, no check.
	NoiseLimit float64
	// Budget bounds the loop's time for adapting to noise (0: at most
	// two longer floors).
	Budget time.Duration
	// TraceRestart lets a diagnosis whose trace run finds
	// performance_schema off restart the server with it on for the trace
	// run, and back after (Services' restart, the loop's journal).
	TraceRestart bool

	// diagnoseRun, for tests, replaces diagnose.Run.
	diagnoseRun func(context.Context, diagnose.Options) (*diagnose.Result, error)
}

// The rounds of steps: the first on the stack as it was, the second on
// what the diagnosis of the tuned stack finds new.
const secondRound = " (2nd audit)"

// Run is the loop on the stack: it measures the baseline against itself
// (the noise floor), diagnoses, then for each step applies its changes
// through apply's transaction and decides with an interleaved A/B test
// (abtest.Run) whether it is kept (better or within noise) or rolled back
// (worse); then it diagnoses the tuned stack again and runs the steps on
// what is new. At the end it restarts what the kept steps changed and
// checks that they hold. Changes it cannot make (application code: N+1
// patterns, caches, pools; memcached and Redis settings) are listed with
// their evidence.
func Run(ctx context.Context, opt Options) (_ *Result, err error) {
	if opt.StateDir == "" {
		return nil, errors.New("tune: no state directory for apply's journal")
	}
	if opt.Steps == nil {
		opt.Steps = DefaultSteps()
	}
	t := newTuner(opt)
	res := t.res
	if opt.DryRun {
		return res, t.dryRun(ctx)
	}
	if opt.History != nil {
		id, err := opt.History.StartSession(ctx, history.CommandTune, opt.Label)
		if err != nil {
			return res, err
		}
		t.meta.Session = id
		defer func() {
			status := history.SessionDone
			if err != nil {
				status = history.SessionFailed
			}
			if eerr := opt.History.EndSession(context.WithoutCancel(ctx), id, status); eerr != nil {
				t.say("recording the end of the session: %v", eerr)
			}
		}()
	}
	return t.run(ctx)
}

func (t *tuner) run(ctx context.Context) (*Result, error) {
	opt, res := t.opt, t.res
	base, err := t.baseline(ctx, "baseline")
	if err != nil {
		return res, err
	}
	if base.Median <= 0 {
		return res, fmt.Errorf("the baseline scored %v: the stack does not pass its own bench", base.Scores)
	}

	var pick *Pick
	for round, suffix := range []string{"", secondRound} {
		d, err := t.diagnose(ctx, round+1)
		if err != nil {
			return res, err
		}
		pick = newPick(d, opt.HostWide)
		n := len(res.Steps)
		for _, s := range opt.Steps {
			sr, err := t.step(ctx, s, pick, suffix)
			if sr != nil && (round == 0 || sr.Skipped == "" || err != nil) {
				res.Steps = append(res.Steps, *sr)
			}
			if err != nil {
				return res, err
			}
		}
		if round > 0 && len(res.Steps) == n {
			t.say("second audit: nothing new to apply")
		}
	}
	res.NotApplied = t.addFixes(pick, pick.notApplied())
	if res.Final, err = t.final(ctx); err != nil {
		return res, fmt.Errorf("final comparison: %w", err)
	}
	if len(t.kept) > 0 {
		if res.Restart, err = t.restartCheck(ctx); err != nil {
			return res, fmt.Errorf("restart check: %w", err)
		}
	}
	return res, nil
}

// NoiseFloor measures the stack as it is against itself (A against A,
// each run as Run measures one, warm-up and history included) and
// returns the result as the baseline of a Run: its Steps hold the one
// step labelled label, NoiseFloor its decision. Nothing is changed.
func NoiseFloor(ctx context.Context, opt Options, label string) (*Result, error) {
	t := newTuner(opt)
	_, err := t.baseline(ctx, label)
	return t.res, err
}

func newTuner(opt Options) *tuner {
	t := &tuner{opt: opt, figures: map[string]*figures{}, chain: 1, started: time.Now(), meta: opt.Ledger, then: map[string][]changeset.Change{}}
	if t.meta.Command == "" {
		t.meta.Command = history.CommandTune
	}
	// Count the server's restarts: a switch that restarted it is followed
	// by a warm-up of its buffer pool.
	if restart := opt.Services.MySQLRestart; restart != nil {
		t.opt.Services.MySQLRestart = func(ctx context.Context) error {
			t.restarts++
			return restart(ctx)
		}
	}
	t.res = &Result{Steps: []StepResult{}, NotApplied: []Finding{}, Stack: t.stack()}
	return t
}

// baseline measures the stack against itself (the noise floor) and adds
// it as the first step.
func (t *tuner) baseline(ctx context.Context, label string) (*StepResult, error) {
	t.say("%s: measuring the stack as it is against itself (the noise floor)", label)
	floor, err := t.faceNoise(ctx, label)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	base := StepResult{Label: label, Findings: []Finding{}, Scores: append(floor.Scores(abtest.A), floor.Scores(abtest.B)...), XBaseline: 1}
	t.fill(&base)
	t.res.NoiseFloor = &floor.Decision
	t.res.Steps = append(t.res.Steps, base)
	if t.meta.Session != 0 {
		if err := t.opt.History.SetNoise(ctx, t.meta.Session, Detectable(&floor.Decision)); err != nil {
			t.say("recording the noise floor: %v", err)
		}
	}
	t.decided(ctx, label, label, &floor.Decision, true)
	t.say("noise floor: %s", floor.Decision.Reason)
	return &t.res.Steps[len(t.res.Steps)-1], nil
}

// tuner is one Run.
type tuner struct {
	opt Options
	res *Result
	// figures are the measured runs' figures by label (B arm).
	figures map[string]*figures
	// kept are the targets of the steps kept, in order.
	kept []keptStep
	// restarts counts the server's restarts; warmedAt is the count the
	// buffer pool was last warmed at.
	restarts, warmedAt int
	// started is when the loop started (for Budget).
	started time.Time
	// meta is set on every run recorded (the session's ID included).
	meta history.Meta
	// planned are the changes of the step last planned; inForce, while
	// a test runs, the changes in force in each arm (recorded with each
	// run as its change set).
	planned []changeset.Change
	inForce func(abtest.Arm) []changeset.Change
	// chain is the product of the kept steps' interleaved ratios: the
	// tuned state's estimated ratio to the baseline, until the final
	// comparison measures it.
	chain float64
	// then are the steps' Work.Then, by label.
	then map[string][]changeset.Change
}

type keptStep struct {
	label   string
	targets []apply.Target
	opt     apply.Options // the step's transactions' (its label)
	changes []changeset.Change
}

// keptChanges are the changes of the kept steps (those of changeset's
// kinds; the demo's own targets have none).
func (t *tuner) keptChanges() []changeset.Change {
	var cs []changeset.Change
	for _, k := range t.kept {
		cs = append(cs, k.changes...)
	}
	return cs
}

// figures are a label's measured runs.
type figures struct {
	rps, p99 []float64
	failed   int
}

// stack describes what is measured, for the report's header.
func (t *tuner) stack() Stack {
	b := t.opt.Diagnose.Bench
	what := loadgen.MaskURL(b.URL)
	if b.Scenario != "" {
		what = "the scenario " + filepath.Base(b.Scenario)
	}
	if b.BaseURL != "" {
		what += " against " + loadgen.MaskURL(b.BaseURL)
	}
	ab := t.opt.AB
	if ab.MinRuns == 0 {
		ab.MinRuns = abtest.DefaultMinRuns
	}
	if ab.MaxRuns == 0 {
		ab.MaxRuns = max(abtest.DefaultMaxRuns, ab.MinRuns)
	}
	return Stack{Description: "stacktune tune: " + what, MinRuns: ab.MinRuns, Runs: ab.MaxRuns, DurationS: b.Load.Duration.Seconds(),
		Connections: b.Load.Connections, Cores: runtime.NumCPU(), MySQLConf: t.opt.Services.MySQLConfWhere}
}

// fill sets a step's medians from its measured runs.
func (t *tuner) fill(s *StepResult) {
	s.Median = stats.Median(s.Scores)
	if f := t.figures[s.Label]; f != nil {
		s.RPS, s.P99MS, s.Failed = stats.Median(f.rps), stats.Median(f.p99), f.failed
	}
}

func (t *tuner) say(format string, args ...any) {
	if t.opt.Progress != nil {
		t.opt.Progress(fmt.Sprintf(format, args...))
	}
}

// diagnose runs the diagnosis of a round, keeps it, and makes the app
// reconnect: its sessions opened during the capture keep the capture's
// slow-log settings.
func (t *tuner) diagnose(ctx context.Context, round int) (*diagnose.Result, error) {
	what := "diagnosis"
	if round > 1 {
		what = "second diagnosis"
		t.say("second audit: diagnosing the tuned stack")
	}
	t.say("%s: one bench run with the capture on", what)
	dopt := t.opt.Diagnose
	if t.opt.DiagnoseDuration > 0 {
		dopt.Bench.Load.Duration = t.opt.DiagnoseDuration
	}
	// A trace run may restart the server with performance_schema on
	// through the loop's own services and journal (the restart counted,
	// so the next run is warmed).
	if dopt.Requests.Trace == diagnose.TraceAuto && dopt.Requests.PFSRestart == nil && t.opt.TraceRestart && t.opt.Services.MySQLRestart != nil && !t.opt.DryRun {
		dopt.Requests.PFSRestart = &diagnose.PFSRestart{Services: t.opt.Services, StateDir: t.opt.StateDir}
	}
	run := diagnose.Run
	if t.opt.diagnoseRun != nil {
		run = t.opt.diagnoseRun
	}
	d, err := run(ctx, dopt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if round == 1 {
		t.res.First = d
	} else {
		t.res.Second = d
	}
	t.res.Stack.MariaDB = d.Server
	if p := d.PerRequest; p != nil {
		t.say("%s: per request: %s (%s)", what, p.Mechanism, p.Reason)
	}
	if t.opt.History != nil {
		if run := d.LedgerRun(t.opt.Label + what); run != nil {
			t.meta.Set(run)
			run.Command = history.CommandDiagnose
			if _, err := t.opt.History.Add(ctx, run); err != nil {
				return nil, fmt.Errorf("%s: recording it: %w", what, err)
			}
		}
	}
	t.keep(fmt.Sprintf("diagnosis-%d.json", round), d)
	t.keep(fmt.Sprintf("snapshot-%d.json", round), d.Snapshot)
	if d.IndexError != "" {
		t.say("%s: index advice failed: %s", what, d.IndexError)
	}
	if !t.opt.DryRun && t.opt.Diagnose.AppRestart != nil {
		if err := t.opt.Diagnose.AppRestart(ctx); err != nil {
			return nil, fmt.Errorf("after the %s, making the app reconnect: %w", what, err)
		}
	}
	return d, nil
}

// keep writes v as JSON under KeepDir (a failure is only said).
func (t *tuner) keep(name string, v any) {
	if t.opt.KeepDir == "" {
		return
	}
	err := os.MkdirAll(t.opt.KeepDir, 0o755)
	if err == nil {
		err = atomicfile.Write(filepath.Join(t.opt.KeepDir, name), 0o644, func(w io.Writer) error { return writeJSON(w, v) })
	}
	if err != nil {
		t.say("keeping %s: %v", name, err)
	}
}

// keepChanges writes a step's change set under KeepDir/changes, for the
// record and for `stacktune apply` (a failure is only said).
func (t *tuner) keepChanges(label string, cs []changeset.Change) {
	if t.opt.KeepDir == "" || len(cs) == 0 {
		return
	}
	root := filepath.Join(t.opt.KeepDir, "changes")
	dir := ""
	err := os.MkdirAll(root, 0o755)
	if err == nil {
		dir, err = os.MkdirTemp(root, strings.NewReplacer(" ", "-", "(", "", ")", "", "/", "-").Replace(label)+"-")
	}
	if err == nil {
		_, err = changeset.Write(dir, &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune tune: " + label, Changes: cs})
	}
	if err != nil {
		t.say("keeping the changes of %s: %v", label, err)
	}
}

// measure measures one bench run in the arm it is given, labelled labelA
// or labelB by its arm, records it in the history, and keeps the figures
// of labelB's runs.
func (t *tuner) measure(labelA, labelB string) func(ctx context.Context, arm abtest.Arm) (float64, error) {
	return func(ctx context.Context, arm abtest.Arm) (float64, error) {
		label := labelB
		if arm == abtest.A {
			label = labelA
		}
		sum, err := t.bench(ctx, t.opt.Label+label, 0)
		if err != nil {
			return 0, err
		}
		runs := history.FromSummary(sum)
		if t.opt.History != nil {
			var changes []history.Artefact
			if t.inForce != nil {
				if cs := t.inForce(arm); len(cs) > 0 {
					if a, ok := history.JSONArtefact(history.ArtefactChanges, &changeset.Set{Format: changeset.FormatVersion,
						Source: "stacktune tune: in force during " + t.opt.Label + label, Changes: cs}); ok {
						changes = append(changes, a)
					}
				}
			}
			for i := range runs {
				t.meta.Set(&runs[i])
				runs[i].Arm = armCode(arm)
				runs[i].Artefacts = changes
				if _, err := t.opt.History.Add(ctx, &runs[i]); err != nil {
					return 0, err
				}
			}
		}
		if label == labelB {
			t.res.Runs = append(t.res.Runs, runs...)
			f := t.figures[label]
			if f == nil {
				f = &figures{}
				t.figures[label] = f
			}
			f.rps, f.p99 = append(f.rps, sum.RPS), append(f.p99, sum.LatencyMS.P99)
			if !sum.Passed {
				f.failed++
			}
		}
		t.say("%s %s: score %.0f, %.1f req/s, p99 %.0f ms%s", t.opt.Label+label, arm, sum.Score, sum.RPS, sum.LatencyMS.P99, failNote(sum))
		return sum.Score, nil
	}
}

// bench runs the bench once (after the pre-run hook), for d when it is
// not 0.
func (t *tuner) bench(ctx context.Context, label string, d time.Duration) (*benchrun.Summary, error) {
	if t.opt.Diagnose.BeforeBench != nil {
		if err := t.opt.Diagnose.BeforeBench(ctx); err != nil {
			return nil, fmt.Errorf("before the bench: %w", err)
		}
	}
	bo := t.opt.Diagnose.Bench
	bo.Runs, bo.Label = 1, label
	if d > 0 {
		bo.Load.Duration = d
	}
	return benchrun.Run(ctx, bo)
}

func failNote(s *benchrun.Summary) string {
	switch {
	case s.Passed:
		return ""
	case len(s.FailReasons) > 0:
		return " (failed: " + s.FailReasons[0] + ")"
	}
	return " (failed)"
}

// afterSwitch follows every switch between states: a server restarted
// by it gets its buffer pool warmed, and a warm-up run (WarmUp) fills the
// rest of the caches, so the next run measures the state.
func (t *tuner) afterSwitch(ctx context.Context) error {
	if t.restarts != t.warmedAt {
		t.warmedAt = t.restarts
		if t.opt.Services.DB != nil {
			warmed, err := warmBufferPool(ctx, t.opt.Services.DB, t.opt.Services.Schema)
			if err != nil {
				return err
			}
			t.say("the server restarted: buffer pool warmed (%d indexes read)", len(warmed))
		}
	}
	if t.opt.WarmUp > 0 {
		if _, err := t.bench(ctx, t.opt.Label+"(warm-up)", t.opt.WarmUp); err != nil {
			return fmt.Errorf("warm-up run: %w", err)
		}
	}
	return nil
}

// measureHolding measures a step's run and, in state B, checks that the
// step's changes are still in force after it: a pre-run hook that
// recreates the schema, or an app that rewrites its config, would undo
// them and B would measure A.
func (t *tuner) measureHolding(label string, targets []apply.Target) func(ctx context.Context, arm abtest.Arm) (float64, error) {
	measure := t.measure(label+" (before)", label)
	return func(ctx context.Context, arm abtest.Arm) (float64, error) {
		score, err := measure(ctx, arm)
		if err != nil || arm != abtest.B {
			return score, err
		}
		for _, tg := range targets {
			if err := tg.Verify(ctx, tg.Wanted()); err != nil {
				return 0, fmt.Errorf("after a run, %s no longer holds the change (does the pre-run hook or the app undo it? put it in the app's own schema or config): %w", tg.Name(), err)
			}
		}
		return score, nil
	}
}

// plan asks a step for its work and builds its targets; the result says
// why it does nothing when it does nothing (targets nil).
func (t *tuner) plan(ctx context.Context, s Step, p *Pick, label string) (*StepResult, []apply.Target, error) {
	w, err := s.Plan(ctx, p)
	if err != nil {
		return nil, nil, fmt.Errorf("step %s: %w", label, err)
	}
	sr := &StepResult{Label: label, Findings: w.Findings}
	if sr.Findings == nil {
		sr.Findings = changeFindings(w.Changes)
	}
	if w.empty() {
		sr.Skipped, sr.Why = SkipNothingToApply, w.Why
		return sr, nil, nil
	}
	var targets []apply.Target
	if len(w.Changes) > 0 {
		set := &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune tune", Changes: w.Changes}
		ts, notes, err := apply.FromChangeSet(set, t.opt.Services)
		for _, n := range notes {
			t.say("%s: %s", label, n)
		}
		if err != nil {
			sr.Skipped, sr.Why = SkipCannotApply, err.Error()
			return sr, nil, nil
		}
		targets = ts
		t.keepChanges(label, w.Changes)
		t.planned = w.Changes
	}
	targets = append(targets, w.Targets...)
	sr.Applied = append(sr.Applied, w.Notes...)
	t.then[label] = w.Then
	return sr, targets, nil
}

// step plans, applies and decides one step. The error means the stack
// may not be where the loop left it (a failed rollback), or the context
// ended.
func (t *tuner) step(ctx context.Context, s Step, p *Pick, suffix string) (*StepResult, error) {
	label := s.Label + suffix
	t.planned = nil
	sr, targets, err := t.plan(ctx, s, p, label)
	planned := t.planned
	if err != nil || targets == nil {
		if sr != nil && sr.Skipped != "" {
			t.say("step %q: not run (%s) %s", label, sr.Skipped, sr.Why)
		}
		return sr, err
	}
	aopt := apply.Options{StateDir: t.opt.StateDir, HostWide: t.opt.HostWide, Label: label,
		Log: func(format string, a ...any) { t.say("  apply: "+format, a...) }}
	t.say("step %q: applying %d finding(s)", label, len(sr.Findings))
	ar, err := apply.Run(ctx, targets, aopt)
	if err != nil {
		sr.Skipped, sr.Why = SkipApplyFailed, err.Error()
		t.say("step %q: the change failed and was rolled back: %s", label, sr.Why)
		if ar == nil || !ar.RolledBack || len(ar.Leftovers) > 0 {
			return sr, err // the stack is in an unknown state
		}
		return sr, nil
	}
	sr.ApplyID = ar.ID
	sr.Applied = append(ar.Changed(), sr.Applied...)
	sw := &switcher{t: t, targets: targets, opt: aopt, state: abtest.B}
	// stop undoes the step after an error, and says so in its result.
	stop := func(err error) (*StepResult, error) {
		err = sw.undo(ctx, err)
		if sw.state == abtest.A {
			sr.RolledBack, sr.Why = UndoStopped, err.Error()
		}
		return sr, err
	}
	if err := t.afterSwitch(ctx); err != nil {
		return stop(fmt.Errorf("step %s: %w", label, err))
	}
	ab := t.opt.AB
	ab.Start = abtest.B
	kept := t.keptChanges()
	t.inForce = func(arm abtest.Arm) []changeset.Change {
		if arm == abtest.B {
			return append(slices.Clone(kept), planned...)
		}
		return kept
	}
	defer func() { t.inForce = nil }()
	r, err := abtest.Run(ctx, abtest.Experiment{ToA: sw.to(abtest.A), ToB: sw.to(abtest.B), Measure: t.measureHolding(label, targets)}, ab)
	if err != nil {
		return stop(fmt.Errorf("step %s: %w", label, err))
	}
	sr.Scores, sr.Before, sr.Decision = r.Scores(abtest.B), r.Scores(abtest.A), &r.Decision
	t.fill(sr)
	sr.Detectable = Detectable(&r.Decision)
	t.say("step %q: %s", label, r.Decision.Reason)
	want := abtest.B // kept: better, or within noise (sound advice is not undone on noise)
	if r.Decision.Verdict == abtest.Worse {
		sr.RolledBack, sr.Why = UndoSlower, r.Decision.Reason
		want = abtest.A
	}
	t.decided(ctx, label+" (before)", label, &r.Decision, want == abtest.B)
	if sw.state != want {
		if err := sw.to(want)(ctx); err != nil {
			return stop(fmt.Errorf("step %s: putting it in state %s after the test: %w", label, want, err))
		}
	}
	if want == abtest.B {
		t.kept = append(t.kept, keptStep{label, targets, aopt, planned})
		// x baseline: the kept steps' own interleaved ratios, chained
		// (a rolled-back step has none: the stack is as before it).
		t.chain *= r.Decision.RatioMedian
		sr.XBaseline = round3(t.chain)
		if then := t.then[label]; len(then) > 0 {
			return sr, t.applyThen(ctx, label, then, sr)
		}
	}
	return sr, nil
}

// applyThen makes a kept step's second part (Work.Then: the indexes the
// test measured ignored, dropped) as a transaction of its own, kept
// after the step: the final comparison and a rollback undo it first. A
// failure that apply rolled back is said and leaves the step's first
// part in force; the error means the stack is in an unknown state.
func (t *tuner) applyThen(ctx context.Context, label string, cs []changeset.Change, sr *StepResult) error {
	then := label + " (then)"
	set := &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune tune", Changes: cs}
	ts, notes, err := apply.FromChangeSet(set, t.opt.Services)
	for _, n := range notes {
		t.say("%s: %s", then, n)
	}
	if err != nil {
		sr.Applied = append(sr.Applied, "not made: "+err.Error())
		t.say("step %q: %v", then, err)
		return nil
	}
	t.keepChanges(then, cs)
	aopt := apply.Options{StateDir: t.opt.StateDir, HostWide: t.opt.HostWide, Label: then,
		Log: func(format string, a ...any) { t.say("  apply: "+format, a...) }}
	ar, err := apply.Run(ctx, ts, aopt)
	if err != nil {
		t.say("step %q: the change failed and was rolled back: %v", then, err)
		if ar == nil || !ar.RolledBack || len(ar.Leftovers) > 0 {
			return err
		}
		sr.Applied = append(sr.Applied, "then, not made (rolled back): "+err.Error())
		return nil
	}
	t.say("step %q: kept, so made: %s", then, strings.Join(ar.Changed(), "; "))
	sr.Applied = append(sr.Applied, ar.Changed()...)
	t.kept = append(t.kept, keptStep{label: then, targets: ts, opt: aopt, changes: cs})
	return t.afterSwitch(ctx)
}

// switcher switches a step's targets between the state before the step
// (A: apply's rollback of the step's transaction) and the step (B: a new
// transaction), and knows which state they are in.
type switcher struct {
	t       *tuner
	targets []apply.Target
	opt     apply.Options
	state   abtest.Arm
}

// to switches to arm: apply, then the warm-up after a switch.
func (sw *switcher) to(arm abtest.Arm) func(context.Context) error {
	return func(ctx context.Context) error {
		do := apply.Run
		if arm == abtest.A {
			do = apply.Rollback
		}
		if _, err := do(ctx, sw.targets, sw.opt); err != nil {
			return err // apply undid its own transaction, or says what it left
		}
		sw.state = arm
		return sw.t.afterSwitch(ctx)
	}
}

// undo puts an undecided step back to the state before it after err
// (a failed run, a failed switch, an interrupt), on a context of its own
// so that an interrupt does not stop it half-way: the loop leaves a
// failed step as it found it.
func (sw *switcher) undo(ctx context.Context, err error) error {
	if sw.state == abtest.A {
		return err
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	if _, rerr := apply.Rollback(uctx, sw.targets, sw.opt); rerr != nil {
		return fmt.Errorf("%w; rolling the step back failed too: %w", err, rerr)
	}
	sw.state = abtest.A
	sw.t.say("the undecided step was rolled back")
	return fmt.Errorf("%w (tune then rolled the step back: it is not in force)", err)
}

// undoTimeout bounds the rollback of an undecided step after an error.
const undoTimeout = 10 * time.Minute

// dryRun diagnoses and plans every step without measuring or changing
// anything (but the slow log the diagnosis captures with, put back).
func (t *tuner) dryRun(ctx context.Context) error {
	res := t.res
	res.Steps = append(res.Steps, StepResult{Label: "baseline", Findings: []Finding{}, Skipped: SkipDryRunBaseline})
	d, err := t.diagnose(ctx, 1)
	if err != nil {
		return err
	}
	pick := newPick(d, t.opt.HostWide)
	for _, s := range t.opt.Steps {
		sr, targets, err := t.plan(ctx, s, pick, s.Label)
		if err != nil {
			return err
		}
		if targets != nil {
			plan, err := apply.DryRun(ctx, targets, apply.Options{StateDir: t.opt.StateDir, HostWide: t.opt.HostWide, Label: s.Label})
			if err != nil {
				return err
			}
			if res.Plans == nil {
				res.Plans = map[string]*apply.Plan{}
			}
			res.Plans[s.Label] = plan
			sr.Skipped = SkipDryRun
		}
		res.Steps = append(res.Steps, *sr)
	}
	res.NotApplied = t.addFixes(pick, pick.notApplied())
	return nil
}

// decided records a decision of the session (runs labelled labelA
// against labelB, with the loop's label in front as measure records
// them); a failure is only said.
func (t *tuner) decided(ctx context.Context, labelA, labelB string, d *abtest.Decision, kept bool) {
	if t.meta.Session == 0 || d == nil {
		return
	}
	hd := history.Decision{LabelA: t.opt.Label + labelA, LabelB: t.opt.Label + labelB, Outcome: string(d.Verdict),
		Ratio: finite(d.RatioMedian), Low: finite(d.CILow), High: finite(d.CIHigh), Runs: d.RunsA + d.RunsB, Kept: kept}
	if err := t.opt.History.AddDecision(context.WithoutCancel(ctx), t.meta.Session, hd); err != nil {
		t.say("recording the decision: %v", err)
	}
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// armCode is an arm as the ledger records it.
func armCode(a abtest.Arm) string {
	if a == abtest.A {
		return "a"
	}
	return "b"
}
