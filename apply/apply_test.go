package apply

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fake is a target whose running state is a map; its failures are knobs.
type fake struct {
	name     string
	hostWide bool
	files    []File
	want     State
	running  State
	// fail* make that step fail; failVerifyNew fails Verify only for the
	// new state (a server that ignored the change).
	failValidate, failActivate, failVerifyNew bool
	onActivate                                func()
	activations                               []State
	verifyNeeds                               *fake // Verify fails unless that target is in the same phase
}

func (f *fake) Name() string   { return f.name }
func (f *fake) HostWide() bool { return f.hostWide }
func (f *fake) Files() []File  { return f.files }
func (f *fake) Wanted() State  { return f.want }
func (f *fake) Snapshot(context.Context) (State, error) {
	out := State{}
	for k := range f.want {
		out[k] = f.running[k]
	}
	return out, nil
}
func (f *fake) Validate(context.Context) error {
	if f.failValidate {
		return errors.New("validation failed")
	}
	return nil
}
func (f *fake) Activate(ctx context.Context, want State) error {
	if f.onActivate != nil {
		f.onActivate()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f.activations = append(f.activations, want)
	if f.failActivate && want["k"] == f.want["k"] {
		return errors.New("restart failed")
	}
	for k, v := range want {
		f.running[k] = v
	}
	return nil
}
func (f *fake) Verify(_ context.Context, want State) error {
	if f.failVerifyNew && want["k"] == f.want["k"] {
		return errors.New("read back a different value")
	}
	if d := f.verifyNeeds; d != nil && (want["k"] == f.want["k"]) != (d.running["k"] == d.want["k"]) {
		return errors.New("the target it depends on is not in the same state")
	}
	return compare(f.name, want, f.running, func(_, a, b string) bool { return a == b })
}

func (f *fake) HandFix(key, want string) string { return "fix " + f.name + " " + key + "=" + want }

// setup makes two targets over files in dir: a.conf exists, b.conf not.
func setup(t *testing.T, dir string) (*fake, *fake) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "a.conf"), []byte("old a\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	a := &fake{name: "a", files: []File{{Path: filepath.Join(dir, "a.conf"), Data: []byte("new a\n")}},
		want: State{"k": "new"}, running: State{"k": "old"}}
	b := &fake{name: "b", files: []File{{Path: filepath.Join(dir, "b.conf"), Data: []byte("new b\n")}},
		want: State{"k": "2"}, running: State{"k": "1"}}
	return a, b
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRun(t *testing.T) {
	cases := []struct {
		name       string
		break_     func(a, b *fake)
		hostWide   bool
		wantErr    string
		applied    bool
		activatedA int // how many times a was activated
	}{
		{name: "success", applied: true, activatedA: 1},
		{name: "validation fails: nothing activated", break_: func(a, b *fake) { b.failValidate = true }, wantErr: "validating b"},
		{name: "second target fails to activate: first re-activated with its snapshot", break_: func(a, b *fake) { b.failActivate = true }, wantErr: "activating b", activatedA: 2},
		{name: "read-back differs: rolled back", break_: func(a, b *fake) { a.failVerifyNew = true }, wantErr: "verifying a", activatedA: 2},
		{name: "host-wide target skipped without the flag", break_: func(a, b *fake) { b.hostWide = true }, applied: true, activatedA: 1},
		{name: "host-wide target applied with the flag", break_: func(a, b *fake) { b.hostWide = true }, hostWide: true, applied: true, activatedA: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := setup(t, dir)
			if tc.break_ != nil {
				tc.break_(a, b)
			}
			opt := Options{StateDir: filepath.Join(dir, "state"), HostWide: tc.hostWide, Label: tc.name}
			res, err := Run(context.Background(), []Target{a, b}, opt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "rolled back") {
					t.Fatalf("err = %v, want %q and rolled back", err, tc.wantErr)
				}
				if got := read(t, filepath.Join(dir, "a.conf")); got != "old a\n" {
					t.Errorf("a.conf = %q after a failed run", got)
				}
				if got := read(t, filepath.Join(dir, "b.conf")); got != "<absent>" {
					t.Errorf("b.conf = %q after a failed run, want it removed", got)
				}
				if a.running["k"] != "old" || b.running["k"] != "1" {
					t.Errorf("running state %v %v after a failed run", a.running, b.running)
				}
				if st, _ := os.Stat(filepath.Join(dir, "a.conf")); st.Mode().Perm() != 0o640 {
					t.Errorf("restored a.conf has mode %v", st.Mode().Perm())
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if got := read(t, filepath.Join(dir, "a.conf")); got != "new a\n" {
					t.Errorf("a.conf = %q", got)
				}
				if a.running["k"] != "new" {
					t.Errorf("a running %v", a.running)
				}
				skipped := b.hostWide && !tc.hostWide
				if got, want := read(t, filepath.Join(dir, "b.conf")), map[bool]string{true: "<absent>", false: "new b\n"}[skipped]; got != want {
					t.Errorf("b.conf = %q, want %q", got, want)
				}
				if skipped != (len(res.Skipped) == 1) {
					t.Errorf("skipped = %v", res.Skipped)
				}
			}
			if len(a.activations) != tc.activatedA {
				t.Errorf("a activated %d times (%v), want %d", len(a.activations), a.activations, tc.activatedA)
			}
			hist, err := History(opt.StateDir)
			if err != nil || len(hist) != 1 {
				t.Fatalf("history %v %v", hist, err)
			}
			want := map[bool]string{true: stateApplied, false: stateRolledBack}[tc.applied]
			if string(hist[0].State) != want {
				t.Errorf("journal state %q, want %q", hist[0].State, want)
			}
		})
	}
}

