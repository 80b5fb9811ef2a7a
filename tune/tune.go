package tune

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/demo/loopresult"
)

// Options configure Run.
type Options struct {
	// Diagnose is the stack and its bench: the server (DSN), the bench
	// run (a scenario or a URL; one measured run is one run of it), what
	// is collected, the access logs, the app's restart command and what
	// runs before each bench run. Its Audit carries the constraints
	// (fixed settings, durability).
	Diagnose diagnose.Options
	// Services say how apply reaches and changes the stack (my.cnf
	// drop-in, restart and check commands, nginx.conf, sysctl.d, systemd
	// drop-ins).
	Services apply.Services
	// HostWide lets the host-wide step (sysctl.d, systemd limits) run.
	HostWide bool
	// StateDir is apply's journal directory.
	StateDir string
	// History records every measured run when set.
	History *history.Store
	// AB is the test deciding each step (interleaved runs, stopping
	// rule, level); its zero value is abtest's defaults.
	AB abtest.Options
	// DryRun diagnoses and prints each step's plan, and changes nothing.
	DryRun bool
	// Label prefixes the runs' labels in the history.
	Label string
	// Progress receives one line per event; nil for none.
	Progress func(line string)
}

// Result is a tuning loop: the steps (the baseline first, as the demo's
// loop), the noise floor, what was not applied, and the two diagnoses.
type Result struct {
	Loop loopresult.Result `json:"loop"`
	// NoiseFloor is the baseline measured against itself (A against A):
	// the interval a step's effect must clear.
	NoiseFloor *abtest.Decision `json:"noise_floor,omitempty"`
	// Plans are the dry run's plans by step label (DryRun only).
	Plans map[string]*apply.Plan `json:"plans,omitempty"`
	// First and Second are the diagnoses before and after the steps.
	First  *diagnose.Result `json:"first_diagnosis"`
	Second *diagnose.Result `json:"second_diagnosis,omitempty"`
	// Restart is the end-of-loop check that the kept changes survive a
	// restart of the services they changed (seed 001: files, not
	// runtime only).
	Restart *RestartCheck `json:"restart_check,omitempty"`
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
	// read once, as seed 002 did with count(*)).
	ColdScore float64  `json:"cold_score"`
	WarmScore float64  `json:"warm_score"`
	Warmed    []string `json:"warmed,omitempty"`
}

// A step is one group of changes applied and measured together.
type step struct {
	label string
	// take picks the step's changes from the diagnosis.
	take func(d *diagnose.Result, o *Options) []changeset.Change
}

// steps are the loop's steps in order: the server's settings first (they
// change what the rest is measured on), then nginx, the proven indexes,
// and the host-wide settings when allowed.
var steps = []step{
	{"my.cnf", func(d *diagnose.Result, _ *Options) []changeset.Change {
		return auditChanges(d, changeset.MySQLVariable, changeset.MySQLOption)
	}},
	{"nginx", func(d *diagnose.Result, _ *Options) []changeset.Change { return auditChanges(d, changeset.Nginx) }},
	{"indexes", func(d *diagnose.Result, _ *Options) []changeset.Change {
		if d.Indexes == nil || d.Indexes.Changes == nil {
			return nil
		}
		return d.Indexes.Changes.Changes
	}},
	{"host-wide", func(d *diagnose.Result, o *Options) []changeset.Change {
		if !o.HostWide {
			return nil
		}
		return auditChanges(d, changeset.Sysctl, changeset.Systemd)
	}},
}

// auditChanges are the audit's changes of the given kinds, from findings
// whose every change is of those kinds (a finding is applied whole or
// not at all), observability findings left out.
func auditChanges(d *diagnose.Result, kinds ...changeset.Kind) []changeset.Change {
	if d.Audit == nil {
		return nil
	}
	var out []changeset.Change
	for i := range d.Audit.Findings {
		f := &d.Audit.Findings[i]
		cs := f.Changeset()
		if len(cs) == 0 || advise.Observability(f.ID) || slices.ContainsFunc(cs, func(c changeset.Change) bool { return !slices.Contains(kinds, c.Kind) }) {
			continue
		}
		out = append(out, cs...)
	}
	return out
}

