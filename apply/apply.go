package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Options configures Run, Rollback and Recover.
type Options struct {
	// StateDir holds the journals and backups (created if needed), and
	// the lock that keeps a second transaction out while one runs.
	StateDir string
	// HostWide lets host-wide targets run; without it they are skipped.
	HostWide bool
	// Label is kept in the journal (what the transaction was for).
	Label string
	// ForceDrift applies changes whose running value moved since the
	// advice was made (Step.Drift); without it such a change refuses the
	// whole transaction.
	ForceDrift bool
	// Log, when set, receives one line per step.
	Log func(format string, args ...any)
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}

// Result is what Run or Rollback did.
type Result struct {
	ID      string          `json:"id"`
	Label   string          `json:"label,omitempty"`
	Targets []TargetOutcome `json:"targets"`
	// Plan is every setting's step, as planned before anything changed.
	Plan []Step `json:"plan,omitempty"`
	// Skipped are host-wide targets left alone (files not written).
	Skipped []string `json:"skipped,omitempty"`
	// Recovered is the id of a half-done transaction restored first.
	Recovered string `json:"recovered,omitempty"`
	// RolledBack is set when Run failed and undid its changes.
	RolledBack bool `json:"rolled_back,omitempty"`
	// Leftovers are what a rollback could not put back.
	Leftovers []Leftover `json:"leftovers,omitempty"`
}

// Changed lists what the transaction changed, for people: each file
// written and each value that differs after it, read back from the
// running service ("mysql: max_connections 151 → 400 (read back)").
func (r *Result) Changed() []string {
	var out []string
	for _, t := range r.Targets {
		for _, f := range t.Files {
			out = append(out, fmt.Sprintf("%s: wrote %s", t.Name, f))
		}
		for _, k := range t.After.Keys() {
			if before := t.Before[k]; before != t.After[k] {
				if before == "" {
					before = "(none)"
				}
				out = append(out, fmt.Sprintf("%s: %s %s → %s (read back)", t.Name, k, before, t.After[k]))
			}
		}
	}
	return out
}

// TargetOutcome is one target's part of a transaction.
type TargetOutcome struct {
	Name  string   `json:"name"`
	Files []string `json:"files"`
	// Where says where its files went and why (an Explainer's).
	Where  string `json:"where,omitempty"`
	Before State  `json:"before"`
	After  State  `json:"after"`
}

// RollbackError is the error of a rollback that could not put everything
// back: the cause, and each leftover with the command that restores it.
type RollbackError struct {
	Cause     error // what failed first (nil for a Rollback that was asked for)
	Leftovers []Leftover
	Dir       string // the transaction's journal and backups
}

func (e *RollbackError) Error() string {
	var b strings.Builder
	if e.Cause != nil {
		b.WriteString(e.Cause.Error() + "; and the rollback ")
	} else {
		b.WriteString("the rollback ")
	}
	fmt.Fprintf(&b, "could not put %d thing(s) back (journal and backups in %s):", len(e.Leftovers), e.Dir)
	for _, l := range e.Leftovers {
		b.WriteString("\n  - " + l.String())
	}
	b.WriteString("\nfix them by hand, then run stacktune rollback again: it checks everything and closes the transaction")
	return b.String()
}

func (e *RollbackError) Unwrap() error { return e.Cause }

// fault lets a test make a transaction fail at a named point (see the
// points in run's stages, plan and undo); nil in production.
type fault func(point string) error

func (f fault) at(point string) error {
	if f == nil {
		return nil
	}
	return f(point)
}

// Run applies targets as one transaction (see the package comment). An
// error means nothing stayed changed, unless it is a *RollbackError,
// which lists what did; a *RefusedError means nothing was touched.
func Run(ctx context.Context, targets []Target, opt Options) (*Result, error) {
	return run(ctx, targets, opt, nil)
}

