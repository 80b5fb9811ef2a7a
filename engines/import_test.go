package engines

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/internal/refapp"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/scenario"
)

func refScenario(t testing.TB) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse("refapp.yaml", refapp.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestImportLocustCSV reads the statistics of a real distributed run of
// the reference app (testdata/locust: Locust 2.12.1, a master and two
// workers, 12 req/s for 15 s).
func TestImportLocustCSV(t *testing.T) {
	s := refScenario(t)
	im, err := ImportLocustCSV("testdata/locust/locust", s, ImportOptions{Rate: 12, Users: 8})
	if err != nil {
		t.Fatal(err)
	}
	r := im.Result
	if r.Requests != 184 || r.Errors != 0 || r.Model != "open" || len(r.Steps) != 9 {
		t.Fatalf("requests %d errors %d model %s steps %d", r.Requests, r.Errors, r.Model, len(r.Steps))
	}
	if got := r.Elapsed.Round(10 * time.Millisecond); got != 15260*time.Millisecond {
		t.Errorf("elapsed %v, want 184 / 12.06 req/s = 15.26s", got)
	}
	home := r.Steps[1]
	if home.Name != "home" || home.Requests != 64 || home.Latency.P50 != 340*time.Millisecond || home.Latency.P99 != 570*time.Millisecond || home.Bytes != 540460 {
		t.Errorf("home: %+v", home)
	}
	if r.Latency.P99 != 540*time.Millisecond || r.Latency.Max.Round(time.Millisecond) != 570*time.Millisecond {
		t.Errorf("overall latency %+v", r.Latency)
	}
	sc := im.Score(s)
	// 8 logins × 1 + home 64 × 10 + profile 35 × 5 + my profile 6 + diary 14 × 3 + entry 29 × 5 + comment 5 + footprints 10 × 2 + friends 13 × 2
	if want := 8.0 + 640 + 175 + 6 + 42 + 145 + 5 + 20 + 26; sc.Score != want || !sc.Passed {
		t.Errorf("score %v (passed %v %v), want %v", sc.Score, sc.Passed, sc.Reasons, want)
	}
}

// TestImportLocustFailures: failures are charged by the kind the
// exported file wrote ("check: ...", "timeout: ..."); a failure without
// one is "other"; slow responses come from their own entries and touch no
// count.
func TestImportLocustFailures(t *testing.T) {
	s := refScenario(t)
	im, err := ImportLocustCSV("testdata/locust-failing/locust", s, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := im.Result
	want := map[loadgen.ErrKind]int64{loadgen.ErrCheck: 4, loadgen.ErrTimeout: 2, loadgen.ErrStatus: 2, loadgen.ErrConnect: 1, loadgen.ErrOther: 1}
	for k, n := range want {
		if r.ErrorsByKind[k] != n {
			t.Errorf("%s: %d, want %d (%v)", k, r.ErrorsByKind[k], n, r.ErrorsByKind)
		}
	}
	if r.Requests != 70 || r.Errors != 10 || im.Slow[1] != 3 || r.Model != "closed" {
		t.Errorf("requests %d errors %d slow %v model %s", r.Requests, r.Errors, im.Slow, r.Model)
	}
	if d := r.Steps[1].Details; len(d) != 2 || !strings.HasPrefix(d[0], "check: selector '#friend-entries") {
		t.Errorf("details %q", d)
	}
	if d := r.Steps[2].Details; len(d) != 1 || d[0] != "status: status 500, want 200 'quoted' A" {
		t.Errorf("a repr's escapes: %q", d)
	}
	sc := im.Score(s)
	// points: 8 + 34 × 10 + 18 × 5 = 438; penalties: check 4 × 50, timeout 2 × 20, status 2 × 10, connect 10, other 10
	if sc.Points != 438 || sc.Penalty != 280 || sc.Passed {
		t.Errorf("points %v penalty %v passed %v", sc.Points, sc.Penalty, sc.Passed)
	}
}

func TestImportLocustJSON(t *testing.T) {
	s := refScenario(t)
	js := `[{"name":"login","method":"POST","num_requests":4,"num_none_requests":0,"num_failures":0,"total_response_time":80,"max_response_time":30,"total_content_length":0,"response_times":{"10":2,"30":2},"start_time":1795743290.5,"last_request_timestamp":1795743300.5},
{"name":"home","method":"GET","num_requests":10,"num_none_requests":0,"num_failures":1,"total_response_time":3000,"max_response_time":900,"total_content_length":80000,"response_times":{"200":5,"300":4,"900":1},"start_time":1795743290.6,"last_request_timestamp":1795743300.4},
{"name":"home","method":"STACKTUNE-SLOW","num_requests":2,"num_none_requests":2,"num_failures":0,"total_response_time":0,"max_response_time":0,"total_content_length":0,"response_times":{},"start_time":1795743291,"last_request_timestamp":1795743299}]`
	p := filepath.Join(t.TempDir(), "stats.json")
	if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	im, err := ImportLocustJSON(p, s, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := im.Result
	if r.Requests != 14 || r.Errors != 1 || r.ErrorsByKind[scenario.PenaltyDefault] != 1 || im.Slow[1] != 2 || r.Elapsed != 10*time.Second || len(im.Notes) == 0 {
		t.Errorf("%+v slow %v notes %v", r, im.Slow, im.Notes)
	}
	if h := r.Steps[1].Latency; h.P50 != 200*time.Millisecond || h.P90 != 300*time.Millisecond || h.P99 != 900*time.Millisecond || h.Mean != 300*time.Millisecond {
		t.Errorf("home latency %+v", h)
	}
}

func TestImportK6(t *testing.T) {
	for _, f := range []string{"summary-export.json", "handle-summary.json"} {
		t.Run(f, func(t *testing.T) {
			s := refScenario(t)
			im, err := ImportK6(filepath.Join("testdata/k6", f), s, ImportOptions{Rate: 7.5, Users: 8})
			if err != nil {
				t.Fatal(err)
			}
			r := im.Result
			if r.Requests != 75 || r.Errors != 7 || r.Unsent != 5 || im.Slow[1] != 3 || r.Steps[1].Bytes != 360000 {
				t.Fatalf("%+v slow %v", r, im.Slow)
			}
			if r.ErrorsByKind[loadgen.ErrCheck] != 4 || r.ErrorsByKind[loadgen.ErrTimeout] != 1 || r.ErrorsByKind[loadgen.ErrStatus] != 2 {
				t.Errorf("kinds %v", r.ErrorsByKind)
			}
			if r.Latency.P99 != 1999500*time.Microsecond || r.Steps[1].Latency.P50 != 290*time.Millisecond {
				t.Errorf("latency %+v / %+v", r.Latency, r.Steps[1].Latency)
			}
			if e := r.Elapsed.Round(100 * time.Millisecond); e != 10*time.Second {
				t.Errorf("elapsed %v", r.Elapsed)
			}
			sc := im.Score(s)
			// 8 + 40 × 10 + 18 × 5 + 2 = 500 points; 4 × 50 + 20 + 2 × 10 = 240 penalty; 5 unsent fail the run
			if sc.Points != 500 || sc.Penalty != 240 || sc.Passed || sc.UnfinishedRate == 0 {
				t.Errorf("points %v penalty %v passed %v %v", sc.Points, sc.Penalty, sc.Passed, sc.Reasons)
			}
		})
	}
}

// TestImportBad: files that are not what the engine writes, or of another
// scenario, are errors that say so.
func TestImportBad(t *testing.T) {
	s := refScenario(t)
	head := "Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,Min Response Time,Max Response Time,Average Content Size,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%\n"
	agg := ",Aggregated,1,0,1,1,1,1,0,1,0,1,1,1,1,1,1,1,1,1,1,1\n"
	csvCases := []struct{ name, stats, failures, want string }{
		{"other scenario", head + "GET,checkout,1,0,1,1,1,1,0,1,0,1,1,1,1,1,1,1,1,1,1,1\n" + agg, "", `step "checkout" is not in scenario refapp`},
		{"no aggregated", head + "GET,home,1,0,1,1,1,1,0,1,0,1,1,1,1,1,1,1,1,1,1,1\n", "", "no Aggregated row"},
		{"negative", head + "GET,home,-1,0,1,1,1,1,0,1,0,1,1,1,1,1,1,1,1,1,1,1\n" + agg, "", "not a number of 0 or more"},
		{"fraction", head + "GET,home,1.5,0,1,1,1,1,0,1,0,1,1,1,1,1,1,1,1,1,1,1\n" + agg, "", "is not a count"},
		{"failures over requests", head + "GET,home,1,2,1,1,1,1,0,1,0,1,1,1,1,1,1,1,1,1,1,1\n" + agg, "", "2 failures of 1 requests"},
		{"no header", "", "", "no header"},
		{"missing column", "Type,Name\nGET,home\n", "", `no column "Request Count"`},
		{"failures of two runs", head + "GET,home,1,1,1,1,1,1,0,1,0,1,1,1,1,1,1,1,1,1,1,1\n" + agg, "Method,Name,Error,Occurrences\nGET,home,x,5\n", "files of two runs"},
		{"binary", "\x00\xff\xfe" + head, "", "no column"},
	}
	for _, tc := range csvCases {
		t.Run(tc.name, func(t *testing.T) {
			var fails []byte
			if tc.failures != "" {
				fails = []byte(tc.failures)
			}
			_, err := locustCSV("stats.csv", []byte(tc.stats), "failures.csv", fails, s, ImportOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrFormat) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	k6Cases := []struct{ name, js, want string }{
		{"not json", "{", "unexpected end"},
		{"no metrics", `{"root_group":{}}`, `no "metrics"`},
		{"not exported by stacktune", `{"metrics":{"http_reqs":{"count":1}}}`, "no stacktune_requests"},
		{"another scenario", `{"metrics":{"stacktune_requests":{"count":1},"stacktune_12_requests":{"count":1}}}`, "has 9 steps"},
		{"sums differ", `{"metrics":{"stacktune_requests":{"count":5},"stacktune_01_requests":{"count":1}}}`, "add up to 1"},
		{"negative", `{"metrics":{"stacktune_requests":{"count":-1}}}`, "is negative"},
		{"more failures", `{"metrics":{"stacktune_requests":{"count":1},"stacktune_01_requests":{"count":1},"stacktune_01_fail_check":{"count":2}}}`, "2 failures of 1"},
	}
	for _, tc := range k6Cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := k6Import("summary.json", []byte(tc.js), s, ImportOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrFormat) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := ImportK6(t.TempDir(), s, ImportOptions{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
}
