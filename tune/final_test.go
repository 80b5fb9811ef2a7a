package tune

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/loadgen"
)

// TestFinalComparison: after the steps, the loop measures the stack as
// found against the tuned one, interleaved, with every kept step rolled
// back (A) and applied again (B); each step's "x baseline" is its own
// ratio chained. A tuned stack that measures worse there (here the step's
// effect turns after it was decided) is rolled back whole and said so.
func TestFinalComparison(t *testing.T) {
	for _, tc := range []struct {
		name     string
		turn     bool // the step's state becomes slow after its test
		decision abtest.Verdict
	}{
		{"better", false, CodeBetter},
		{"worse after the steps: rolled back", true, CodeWorse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := &fakeService{path: filepath.Join(dir, "service.conf"), running: "old"}
			if err := os.WriteFile(s.path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			var slowNew atomic.Bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, running := s.state()
				// Effects far beyond what a busy host does to the scores.
				switch {
				case running == "old":
					time.Sleep(20 * time.Millisecond)
				case slowNew.Load():
					time.Sleep(100 * time.Millisecond)
				}
				w.Write([]byte("ok"))
			}))
			defer srv.Close()
			var first *diagnose.Result
			diagnoses := 0
			opt := Options{
				Diagnose: diagnose.Options{Bench: benchrun.Options{URL: srv.URL,
					Load: loadgen.Options{Connections: 1, Duration: 500 * time.Millisecond, KeepAlive: true, Timeout: time.Second}}},
				Steps: []Step{{Label: "fake", Plan: func(_ context.Context, p *Pick) (*Work, error) {
					if p.D != first {
						return &Work{}, nil
					}
					return &Work{Targets: []apply.Target{fakeTarget{s}}}, nil
				}}},
				StateDir: filepath.Join(dir, "state"),
				// Up to 8 runs a state: a run stalled by a busy host is
				// outvoted.
				AB:         abtest.Options{MinRuns: 4, MaxRuns: 8},
				NoiseLimit: -1,
				diagnoseRun: func(context.Context, diagnose.Options) (*diagnose.Result, error) {
					diagnoses++
					if first == nil {
						first = &diagnose.Result{Server: "fake"}
						return first, nil
					}
					// The second diagnosis runs after the step was decided.
					slowNew.Store(tc.turn)
					return &diagnose.Result{Server: "fake"}, nil
				},
			}
			hist, err := history.Open(filepath.Join(dir, "history.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer hist.Close()
			opt.History, opt.Ledger = hist, history.Meta{ScenarioHash: "h"}
			res, err := Run(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			// The ledger: one session, done, with the noise floor's, the
			// step's and the final decision; every run in it, with its arm.
			ss, err := hist.Sessions(context.Background(), 5)
			if err != nil || len(ss) != 1 || ss[0].Status != history.SessionDone || len(ss[0].Decisions) != 3 {
				t.Fatalf("sessions %+v, %v", ss, err)
			}
			if d := ss[0].Decisions; d[1].LabelB != "fake" || d[1].LabelA != "fake (before)" || !d[1].Kept || d[2].LabelA != labelOriginal || d[2].Kept != !tc.turn {
				t.Errorf("decisions %+v", d)
			}
			runs, _ := hist.List(context.Background(), history.ListFilter{Session: ss[0].ID, Limit: 1000})
			for _, r := range runs {
				if r.Command != history.CommandTune || r.ScenarioHash != "h" || r.Arm == "" {
					t.Errorf("run %+v", r)
				}
			}
			step := res.Steps[1]
			if step.Decision == nil || step.Decision.Verdict != abtest.Better || step.RolledBack != "" {
				t.Fatalf("the step: %+v", step)
			}
			if want := round3(step.Decision.RatioMedian); step.XBaseline != want {
				t.Errorf("x baseline %v, want the step's own ratio %v", step.XBaseline, want)
			}
			f := res.Final
			if f == nil {
				t.Fatal("no final comparison")
			}
			if f.Decision != tc.decision || len(f.Original) < 4 || len(f.Tuned) < 4 || f.Test == nil || len(f.Steps) != 1 || f.Steps[0] != "fake" {
				t.Errorf("final: %+v", f)
			}
			// Runs as even as these (a fixed sleep per request) may
			// have no spread at all: then nothing hides in the noise.
			if f.Interval[0] > f.Ratio || f.Interval[1] < f.Ratio || f.Detectable < 0 || f.Detectable != Detectable(f.Test) {
				t.Errorf("final interval %v around %v, detectable %v", f.Interval, f.Ratio, f.Detectable)
			}
			file, running := s.state()
			want := "new"
			if tc.turn {
				want = "old"
				if !f.RolledBack || res.Restart != nil {
					t.Errorf("a worse tuned stack: rolled back %v, restart check %+v", f.RolledBack, res.Restart)
				}
			}
			if file != want || running != want {
				t.Errorf("the service ends as file %q, running %q, want %q", file, running, want)
			}
		})
	}
}