// run is Run with fault points (f): the transaction's stages in order,
// each below in its own function, and on a failure once the journal is
// on disk, the rollback (txn.fail).
func run(ctx context.Context, targets []Target, opt Options, f fault) (*Result, error) {
	if opt.StateDir == "" {
		return nil, errors.New("apply: no state directory")
	}
	release, err := lock(opt.StateDir, opt.Label)
	if err != nil {
		return nil, err
	}
	defer release()
	res := &Result{Label: opt.Label, Targets: []TargetOutcome{}}
	rec, err := recoverLocked(ctx, targets, opt, f)
	if err != nil {
		return rec, err
	}
	if rec != nil {
		res.Recovered = rec.ID
	}
	run := runnable(targets, opt, res)
	if len(run) == 0 {
		return res, nil
	}
	if err := checkFiles(run); err != nil {
		return nil, err
	}

	// 1. Snapshots and 2. the plan, before anything changes.
	j := &journal{ID: newID(), Label: opt.Label, Started: time.Now().UTC(), State: stateWriting}
	if err := snapshotAll(ctx, run, j, f); err != nil {
		return res, err
	}
	steps, problems, err := plan(ctx, run, j, opt, f)
	res.Plan = steps
	if err != nil {
		return res, err
	}
	if len(problems) > 0 {
		return res, &RefusedError{Problems: problems}
	}
	j.Plan = steps

	// 3. Journal with backups, on disk before any file changes. Only then
	// is there a transaction: a refusal here (a file no longer what the
	// change was computed from) leaves res without an id, so nothing
	// says it was applied.
	tx := &txn{dir: filepath.Join(opt.StateDir, j.ID), j: j, run: run, opt: opt, f: f}
	if err := tx.journalBackups(); err != nil {
		return res, err
	}
	res.ID = j.ID

	// 4. Files, each still as it was backed up.
	if stage, err := tx.writeFiles(); err != nil {
		return tx.fail(ctx, res, stage, err)
	}
	// 5. Validate all, then activate and verify each.
	if stage, err := tx.validateAll(ctx); err != nil {
		return tx.fail(ctx, res, stage, err)
	}
	if stage, err := tx.activateEach(ctx, res); err != nil {
		return tx.fail(ctx, res, stage, err)
	}
	// 6. Done.
	if stage, err := tx.finish(); err != nil {
		return tx.fail(ctx, res, stage, err)
	}
	return res, nil
}

// runnable are the targets this run may change: host-wide ones only with
// opt.HostWide; the others are recorded as skipped.
func runnable(targets []Target, opt Options, res *Result) []Target {
	var run []Target
	for _, t := range targets {
		if isHostWide(t) && !opt.HostWide {
			res.Skipped = append(res.Skipped, t.Name())
			opt.logf("skipped %s: a host-wide change, applied only when asked (--host-wide)", t.Name())
			continue
		}
		run = append(run, t)
	}
	return run
}

// snapshotAll reads every target's running state before anything
// changes, into the journal with what each wants.
func snapshotAll(ctx context.Context, run []Target, j *journal, f fault) error {
	for _, t := range run {
		if err := f.at("snapshot " + t.Name()); err != nil {
			return fmt.Errorf("apply: reading %s before the change: %w", t.Name(), err)
		}
		before, err := t.Snapshot(ctx)
		if err != nil {
			return fmt.Errorf("apply: reading %s before the change: %w", t.Name(), err)
		}
		j.Targets = append(j.Targets, journalTarget{Name: t.Name(), Before: before, Wanted: t.Wanted()})
	}
	return nil
}

// txn is a transaction once it is planned: its journal and the
// directory holding it and the backups. From writeFiles on, each stage
// returns, with its error, what it was doing, for fail.
type txn struct {
	dir string
	j   *journal
	run []Target
	opt Options
	f   fault
}

// fail rolls the transaction back after a stage failed: every backup
// restored, every activated target back to its snapshot. The error says
// so, or is a *RollbackError listing what could not be put back.
func (tx *txn) fail(ctx context.Context, res *Result, stage string, err error) (*Result, error) {
	err = fmt.Errorf("apply: %s: %w", stage, err)
	tx.opt.logf("%v; rolling back", err)
	tx.j.Error = err.Error()
	res.RolledBack = true
	if left := undo(ctx, tx.dir, tx.j, tx.run, tx.opt, tx.f); len(left) > 0 {
		res.Leftovers = left
		return res, &RollbackError{Cause: err, Leftovers: left, Dir: tx.dir}
	}
	return res, fmt.Errorf("%w (rolled back: the old files and settings are in place)", err)
}