func TestRollbackWalksBack(t *testing.T) {
	dir := t.TempDir()
	a, b := setup(t, dir)
	opt := Options{StateDir: filepath.Join(dir, "state")}
	ctx := context.Background()
	if _, err := Run(ctx, []Target{a}, opt); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, []Target{b}, opt); err != nil {
		t.Fatal(err)
	}
	// The newest first: b goes, a stays.
	if _, err := Rollback(ctx, []Target{a, b}, opt); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "b.conf")) != "<absent>" || b.running["k"] != "1" {
		t.Errorf("b not rolled back: %q %v", read(t, filepath.Join(dir, "b.conf")), b.running)
	}
	if read(t, filepath.Join(dir, "a.conf")) != "new a\n" || a.running["k"] != "new" {
		t.Errorf("a rolled back too early")
	}
	// Then a; then nothing is left to roll back.
	if _, err := Rollback(ctx, []Target{a, b}, opt); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "a.conf")) != "old a\n" || a.running["k"] != "old" {
		t.Errorf("a not rolled back")
	}
	if _, err := Rollback(ctx, []Target{a, b}, opt); err == nil || !strings.Contains(err.Error(), "no applied change") {
		t.Errorf("third rollback: %v", err)
	}
}

// TestRollbackNeedsTheTarget: a rollback that cannot reach a target
// restores its files, says what is left and how to fix it, and keeps the
// transaction open: the next run tries it again first, and closes it
// once the target is given.
func TestRollbackNeedsTheTarget(t *testing.T) {
	dir := t.TempDir()
	a, _ := setup(t, dir)
	opt := Options{StateDir: filepath.Join(dir, "state")}
	ctx := context.Background()
	if _, err := Run(ctx, []Target{a}, opt); err != nil {
		t.Fatal(err)
	}
	res, err := Rollback(ctx, nil, opt)
	var re *RollbackError
	if !errors.As(err, &re) || len(re.Leftovers) != 1 || re.Leftovers[0].Target != "a" || !strings.Contains(err.Error(), "reload or restart a") {
		t.Fatalf("err %v", err)
	}
	if res == nil || len(res.Leftovers) != 1 {
		t.Errorf("result %+v", res)
	}
	if read(t, filepath.Join(dir, "a.conf")) != "old a\n" {
		t.Error("files not restored")
	}
	// Without the target the next run cannot close it, and changes
	// nothing else.
	if _, err := Run(ctx, nil, opt); err == nil || !strings.Contains(err.Error(), "recovering") {
		t.Errorf("run after a failed rollback: %v", err)
	}
	// With it, the rollback finishes first.
	res, err = Run(ctx, []Target{a}, opt)
	if err != nil || res.Recovered == "" || a.running["k"] != "new" {
		t.Fatalf("run with the target: %+v %v", res, err)
	}
	hist, _ := History(opt.StateDir)
	if len(hist) != 2 || hist[0].State != stateApplied || hist[1].State != stateRolledBack {
		t.Errorf("history %+v", hist)
	}
}

func TestDuplicateAndRelativeFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := setup(t, dir)
	b.files[0].Path = a.files[0].Path
	if _, err := Run(context.Background(), []Target{a, b}, Options{StateDir: dir}); err == nil || !strings.Contains(err.Error(), "both write") {
		t.Errorf("duplicate: %v", err)
	}
	b.files[0].Path = "rel.conf"
	if _, err := Run(context.Background(), []Target{b}, Options{StateDir: dir}); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Errorf("relative: %v", err)
	}
}

