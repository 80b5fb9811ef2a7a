package engines

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/refstack/refapp"
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
		{"failures of two runs", head + "GET,home,1,1,1,1,1,1,0,1,1,1,1,1,1,1,1,1,1,1,1,1\n" + ",Aggregated,1,1,1,1,1,1,0,1,1,1,1,1,1,1,1,1,1,1,1,1\n", "Method,Name,Error,Occurrences\nGET,home,x,5\n", "files of two runs"},
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

// setField rewrites one field of the CSV row whose Name is row.
func setField(t *testing.T, csvText, row, col, value string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(csvText, "\n"), "\n")
	head := strings.Split(lines[0], ",")
	ci := slices.Index(head, col)
	if ci < 0 {
		t.Fatalf("no column %s", col)
	}
	for i, l := range lines[1:] {
		f := strings.Split(l, ",")
		if f[1] == row {
			f[ci] = value
			lines[i+1] = strings.Join(f, ",")
			return strings.Join(lines, "\n") + "\n"
		}
	}
	t.Fatalf("no row %s", row)
	return ""
}

// TestImportLocustAggregate: the Aggregated row of a Locust stats file
// must be what Locust computes from its step rows (sums of the counts and
// rates, averages weighted by requests, the extremes, percentiles within
// the rows'); the import read the run's rate and latency from it, so a
// file whose Aggregated row was edited, or whose rows come from two runs,
// was scored (the tester's: Aggregated Request Count 1000 over the real
// run's 184 requests, the rate 2.22 req/s instead of 12.06). Each is
// refused naming the line, the field and both values. The real file
// (testdata/locust) is read, and so is the file with every number cut to
// two decimals, as Locust before 1.0 wrote them.
func TestImportLocustAggregate(t *testing.T) {
	s := refScenario(t)
	real, err := os.ReadFile("testdata/locust/locust_stats.csv")
	if err != nil {
		t.Fatal(err)
	}
	fails, err := os.ReadFile("testdata/locust/locust_failures.csv")
	if err != nil {
		t.Fatal(err)
	}
	const where = "locust_stats.csv:11: the Aggregated row's "
	agg := func(col, v string) string { return setField(t, string(real), "Aggregated", col, v) }
	cases := []struct {
		name, stats, want string
	}{
		{"request count", agg("Request Count", "1000"), where + "Request Count is 1000, but the step rows add up to 184"},
		{"failure count", agg("Failure Count", "3"), where + "Failure Count is 3, but the step rows add up to 0"},
		{"rate", agg("Requests/s", "2.22"), where + "Requests/s is 2.22, but the step rows' add up to 12.06"},
		{"failure rate", agg("Failures/s", "0.5"), where + "Failures/s is 0.5, but the step rows' add up to 0"},
		{"average response time", agg("Average Response Time", "300.0"), where + "Average Response Time is 300.0, but the step rows' average weighted by their timed requests is 176.058"},
		{"average content size", agg("Average Content Size", "4246.6"), where + "Average Content Size is 4246.6, but the step rows' average weighted by their requests is 4245.64"},
		{"max response time", agg("Max Response Time", "900.5"), where + "Max Response Time is 900.5, but the largest of the step rows' is 569.791"},
		{"min response time", agg("Min Response Time", "1.5"), where + "Min Response Time is 1.5, but the smallest of the step rows' is 12.6737"},
		{"99th percentile", agg("99%", "900"), where + "99% is 900, above every step row's (at most 570)"},
		{"median", agg("50%", "10"), where + "50% is 10, below every step row's (at least 40)"},
		{"a step row of another run", setField(t, string(real), "home", "Request Count", "70"), where + "Request Count is 184, but the step rows add up to 190"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := locustCSV("locust_stats.csv", []byte(tc.stats), "locust_failures.csv", fails, s, ImportOptions{Rate: 12, Users: 8})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, ErrFormat) {
				t.Errorf("err = %v, want %s...", err, tc.want)
			}
		})
	}
	t.Run("two decimals", func(t *testing.T) {
		num := regexp.MustCompile(`\d+\.\d+`)
		short := num.ReplaceAllStringFunc(string(real), func(v string) string {
			f, _ := strconv.ParseFloat(v, 64)
			return strconv.FormatFloat(f, 'f', 2, 64)
		})
		im, err := locustCSV("locust_stats.csv", []byte(short), "locust_failures.csv", fails, s, ImportOptions{Rate: 12, Users: 8})
		if err != nil {
			t.Fatal(err)
		}
		if r := im.Result; r.Requests != 184 || r.Elapsed.Round(10*time.Millisecond) != 15260*time.Millisecond {
			t.Errorf("%d requests in %v", r.Requests, r.Elapsed)
		}
	})
}