// journalBackups puts the way back on disk before any file changes: a
// backup of every file the targets write, then the journal in state
// "writing". On failure nothing of it is left.
func (tx *txn) journalBackups() error {
	j, f := tx.j, tx.f
	if err := os.MkdirAll(tx.dir, 0o700); err != nil {
		return fmt.Errorf("apply: state directory: %w", err)
	}
	for ti, t := range tx.run {
		for _, file := range filesOf(t) {
			if err := f.at("backup " + file.Path); err != nil {
				os.RemoveAll(tx.dir)
				return fmt.Errorf("apply: backing up %s: %w", file.Path, err)
			}
			jf, err := backup(tx.dir, file, len(j.Files))
			if err != nil {
				os.RemoveAll(tx.dir)
				return err
			}
			jf.Target = t.Name()
			j.Files = append(j.Files, jf)
			j.Targets[ti].Files = append(j.Targets[ti].Files, file.Path)
		}
	}
	if err := f.at("journal " + stateWriting); err != nil {
		os.RemoveAll(tx.dir)
		return fmt.Errorf("apply: journal: %w", err)
	}
	if err := j.save(tx.dir); err != nil {
		os.RemoveAll(tx.dir)
		return err
	}
	return nil
}

// writeFiles writes every target's files, each still as it was backed
// up; the journal records each write before it happens.
func (tx *txn) writeFiles() (string, error) {
	j, f := tx.j, tx.f
	for _, t := range tx.run {
		for _, file := range filesOf(t) {
			i := j.fileIndex(file.Path)
			if err := f.at("write " + file.Path); err != nil {
				return "writing " + file.Path, err
			}
			if err := unchanged(tx.dir, j.Files[i]); err != nil {
				return "writing " + file.Path, err
			}
			j.Files[i].New, j.Files[i].Writing = sum(file.Data), true
			if err := j.save(tx.dir); err != nil {
				return "journal", err
			}
			if err := writeFile(file); err != nil {
				return "writing " + file.Path, err
			}
			tx.opt.logf("wrote %s", file.Path)
		}
	}
	return "", nil
}

// validateAll validates every target's written files before any is
// activated.
func (tx *txn) validateAll(ctx context.Context) (string, error) {
	for _, t := range tx.run {
		if err := tx.f.at("validate " + t.Name()); err != nil {
			return "validating " + t.Name(), err
		}
		if err := validate(ctx, t); err != nil {
			return "validating " + t.Name(), err
		}
	}
	return "", nil
}

// activateEach marks the journal "activating", then activates each
// target in order, each marked activated in the journal first (so a
// rollback brings it back), verifies it and reads it back into res.
func (tx *txn) activateEach(ctx context.Context, res *Result) (string, error) {
	j, f := tx.j, tx.f
	j.State = stateActivating
	if err := f.at("journal " + stateActivating); err != nil {
		return "journal", err
	}
	if err := j.save(tx.dir); err != nil {
		return "journal", err
	}
	for i, t := range tx.run {
		j.Targets[i].Activated = true
		if err := j.save(tx.dir); err != nil {
			return "journal", err
		}
		if err := f.at("activate " + t.Name()); err != nil {
			return "activating " + t.Name(), err
		}
		if err := t.Activate(ctx, j.Targets[i].Wanted); err != nil {
			return "activating " + t.Name(), err
		}
		if err := f.at("verify " + t.Name()); err != nil {
			return "verifying " + t.Name(), err
		}
		if err := t.Verify(ctx, j.Targets[i].Wanted); err != nil {
			return "verifying " + t.Name(), err
		}
		after, err := t.Snapshot(ctx)
		if err != nil {
			return "reading " + t.Name() + " back", err
		}
		tx.opt.logf("%s: active and verified", t.Name())
		res.Targets = append(res.Targets, TargetOutcome{Name: t.Name(), Files: j.Targets[i].Files, Where: whereOf(t), Before: j.Targets[i].Before, After: after})
	}
	return "", nil
}

// finish closes the transaction: the journal says "applied".
func (tx *txn) finish() (string, error) {
	tx.j.State = stateApplied
	tx.j.Finished = time.Now().UTC()
	if err := tx.f.at("journal " + stateApplied); err != nil {
		return "journal", err
	}
	if err := tx.j.save(tx.dir); err != nil {
		return "journal", err
	}
	return "", nil
}

