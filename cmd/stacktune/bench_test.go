package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestBenchCLI drives `stacktune bench` against a real throwaway nginx and
// a small app, then `stacktune history` on the runs it recorded.
func TestBenchCLI(t *testing.T) {
	ng := sandboxtest.NewNginx(t, sandbox.NginxOptions{})
	var hits atomic.Int64
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "ok"})
			http.Redirect(w, r, "/", http.StatusFound)
		case "/":
			if c, err := r.Cookie("s"); err != nil || c.Value != "ok" {
				http.Error(w, "login first", http.StatusForbidden)
				return
			}
			w.Write([]byte(`<ul id="friends"><li>alice</li></ul>`))
		case "/flaky":
			if hits.Add(1)%4 == 0 {
				http.Error(w, "boom", http.StatusInternalServerError)
				return
			}
			w.Write([]byte("fine"))
		}
	}))
	defer app.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte(`name: small
base_url: `+app.URL+`
session:
  login: {method: POST, url: /login, form: {user: a}, expect: {status: 302}}
steps:
  - {name: home, url: /, expect: {status: 200, selector: "#friends li"}}
`), 0o644)
	flaky := filepath.Join(dir, "flaky.yaml")
	os.WriteFile(flaky, []byte("base_url: "+app.URL+"\nsteps:\n  - {name: flaky, url: /flaky, expect: {status: 200}}\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("base_url: "+app.URL+"\nsteps:\n  - {name: x, url: /, wieght: 3}\n"), 0o644)

	type benchJSON struct {
		Score     float64 `json:"score"`
		Passed    bool    `json:"passed"`
		Requests  int64   `json:"requests"`
		Errors    int64   `json:"errors"`
		Unsent    int64   `json:"unsent"`
		InFlight  int64   `json:"in_flight"`
		Stalled   int64   `json:"stalled"`
		RPS       float64 `json:"rps"`
		LatencyMS struct {
			P50, P90, P99, Max float64
		} `json:"latency_ms"`
		Steps []struct {
			Name     string `json:"name"`
			Requests int64  `json:"requests"`
		} `json:"steps"`
		Runs    []json.RawMessage `json:"runs"`
		Spreads map[string]struct{ Min, Median, Max float64 }
	}
	cases := []struct {
		name    string
		args    []string
		wantErr string
		// allowErr is an error tolerated (the output is checked all the
		// same): a loaded machine may not keep up with a rate.
		allowErr string
		check    func(t *testing.T, r benchJSON)
	}{
		{name: "plain url, request bound", args: []string{"bench", "-n", "500", "-c", "5", "--label", "baseline", ng.URL()},
			check: func(t *testing.T, r benchJSON) {
				if r.Requests != 500 || r.Errors != 0 || !r.Passed || r.Score != 500 || r.LatencyMS.P99 <= 0 {
					t.Errorf("%+v", r)
				}
			}},
		{name: "three runs, no keep-alive", args: []string{"bench", "-n", "200", "-c", "4", "--keepalive=false", "--runs", "3", "--label", "tuned", ng.URL()},
			check: func(t *testing.T, r benchJSON) {
				if len(r.Runs) != 3 || r.Spreads["score"].Median != 200 || r.Requests != 200 {
					t.Errorf("runs %d spreads %+v requests %d", len(r.Runs), r.Spreads, r.Requests)
				}
			}},
		{name: "open model", args: []string{"bench", "--rate", "200", "-d", "1s", "-c", "4", ng.URL()},
			allowErr: "the run failed: unfinished",
			check: func(t *testing.T, r benchJSON) {
				// 200 are scheduled: each one completed, unsent or in
				// flight at the end. A loaded machine may not send them all
				// in time, and then the run fails on its unsent and stalled
				// ones past 1%.
				unfinished := r.Unsent + r.Stalled
				ok := r.Errors == 0 && float64(unfinished) <= 0.01*float64(r.Requests+unfinished)
				if r.Requests+r.Unsent+r.InFlight != 200 || r.Requests == 0 || r.Stalled > r.InFlight || r.Passed != ok {
					t.Errorf("at 200/s for 1s: %d requests, %d errors, %d unsent, %d in flight (%d stalled), passed %v",
						r.Requests, r.Errors, r.Unsent, r.InFlight, r.Stalled, r.Passed)
				}
			}},
		{name: "scenario with login and selector", args: []string{"bench", "--scenario", good, "-n", "100", "-c", "2", "--label", "scenario"},
			check: func(t *testing.T, r benchJSON) {
				if !r.Passed || r.Errors != 0 || r.Score < 90 {
					t.Errorf("%+v", r)
				}
			}},
		{name: "failing run exits non-zero", args: []string{"bench", "--scenario", flaky, "-n", "100", "-c", "1"}, wantErr: "the run failed: error rate"},
		{name: "scenario error names file and line", args: []string{"bench", "--scenario", bad, "-n", "10"}, wantErr: "bad.yaml:3: steps[0]"},
		{name: "unreachable server counts connect errors", args: []string{"bench", "-n", "20", "-c", "2", "--timeout", "1s", "http://127.0.0.1:1/"}, wantErr: "connect"},
		{name: "https refused", args: []string{"bench", "-n", "1", "https://127.0.0.1/"}, wantErr: "https"},
		{name: "url and scenario", args: []string{"bench", "--scenario", good, ng.URL()}, wantErr: "not both"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{}, tc.args...), "--history", db, "--format", "json", "--progress", "never")
			out, _, err := run(t, "", args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q\n%s", err, tc.wantErr, out)
				}
				return
			}
			if err != nil && (tc.allowErr == "" || !strings.Contains(err.Error(), tc.allowErr)) {
				t.Fatalf("%v\n%s", err, out)
			}
			var r benchJSON
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v in %s", err, out)
			}
			tc.check(t, r)
		})
	}

	out, _, err := run(t, "", "history", "--history", db, "--target", ng.URL())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"baseline", "tuned"} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	chart := filepath.Join(dir, "scores.svg")
	if _, _, err := run(t, "", "history", "--history", db, "--chart", chart, "--format", "json"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(chart); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("chart: %v", err)
	}
	if _, _, err := run(t, "", "history", "--history", filepath.Join(dir, "none.db")); err == nil || !strings.Contains(err.Error(), "no history") {
		t.Errorf("missing db: %v", err)
	}
}

