package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/loadgen"
)

// fakeService is a service with one setting kept in a file: its running
// value changes only when it is activated (as a reload reads its file).
// Every call of its target counts, and the call numbered failAt fails.
type fakeService struct {
	mu      sync.Mutex
	path    string
	running string
	calls   int
	failAt  int
}

var errInjected = errors.New("injected failure")

func (s *fakeService) call(what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.calls == s.failAt {
		return fmt.Errorf("%s (call %d): %w", what, s.calls, errInjected)
	}
	return nil
}

func (s *fakeService) state() (file, running string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := os.ReadFile(s.path)
	return string(b), s.running
}

// fakeTarget changes the fake service's setting to "new".
type fakeTarget struct{ s *fakeService }

func (t fakeTarget) Name() string        { return "fake" }
func (t fakeTarget) Wanted() apply.State { return apply.State{"v": "new"} }
func (t fakeTarget) Files() []apply.File {
	return []apply.File{{Path: t.s.path, Data: []byte("new")}}
}
func (t fakeTarget) Snapshot(context.Context) (apply.State, error) {
	if err := t.s.call("snapshot"); err != nil {
		return nil, err
	}
	_, running := t.s.state()
	return apply.State{"v": running}, nil
}
func (t fakeTarget) Activate(_ context.Context, want apply.State) error {
	if err := t.s.call("activate"); err != nil {
		return err
	}
	file, _ := t.s.state()
	if file != want["v"] {
		return fmt.Errorf("activate: the file says %q, wanted %q", file, want["v"])
	}
	t.s.mu.Lock()
	t.s.running = file
	t.s.mu.Unlock()
	return nil
}
func (t fakeTarget) Verify(_ context.Context, want apply.State) error {
	if err := t.s.call("verify"); err != nil {
		return err
	}
	if _, running := t.s.state(); running != want["v"] {
		return fmt.Errorf("running %q, wanted %q", running, want["v"])
	}
	return nil
}

// faultCase is one tune.Run with a failure injected at the failAt-th call
// of the target, or at the benchAt-th bench run (an error, or an
// interrupt).
type faultCase struct {
	failAt, benchAt int
	interrupt       bool
}

// runWithFault runs the loop with one fake step on a fake server and
// returns the error, the calls made and the service's state at the end.
func runWithFault(t *testing.T, srv string, c faultCase) (err error, targetCalls, benches int, file, running string, res *Result) {
	t.Helper()
	dir := t.TempDir()
	s := &fakeService{path: filepath.Join(dir, "service.conf"), running: "old", failAt: c.failAt}
	if err := os.WriteFile(s.path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var first *diagnose.Result
	opt := Options{
		Diagnose: diagnose.Options{
			Bench: benchrun.Options{URL: srv, Load: loadgen.Options{Connections: 1, Requests: 3, Duration: 2 * time.Second, KeepAlive: true, Timeout: time.Second}},
			BeforeBench: func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				benches++
				if benches == c.benchAt {
					if c.interrupt {
						cancel()
						return context.Canceled
					}
					return fmt.Errorf("bench %d: %w", benches, errInjected)
				}
				return nil
			},
		},
		Steps: []Step{{Label: "fake", Plan: func(_ context.Context, p *Pick) (*Work, error) {
			if p.D != first {
				return &Work{}, nil // the second round finds nothing new
			}
			return &Work{Targets: []apply.Target{fakeTarget{s}}}, nil
		}}},
		StateDir: filepath.Join(dir, "state"),
		AB:       abtest.Options{MinRuns: 4, MaxRuns: 4},
		WarmUp:   20 * time.Millisecond,
		// Runs of three requests score alike on a host however busy (a
		// 30 ms run could finish none there); the floor is not measured
		// again (the number of runs must not depend on the noise).
		NoiseLimit: -1,
		diagnoseRun: func(context.Context, diagnose.Options) (*diagnose.Result, error) {
			if first == nil {
				first = &diagnose.Result{Server: "fake"}
				return first, nil
			}
			return &diagnose.Result{Server: "fake"}, nil
		},
	}
	res, err = Run(ctx, opt)
	file, running = s.state()
	return err, s.calls, benches, file, running, res
}

