package engines

import (
	"os"
	"testing"
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
	if r.Requests < 0 || r.Errors < 0 || r.Errors > r.Requests || r.Unsent < 0 || r.Elapsed < 0 {
		t.Fatalf("totals %+v", r)
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