// Run is the loop on the stack: it measures the baseline against itself
// (the noise floor), diagnoses, then for each step applies its changes
// through apply's transaction and decides with an interleaved A/B test
// (abtest.Run) whether it is kept (better or within noise) or rolled back
// (worse); then it diagnoses the tuned stack again. Changes it cannot
// make (application code: N+1 patterns, caches, pools; memcached and
// Redis settings) are listed with their evidence.
func Run(ctx context.Context, opt Options) (*Result, error) {
	if opt.StateDir == "" {
		return nil, errors.New("tune: no state directory for apply's journal")
	}
	t := &tuner{opt: opt, rps: map[string][]float64{}, p99: map[string][]float64{}}
	res := &Result{Loop: loopresult.Result{Steps: []loopresult.Step{}, NotApplied: []loopresult.Finding{}, Stack: t.stack()}}
	t.res = res

	if opt.DryRun {
		return t.dryRun(ctx)
	}
	// The baseline, against itself.
	t.say("baseline: measuring the stack as it is against itself (the noise floor)")
	floor, err := abtest.NoiseFloor(ctx, func(context.Context) error { return nil }, t.measure("baseline", "baseline"), opt.AB)
	if err != nil {
		return res, fmt.Errorf("baseline: %w", err)
	}
	base := loopresult.Step{Label: "baseline", Findings: []loopresult.Finding{}, Scores: append(floor.Scores(abtest.A), floor.Scores(abtest.B)...), XBaseline: 1}
	t.fill(&base, "baseline")
	res.NoiseFloor = &floor.Decision
	res.Loop.Steps = append(res.Loop.Steps, base)
	t.say("noise floor: %s", floor.Decision.Reason)
	if base.Median <= 0 {
		return res, fmt.Errorf("the baseline scored %v: the stack does not pass its own bench", base.Scores)
	}

	t.say("diagnosis: one bench run with the capture on")
	if res.First, err = diagnose.Run(ctx, opt.Diagnose); err != nil {
		return res, fmt.Errorf("diagnosis: %w", err)
	}
	res.Loop.Stack.MariaDB = res.First.Server
	used := map[string]bool{}
	for _, s := range steps {
		sr, err := t.step(ctx, s, res.First, used)
		if err != nil {
			return res, err
		}
		if sr != nil {
			res.Loop.Steps = append(res.Loop.Steps, *sr)
		}
	}
	if !opt.DryRun && len(t.kept) > 0 {
		if res.Restart, err = t.restartCheck(ctx); err != nil {
			return res, fmt.Errorf("restart check: %w", err)
		}
	}
	res.Loop.NotApplied = notApplied(res.First, used)
	t.say("second diagnosis: the tuned stack")
	if res.Second, err = diagnose.Run(ctx, opt.Diagnose); err != nil {
		return res, fmt.Errorf("second diagnosis: %w", err)
	}
	return res, nil
}

// tuner is one Run.
type tuner struct {
	opt Options
	res *Result
	// rps and p99 are the measured runs' figures by label (B arm).
	rps, p99 map[string][]float64
	// kept are the targets of the steps kept, by step label.
	kept      map[string][]apply.Target
	keptOrder []string
}

// stack describes what is measured, for the report's header.
func (t *tuner) stack() loopresult.Stack {
	b := t.opt.Diagnose.Bench
	what := b.URL
	if b.Scenario != "" {
		what = "the scenario " + b.Scenario
	}
	if b.BaseURL != "" {
		what += " against " + b.BaseURL
	}
	ab := t.opt.AB
	if ab.MaxRuns == 0 {
		ab.MaxRuns = 8
	}
	return loopresult.Stack{Description: "stacktune tune: " + what, Runs: ab.MaxRuns, DurationS: b.Load.Duration.Seconds(),
		Connections: b.Load.Connections, Cores: runtime.NumCPU()}
}

// fill sets a step's medians from its measured runs.
func (t *tuner) fill(s *loopresult.Step, label string) {
	s.Median = history.Median(s.Scores)
	s.RPS = history.Median(t.rps[label])
	s.P99MS = history.Median(t.p99[label])
}

func (t *tuner) say(format string, args ...any) {
	if t.opt.Progress != nil {
		t.opt.Progress(fmt.Sprintf(format, args...))
	}
}

// measureArm measures one bench run of a step and records it in the
// history under the step's label, or the label with " (before)" for the
// state before the step (arm A). Its figures count for the step (B).
func (t *tuner) measureArm(label string) func(ctx context.Context, arm abtest.Arm) (float64, error) {
	return t.measure(label+" (before)", label)
}