// TestFaultAtEverySwitch injects a failure at every call of a step's
// target (snapshot, activate, verify: in the apply, in every switch of
// the A/B test, in the checks after each run, in the restart check) and at
// every bench run (the noise floor, the warm-ups, the measured runs; an
// error or an interrupt), and checks where the service ends: a run that
// fails leaves the step's file and running value as they were before it
// (tune rolls an undecided step back, on a context of its own after an
// interrupt), and a run that succeeds leaves them consistent with its
// decision.
func TestFaultAtEverySwitch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()

	err, calls, benches, file, running, res := runWithFault(t, srv.URL, faultCase{})
	if err != nil {
		t.Fatalf("without a fault: %v", err)
	}
	if len(res.Steps) < 2 || res.Steps[1].Decision == nil {
		t.Fatalf("without a fault, no decided step: %+v", res.Steps)
	}
	if want := "new"; res.Steps[1].RolledBack != "" {
		t.Fatalf("the fake step was rolled back on a constant server: %+v", res.Steps[1])
	} else if file != want || running != want {
		t.Fatalf("without a fault the kept step ends as file %q, running %q", file, running)
	}
	t.Logf("%d target calls and %d bench runs without a fault", calls, benches)

	var cases []faultCase
	for i := 1; i <= calls; i++ {
		cases = append(cases, faultCase{failAt: i})
	}
	for j := 1; j <= benches; j++ {
		cases = append(cases, faultCase{benchAt: j}, faultCase{benchAt: j, interrupt: true})
	}
	for _, c := range cases {
		name := fmt.Sprintf("target call %d", c.failAt)
		if c.benchAt > 0 {
			name = fmt.Sprintf("bench %d", c.benchAt)
			if c.interrupt {
				name += " interrupted"
			}
		}
		t.Run(name, func(t *testing.T) {
			err, _, _, file, running, res := runWithFault(t, srv.URL, c)
			// The step's result says whether it is in force: measured and
			// not rolled back (by its test, or by the loop stopping there).
			kept := len(res.Steps) > 1 && res.Steps[1].Skipped == "" && res.Steps[1].RolledBack == ""
			switch {
			case kept:
				if file != "new" || running != "new" {
					t.Errorf("kept, but the service has file %q, running %q", file, running)
				}
			case err != nil && strings.Contains(err.Error(), "rolling the step back failed"):
				// The fault hit the rollback itself: apply says what it
				// left, with the hand fix.
				var rb *apply.RollbackError
				if !errors.As(err, &rb) {
					t.Errorf("a failed rollback without apply's RollbackError: %v", err)
				}
			default:
				if file != "old" || running != "old" {
					t.Errorf("not kept (err %v), but the service has file %q, running %q", err, file, running)
				}
			}
			var rb *apply.RollbackError // it lists the failure with what it left
			if err != nil && !errors.Is(err, errInjected) && !errors.Is(err, context.Canceled) && !errors.As(err, &rb) {
				t.Errorf("the error does not carry its cause: %v", err)
			}
		})
	}
}

// TestFaultRestoresFilesByteForByte: a step interrupted in state B ends
// with its file as it was before the step, byte for byte.
func TestFaultRestoresFilesByteForByte(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	// The noise floor takes the first 8 runs and their warm-ups; run 12
	// is in the step's test.
	err, _, _, file, running, _ := runWithFault(t, srv.URL, faultCase{benchAt: 12, interrupt: true})
	if err == nil || !bytes.Equal([]byte(file), []byte("old")) || running != "old" {
		t.Errorf("err %v, file %q, running %q", err, file, running)
	}
}
