package knobsearch

import (
	"context"
	"fmt"
	"testing"
)

// faulty wraps the fakes and fails the call numbered failAt (counting
// every Reset, Undo, Apply and Measure of a search in order).
type faulty struct {
	srv    *fakeServer
	w      *fakeWorkload
	calls  int
	failAt int
	failed string
}

func (f *faulty) step(what string) error {
	f.calls++
	if f.calls == f.failAt {
		f.failed = what
		return fmt.Errorf("injected failure of %s (call %d)", what, f.calls)
	}
	return nil
}

func (f *faulty) Name() string { return "faulty" }
func (f *faulty) Reset(ctx context.Context) error {
	if err := f.step("reset"); err != nil {
		return err
	}
	return f.w.Reset(ctx)
}
func (f *faulty) Measure(ctx context.Context, label string, observe func(context.Context)) (Measurement, error) {
	if err := f.step("measure"); err != nil {
		return Measurement{}, err
	}
	return f.w.Measure(ctx, label, observe)
}
func (f *faulty) Apply(ctx context.Context, c Config, label string) error {
	if err := f.step("apply"); err != nil {
		return err
	}
	return f.srv.Apply(ctx, c, label)
}
func (f *faulty) Undo(ctx context.Context) error {
	if err := f.step("undo"); err != nil {
		return err
	}
	return f.srv.Undo(ctx)
}

// TestSearchFaultAtEveryStep fails every call of a search in turn: a
// failed apply or run is a failed trial and the search goes on; a failed
// reset or undo stops it; whatever fails, every configuration applied is
// undone at the end unless the undo itself is what failed, and then the
// error says the server's state is the caller's to check.
func TestSearchFaultAtEveryStep(t *testing.T) {
	c := Constraints{MemoryLimit: 3 * gib, CanRestart: true}
	srv, w, opt := newFakes(t, c, 16*gib, 11)
	clean := &faulty{srv: srv, w: w}
	opt.Workload, opt.Server = clean, clean
	opt.Screen, opt.Trials = 3, 2
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	total := clean.calls
	if total < 30 {
		t.Fatalf("only %d calls in a clean search", total)
	}
	for at := 1; at <= total; at++ {
		srv, w, opt := newFakes(t, c, 16*gib, 11)
		f := &faulty{srv: srv, w: w, failAt: at}
		opt.Workload, opt.Server = f, f
		opt.Screen, opt.Trials = 3, 2
		res, err := Run(context.Background(), opt)
		what := fmt.Sprintf("failure of call %d (%s)", at, f.failed)
		switch f.failed {
		case "reset":
			if err == nil {
				t.Errorf("%s: the search went on", what)
			}
		case "undo":
			if err == nil {
				t.Errorf("%s: the search went on", what)
			}
			continue // the server's state is unknown, and said so
		case "apply", "measure":
			// The first run is the server as found: without it there is
			// nothing to search from. A comparison run must measure too.
			if err == nil && res != nil {
				failedTrials := 0
				for _, tr := range res.Trials {
					if !tr.OK() {
						failedTrials++
					}
				}
				if failedTrials != 1 {
					t.Errorf("%s: %d failed trials", what, failedTrials)
				}
			}
		}
		if res == nil {
			t.Errorf("%s: no result (%v)", what, err)
		}
		// An injected Apply failure never reached the fake server: what
		// it took, it undid.
		if len(srv.current) != 0 || srv.undone != len(srv.applied) {
			t.Errorf("%s: the server is left with %v (%d applied, %d undone)", what, srv.current, len(srv.applied), srv.undone)
		}
	}
}