// TestKilledHalfWay kills a child process after it wrote the new files and
// started activating; the next run finds the journal and restores the old
// files, so the set is never a mix.
func TestKilledHalfWay(t *testing.T) {
	if dir := os.Getenv("STACKTUNE_APPLY_KILL_DIR"); dir != "" {
		a, b := setup(t, dir)
		b.onActivate = func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
		_, _ = Run(context.Background(), []Target{a, b}, Options{StateDir: filepath.Join(dir, "state")})
		t.Fatal("the child was not killed")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledHalfWay$")
	cmd.Env = append(os.Environ(), "STACKTUNE_APPLY_KILL_DIR="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if read(t, filepath.Join(dir, "a.conf")) != "new a\n" || read(t, filepath.Join(dir, "b.conf")) != "new b\n" {
		t.Fatalf("the child did not get as far as writing both files")
	}
	hist, _ := History(filepath.Join(dir, "state"))
	if len(hist) != 1 || hist[0].State != stateActivating {
		t.Fatalf("journal after the kill: %+v", hist)
	}
	a := &fake{name: "a", want: State{"k": "new"}, running: State{"k": "new"}}
	res, err := Recover(context.Background(), []Target{a}, Options{StateDir: filepath.Join(dir, "state")})
	if err == nil || !strings.Contains(err.Error(), "reload or restart b") {
		t.Fatalf("recover: %v", err)
	}
	if res == nil || !res.RolledBack {
		t.Fatalf("recover result %+v", res)
	}
	if read(t, filepath.Join(dir, "a.conf")) != "old a\n" || read(t, filepath.Join(dir, "b.conf")) != "<absent>" {
		t.Errorf("files after recovery: %q %q", read(t, filepath.Join(dir, "a.conf")), read(t, filepath.Join(dir, "b.conf")))
	}
	if a.running["k"] != "old" {
		t.Errorf("a not re-activated with its snapshot: %v", a.running)
	}
}

// TestRollbackOrder: a later target's old settings need the earlier
// target's old settings back (nginx's old upstream is the app's old
// port), so a rollback re-activates in the transaction's order and
// verifies only when all are back.
func TestRollbackOrder(t *testing.T) {
	dir := t.TempDir()
	a, b := setup(t, dir)
	ctx := context.Background()
	var order []string
	a.onActivate = func() { order = append(order, "a") }
	b.onActivate = func() { order = append(order, "b") }
	b.verifyNeeds = a // b's state is only right when a's matches it
	opt := Options{StateDir: filepath.Join(dir, "state")}
	if _, err := Run(ctx, []Target{a, b}, opt); err != nil {
		t.Fatal(err)
	}
	order = nil
	if _, err := Rollback(ctx, []Target{a, b}, opt); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if strings.Join(order, ",") != "a,b" {
		t.Errorf("re-activated in the order %v, want a,b", order)
	}
}

// TestInterrupted: Ctrl-C (the context cancelled) half-way still rolls
// back: the undo does not run on the cancelled context.
func TestInterrupted(t *testing.T) {
	dir := t.TempDir()
	a, b := setup(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	b.onActivate = cancel
	_, err := Run(ctx, []Target{a, b}, Options{StateDir: filepath.Join(dir, "state")})
	if err == nil || !strings.Contains(err.Error(), "context canceled") || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("err = %v", err)
	}
	if a.running["k"] != "old" || read(t, filepath.Join(dir, "a.conf")) != "old a\n" {
		t.Errorf("a not rolled back after the interrupt: %v", a.running)
	}
}

// TestNewDirectory: a file in a directory that does not exist yet (a
// unit's first drop-in) is written with its directory, and a rollback
// removes both.
func TestNewDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nginx.service.d", "sub", "stacktune.conf")
	a := &fake{name: "a", files: []File{{Path: path, Data: []byte("[Service]\n")}}, want: State{"k": "new"}, running: State{"k": "old"}}
	opt := Options{StateDir: filepath.Join(dir, "state")}
	if _, err := Run(context.Background(), []Target{a}, opt); err != nil {
		t.Fatal(err)
	}
	if read(t, path) != "[Service]\n" {
		t.Fatal("not written")
	}
	if _, err := Rollback(context.Background(), []Target{a}, opt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "nginx.service.d")); !os.IsNotExist(err) {
		t.Errorf("the directory the transaction made is still there: %v", err)
	}
}