// plan asks every target that can plan for its steps; a target that
// cannot gets one step per wanted key. It returns the problems that
// refuse the transaction.
func plan(ctx context.Context, run []Target, j *journal, opt Options, f fault) ([]Step, []string, error) {
	var steps []Step
	var problems []string
	for i, t := range run {
		if err := f.at("plan " + t.Name()); err != nil {
			return steps, nil, fmt.Errorf("apply: planning %s: %w", t.Name(), err)
		}
		var ts []Step
		if p, ok := t.(Planner); ok {
			var err error
			if ts, err = p.Plan(ctx, j.Targets[i].Before); err != nil {
				return steps, nil, fmt.Errorf("apply: planning %s: %w", t.Name(), err)
			}
		} else {
			w := t.Wanted()
			for _, k := range w.Keys() {
				ts = append(ts, Step{Key: k, Running: j.Targets[i].Before[k], To: w[k], How: "activate"})
			}
		}
		for _, s := range ts {
			s.Target = t.Name()
			steps = append(steps, s)
			switch {
			case s.Drift && opt.ForceDrift:
				opt.logf("%s: %s moved since the advice (advised from %s, running %s): applied anyway (--force-drift)", t.Name(), s.Key, orNone(s.From), orNone(s.Running))
			case s.Problem != "":
				problems = append(problems, t.Name()+": "+s.Problem)
			}
		}
	}
	return steps, problems, nil
}

// Rollback undoes the last applied transaction in opt.StateDir: its
// backups go back, and each of its targets found in targets (by Name) is
// activated with its snapshot and verified. Targets of the journal not
// given are reported: their files are restored but the running service
// still has to be reloaded by hand. A rollback that cannot finish goes on
// with everything else and returns a *RollbackError listing what is
// left, each with the command that restores it; the next Rollback, Run
// or Recover tries it again.
func Rollback(ctx context.Context, targets []Target, opt Options) (*Result, error) {
	return rollback(ctx, targets, opt, nil)
}

func rollback(ctx context.Context, targets []Target, opt Options, f fault) (*Result, error) {
	if opt.StateDir == "" {
		return nil, errors.New("apply: no state directory")
	}
	release, err := lock(opt.StateDir, "rollback")
	if err != nil {
		return nil, err
	}
	defer release()
	if rec, err := recoverLocked(ctx, targets, opt, f); err != nil || rec != nil {
		return rec, err
	}
	dir, j, err := last(opt.StateDir, stateApplied)
	if err != nil {
		return nil, err
	}
	if j == nil {
		return nil, fmt.Errorf("rollback: no applied change in %s", opt.StateDir)
	}
	res := &Result{ID: j.ID, Label: j.Label, RolledBack: true}
	for i := range j.Targets {
		j.Targets[i].Activated = true
	}
	left := undo(ctx, dir, j, targets, opt, f)
	for _, jt := range j.Targets {
		res.Targets = append(res.Targets, TargetOutcome{Name: jt.Name, Files: jt.Files, Before: jt.Wanted, After: jt.Before})
	}
	if len(left) > 0 {
		res.Leftovers = left
		return res, &RollbackError{Leftovers: left, Dir: dir}
	}
	return res, nil
}

// Recover finds a transaction a killed run left in "writing" or
// "activating", or one whose rollback could not finish, and restores it
// as Rollback would; nil, nil when there is none.
func Recover(ctx context.Context, targets []Target, opt Options) (*Result, error) {
	if opt.StateDir == "" {
		return nil, errors.New("apply: no state directory")
	}
	release, err := lock(opt.StateDir, "recover")
	if err != nil {
		return nil, err
	}
	defer release()
	return recoverLocked(ctx, targets, opt, nil)
}

func recoverLocked(ctx context.Context, targets []Target, opt Options, f fault) (*Result, error) {
	dir, j, err := last(opt.StateDir, stateWriting, stateActivating, stateRollbackFailed)
	if err != nil || j == nil {
		return nil, err
	}
	opt.logf("found the unfinished transaction %s (%s); restoring its backups first", j.ID, j.State)
	res := &Result{ID: j.ID, Label: j.Label, RolledBack: true}
	if left := undo(ctx, dir, j, targets, opt, f); len(left) > 0 {
		res.Leftovers = left
		return res, fmt.Errorf("recovering %s: %w", j.ID, &RollbackError{Leftovers: left, Dir: dir})
	}
	return res, nil
}

