package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/refstack/refapp/refapptest"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
	"github.com/stacktune/stacktune/tune"
)

// TestABRefapp is `stacktune ab` on the reference app: its home page with
// the N+1 friend check (A) against the code that loads the friend list
// once (B), the states switched by commands (cp of a state file that the
// app's front reads on every request, as a deploy script would switch a
// symlink), decides better; two identical states never decide, twice.
func TestABRefapp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB and the reference app")
	}
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	ctx := context.Background()
	refapptest.Load(t, m, 0)
	apps := map[string]*httputil.ReverseProxy{}
	for _, v := range []struct {
		name string
		fix  bool
	}{{"n1", false}, {"fix", true}} {
		app, err := refapp.Start(ctx, refapp.Config{DSN: m.DSN("refapp") + "?interpolateParams=true", FriendSet: v.fix})
		if err != nil {
			t.Fatal(err)
		}
		defer app.Close()
		u, err := url.Parse(app.URL())
		if err != nil {
			t.Fatal(err)
		}
		apps[v.name] = httputil.NewSingleHostReverseProxy(u)
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "deployed")
	for _, name := range []string{"n1", "fix"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(state)
		p, ok := apps[string(b)]
		if err != nil || !ok {
			http.Error(w, "no version deployed", http.StatusServiceUnavailable)
			return
		}
		p.ServeHTTP(w, r)
	}))
	defer front.Close()
	scenario := refapptest.Scenario(t, front.URL, []int{31}, false)
	deploy := func(name string) string { return "cp " + filepath.Join(dir, name) + " " + state }
	for _, tc := range []struct {
		name  string
		a, b  string
		wants []abtest.Verdict // the decision codes allowed
		floor bool             // with the noise floor (A against itself first)
	}{
		{"the N+1 fix", "n1", "fix", []abtest.Verdict{tune.CodeBetter}, true},
		// The fixed page: hundreds of requests a run, where the N+1
		// page's few dozen make a coarse score on a busy host.
		{"A against A", "fix", "fix", []abtest.Verdict{tune.CodeWithinNoise}, false},
		{"A against A again", "fix", "fix", []abtest.Verdict{tune.CodeWithinNoise}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hist := filepath.Join(t.TempDir(), "history.db")
			out, stderr, err := run(t, "", "ab", "--a", deploy(tc.a), "--b", deploy(tc.b), "--label-a", "a-"+tc.a, "--label-b", "b-"+tc.b,
				"--scenario", scenario, "-c", "2", "-d", "1s", "--switch-warmup", "300ms", "--history", hist, "--format", "json",
				fmt.Sprintf("--noise-floor=%v", tc.floor))
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			var res tune.ABResult
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			t.Logf("%s: %s, ratio %.3f [%.3f, %.3f], A %v, B %v", tc.name, res.Decision, res.Ratio, res.Interval[0], res.Interval[1], res.A, res.B)
			ok := false
			for _, w := range tc.wants {
				ok = ok || res.Decision == w
			}
			if !ok {
				t.Errorf("decision %q, want one of %q\n%s", res.Decision, tc.wants, stderr)
			}
			if res.Interval[0] > res.Ratio || res.Interval[1] < res.Ratio || len(res.A) < 4 || len(res.B) < 4 {
				t.Errorf("ratio %v outside its interval %v, or too few runs (%d, %d)", res.Ratio, res.Interval, len(res.A), len(res.B))
			}
			// Every measured run is in the history under its label.
			st, err := history.Open(hist)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			runs, err := st.Runs(context.Background(), history.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			count := map[string]int{}
			for _, r := range runs {
				count[r.Label]++
			}
			if count["a-"+tc.a] != len(res.A) || count["b-"+tc.b] != len(res.B) {
				t.Errorf("history labels %v, want %d and %d runs", count, len(res.A), len(res.B))
			}
			// The noise floor: A against itself, its width the session's.
			if (res.Noise != nil) != tc.floor {
				t.Errorf("noise floor %+v, want one: %v", res.Noise, tc.floor)
			}
			if tc.floor {
				t.Logf("noise floor: %s, ±%.1f%%, %d runs", res.Noise.Verdict, res.Noise.Width*100, res.Noise.Runs)
				ss, err := st.Sessions(context.Background(), 10)
				if err != nil {
					t.Fatal(err)
				}
				if res.Noise.Runs != 8 || len(ss) != 1 || ss[0].Noise != res.Noise.Width {
					t.Errorf("the floor's %d runs (want 4 of A against 4), sessions %+v: want its width %v", res.Noise.Runs, ss, res.Noise.Width)
				}
			}
			text, _, err := run(t, "", "ab", "--a", deploy(tc.a), "--b", deploy(tc.b), "--scenario", scenario, "-d", "300ms",
				"--switch-warmup", "0", "--no-history", "--max-runs", "4")
			if err != nil || !strings.Contains(text, "Result: b against a, interleaved: ") {
				t.Errorf("the text report: %v\n%s", err, text)
			}
		})
	}
}

