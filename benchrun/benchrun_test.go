package benchrun

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// server starts an in-process HTTP server whose handler answers after
// delay, or never (delay < 0) until the client goes away or the test ends.
func server(t *testing.T, delay time.Duration) *httptest.Server {
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

// scenarioFile writes a one-step scenario against base and returns its path.
func scenarioFile(t *testing.T, base string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	src := "name: slow\nbase_url: " + base + "\nsteps:\n  - {name: home, url: /, expect: {status: 200}}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// allRuns returns every run of s (the summary itself for one run).
func allRuns(s *Summary) []RunResult {
	if len(s.Runs) > 0 {
		return s.Runs
	}
	return []RunResult{s.RunResult}
}

// TestRunUnfinished: requests left unsent (the open model's backlog) or in
// flight at the end are in the summary; the unsent and the stalled ones
// (in flight for longer than the longest completed request, or when none
// completed) fail the run, and those merely cut by the end of the run do
// not. URL and scenario plans, closed and open model. The checks are on
// counts and states only: they hold however slowly the machine runs.
func TestRunUnfinished(t *testing.T) {
	slow := server(t, 2*time.Second) // answers in 2s
	never := server(t, -1)
	ng := sandboxtest.NewNginx(t, sandbox.NginxOptions{})
	const (
		anyStalled = iota
		allStalled
		noneStalled
		// fewStalled: a fast server; a scheduling hiccup at the run's end
		// can leave its last requests older than the slowest completed
		// one (tens of ms), which counts them stalled, but never enough
		// to fail the run.
		fewStalled
	)
	tests := []struct {
		name     string
		url      string // or scenario against base
		base     string
		load     loadgen.Options
		passed   bool
		requests int64 // exact when ≥ 0
		// maxRequests bounds the completed requests when requests < 0.
		maxRequests int64
		// inFlight is within [minInFlight, Connections].
		minInFlight int64
		stalled     int   // anyStalled, allStalled (of those in flight) or noneStalled
		unsent      bool  // some must be unsent
		due         int64 // > 0: requests + in flight + unsent
		reasons     []string
	}{
		{name: "URL, open model, server answering in 2s: the backlog fails it", url: slow.URL + "/",
			load:     loadgen.Options{Connections: 10, Rate: 1_000_000, Duration: 3 * time.Second, KeepAlive: true},
			requests: -1, maxRequests: 10, minInFlight: 1, stalled: allStalled, unsent: true,
			reasons: []string{"unsent", "stalled: in flight at the end for longer than 2", "the longest completed request", "error rate"}},
		// Each connection completes a request in 2s, and has its next one
		// out for the last second: cut by the end, not stalled.
		{name: "URL, closed model, server answering in 2s: in flight, not stalled", url: slow.URL + "/",
			load:   loadgen.Options{Connections: 4, Duration: 3 * time.Second, KeepAlive: true},
			passed: true, requests: -1, maxRequests: 4, minInFlight: 1, stalled: noneStalled},
		{name: "URL, closed model, server never answers", url: never.URL + "/",
			load:     loadgen.Options{Connections: 4, Duration: time.Second, KeepAlive: true},
			requests: 0, minInFlight: 1, stalled: allStalled,
			reasons: []string{"no requests completed", "stalled: in flight at the end, no request completed"}},
		{name: "URL, open model, server never answers", url: never.URL + "/",
			load:     loadgen.Options{Connections: 4, Rate: 100, Duration: time.Second, KeepAlive: true},
			requests: 0, minInFlight: 1, stalled: allStalled, unsent: true, due: 100,
			reasons: []string{"no requests completed", "unsent", "stalled"}},
		{name: "scenario, closed model, server never answers", base: never.URL,
			load:     loadgen.Options{Connections: 3, Duration: time.Second, KeepAlive: true},
			requests: 0, minInFlight: 1, stalled: allStalled,
			reasons: []string{"no requests completed", "stalled: in flight at the end, no request completed"}},
		{name: "scenario, closed model, server answering in 2s: in flight, not stalled", base: slow.URL,
			load:   loadgen.Options{Connections: 3, Duration: 3 * time.Second, KeepAlive: true},
			passed: true, requests: -1, maxRequests: 3, minInFlight: 1, stalled: noneStalled},
		{name: "scenario, open model, server answering in 2s", base: slow.URL,
			load:     loadgen.Options{Connections: 5, Rate: 1000, Duration: 3 * time.Second, KeepAlive: true},
			requests: -1, maxRequests: 5, minInFlight: 1, stalled: allStalled, unsent: true, reasons: []string{"unsent", "stalled"}},
		// A fast server: thousands of requests, and the few in flight at
		// the end do not fail the run.
		{name: "URL, closed model, nginx, duration bound", url: ng.URL(),
			load:   loadgen.Options{Connections: 8, Duration: time.Second, KeepAlive: true},
			passed: true, requests: -1, maxRequests: 1 << 40, stalled: fewStalled},
		{name: "scenario, closed model, nginx, duration bound", base: strings.TrimSuffix(ng.URL(), "/"),
			load:   loadgen.Options{Connections: 8, Duration: time.Second, KeepAlive: true},
			passed: true, requests: -1, maxRequests: 1 << 40, stalled: fewStalled},
		{name: "URL, closed model, nginx, request bound", url: ng.URL(),
			load:   loadgen.Options{Connections: 4, Requests: 300, KeepAlive: true},
			passed: true, requests: 300},
		{name: "scenario, open model, nginx, request bound", base: strings.TrimSuffix(ng.URL(), "/"),
			load:   loadgen.Options{Connections: 4, Rate: 500, Requests: 100, KeepAlive: true},
			passed: true, requests: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opt := Options{URL: tt.url, Load: tt.load}
			if tt.url == "" {
				opt.Scenario = scenarioFile(t, tt.base)
			}
			s, err := Run(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d requests, %d errors, %d unsent, %d in flight, %d stalled (after %vms)", s.Requests, s.Errors, s.Unsent, s.InFlight, s.Stalled, s.StalledAfterMS)
			if s.Passed != tt.passed {
				t.Errorf("passed %v, want %v; reasons %q", s.Passed, tt.passed, s.FailReasons)
			}
			if tt.requests >= 0 && s.Requests != tt.requests {
				t.Errorf("requests %d, want %d", s.Requests, tt.requests)
			}
			if tt.requests < 0 && (s.Requests < 1 || s.Requests > tt.maxRequests) {
				t.Errorf("requests %d, want 1..%d", s.Requests, tt.maxRequests)
			}
			if s.InFlight < tt.minInFlight || s.InFlight > int64(tt.load.Connections) {
				t.Errorf("in flight %d, want %d..%d", s.InFlight, tt.minInFlight, tt.load.Connections)
			}
			if s.Stalled < 0 || s.Stalled > s.InFlight ||
				(tt.stalled == allStalled && s.Stalled != s.InFlight) || (tt.stalled == noneStalled && s.Stalled != 0) {
				t.Errorf("%d stalled of %d in flight (after %vms), want %v", s.Stalled, s.InFlight, s.StalledAfterMS,
					map[int]string{anyStalled: "any", allStalled: "all", noneStalled: "none", fewStalled: "few"}[tt.stalled])
			}
			if (s.Requests == 0) != (s.StalledAfterMS == 0) {
				t.Errorf("stalled after %vms with %d requests completed", s.StalledAfterMS, s.Requests)
			}
			if (s.Unsent > 0) != tt.unsent || (tt.load.Rate == 0 && s.Unsent != 0) {
				t.Errorf("unsent %d, want some: %v", s.Unsent, tt.unsent)
			}
			if tt.due > 0 && s.Requests+s.InFlight+s.Unsent != tt.due {
				t.Errorf("%d requests + %d in flight + %d unsent, want the %d due", s.Requests, s.InFlight, s.Unsent, tt.due)
			}
			// The error rate counts the unsent and stalled requests as
			// failed, and the requests merely cut by the end nowhere.
			all := s.Requests + s.Unsent + s.Stalled
			if want := float64(s.Errors+s.Unsent+s.Stalled) / float64(max(all, 1)); math.Abs(s.ErrorRate-want) > 1e-12 {
				t.Errorf("error rate %v, want %v", s.ErrorRate, want)
			}
			if tt.passed && (s.ErrorRate >= 0.01 || (tt.stalled != fewStalled && s.ErrorRate != 0)) {
				t.Errorf("error rate %v, want 0 (under 1%% with a few stalled)", s.ErrorRate)
			}
			if !tt.passed && s.ErrorRate <= 0.1 {
				t.Errorf("error rate %v: unfinished requests not counted as failed", s.ErrorRate)
			}
			reasons := strings.Join(s.FailReasons, "; ")
			for _, want := range tt.reasons {
				if !strings.Contains(reasons, want) {
					t.Errorf("reasons %q lack %q", reasons, want)
				}
			}
			// The JSON summary has the counts.
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var j struct {
				Unsent         *int64   `json:"unsent"`
				InFlight       *int64   `json:"in_flight"`
				Stalled        *int64   `json:"stalled"`
				StalledAfterMS *float64 `json:"stalled_after_ms"`
				ErrorRate      *float64 `json:"error_rate"`
			}
			if err := json.Unmarshal(b, &j); err != nil || j.Unsent == nil || j.InFlight == nil || j.Stalled == nil ||
				j.StalledAfterMS == nil || j.ErrorRate == nil ||
				*j.Unsent != s.Unsent || *j.InFlight != s.InFlight || *j.Stalled != s.Stalled {
				t.Errorf("JSON %s: unsent, in_flight, stalled, stalled_after_ms or error_rate missing", b)
			}
		})
	}
}

// TestRunBound: Load.MaxDuration bounds the whole of Run, every run
// together, not each run.
func TestRunBound(t *testing.T) {
	slow := server(t, 200*time.Millisecond)
	never := server(t, -1)
	tests := []struct {
		name     string
		opt      Options
		overhead time.Duration // runOverhead during the case
		// refusedUpFront: no run starts; otherwise some run is stopped or
		// refused, and fewer than all complete.
		refusedUpFront bool
		want           string
	}{
		{name: "runs refused up front", opt: Options{URL: "http://127.0.0.1:1/", Runs: 3, Load: loadgen.Options{Duration: 4 * time.Minute}},
			overhead: time.Second, refusedUpFront: true, want: "3 runs × (warm-up + duration 4m0s, plus about 1s each to start and stop) exceed the 10m0s bound on the whole bench (all runs together)"},
		{name: "warm-ups count", opt: Options{URL: "http://127.0.0.1:1/", Runs: 2, Load: loadgen.Options{WarmUp: 4 * time.Minute, Duration: time.Minute}},
			overhead: time.Second, refusedUpFront: true, want: "2 runs × (warm-up + duration 5m0s"},
		{name: "one run longer than the bound", opt: Options{URL: "http://127.0.0.1:1/", Load: loadgen.Options{Duration: 11 * time.Minute}},
			overhead: time.Second, refusedUpFront: true, want: "1 run × (warm-up + duration 11m0s"},
		{name: "the bound stops a later run bounded by requests", opt: Options{URL: slow.URL + "/", Runs: 3,
			Load: loadgen.Options{Connections: 1, Requests: 10, KeepAlive: true, MaxDuration: 3 * time.Second}},
			overhead: time.Second, want: "stopped at the 3s bound on the whole bench (all runs together)"},
		{name: "the bound leaves too little for the next timed run", opt: Options{URL: never.URL + "/", Runs: 2,
			Load: loadgen.Options{Connections: 1, Duration: time.Second, KeepAlive: true, MaxDuration: 2 * time.Second}},
			want: "not more than run 2 of 2 needs (warm-up + duration 1s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func(o time.Duration) { runOverhead = o }(runOverhead)
			runOverhead = tt.overhead
			s, err := Run(context.Background(), tt.opt)
			var be *BoundError
			if !errors.As(err, &be) || !errors.Is(err, loadgen.ErrMaxDuration) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want a *BoundError containing %q", err, tt.want)
			}
			if tt.refusedUpFront {
				if s != nil || be.Run != 0 {
					t.Errorf("summary %+v, run %d: want no run", s, be.Run)
				}
				return
			}
			if s == nil {
				t.Fatal("no summary of the runs done")
			}
			complete := 0
			for _, r := range allRuns(s) {
				if r.Stopped == loadgen.StopRequests || r.Stopped == loadgen.StopDuration {
					complete++
				}
			}
			if complete >= tt.opt.Runs || be.Run < 1 || be.Run > tt.opt.Runs {
				t.Errorf("%d of %d runs complete, bound error at run %d", complete, tt.opt.Runs, be.Run)
			}
		})
	}
}