// undo restores the backups of j and re-activates the targets j
// activated with their snapshots, then verifies them; it goes on past
// every failure and returns what it could not put back (nothing: j is
// marked rolled back; something: rollback-failed, with the leftovers in
// the journal).
//
// An interrupted run (its context cancelled: Ctrl-C) must still be able
// to put things back, so undo works on a context that is not cancelled
// with it, bounded by undoTimeout.
func undo(ctx context.Context, dir string, j *journal, targets []Target, opt Options, f fault) []Leftover {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	byName := map[string]Target{}
	for _, t := range targets {
		byName[t.Name()] = t
	}
	var left []Leftover
	for i := len(j.Files) - 1; i >= 0; i-- {
		jf := j.Files[i]
		err := f.at("undo restore " + jf.Path)
		if err == nil {
			err = restore(dir, jf)
		}
		if err != nil {
			left = append(left, Leftover{Target: jf.Target, Key: jf.Path, Why: err.Error(), Fix: jf.handRestore(dir)})
			continue
		}
		opt.logf("restored %s", jf.Path)
	}
	// Re-activate in the order of the transaction, then verify them all:
	// a later target's old settings may need an earlier one back first
	// (nginx's old upstream is the app's old TCP port, the app's old
	// config names memcached's old address).
	type back struct {
		jt  journalTarget
		t   Target
		err error
	}
	var backs []back
	for _, jt := range j.Targets {
		if !jt.Activated {
			continue
		}
		t := byName[jt.Name]
		if t == nil {
			left = append(left, Leftover{Target: jt.Name, Why: "not given to this run: its files are restored, the running service is not",
				Fix: "reload or restart " + jt.Name + " so it reads its restored files (or run stacktune rollback with the flags that reach it)"})
			continue
		}
		err := f.at("undo activate " + jt.Name)
		if err == nil {
			if r, ok := t.(Restorer); ok {
				err = r.Restore(ctx, jt.Before)
			} else {
				err = t.Activate(ctx, jt.Before)
			}
		}
		if err != nil {
			opt.logf("%s: bringing back its old settings: %v", jt.Name, err)
		}
		backs = append(backs, back{jt, t, err})
	}
	for _, b := range backs {
		err := f.at("undo verify " + b.jt.Name)
		if err == nil {
			err = b.t.Verify(ctx, b.jt.Before)
		}
		if err == nil && b.err == nil {
			opt.logf("%s: back to its old settings", b.jt.Name)
			continue
		}
		if err == nil {
			// Not every Verify can see the running service (nginx
			// without a probe): a failed activation stays a leftover.
			left = append(left, Leftover{Target: b.jt.Name, Why: b.err.Error(), Fix: handFix(b.t, "", "")})
			continue
		}
		why := err.Error()
		if b.err != nil {
			why = b.err.Error()
		}
		var me *MismatchError
		if errors.As(err, &me) {
			for _, m := range me.Mismatches {
				left = append(left, Leftover{Target: b.jt.Name, Key: m.Key, Now: m.Got, Want: m.Want, Why: why, Fix: handFix(b.t, m.Key, m.Want)})
			}
			continue
		}
		left = append(left, Leftover{Target: b.jt.Name, Why: why, Fix: handFix(b.t, "", "")})
	}
	j.Finished = time.Now().UTC()
	j.Leftovers = left
	if len(left) > 0 {
		j.State = stateRollbackFailed
	} else {
		j.State = stateRolledBack
	}
	err := f.at("undo journal")
	if err == nil {
		err = j.save(dir)
	}
	if err != nil {
		opt.logf("the journal %s could not be updated: %v", dir, err)
		if len(left) == 0 {
			left = append(left, Leftover{Target: "journal", Key: filepath.Join(dir, journalName), Why: err.Error(),
				Fix: "everything is back; mark the transaction done by running stacktune rollback again"})
		}
	}
	sort.SliceStable(left, func(a, b int) bool { return left[a].Target < left[b].Target })
	return left
}

// undoTimeout bounds a rollback (restarts included).
const undoTimeout = 10 * time.Minute

// checkFiles refuses relative paths and two targets writing one file.
func checkFiles(ts []Target) error {
	seen := map[string]string{}
	for _, t := range ts {
		for _, f := range filesOf(t) {
			if !filepath.IsAbs(f.Path) {
				return fmt.Errorf("apply: %s: file path %q is not absolute", t.Name(), f.Path)
			}
			p := filepath.Clean(f.Path)
			if other, dup := seen[p]; dup {
				return fmt.Errorf("apply: %s and %s both write %s", other, t.Name(), p)
			}
			seen[p] = t.Name()
		}
	}
	return nil
}
