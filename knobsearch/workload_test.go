package knobsearch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/loadgen"
)

// TestHTTPWorkload: the HTTP workload runs one bench run per trial, its
// score the bench's, observe alongside, every run in the history under
// the trial's label; and the search runs on it as on TPC-C.
func TestHTTPWorkload(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	hist, err := history.Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer hist.Close()
	w := &HTTP{History: hist, Bench: benchrun.Options{URL: srv.URL + "/", Load: loadgen.Options{Connections: 2, Duration: 300 * time.Millisecond, Timeout: time.Second}}}
	observed := false
	m, err := w.Measure(context.Background(), "trial x", func(context.Context) { observed = true })
	if err != nil {
		t.Fatal(err)
	}
	if m.Score <= 0 || !observed || hits.Load() == 0 || w.Reset(context.Background()) != nil || w.Name() != srv.URL+"/" {
		t.Errorf("measurement %+v, observed %v, %d hits", m, observed, hits.Load())
	}
	runs, err := hist.Runs(context.Background(), history.Filter{})
	if err != nil || len(runs) != 1 || runs[0].Label != "trial x" || runs[0].Score != m.Score {
		t.Errorf("history %+v %v", runs, err)
	}

	// The search on it: the fake server takes the configurations.
	snap := fakeSnapshot(16 * gib)
	fs := &fakeServer{t: t, snap: snap, opt: Constraints{MemoryLimit: 2 * gib}.adviseOptions()}
	res, err := Run(context.Background(), Options{Workload: w, Server: fs, Snapshot: snap, Constraints: Constraints{MemoryLimit: 2 * gib, Only: []string{"innodb_flush_neighbors"}},
		Screen: 1, Trials: 1, Repeats: 4, NoAudit: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Workload != srv.URL+"/" || res.Comparison == nil || len(res.Trials) < 6 {
		t.Errorf("search on HTTP: %d trials, comparison %+v", len(res.Trials), res.Comparison)
	}
}

// TestHTTPWorkloadName: the search report names the URL without its
// password or query values.
func TestHTTPWorkloadName(t *testing.T) {
	w := &HTTP{Bench: benchrun.Options{URL: "http://u:pw-S3CRET@h/x?token=S3CRET"}}
	if got, want := w.Name(), "http://u:***@h/x?token=***"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
}