// measure measures one bench run in the arm it is given, labelled
// labelA or labelB by its arm, and keeps the figures of labelB's runs.
func (t *tuner) measure(labelA, labelB string) func(ctx context.Context, arm abtest.Arm) (float64, error) {
	return func(ctx context.Context, arm abtest.Arm) (float64, error) {
		if t.opt.Diagnose.BeforeBench != nil {
			if err := t.opt.Diagnose.BeforeBench(ctx); err != nil {
				return 0, fmt.Errorf("before the bench: %w", err)
			}
		}
		bo := t.opt.Diagnose.Bench
		bo.Runs = 1
		label := labelB
		if arm == abtest.A {
			label = labelA
		}
		bo.Label = t.opt.Label + label
		sum, err := benchrun.Run(ctx, bo)
		if err != nil {
			return 0, err
		}
		if t.opt.History != nil {
			for _, r := range history.FromSummary(sum) {
				if _, err := t.opt.History.Add(ctx, &r); err != nil {
					return 0, err
				}
				t.res.Loop.Runs = append(t.res.Loop.Runs, r)
			}
		}
		if label == labelB {
			t.rps[label] = append(t.rps[label], sum.RPS)
			t.p99[label] = append(t.p99[label], sum.LatencyMS.P99)
		}
		t.say("%s %s: score %.0f, %.1f req/s, p99 %.0f ms", bo.Label, arm, sum.Score, sum.RPS, sum.LatencyMS.P99)
		return sum.Score, nil
	}
}