func TestRunRefusesTooManyConnections(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, err := Run(context.Background(), Options{URL: srv.URL, Load: loadgen.Options{Connections: loadgen.MaxConnections + 1, Requests: 1, KeepAlive: true}})
	var ce *loadgen.ConnectionsError
	if !errors.As(err, &ce) || hits.Load() != 0 {
		t.Fatalf("error %v after %d requests, want a *loadgen.ConnectionsError before any", err, hits.Load())
	}
}

// TestRunMasksPasswords: no error, summary or JSON shows a URL password.
func TestRunMasksPasswords(t *testing.T) {
	// auth answers only the right basic-auth credentials: the masking
	// must not keep them from being sent.
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "secret" {
			http.Error(w, "who are you", http.StatusUnauthorized)
		}
	}))
	defer auth.Close()
	withCreds := strings.Replace(auth.URL, "http://", "http://user:secret@", 1)
	// token answers only the right token in the query.
	token := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("token") != "hunter2" {
			http.Error(w, "who are you", http.StatusUnauthorized)
		}
	}))
	defer token.Close()
	dir := t.TempDir()
	write := func(name, base string) string {
		path := filepath.Join(dir, name)
		src := "base_url: \"" + base + "\"\nsteps:\n  - {name: home, url: /, expect: {status: 200}}\n"
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	load := loadgen.Options{Connections: 1, Requests: 5, KeepAlive: true}
	tests := []struct {
		name    string
		opt     Options
		wantErr string // "" = the run passes
		check   func(t *testing.T, s *Summary)
	}{
		{name: "URL with a password is refused", opt: Options{URL: "http://user:secret@127.0.0.1:1/", Load: load},
			wantErr: `URL "http://user:***@127.0.0.1:1/": user info in URLs is not supported`},
		{name: "scenario with a password in base_url", opt: Options{Scenario: write("auth.yaml", withCreds+"/"), Load: load,
			Label: "after http://admin:hunter2@db/ was tuned"},
			check: func(t *testing.T, s *Summary) {
				if !s.Passed || s.Target != strings.Replace(auth.URL, "http://", "http://user:***@", 1)+"/" || s.Label != "after http://admin:***@db/ was tuned" {
					t.Errorf("passed %v (%q), target %q, label %q", s.Passed, s.FailReasons, s.Target, s.Label)
				}
			}},
		{name: "URL with a token in its query", opt: Options{URL: token.URL + "/x?token=hunter2&page=2", Load: load, Label: "vs " + token.URL + "/?token=hunter2"},
			check: func(t *testing.T, s *Summary) {
				if !s.Passed || s.Target != token.URL+"/x?token=***&page=***" || s.Label != "vs "+token.URL+"/?token=***" {
					t.Errorf("passed %v (%q), target %q, label %q", s.Passed, s.FailReasons, s.Target, s.Label)
				}
			}},
		{name: "scenario refusing base_url", opt: Options{Scenario: write("ftp.yaml", "ftp://user:secret@h/"), Load: load},
			wantErr: `base_url: "ftp://user:***@h/": want an http:// or https:// URL`},
		{name: "base URL override", opt: Options{Scenario: write("ok.yaml", auth.URL), BaseURL: "ftp://user:secret@h/", Load: load},
			wantErr: `base_url: "ftp://user:***@h/"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Run(context.Background(), tt.opt)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "hunter2")) {
				t.Errorf("error shows the password: %v", err)
			}
			if s == nil {
				return
			}
			b, _ := json.Marshal(s)
			if strings.Contains(string(b), "secret") || strings.Contains(string(b), "hunter2") {
				t.Errorf("JSON shows the password: %s", b)
			}
			tt.check(t, s)
		})
	}
}