// TestABRefused: what ab refuses before it runs anything.
func TestABRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no b", []string{"--a", "true", "http://127.0.0.1:1/"}, "--a CMD and --b CMD"},
		{"shell operator", []string{"--a", "make && restart", "--b", "true", "http://127.0.0.1:1/"}, `--a: "&&": the commands run without a shell`},
		{"same labels", []string{"--a", "true", "--b", "true", "--label-a", "x", "--label-b", "x", "http://127.0.0.1:1/"}, "could not tell the states apart"},
		{"no target", []string{"--a", "true", "--b", "true"}, "nothing to load"},
		{"both targets", []string{"--a", "true", "--b", "true", "--scenario", "s.yaml", "http://127.0.0.1:1/"}, "not both"},
		{"unbounded", []string{"--a", "true", "--b", "true", "-d", "0", "http://127.0.0.1:1/"}, "every run is bounded"},
		{"bad format", []string{"--a", "true", "--b", "true", "--format", "html", "http://127.0.0.1:1/"}, "html"},
		{"failing switch", []string{"--a", "false", "--b", "true", "--no-history", "http://127.0.0.1:1/"}, "switching to a: false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, "", append([]string{"ab"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestTuneUserSteps: --steps-file and --step add the user's steps after
// the built-in ones, in that order; what cannot run is refused with the
// file's line.
func TestTuneUserSteps(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "# the user's fixes\n\nn1-fix:cp v2 deployed:cp v1 deployed\n  cache:sh -c 'echo on > x':sh -c 'echo off > x'\n")
	builtIn := len(tune.DefaultSteps())
	for _, tc := range []struct {
		name   string
		o      tuneOptions
		labels []string
		err    string
	}{
		{"none", tuneOptions{}, nil, ""},
		{"file then flags", tuneOptions{stepsFile: good, steps: []string{`pool:sed -i s/a\:b/a\:c/ f:true`}}, []string{"n1-fix", "cache", "pool"}, ""},
		{"operator", tuneOptions{steps: []string{"x:make && restart:true"}}, nil, `"&&": the commands run without a shell`},
		{"two parts", tuneOptions{steps: []string{"x:true"}}, nil, "want NAME:APPLY_CMD:REVERT_CMD"},
		{"duplicate", tuneOptions{stepsFile: good, steps: []string{"cache:true:true"}}, nil, `two user steps are named "cache"`},
		{"bad line", tuneOptions{stepsFile: write("bad", "ok:true:true\nbroken\n")}, nil, "line 2"},
		{"not a file", tuneOptions{stepsFile: dir}, nil, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := tuneSteps(tc.o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.labels == nil {
				if steps != nil {
					t.Errorf("steps %d, want the default (nil)", len(steps))
				}
				return
			}
			var got []string
			for _, s := range steps[builtIn:] {
				got = append(got, s.Label)
			}
			if strings.Join(got, ",") != strings.Join(tc.labels, ",") || len(steps) != builtIn+len(tc.labels) {
				t.Errorf("user steps %q, want %q after %d built-in", got, tc.labels, builtIn)
			}
		})
	}
}