// TestImportOutOfRange: every number an import turns into a duration or
// a count is range-checked and refused with its field named: a k6 latency
// of 1e300 ms became -9223372036854774µs (Go's float to int conversion
// out of range), a count past int64 wrapped, a negative time was read as
// 0, and a number too large for a float64 was left out of a k6 metric
// (read as 0). The real files (testdata) with one value changed each.
func TestImportOutOfRange(t *testing.T) {
	s := refScenario(t)
	k6Export, err := os.ReadFile("testdata/k6/summary-export.json")
	if err != nil {
		t.Fatal(err)
	}
	k6Handle, err := os.ReadFile("testdata/k6/handle-summary.json")
	if err != nil {
		t.Fatal(err)
	}
	k6 := func(src []byte, old, new string) string {
		if !strings.Contains(string(src), old) {
			t.Fatalf("no %s in the fixture", old)
		}
		return strings.Replace(string(src), old, new, 1)
	}
	k6Cases := []struct{ name, js, want string }{
		{"run latency 1e300 ms", k6(k6Export, `"max": 2100.7, "p(90)": 401.0, "p(99)": 1999.5`, `"max": 1e300, "p(90)": 401.0, "p(99)": 1999.5`),
			"summary.json: metric stacktune_latency: max 1e+300 ms is out of range (0 to a year)"},
		{"step p99 past a year", k6(k6Export, `"p(99)": 2000.0`, `"p(99)": 4e10`),
			"summary.json: metric stacktune_01_latency: p(99) 4e+10 ms is out of range (0 to a year)"},
		{"handleSummary latency", k6(k6Handle, `"avg": 181.0, "min": 10.1`, `"avg": 1e19, "min": 10.1`),
			"summary.json: metric stacktune_latency: avg 1e+19 ms is out of range (0 to a year)"},
		{"test run duration", k6(k6Handle, `"testRunDurationMs": 10012.5`, `"testRunDurationMs": 1e300`),
			"summary.json: state: testRunDurationMs 1e+300 ms is out of range (0 to a year)"},
		{"negative test run duration", k6(k6Handle, `"testRunDurationMs": 10012.5`, `"testRunDurationMs": -5`),
			"summary.json: state: testRunDurationMs -5 ms is out of range (0 to a year)"},
		{"rate too small for a duration", k6(k6Export, `"stacktune_requests": {"count": 75, "rate": 7.5}`, `"stacktune_requests": {"count": 75, "rate": 1e-300}`),
			"summary.json: the run's length, stacktune_requests' count 75 over its rate 1e-300: 7.5e+301 s is out of range (0 to a year)"},
		{"count past int64", k6(k6Export, `"stacktune_01_bytes": {"count": 360000`, `"stacktune_01_bytes": {"count": 1e300`),
			"summary.json: metric stacktune_01_bytes: count 1e+300 is out of range (at most 1e15)"},
		{"count too large for a float", k6(k6Export, `"stacktune_01_bytes": {"count": 360000`, `"stacktune_01_bytes": {"count": 1e999`),
			"summary.json: metric stacktune_01_bytes: count 1e999 is not a finite number"},
	}
	for _, tc := range k6Cases {
		t.Run("k6/"+tc.name, func(t *testing.T) {
			im, err := k6Import("summary.json", []byte(tc.js), s, ImportOptions{})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, ErrFormat) {
				t.Errorf("err = %v, want %s...", err, tc.want)
				if im != nil {
					t.Logf("imported: latency %+v, elapsed %v", im.Result.Latency, im.Result.Elapsed)
				}
			}
		})
	}

	stats, err := os.ReadFile("testdata/locust/locust_stats.csv")
	if err != nil {
		t.Fatal(err)
	}
	rates := string(stats)
	for _, row := range []string{"comment", "diary entries", "entry", "footprints", "friends", "home", "login", "my profile", "profile"} {
		rates = setField(t, rates, row, "Requests/s", "1e-300")
	}
	csvCases := []struct{ name, stats, want string }{
		{"max response time 1e300 ms", setField(t, string(stats), "home", "Max Response Time", "1e300"),
			"stats.csv:7: Max Response Time 1e+300 ms is out of range (0 to a year)"},
		{"a percentile past a year", setField(t, string(stats), "home", "99%", "40000000000"),
			"stats.csv:7: 99% 4e+10 ms is out of range (0 to a year)"},
		{"content size past a count", setField(t, string(stats), "home", "Average Content Size", "1e300"),
			"stats.csv:7: Average Content Size 1e+300 × Request Count 64 bytes: 6.4e+301 is out of range (at most 1e15)"},
		{"request count past int64", setField(t, string(stats), "home", "Request Count", "1e19"),
			"stats.csv:7: Request Count 1e+19 is out of range (at most 1e15)"},
		{"rates too small for a duration", setField(t, rates, "Aggregated", "Requests/s", "9e-300"),
			"stats.csv:11: the run's length, Request Count 184 over Requests/s 9e-300: 2.0444"},
		{"infinite", setField(t, string(stats), "home", "Average Response Time", "inf"),
			`stats.csv:7: Average Response Time "inf" is not a number of 0 or more`},
		{"NaN", setField(t, string(stats), "home", "50%", "NaN"),
			`stats.csv:7: 50% "NaN" is not a number of 0 or more`},
	}
	for _, tc := range csvCases {
		t.Run("locust csv/"+tc.name, func(t *testing.T) {
			_, err := locustCSV("stats.csv", []byte(tc.stats), "failures.csv", nil, s, ImportOptions{})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, ErrFormat) {
				t.Errorf("err = %v, want %s...", err, tc.want)
			}
		})
	}

	const entry = `{"name":"home","method":"GET","num_requests":10,"num_none_requests":0,"num_failures":1,"total_response_time":3000,"max_response_time":900,"total_content_length":80000,"response_times":{"200":5,"300":4,"900":1},"start_time":1795743290.6,"last_request_timestamp":1795743300.4}`
	js := func(old, new string) string {
		if !strings.Contains(entry, old) {
			t.Fatalf("no %s in the entry", old)
		}
		return "[" + strings.Replace(entry, old, new, 1) + "]"
	}
	jsonCases := []struct{ name, js, want string }{
		{"response time key 1e300", js(`"900":1`, `"1e300":1`), `stats.json: entry 0 (home): response time "1e300": 1e+300 ms is out of range (0 to a year)`},
		{"max response time", js(`"max_response_time":900`, `"max_response_time":1e300`), "stats.json: entry 0 (home): max_response_time 1e+300 ms is out of range (0 to a year)"},
		{"negative total response time", js(`"total_response_time":3000`, `"total_response_time":-3000`),
			"stats.json: entry 0 (home): mean response time (total_response_time over the timed requests) -300 ms is out of range (0 to a year)"},
		{"start time past any run", js(`"start_time":1795743290.6`, `"start_time":1e300`), "stats.json: entry 0 (home): start_time 1e+300 is out of range (seconds since 1970, at most 1.099511627776e+12)"},
		{"run past a year", js(`"last_request_timestamp":1795743300.4`, `"last_request_timestamp":1e12`),
			"stats.json: the run's length, from the first start_time to the last last_request_timestamp: 9.982042567094e+11 s is out of range (0 to a year)"},
		{"request count past 1e15", js(`"num_requests":10,`, `"num_requests":9000000000000000000,`), "stats.json: entry 0 (home): num_requests 9000000000000000000 is out of range (0 to 1e15)"},
		{"response time counts past 1e15", js(`"200":5,"300":4`, `"200":900000000000000,"300":900000000000000`), `stats.json: entry 0 (home): response time`},
	}
	for _, tc := range jsonCases {
		t.Run("locust json/"+tc.name, func(t *testing.T) {
			_, err := locustJSON("stats.json", []byte(tc.js), s, ImportOptions{})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, ErrFormat) {
				t.Errorf("err = %v, want %s...", err, tc.want)
			}
		})
	}
}
