package engines

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

// The importers' fuzzers: any input gives a result or an error, never a
// panic, and a result is whole: the scenario's steps, no more failures
// than requests, nothing negative.

func checkImported(t *testing.T, im *Imported, err error, steps int) {
	t.Helper()
	if err != nil {
		if im != nil {
			t.Fatal("a result and an error")
		}
		return
	}
	r := im.Result
	if len(r.Steps) != steps || len(im.Slow) != steps {
		t.Fatalf("%d steps, %d slow counts", len(r.Steps), len(im.Slow))
	}
	if r.Requests < 0 || r.Errors < 0 || r.Errors > r.Requests || r.Unsent < 0 || r.Elapsed < 0 || r.Elapsed > maxDuration {
		t.Fatalf("totals %+v", r)
	}
	// Every count and duration converted from a float is in range.
	for _, n := range append([]int64{r.Requests, r.Bytes, r.Unsent}, im.Slow...) {
		if n < 0 || n > maxCount {
			t.Fatalf("a count out of range: %+v slow %v", r, im.Slow)
		}
	}
	lats := []loadgen.Latency{r.Latency}
	for _, st := range r.Steps {
		lats = append(lats, st.Latency)
		if st.Bytes < 0 || st.Bytes > maxCount {
			t.Fatalf("step %s: %d bytes", st.Name, st.Bytes)
		}
	}
	for _, l := range lats {
		for _, d := range []time.Duration{l.Mean, l.P50, l.P90, l.P99, l.Max} {
			if d < 0 || d > maxDuration {
				t.Fatalf("latency out of range: %+v", l)
			}
		}
	}
	for _, st := range r.Steps {
		var sum int64
		for _, n := range st.ErrorsByKind {
			if n < 0 {
				t.Fatalf("step %s: %v", st.Name, st.ErrorsByKind)
			}
			sum += n
		}
		if st.Errors > st.Requests || sum > st.Errors {
			t.Fatalf("step %+v", st)
		}
	}
}

func FuzzLocustCSV(f *testing.F) {
	for _, dir := range []string{"testdata/locust/locust", "testdata/locust-failing/locust"} {
		stats, _ := os.ReadFile(dir + "_stats.csv")
		fails, _ := os.ReadFile(dir + "_failures.csv")
		f.Add(stats, fails)
	}
	s := refScenario(f)
	f.Fuzz(func(t *testing.T, stats, failures []byte) {
		im, err := locustCSV("stats", stats, "failures", failures, s, ImportOptions{})
		checkImported(t, im, err, 9)
	})
}

func FuzzLocustJSON(f *testing.F) {
	f.Add([]byte(`[{"name":"home","method":"GET","num_requests":3,"num_failures":1,"response_times":{"10":3},"start_time":1,"last_request_timestamp":2}]`))
	f.Add([]byte(`[]`))
	s := refScenario(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		im, err := locustJSON("stats.json", b, s, ImportOptions{})
		checkImported(t, im, err, 9)
	})
}

func FuzzK6Summary(f *testing.F) {
	for _, p := range []string{"testdata/k6/summary-export.json", "testdata/k6/handle-summary.json"} {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	s := refScenario(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		im, err := k6Import("summary.json", b, s, ImportOptions{})
		checkImported(t, im, err, 9)
	})
}

// numbers and numberAt: numberAt replaces the n-th number (modulo their count) of a real file
// with v: the fuzzers below reach the checks past the parsing (the
// Aggregated row, the ranges, the sums) that mutating raw bytes seldom
// gets through.
var numbers = regexp.MustCompile(`-?[0-9][0-9.eE+-]*`)

func numberAt(b []byte, n uint16, v string) []byte {
	at := numbers.FindAllIndex(b, -1)
	if len(at) == 0 {
		return b
	}
	i := at[int(n)%len(at)]
	out := append([]byte(nil), b[:i[0]]...)
	out = append(out, v...)
	return append(out, b[i[1]:]...)
}

// hostileNumbers are values that were trouble: past a duration, a count, a
// float; negative, NaN, infinite, fractions, and none.
var hostileNumbers = []string{"1e300", "1e999", "-1", "9e18", "1e-300", "NaN", "inf", "0.5", "0", "", "1e15", "31536000001"}

func FuzzLocustCSVNumber(f *testing.F) {
	stats, err := os.ReadFile("testdata/locust/locust_stats.csv")
	if err != nil {
		f.Fatal(err)
	}
	fails, _ := os.ReadFile("testdata/locust/locust_failures.csv")
	for i, v := range hostileNumbers {
		f.Add(uint16(i*37), v)
	}
	s := refScenario(f)
	f.Fuzz(func(t *testing.T, n uint16, v string) {
		im, err := locustCSV("stats", numberAt(stats, n, v), "failures", fails, s, ImportOptions{Rate: 12})
		checkImported(t, im, err, 9)
	})
}

func FuzzK6Number(f *testing.F) {
	var files [][]byte
	for _, p := range []string{"testdata/k6/summary-export.json", "testdata/k6/handle-summary.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, b)
	}
	for i, v := range hostileNumbers {
		f.Add(uint16(i*41), v, i%2 == 0)
	}
	s := refScenario(f)
	f.Fuzz(func(t *testing.T, n uint16, v string, handle bool) {
		b := files[0]
		if handle {
			b = files[1]
		}
		im, err := k6Import("summary.json", numberAt(b, n, v), s, ImportOptions{Rate: 7.5})
		checkImported(t, im, err, 9)
	})
}

func FuzzLocustJSONNumber(f *testing.F) {
	entries := []byte(`[{"name":"login","method":"POST","num_requests":4,"num_none_requests":0,"num_failures":0,"total_response_time":80,"max_response_time":30,"total_content_length":0,"response_times":{"10":2,"30":2},"start_time":1795743290.5,"last_request_timestamp":1795743300.5},
{"name":"home","method":"GET","num_requests":10,"num_none_requests":0,"num_failures":1,"total_response_time":3000,"max_response_time":900,"total_content_length":80000,"response_times":{"200":5,"300":4,"900":1},"start_time":1795743290.6,"last_request_timestamp":1795743300.4},
{"name":"home","method":"STACKTUNE-SLOW","num_requests":2,"num_none_requests":2,"num_failures":0,"total_response_time":0,"max_response_time":0,"total_content_length":0,"response_times":{},"start_time":1795743291,"last_request_timestamp":1795743299}]`)
	for i, v := range hostileNumbers {
		f.Add(uint16(i*13), v)
	}
	s := refScenario(f)
	f.Fuzz(func(t *testing.T, n uint16, v string) {
		im, err := locustJSON("stats.json", numberAt(entries, n, v), s, ImportOptions{})
		checkImported(t, im, err, 9)
	})
}