// slowServer answers after delay, or never (delay < 0) until the client
// goes away or the test ends.
func slowServer(t *testing.T, delay time.Duration) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var after <-chan time.Time
		if delay >= 0 {
			after = time.After(delay)
		}
		select {
		case <-after:
			w.Write([]byte("ok"))
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: frees the handlers
	return srv
}

// TestBenchUnfinishedAndLimits: requests left unsent or stalled in flight
// fail a run, requests in flight merely cut by the end of a closed run do
// not, and all show in its output; -c, the bound on the whole command, URL
// passwords and missing data files get clear messages.
func TestBenchUnfinishedAndLimits(t *testing.T) {
	slow := slowServer(t, 2*time.Second)
	never := slowServer(t, -1)
	ng := sandboxtest.NewNginx(t, sandbox.NginxOptions{})
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	neverScenario := filepath.Join(dir, "never.yaml")
	os.WriteFile(neverScenario, []byte("base_url: "+never.URL+"\nsteps:\n  - {name: home, url: /}\n"), 0o644)
	missing := filepath.Join(dir, "missing.yaml")
	os.WriteFile(missing, []byte("base_url: "+never.URL+"\ndata:\n  users: {file: users.txt}\nsteps:\n  - url: /u/{{users}}\n"), 0o644)

	type benchJSON struct {
		Passed    bool    `json:"passed"`
		Requests  int64   `json:"requests"`
		Unsent    int64   `json:"unsent"`
		InFlight  int64   `json:"in_flight"`
		Stalled   int64   `json:"stalled"`
		ErrorRate float64 `json:"error_rate"`
		Label     string  `json:"label"`
	}
	cases := []struct {
		name    string
		args    []string
		wantErr []string // all in the error
		noErr   []string // none in the error or the output
		wantOut []string // all in the output
		check   func(t *testing.T, r benchJSON)
	}{
		{name: "saturated open model fails on its backlog", args: []string{"--rate", "1000000", "-d", "3s", "-c", "10", "--format", "json", slow.URL + "/"},
			wantErr: []string{"the run failed: unfinished", "unsent", "stalled: in flight at the end for longer than 2", "the longest completed request"},
			check: func(t *testing.T, r benchJSON) {
				if r.Passed || r.Requests < 1 || r.Requests > 10 || r.Unsent == 0 || r.InFlight < 1 || r.InFlight > 10 || r.Stalled != r.InFlight || r.ErrorRate < 0.9 {
					t.Errorf("%+v", r)
				}
			}},
		{name: "server that never answers: all stalled, in the text output", args: []string{"-d", "1s", "-c", "4", never.URL + "/"},
			wantErr: []string{"the run failed: no requests completed; unfinished 100% > 1% (4 stalled: in flight at the end, no request completed)"},
			wantOut: []string{"# score 0, FAILED: no requests completed; unfinished 100% > 1% (4 stalled: in flight at the end, no request completed)",
				"# requests 0 (0/s), errors 0, unsent 0, in flight at the end 4 (4 stalled)\n"}},
		// Each connection completes a request in 2s and has the next one
		// out for the last second: cut by the end of the run, not stalled.
		{name: "closed model, server answering in 2s: in flight, not stalled, passes", args: []string{"-d", "3s", "-c", "2", slow.URL + "/"},
			wantOut: []string{"# score 2, PASSED\n", ", errors 0, unsent 0, in flight at the end 2 (0 stalled)\n"}},
		{name: "scenario, server that never answers", args: []string{"--scenario", neverScenario, "-d", "1s", "-c", "2", "--format", "json"},
			wantErr: []string{"the run failed: no requests completed", "stalled: in flight at the end, no request completed"},
			check: func(t *testing.T, r benchJSON) {
				if r.Passed || r.Requests != 0 || r.InFlight < 1 || r.InFlight > 2 || r.Stalled != r.InFlight || r.Unsent != 0 || r.ErrorRate != 1 {
					t.Errorf("%+v", r)
				}
			}},
		{name: "closed model, fast server, duration bound: passes", args: []string{"-d", "1s", "-c", "8", "--format", "json", ng.URL()},
			check: func(t *testing.T, r benchJSON) {
				if !r.Passed || r.Requests == 0 || r.InFlight > 8 || r.Stalled != 0 || r.Unsent != 0 || r.ErrorRate != 0 {
					t.Errorf("%+v", r)
				}
			}},
		{name: "connections above the cap", args: []string{"-c", "10001", "-n", "1", "http://127.0.0.1:1/"},
			wantErr: []string{"-c 10001: at most 10000 connections"}},
		{name: "runs beyond the bound on the whole command", args: []string{"--runs", "3", "-d", "4m", "http://127.0.0.1:1/"},
			wantErr: []string{"3 runs × (warm-up + duration 4m0s", "exceed the 10m0s bound on the whole bench (all runs together): lower --runs, --duration, --warmup or --requests"}},
		{name: "password in the URL is masked", args: []string{"-n", "1", "http://user:secret@127.0.0.1:1/"},
			wantErr: []string{`"http://user:***@127.0.0.1:1/"`}, noErr: []string{"secret"}},
		{name: "token in the query is masked", args: []string{"-n", "20", "-c", "2", "http://127.0.0.1:1/x?token=S3CRETTOKEN&page=2"},
			wantErr: []string{"the run failed"}, noErr: []string{"S3CRETTOKEN"},
			wantOut: []string{"# http://127.0.0.1:1/x?token=***&page=***: ", "GET /x?token=***&page=***: connect: "}},
		{name: "password in the label is masked", args: []string{"-n", "20", "--label", "vs http://u:hunter2@x/", "--history", db, "--format", "json", ng.URL()},
			noErr: []string{"hunter2"},
			check: func(t *testing.T, r benchJSON) {
				if !r.Passed || r.Label != "vs http://u:***@x/" || r.InFlight != 0 || r.Unsent != 0 {
					t.Errorf("%+v", r)
				}
			}},
		{name: "missing data file names its path and line", args: []string{"--scenario", missing, "-n", "1"},
			wantErr: []string{missing + ":3: data.users.file: missing data file " + filepath.Join(dir, "users.txt") + " (users.txt, relative to the scenario's directory)"},
			noErr:   []string{"unknown list"}},
	}
	t.Run("cases", func(t *testing.T) { // returns when the parallel cases are done
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				args := append([]string{"bench", "--progress", "never"}, tc.args...)
				if !slices.Contains(args, "--history") {
					args = append(args, "--no-history")
				}
				out, _, err := run(t, "", args...)
				if len(tc.wantErr) == 0 && err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				for _, want := range tc.wantErr {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("error %v, want %q", err, want)
					}
				}
				for _, bad := range tc.noErr {
					if (err != nil && strings.Contains(err.Error(), bad)) || strings.Contains(out, bad) {
						t.Errorf("%q in error %v or output\n%s", bad, err, out)
					}
				}
				for _, want := range tc.wantOut {
					if !strings.Contains(out, want) {
						t.Errorf("output lacks %q:\n%s", want, out)
					}
				}
				if tc.check != nil {
					var r benchJSON
					if err := json.Unmarshal([]byte(out), &r); err != nil {
						t.Fatalf("%v in %s", err, out)
					}
					tc.check(t, r)
				}
			})
		}
	})
	// The history holds the masked label, never the password.
	out, _, err := run(t, "", "history", "--history", db, "--format", "json")
	if err != nil || strings.Contains(out, "hunter2") || !strings.Contains(out, "u:***@x") {
		t.Errorf("history: %v\n%s", err, out)
	}
}

