package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// State is a target's settings by name: the running values a Snapshot
// reads, or the values Activate should reach.
type State map[string]string

// Keys are the setting names, sorted.
func (s State) Keys() []string { return slices.Sorted(maps.Keys(s)) }

// File is one file a target needs written.
type File struct {
	Path string // absolute
	Data []byte
	Perm os.FileMode // 0 means 0644
}

// Target is one service whose configuration changes. See the package
// comment for what each step must do.
type Target interface {
	// Name identifies the target in the journal and in messages
	// ("mysql", "nginx", "ddl", "sysctl", "systemd nginx.service").
	Name() string
	// HostWide targets change the whole host (kernel settings, service
	// units) and run only with Options.HostWide.
	HostWide() bool
	// Files are the files to write, already rendered.
	Files() []File
	// Wanted is the state Activate should reach with the new files.
	Wanted() State
	// Snapshot reads the running values of the Wanted keys.
	Snapshot(ctx context.Context) (State, error)
	// Validate checks the files on disk before anything uses them.
	Validate(ctx context.Context) error
	// Activate makes the running service use the files on disk and reach
	// want (Wanted when applying, the snapshot when rolling back).
	Activate(ctx context.Context, want State) error
	// Verify reads the running values back and fails unless they are
	// want.
	Verify(ctx context.Context, want State) error
}

// Options configures Run, Rollback and Recover.
type Options struct {
	// StateDir holds the journals and backups (created if needed).
	StateDir string
	// HostWide lets host-wide targets run; without it they are skipped.
	HostWide bool
	// Label is kept in the journal (what the transaction was for).
	Label string
	// Log, when set, receives one line per step.
	Log func(format string, args ...any)
	// beforeActivate is a test hook: called after the files are written
	// and validated, before the first Activate.
	beforeActivate func()
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
	// Skipped are host-wide targets left alone (files not written).
	Skipped []string `json:"skipped,omitempty"`
	// Recovered is the id of a half-done transaction restored first.
	Recovered string `json:"recovered,omitempty"`
	// RolledBack is set when Run failed and undid its changes.
	RolledBack bool `json:"rolled_back,omitempty"`
}

// TargetOutcome is one target's part of a transaction.
type TargetOutcome struct {
	Name   string   `json:"name"`
	Files  []string `json:"files"`
	Before State    `json:"before"`
	After  State    `json:"after"`
}

// Run applies targets as one transaction (see the package comment). An
// error means nothing stayed changed, unless it says the rollback failed
// too.
func Run(ctx context.Context, targets []Target, opt Options) (*Result, error) {
	if opt.StateDir == "" {
		return nil, errors.New("apply: no state directory")
	}
	res := &Result{Label: opt.Label, Targets: []TargetOutcome{}}
	rec, err := Recover(ctx, targets, opt)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		res.Recovered = rec.ID
	}
	var run []Target
	for _, t := range targets {
		if t.HostWide() && !opt.HostWide {
			res.Skipped = append(res.Skipped, t.Name())
			opt.logf("skipped %s: a host-wide change, applied only when asked (--host-wide)", t.Name())
			continue
		}
		run = append(run, t)
	}
	if len(run) == 0 {
		return res, nil
	}
	if err := checkFiles(run); err != nil {
		return nil, err
	}

	// 1. Snapshots.
	j := &journal{ID: newID(), Label: opt.Label, Started: time.Now().UTC(), State: stateWriting}
	res.ID = j.ID
	for _, t := range run {
		before, err := t.Snapshot(ctx)
		if err != nil {
			return nil, fmt.Errorf("apply: reading %s before the change: %w", t.Name(), err)
		}
		j.Targets = append(j.Targets, journalTarget{Name: t.Name(), Before: before, Wanted: t.Wanted()})
	}
	// 2. Journal with backups, on disk before any file changes.
	dir := filepath.Join(opt.StateDir, j.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("apply: state directory: %w", err)
	}
	for ti, t := range run {
		for _, f := range t.Files() {
			jf, err := backup(dir, f, len(j.Files))
			if err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
			j.Files = append(j.Files, jf)
			j.Targets[ti].Files = append(j.Targets[ti].Files, f.Path)
		}
	}
	if err := j.save(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}

	fail := func(stage string, err error) (*Result, error) {
		err = fmt.Errorf("apply: %s: %w", stage, err)
		opt.logf("%v; rolling back", err)
		j.Error = err.Error()
		if rerr := undo(ctx, dir, j, run, opt); rerr != nil {
			return res, fmt.Errorf("%w; and the rollback failed: %v (backups in %s)", err, rerr, dir)
		}
		res.RolledBack = true
		return res, fmt.Errorf("%w (rolled back: the old files and settings are in place)", err)
	}

	// 3. Files.
	for _, t := range run {
		for _, f := range t.Files() {
			if err := writeFile(f); err != nil {
				return fail("writing "+f.Path, err)
			}
			opt.logf("wrote %s", f.Path)
		}
	}
	// 4. Validate all, then activate and verify each.
	for _, t := range run {
		if err := t.Validate(ctx); err != nil {
			return fail("validating "+t.Name(), err)
		}
	}
	if opt.beforeActivate != nil {
		opt.beforeActivate()
	}
	j.State = stateActivating
	if err := j.save(dir); err != nil {
		return fail("journal", err)
	}
	for i, t := range run {
		j.Targets[i].Activated = true
		if err := j.save(dir); err != nil {
			return fail("journal", err)
		}
		if err := t.Activate(ctx, j.Targets[i].Wanted); err != nil {
			return fail("activating "+t.Name(), err)
		}
		if err := t.Verify(ctx, j.Targets[i].Wanted); err != nil {
			return fail("verifying "+t.Name(), err)
		}
		after, err := t.Snapshot(ctx)
		if err != nil {
			return fail("reading "+t.Name()+" back", err)
		}
		opt.logf("%s: active and verified", t.Name())
		res.Targets = append(res.Targets, TargetOutcome{Name: t.Name(), Files: j.Targets[i].Files, Before: j.Targets[i].Before, After: after})
	}
	// 5. Done.
	j.State = stateApplied
	j.Finished = time.Now().UTC()
	if err := j.save(dir); err != nil {
		return fail("journal", err)
	}
	return res, nil
}

