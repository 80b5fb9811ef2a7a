package tune

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/loadgen"
)

// switchServer serves slowly unless the file fix exists: the user's
// "code change" is the file, made and removed by commands.
func switchServer(t *testing.T) (url, fix string) {
	fix = filepath.Join(t.TempDir(), "fix")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if _, err := os.Stat(fix); err != nil {
			time.Sleep(20 * time.Millisecond)
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, fix
}

func cmd(argv ...string) func(context.Context) error { return apply.CommandCheck(argv...) }

// TestAB: two states switched by the user's commands, measured
// interleaved by tune's test: the fix is better, with its interval; two
// identical states never decide (three repeats).
func TestAB(t *testing.T) {
	url, fix := switchServer(t)
	on, off := cmd("touch", fix), cmd("rm", "-f", fix)
	opt := ABOptions{Bench: benchrun.Options{URL: url, Load: loadgen.Options{Connections: 1, Duration: 300 * time.Millisecond, KeepAlive: true, Timeout: time.Second}},
		AB: abtest.Options{MinRuns: 4, MaxRuns: 8}, LabelA: "n+1", LabelB: "fix"}
	opt.ToA, opt.ToB = off, on
	res, err := AB(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision != CodeBetter || res.Ratio < 2 || res.Interval[0] < 1 || len(res.A) < 4 || len(res.B) < 4 {
		t.Errorf("the fix against the loop: %+v", res)
	}
	for i := range 3 {
		opt.ToA, opt.ToB, opt.LabelB = off, off, "n+1 again"
		res, err := AB(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision != CodeWithinNoise {
			t.Errorf("repeat %d: two identical states decided %s: %+v", i+1, res.Decision, res)
		}
		t.Logf("A against A, repeat %d: %.3f [%.3f, %.3f]", i+1, res.Ratio, res.Interval[0], res.Interval[1])
	}
}

// TestABNoiseFloor: with NoiseFloor, A is first measured against
// itself: a quiet setup is within noise (its width the smallest change it
// can tell) and the test goes on to its verdict; a switch to A that
// changes the state (here each one flips the fix) is told apart from
// itself, and the cause is said.
func TestABNoiseFloor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flips bool
	}{{"quiet", false}, {"A is not A", true}} {
		t.Run(tc.name, func(t *testing.T) {
			url, fix := switchServer(t)
			on, off := cmd("touch", fix), cmd("rm", "-f", fix)
			toA := off
			if tc.flips {
				n := 0
				toA = func(ctx context.Context) error {
					n++
					if n%2 == 0 {
						return on(ctx)
					}
					return off(ctx)
				}
			}
			res, err := AB(context.Background(), ABOptions{Bench: benchrun.Options{URL: url, Load: loadgen.Options{Connections: 1, Duration: 300 * time.Millisecond, KeepAlive: true, Timeout: time.Second}},
				AB: abtest.Options{MinRuns: 4, MaxRuns: 8}, LabelA: "n+1", LabelB: "fix", ToA: toA, ToB: on, NoiseFloor: true})
			if err != nil {
				t.Fatal(err)
			}
			n := res.Noise
			if n == nil || n.Runs != 8 || n.RunS != 0.3 {
				t.Fatalf("noise floor %+v: want 4 runs of A against 4 of A, 0.3 s each", n)
			}
			told := slices.ContainsFunc(n.Causes, func(c NoiseCause) bool { return c.Code == CauseToldApart })
			if tc.flips {
				if n.Verdict == abtest.WithinNoise || !told {
					t.Errorf("A flipped at every switch and was not told apart from itself: %+v", n)
				}
				return
			}
			if n.Verdict != abtest.WithinNoise || told || !(n.Width >= 0 && n.Width < 1) {
				t.Errorf("a quiet A against itself: %+v", n)
			}
			if res.Decision != CodeBetter || len(res.A) < 4 {
				t.Errorf("after the floor, the fix against the loop: %+v", res)
			}
		})
	}
}

// TestUserStep: a step of the user's own, made by commands, is measured
// in the loop like the built-in ones, kept when better, and in force at
// the end; a failing command is rolled back and said.
func TestUserStep(t *testing.T) {
	url, fix := switchServer(t)
	for _, tc := range []struct {
		name   string
		apply  []string
		kept   bool
		exists bool
	}{
		{"better: kept", []string{"touch", fix}, true, true},
		{"the command fails: rolled back", []string{"false"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(fix)
			ct, err := apply.NewCommandTarget("the fix", tc.apply, []string{"rm", "-f", fix}, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), Options{
				Diagnose: diagnose.Options{Bench: benchrun.Options{URL: url, Load: loadgen.Options{Connections: 1, Duration: 300 * time.Millisecond, KeepAlive: true, Timeout: time.Second}}},
				Steps:    []Step{UserStep(ct)},
				StateDir: t.TempDir(), AB: abtest.Options{MinRuns: 4, MaxRuns: 8}, NoiseLimit: -1,
				diagnoseRun: func(context.Context, diagnose.Options) (*diagnose.Result, error) {
					return &diagnose.Result{Server: "fake"}, nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			st := res.Steps[1]
			kept := st.Decision != nil && st.Decision.Verdict == abtest.Better && st.RolledBack == ""
			if kept != tc.kept || !tc.kept && st.Skipped == "" {
				t.Errorf("step %+v", st)
			}
			if _, err := os.Stat(fix); (err == nil) != tc.exists {
				t.Errorf("the fix file exists: %v, want %v", err == nil, tc.exists)
			}
			if len(res.Steps) != 2 {
				t.Errorf("the user step ran again in the second round: %+v", res.Steps)
			}
		})
	}
}

func TestParseStep(t *testing.T) {
	for _, tc := range []struct {
		spec, name string
		on, off    int
		ok         bool
	}{
		{"fix:git checkout fix && make:git checkout main", "fix", 0, 0, false}, // no shell: said so
		{"fix:sh -c 'git checkout fix && make':sh -c 'git checkout main && make'", "fix", 3, 3, true},
		{`port:curl http\://x/on:curl http\://x/off`, "port", 2, 2, true},
		{"only:one", "", 0, 0, false},
		{":a:b", "", 0, 0, false},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			ct, err := ParseStep(tc.spec)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v", err)
			}
			if err == nil && (ct.Label != tc.name || len(ct.Apply) != tc.on || len(ct.Revert) != tc.off) {
				t.Errorf("%+v", ct)
			}
		})
	}
}