// measureHolding measures a step's run and, in state B, checks that the
// step's changes are still in force after it: a pre-run hook that
// recreates the schema, or an app that rewrites its config, would undo
// them and B would measure A.
func (t *tuner) measureHolding(label string, targets []apply.Target) func(ctx context.Context, arm abtest.Arm) (float64, error) {
	measure := t.measureArm(label)
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

// step plans, applies and decides one step; nil when it has no change.
func (t *tuner) step(ctx context.Context, s step, d *diagnose.Result, used map[string]bool) (*loopresult.Step, error) {
	cs := s.take(d, &t.opt)
	sr := &loopresult.Step{Label: s.label, Findings: findingsOf(d, cs)}
	if len(cs) == 0 {
		sr.Skipped = "nothing to apply: no finding for this step"
		return sr, nil
	}
	for _, c := range cs {
		used[c.Finding+"\x00"+c.Key()] = true
	}
	set := &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune tune", Changes: cs}
	targets, notes, err := apply.FromChangeSet(set, t.opt.Services)
	for _, n := range notes {
		t.say("%s: %s", s.label, n)
	}
	if err != nil {
		sr.Skipped = "cannot be applied here: " + err.Error()
		return sr, nil
	}
	aopt := apply.Options{StateDir: t.opt.StateDir, HostWide: t.opt.HostWide, Label: "stacktune tune: " + s.label,
		Log: func(format string, a ...any) { t.say("  apply: "+format, a...) }}
	if t.opt.DryRun {
		plan, err := apply.DryRun(ctx, targets, aopt)
		if err != nil {
			return nil, err
		}
		if t.res.Plans == nil {
			t.res.Plans = map[string]*apply.Plan{}
		}
		t.res.Plans[s.label] = plan
		sr.Skipped = "dry run: not applied"
		return sr, nil
	}
	t.say("step %q: applying %d change(s)", s.label, len(cs))
	ar, err := apply.Run(ctx, targets, aopt)
	if err != nil {
		sr.Skipped = "the change failed and was rolled back: " + err.Error()
		if ar == nil || !ar.RolledBack || len(ar.Leftovers) > 0 {
			return sr, err // the stack is in an unknown state
		}
		return sr, nil
	}
	sr.ApplyID = ar.ID
	sr.Applied = ar.Changed()
	ab := t.opt.AB
	ab.Start = abtest.B
	exp := abtest.Experiment{
		ToA: func(ctx context.Context) error {
			_, err := apply.Rollback(ctx, targets, aopt)
			return err
		},
		ToB: func(ctx context.Context) error {
			_, err := apply.Run(ctx, targets, aopt)
			return err
		},
		Measure: t.measureHolding(s.label, targets),
	}
	r, err := abtest.Run(ctx, exp, ab)
	if err != nil {
		return sr, fmt.Errorf("step %s: %w", s.label, err)
	}
	sr.Scores, sr.Before, sr.Decision = r.Scores(abtest.B), r.Scores(abtest.A), &r.Decision
	t.fill(sr, s.label)
	sr.XBaseline = sr.Median / t.res.Loop.Steps[0].Median
	t.say("step %q: %s", s.label, r.Decision.Reason)
	switch {
	case r.Decision.Verdict == abtest.Worse:
		sr.RolledBack = "slower: " + r.Decision.Reason
		if r.State == abtest.B {
			if _, err := apply.Rollback(ctx, targets, aopt); err != nil {
				return sr, fmt.Errorf("rolling back %s: %w", s.label, err)
			}
		}
	case r.State == abtest.A:
		// Kept (better, or within noise: sound advice is not undone on
		// noise), so the last switch is undone.
		if _, err := apply.Run(ctx, targets, aopt); err != nil {
			return sr, fmt.Errorf("re-applying %s: %w", s.label, err)
		}
	}
	if sr.RolledBack == "" {
		if t.kept == nil {
			t.kept = map[string][]apply.Target{}
		}
		t.kept[s.label] = targets
		t.keptOrder = append(t.keptOrder, s.label)
	}
	return sr, nil
}

// findingsOf describes the findings behind changes, once each.
func findingsOf(d *diagnose.Result, cs []changeset.Change) []loopresult.Finding {
	out := []loopresult.Finding{}
	seen := map[string]bool{}
	for _, c := range cs {
		if seen[c.Finding+c.Title] {
			continue
		}
		seen[c.Finding+c.Title] = true
		f := loopresult.Finding{ID: c.Finding, Title: c.Title, Evidence: c.Evidence, Change: changeText(c)}
		if d.Audit != nil {
			for _, af := range d.Audit.Findings {
				if af.ID == c.Finding && af.Title == c.Title {
					for _, e := range af.Evidence {
						f.Evidence = append(f.Evidence, e.String())
					}
					f.Source = af.Source
				}
			}
		}
		if f.Evidence == nil {
			f.Evidence = []string{}
		}
		out = append(out, f)
	}
	return out
}

func changeText(c changeset.Change) string {
	if c.Kind == changeset.Index {
		return changeset.AddIndexSQL(c) + ";"
	}
	from := c.From
	if from == "" {
		from = "(not set)"
	}
	return fmt.Sprintf("%s %s in %s: %s → %s", c.Kind, c.Name, c.Target, from, c.To)
}

// notApplied are what the loop did not change: the audit's findings no
// step took (application code, memcached and Redis settings, durability
// and observability), and the N+1 patterns with their endpoint.
func notApplied(d *diagnose.Result, used map[string]bool) []loopresult.Finding {
	out := []loopresult.Finding{}
	if d.Audit != nil {
		for i := range d.Audit.Findings {
			f := &d.Audit.Findings[i]
			cs := f.Changeset()
			taken := len(cs) > 0
			for _, c := range cs {
				taken = taken && used[c.Finding+"\x00"+c.Key()]
			}
			if taken {
				continue
			}
			nf := loopresult.Finding{ID: f.ID, Title: f.Title, Evidence: []string{}, Source: f.Source, Reason: reasonNotApplied(f.ID, cs)}
			for _, e := range f.Evidence {
				nf.Evidence = append(nf.Evidence, e.String())
			}
			out = append(out, nf)
		}
	}
	for _, n := range d.NPlusOne {
		where := "endpoint unknown"
		if n.Endpoint != "" {
			where = fmt.Sprintf("%s (about %.0f calls per request)", n.Endpoint, n.CallsPerRequest)
		}
		out = append(out, loopresult.Finding{ID: "n-plus-one", Title: "N+1 queries in " + where + ": " + n.Fingerprint,
			Evidence: []string{n.Problem, fmt.Sprintf("%d calls, %.1f rows per call, %.2fs in the run", n.Calls, n.RowsPerCall, n.TimeS)},
			Source:   "stacktune diagnose", Reason: "a change to the application's code: load the rows in one query (JOIN or IN (...)), not one query per row"})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// reasonNotApplied says why a finding stays with the user.
func reasonNotApplied(id string, cs []changeset.Change) string {
	switch {
	case advise.Observability(id):
		return "observability: it costs speed, which this loop measures"
	case len(cs) == 0:
		return "information: no change to make"
	}
	var kinds []string
	for _, c := range cs {
		if !slices.Contains(kinds, string(c.Kind)) {
			kinds = append(kinds, string(c.Kind))
		}
	}
	return "not applied by this loop (" + strings.Join(kinds, ", ") + "): host-wide without --host-wide, or a change for the application or its caches"
}

// restartCheck restarts what the kept steps changed (the server, when a
// step changed its settings and a restart command is known; the app,
// when its restart command is known), measures one cold run, warms the
// buffer pool and measures one warm run, then checks that every kept
// value is still in force: a change that holds only at run time would be
// lost at the next reboot.
func (t *tuner) restartCheck(ctx context.Context) (*RestartCheck, error) {
	rc := &RestartCheck{Restarted: []string{}, Held: []string{}}
	if _, ok := t.kept["my.cnf"]; ok && t.opt.Services.MySQLRestart != nil {
		t.say("restart check: restarting the server")
		if err := t.opt.Services.MySQLRestart(ctx); err != nil {
			return rc, fmt.Errorf("restarting the server: %w", err)
		}
		rc.Restarted = append(rc.Restarted, "mysql")
	}
	if t.opt.Diagnose.AppRestart != nil {
		if err := t.opt.Diagnose.AppRestart(ctx); err != nil {
			return rc, fmt.Errorf("restarting the app: %w", err)
		}
		rc.Restarted = append(rc.Restarted, "app")
	}
	var err error
	if rc.ColdScore, err = t.measureArm("after restart, cold")(ctx, abtest.B); err != nil {
		return rc, err
	}
	if t.opt.Services.DB != nil {
		if rc.Warmed, err = warmBufferPool(ctx, t.opt.Services.DB, t.opt.Services.Schema); err != nil {
			return rc, err
		}
	}
	if rc.WarmScore, err = t.measureArm("after restart, warm")(ctx, abtest.B); err != nil {
		return rc, err
	}
	for _, label := range t.keptOrder {
		var lost []string
		for _, tg := range t.kept[label] {
			if err := tg.Verify(ctx, tg.Wanted()); err != nil {
				lost = append(lost, err.Error())
			}
		}
		if len(lost) > 0 {
			if rc.Lost == nil {
				rc.Lost = map[string]string{}
			}
			rc.Lost[label] = strings.Join(lost, "; ")
			continue
		}
		rc.Held = append(rc.Held, label)
	}
	t.say("restart check: restarted %v; cold %.0f, warm %.0f; held %v, lost %v", rc.Restarted, rc.ColdScore, rc.WarmScore, rc.Held, rc.Lost)
	return rc, nil
}

// warmBufferPool reads every index of the schema's tables once, so the
// runs after a restart measure the settings, not a cold buffer pool
// (seed 002 warmed with count(*) per table). It returns what it read.
func warmBufferPool(ctx context.Context, db apply.DB, schema string) ([]string, error) {
	if schema == "" {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, sqlIndexesOf, schema)
	if err != nil {
		return nil, fmt.Errorf("listing the indexes to warm: %w", err)
	}
	type ix struct{ table, name string }
	var ixs []ix
	for rows.Next() {
		var i ix
		if err := rows.Scan(&i.table, &i.name); err != nil {
			rows.Close()
			return nil, err
		}
		ixs = append(ixs, i)
	}
	rows.Close()
	var out []string
	for _, i := range ixs {
		q := fmt.Sprintf("SELECT COUNT(*) FROM %s FORCE INDEX (%s)", changeset.QuoteTable(schema+"."+i.table), changeset.QuoteIdent(i.name))
		var n int64
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return out, fmt.Errorf("warming %s.%s: %w", i.table, i.name, err)
		}
		out = append(out, i.table+"."+i.name)
	}
	return out, nil
}

// sqlIndexesOf lists a schema's indexes (tables with their own storage).
const sqlIndexesOf = `SELECT DISTINCT TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, INDEX_NAME`

// dryRun diagnoses and plans every step without measuring or changing
// anything (but the slow log the diagnosis captures with, put back).
func (t *tuner) dryRun(ctx context.Context) (*Result, error) {
	res := t.res
	res.Loop.Steps = append(res.Loop.Steps, loopresult.Step{Label: "baseline", Findings: []loopresult.Finding{}, Skipped: "dry run: not measured"})
	var err error
	if res.First, err = diagnose.Run(ctx, t.opt.Diagnose); err != nil {
		return res, fmt.Errorf("diagnosis: %w", err)
	}
	res.Loop.Stack.MariaDB = res.First.Server
	used := map[string]bool{}
	for _, s := range steps {
		sr, err := t.step(ctx, s, res.First, used)
		if err != nil {
			return res, err
		}
		res.Loop.Steps = append(res.Loop.Steps, *sr)
	}
	res.Loop.NotApplied = notApplied(res.First, used)
	return res, nil
}