// TestNoiseFaced: a noise floor wider than the limit is said, with the
// causes the loop can see (here a first run far slower than the others,
// and two processes spinning beside the stack), and measured again with
// runs twice as long; a quiet one is measured once.
func TestNoiseFaced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noisy  bool
		spin   int
		causes []string
	}{
		{"quiet", false, 0, nil},
		{"noisy, busy host", true, 2, []string{CauseWarmUp, CauseOtherProcesses}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			var cold atomic.Bool
			cold.Store(tc.noisy)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				n := calls.Add(1)
				switch {
				case cold.Load():
					time.Sleep(60 * time.Millisecond) // the first run: a cold start
				case tc.noisy && n%7 == 0:
					// Every seventh request stalls: scores scatter.
					time.Sleep(time.Duration(n%5) * 15 * time.Millisecond)
				}
				w.Write([]byte("ok"))
			}))
			defer srv.Close()
			for range tc.spin {
				spin := exec.Command("sh", "-c", "while :; do :; done")
				if err := spin.Start(); err != nil {
					t.Fatal(err)
				}
				defer func() { spin.Process.Kill(); spin.Wait() }()
			}
			runs := 0
			opt := Options{
				Diagnose: diagnose.Options{Bench: benchrun.Options{URL: srv.URL,
					Load: loadgen.Options{Connections: 1, Duration: 300 * time.Millisecond, KeepAlive: true, Timeout: time.Second}},
					BeforeBench: func(context.Context) error {
						runs++
						cold.Store(tc.noisy && runs == 1) // the first run: a cold start
						return nil
					}},
				StateDir:   t.TempDir(),
				AB:         abtest.Options{MinRuns: 4, MaxRuns: 4},
				NoiseLimit: 0.02,
			}
			if !tc.noisy {
				opt.NoiseLimit = 10 // nothing a quiet host does is past ±1000%
			}
			floor := func() *Noise {
				runs = 0
				res, err := NoiseFloor(context.Background(), opt, "baseline")
				if err != nil && !errors.Is(err, ErrTooNoisy) {
					t.Fatal(err)
				}
				if res.Noise == nil || len(res.Noise.Tries) == 0 {
					t.Fatalf("no noise check: %+v", res)
				}
				return res.Noise
			}
			if !tc.noisy {
				// An A/A comparison is told apart by chance now and then
				// (and more often on a busy host): the floor is then
				// rightly measured again. A quiet floor is the one whose
				// first try is within noise; up to three are taken.
				for attempt := 1; ; attempt++ {
					n := floor()
					first := n.Tries[0]
					if first.Verdict != abtest.WithinNoise {
						if len(n.Tries) < 2 {
							t.Fatalf("a first floor told A from A (%s) and was not measured again", first.Verdict)
						}
						if attempt < 3 {
							t.Logf("attempt %d: A told apart from A (%s), measured %d times", attempt, first.Verdict, len(n.Tries))
							continue
						}
					}
					if len(n.Tries) != 1 || n.Noisy {
						t.Errorf("a quiet floor (first try %s, ±%.1f%%) measured %d times, noisy %v", first.Verdict, first.Width*100, len(n.Tries), n.Noisy)
					}
					return
				}
			}
			n := floor()
			if len(n.Tries) < 2 || n.Tries[1].RunS != 2*n.Tries[0].RunS {
				t.Errorf("tries %+v: want a second floor with runs twice as long", n.Tries)
			}
			var got []string
			for _, c := range n.Causes {
				got = append(got, c.Code)
			}
			for _, want := range tc.causes {
				if !slices.Contains(got, want) {
					t.Errorf("causes %v lack %s", got, want)
				}
			}
		})
	}
}
