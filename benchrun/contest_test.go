package benchrun

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

// contestApp records the requests it gets: POST /initialize answers
// initStatus after 30ms, /slow after 20ms, anything else at once.
type contestApp struct {
	mu         sync.Mutex
	log        []string
	initStatus int
}

func (a *contestApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.log = append(a.log, r.Method+" "+r.URL.Path)
	status := a.initStatus
	a.mu.Unlock()
	switch r.URL.Path {
	case "/initialize":
		time.Sleep(30 * time.Millisecond)
		w.WriteHeader(status)
	case "/slow":
		time.Sleep(20 * time.Millisecond)
	}
	w.Write([]byte("ok"))
}

func (a *contestApp) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.log)
}

// writeScenario writes src (BASE replaced by base) into a fresh directory.
func writeScenario(t *testing.T, base, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(src, "BASE", base)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunPreRun: the pre_run hook is called once before each run, before
// its warm-up and any of its requests; its time is reported, not scored;
// when it fails the run fails with its message and no load is sent.
func TestRunPreRun(t *testing.T) {
	const withHook = `
base_url: BASE
pre_run: {method: POST, url: /initialize, expect: {status: 200}}
steps: [{name: home, url: /home}]
`
	tests := []struct {
		name       string
		src        string
		initStatus int
		load       loadgen.Options
		runs       int
		// check looks at the server's log and the runs.
		check   func(t *testing.T, log []string, runs []RunResult)
		reasons string // every run's only fail reason, BASE replaced; "" = pass
	}{
		{name: "called once before each run", src: withHook, initStatus: 200, runs: 2,
			load: loadgen.Options{Connections: 2, Requests: 20, KeepAlive: true},
			check: func(t *testing.T, log []string, runs []RunResult) {
				want := append(append([]string{"POST /initialize"}, slices.Repeat([]string{"GET /home"}, 20)...), "POST /initialize")
				want = append(want, slices.Repeat([]string{"GET /home"}, 20)...)
				if !slices.Equal(log, want) {
					t.Errorf("server saw %q", log)
				}
				for i, r := range runs {
					if r.Score != 20 || r.PreRun == nil || r.PreRun.Status != 200 || r.PreRun.ElapsedMS < 30 || r.PreRun.Error != "" ||
						!strings.HasSuffix(r.PreRun.What, "/initialize") || !strings.HasPrefix(r.PreRun.What, "POST http://127.0.0.1:") {
						t.Errorf("run %d: score %v, pre_run %+v", i+1, r.Score, r.PreRun)
					}
				}
			}},
		{name: "before the warm-up", src: withHook, initStatus: 200, runs: 1,
			load: loadgen.Options{Connections: 2, WarmUp: 200 * time.Millisecond, Duration: 300 * time.Millisecond, KeepAlive: true},
			check: func(t *testing.T, log []string, runs []RunResult) {
				if len(log) < 2 || log[0] != "POST /initialize" || slices.Contains(log[1:], "POST /initialize") {
					t.Errorf("server saw %q…", log[:min(len(log), 5)])
				}
			}},
		{name: "a failing request: no load", src: withHook, initStatus: 500, runs: 2,
			load:    loadgen.Options{Connections: 2, Requests: 20, KeepAlive: true},
			reasons: "pre_run POST BASE/initialize: status 500, want 200 (no load sent)",
			check: func(t *testing.T, log []string, runs []RunResult) {
				if !slices.Equal(log, []string{"POST /initialize", "POST /initialize"}) {
					t.Errorf("server saw %q", log)
				}
				for i, r := range runs {
					if r.Requests != 0 || r.Score != 0 || r.Stopped != StoppedPreRun || r.PreRun == nil || r.PreRun.Status != 500 ||
						r.PreRun.Error != "pre_run "+r.PreRun.What+": status 500, want 200" || r.Started.IsZero() {
						t.Errorf("run %d: %+v, pre_run %+v", i+1, r, r.PreRun)
					}
				}
			}},
		{name: "a failing command: no load", runs: 1, src: `
base_url: BASE
pre_run: {command: "echo 'cannot reach the database' >&2; exit 2", shell: true}
steps: [{name: home, url: /home}]
`, load: loadgen.Options{Connections: 2, Requests: 20, KeepAlive: true},
			reasons: "pre_run shell: echo 'cannot reach the database' >&2; exit 2: exit status 2: cannot reach the database (no load sent)",
			check: func(t *testing.T, log []string, runs []RunResult) {
				if len(log) != 0 || runs[0].PreRun.Status != 0 {
					t.Errorf("server saw %q; pre_run %+v", log, runs[0].PreRun)
				}
			}},
		{name: "a successful command", runs: 1, src: `
base_url: BASE
pre_run: {command: [sh, -c, "test -f s.yaml"]}
steps: [{name: home, url: /home}]
`, load: loadgen.Options{Connections: 1, Requests: 5, KeepAlive: true},
			check: func(t *testing.T, log []string, runs []RunResult) {
				if len(log) != 5 || runs[0].PreRun.What != "command sh -c \"test -f s.yaml\"" {
					t.Errorf("server saw %q; pre_run %+v", log, runs[0].PreRun)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &contestApp{initStatus: tt.initStatus}
			srv := httptest.NewServer(app)
			defer srv.Close()
			s, err := Run(context.Background(), Options{Scenario: writeScenario(t, srv.URL, tt.src), Load: tt.load, Runs: tt.runs})
			if err != nil {
				t.Fatal(err)
			}
			runs := allRuns(s)
			if len(runs) != tt.runs {
				t.Fatalf("%d runs, want %d", len(runs), tt.runs)
			}
			for i, r := range runs {
				want := strings.ReplaceAll(tt.reasons, "BASE", srv.URL)
				if r.Passed != (want == "") || (want != "" && !slices.Equal(r.FailReasons, []string{want})) {
					t.Errorf("run %d: passed %v, reasons %q, want %q", i+1, r.Passed, r.FailReasons, want)
				}
			}
			tt.check(t, app.requests(), runs)
		})
	}
}

// TestRunPreRunBound: a hook that outlives the bound on the whole bench
// is stopped by it.
func TestRunPreRunBound(t *testing.T) {
	app := &contestApp{}
	srv := httptest.NewServer(app)
	defer srv.Close()
	path := writeScenario(t, srv.URL, "base_url: BASE\npre_run: {command: [sleep, '30'], timeout: 1m}\nsteps: [{url: /}]\n")
	start := time.Now()
	s, err := Run(context.Background(), Options{Scenario: path, Load: loadgen.Options{Connections: 1, Requests: 5, MaxDuration: 1500 * time.Millisecond}})
	var be *BoundError
	if !errors.As(err, &be) || !errors.Is(err, loadgen.ErrMaxDuration) || s != nil || len(app.requests()) != 0 {
		t.Errorf("error %v, summary %+v, %d requests: want the bound to stop run 1 before any load", err, s, len(app.requests()))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestRunSlowSteps: responses over their step's slow_after are counted per
// step and in the run, in the JSON, and scored by the scenario.
func TestRunSlowSteps(t *testing.T) {
	app := &contestApp{}
	srv := httptest.NewServer(app)
	defer srv.Close()
	path := writeScenario(t, srv.URL, `
base_url: BASE
steps:
  - {name: slow, url: /slow, slow_after: 1ms}
  - {name: fast, url: /fast, slow_after: 10s}
  - {name: plain, url: /slow}
scoring:
  penalties: {slow: 0.5}
  fail_if: {slow_rate: 20%}
`)
	s, err := Run(context.Background(), Options{Scenario: path, Load: loadgen.Options{Connections: 2, Requests: 60, KeepAlive: true}, Seed: 4, Runs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range allRuns(s) {
		slow, fast, plain := r.Steps[0], r.Steps[1], r.Steps[2]
		if slow.Slow != slow.Requests || slow.SlowAfterMS != 1 || fast.Slow != 0 || fast.SlowAfterMS != 10000 || plain.Slow != 0 || plain.SlowAfterMS != 0 {
			t.Errorf("run %d steps: %+v", i+1, r.Steps)
		}
		rate := float64(slow.Requests) / float64(slow.Requests+fast.Requests)
		if r.Slow != slow.Requests || r.SlowRate != rate || r.Score != 60-0.5*float64(slow.Requests) || r.Passed ||
			!slices.ContainsFunc(r.FailReasons, func(s string) bool { return strings.HasPrefix(s, "slow rate ") }) {
			t.Errorf("run %d: slow %d rate %v score %v passed %v %q", i+1, r.Slow, r.SlowRate, r.Score, r.Passed, r.FailReasons)
		}
	}
	if _, ok := s.Spreads["slow"]; !ok {
		t.Errorf("spreads %v: no slow", s.Spreads)
	}
	var out struct {
		Slow     int64   `json:"slow"`
		SlowRate float64 `json:"slow_rate"`
		Steps    []struct {
			Slow        int64   `json:"slow"`
			SlowAfterMS float64 `json:"slow_after_ms"`
		} `json:"steps"`
	}
	b, _ := json.Marshal(s)
	if err := json.Unmarshal(b, &out); err != nil || out.Slow != s.Slow || out.SlowRate != s.SlowRate || out.Steps[0].Slow != s.Steps[0].Slow || out.Steps[1].SlowAfterMS != 10000 {
		t.Errorf("JSON %s", b)
	}
}