// TestBenchPreRunAndSlow: a scenario's pre_run hook and slow responses in
// the text and JSON output, and a failing hook failing the command.
func TestBenchPreRunAndSlow(t *testing.T) {
	var initStatus atomic.Int64
	initStatus.Store(http.StatusOK)
	var hits atomic.Int64
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/initialize":
			w.WriteHeader(int(initStatus.Load()))
			return
		case "/slow":
			time.Sleep(15 * time.Millisecond)
		}
		hits.Add(1)
		w.Write([]byte("ok"))
	}))
	defer app.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "contest.yaml")
	os.WriteFile(path, []byte(`name: contest
base_url: `+app.URL+`
pre_run: {method: POST, url: /initialize, expect: {status: 200}}
steps:
  - {name: slow, url: /slow, slow_after: 1ms}
  - {name: fast, url: /fast}
scoring: {penalties: {slow: 0.5}}
`), 0o644)
	args := []string{"bench", "--scenario", path, "-n", "40", "-c", "2", "--no-history", "--progress", "never"}

	out, _, err := run(t, "", args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"# pre-run: POST " + app.URL + "/initialize: status 200 in ",
		"# slow: ", " responses over their step's slow_after (100.0% of ",
		"Requests  Req/s  Errors  Slow   After     p50",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	// The Slow and After columns: the count (here every request of the
	// step) and the threshold, or "-".
	cols := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 12 {
			cols[f[11]] = f[0] + " " + f[3] + " " + f[4]
		}
	}
	if f := strings.Fields(cols["slow"]); len(f) != 3 || f[0] != f[1] || f[2] != "1.00ms" || !strings.HasSuffix(cols["fast"], " - -") {
		t.Errorf("slow columns %q in\n%s", cols, out)
	}

	out, _, err = run(t, "", append(args, "--format", "json")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var r struct {
		Score  float64 `json:"score"`
		Slow   int64   `json:"slow"`
		PreRun struct {
			What      string  `json:"what"`
			ElapsedMS float64 `json:"elapsed_ms"`
			Status    int     `json:"status"`
		} `json:"pre_run"`
		Steps []struct {
			Name        string  `json:"name"`
			Requests    int64   `json:"requests"`
			Slow        int64   `json:"slow"`
			SlowAfterMS float64 `json:"slow_after_ms"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if r.PreRun.What != "POST "+app.URL+"/initialize" || r.PreRun.Status != 200 || r.PreRun.ElapsedMS <= 0 ||
		r.Steps[0].Slow != r.Steps[0].Requests || r.Steps[0].SlowAfterMS != 1 || r.Steps[1].Slow != 0 || r.Slow != r.Steps[0].Slow ||
		r.Score != 40-0.5*float64(r.Slow) {
		t.Errorf("%+v", r)
	}

	// A failing hook fails the command, and no load reaches the app.
	initStatus.Store(http.StatusServiceUnavailable)
	before := hits.Load()
	out, _, err = run(t, "", args...)
	want := "the run failed: pre_run POST " + app.URL + "/initialize: status 503, want 200 (no load sent)"
	if err == nil || err.Error() != want || hits.Load() != before {
		t.Errorf("error %v, want %q; %d requests", err, want, hits.Load()-before)
	}
	if !strings.Contains(out, "# pre-run: POST "+app.URL+"/initialize failed after ") || !strings.Contains(out, "# score 0, FAILED: pre_run POST ") {
		t.Errorf("text output:\n%s", out)
	}
}