// Rollback undoes the last applied transaction in opt.StateDir: its
// backups go back, and each of its targets found in targets (by Name) is
// activated with its snapshot and verified. Targets of the journal not
// given are reported: their files are restored but the running service
// still has to be reloaded by hand.
func Rollback(ctx context.Context, targets []Target, opt Options) (*Result, error) {
	if rec, err := Recover(ctx, targets, opt); err != nil || rec != nil {
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
	err = undo(ctx, dir, j, targets, opt)
	for _, jt := range j.Targets {
		res.Targets = append(res.Targets, TargetOutcome{Name: jt.Name, Files: jt.Files, Before: jt.Wanted, After: jt.Before})
	}
	return res, err
}

// Recover finds a transaction a killed run left in "writing" or
// "activating" and restores it as Rollback would; nil, nil when there is
// none.
func Recover(ctx context.Context, targets []Target, opt Options) (*Result, error) {
	if opt.StateDir == "" {
		return nil, errors.New("apply: no state directory")
	}
	dir, j, err := last(opt.StateDir, stateWriting, stateActivating)
	if err != nil || j == nil {
		return nil, err
	}
	opt.logf("found the half-done transaction %s (%s); restoring its backups first", j.ID, j.State)
	res := &Result{ID: j.ID, Label: j.Label, RolledBack: true}
	if err := undo(ctx, dir, j, targets, opt); err != nil {
		return res, fmt.Errorf("recovering %s: %w", j.ID, err)
	}
	return res, nil
}

// undo restores the backups of j and re-activates the targets j
// activated, then marks j rolled back (or failed).
//
// An interrupted run (its context cancelled: Ctrl-C) must still be able
// to put things back, so undo works on a context that is not cancelled
// with it, bounded by undoTimeout.
func undo(ctx context.Context, dir string, j *journal, targets []Target, opt Options) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	byName := map[string]Target{}
	for _, t := range targets {
		byName[t.Name()] = t
	}
	var errs []string
	for i := len(j.Files) - 1; i >= 0; i-- {
		if err := restore(dir, j.Files[i]); err != nil {
			errs = append(errs, err.Error())
		} else {
			opt.logf("restored %s", j.Files[i].Path)
		}
	}
	// Re-activate in the order of the transaction, then verify them all:
	// a later target's old settings may need an earlier one back first
	// (nginx's old upstream is the app's old TCP port, the app's old
	// config names memcached's old address).
	var manual []string
	var back []journalTarget
	for _, jt := range j.Targets {
		if !jt.Activated {
			continue
		}
		t := byName[jt.Name]
		if t == nil {
			manual = append(manual, jt.Name)
			continue
		}
		if err := t.Activate(ctx, jt.Before); err != nil {
			errs = append(errs, fmt.Sprintf("re-activating %s: %v", jt.Name, err))
			continue
		}
		back = append(back, jt)
	}
	for _, jt := range back {
		if err := byName[jt.Name].Verify(ctx, jt.Before); err != nil {
			errs = append(errs, fmt.Sprintf("verifying %s after the rollback: %v", jt.Name, err))
			continue
		}
		opt.logf("%s: back to its old settings", jt.Name)
	}
	if len(manual) > 0 {
		sort.Strings(manual)
		errs = append(errs, fmt.Sprintf("files restored, but %s must be reloaded or restarted by hand (not given to this run)", strings.Join(manual, ", ")))
	}
	j.Finished = time.Now().UTC()
	if len(errs) > 0 {
		j.State = stateRollbackFailed
		j.Error = strings.Join(append([]string{j.Error}, errs...), "; ")
		_ = j.save(dir)
		return errors.New(strings.Join(errs, "; "))
	}
	j.State = stateRolledBack
	return j.save(dir)
}

// undoTimeout bounds a rollback (restarts included).
const undoTimeout = 10 * time.Minute

// checkFiles refuses relative paths and two targets writing one file.
func checkFiles(ts []Target) error {
	seen := map[string]string{}
	for _, t := range ts {
		for _, f := range t.Files() {
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
