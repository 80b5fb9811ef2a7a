package engines

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/refstack/refapp/refapptest"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
	"github.com/stacktune/stacktune/scenario"
)

// refStack starts the reference app on a throwaway MariaDB at scale 1
// with memcached, its documented faults fixed (indexes, the friend set,
// batched cache reads) so that a modest rate does not saturate a busy
// machine, and returns its base URL and the path of its scenario.
func refStack(t *testing.T) (string, string) {
	t.Helper()
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	ctx := context.Background()
	db := refapptest.Load(t, m, 1)
	// The fixes of refapp's documentation: the pages cost milliseconds,
	// so the rate below leaves the busy test machine room.
	for _, ddl := range []string{
		"ALTER TABLE relations ADD INDEX (one, created_at), ADD INDEX (another, created_at)",
		"ALTER TABLE comments ADD INDEX (entry_id, created_at), ADD INDEX (created_at)",
		"ALTER TABLE footprints ADD INDEX (user_id, created_at)",
	} {
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			t.Fatal(err)
		}
	}
	mc := sandboxtest.NewMemcached(t, sandbox.MemcachedOptions{})
	srv, err := refapp.Start(ctx, refapp.Config{DSN: m.TCPDSN("refapp"), FriendSet: true, Memcached: mc.Addr(), CacheBatch: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	path := filepath.Join(t.TempDir(), "refapp.yaml")
	if err := os.WriteFile(path, refapp.Scenario, 0o644); err != nil {
		t.Fatal(err)
	}
	return srv.URL(), path
}

// TestLocustDistributed is the proof: the reference app's scenario
// exported to Locust runs on a master with two workers on loopback, its
// CSV statistics are read back and scored, and the score is within 10% of
// the same scenario run by stacktune bench at the same rate (the open
// model: at a rate the app sustains, both send rate × duration requests).
//
// The two run at the same time, each at the rate, so that a machine
// whose load changes (this one is shared) slows both alike. The score of a
// run is the sum of its requests' score weights (1 to 10 here, picked at
// random by weight), so two runs of the same load differ by chance: about
// 5.9%/sqrt(N/180) for one standard deviation of the difference, N
// requests each; at 600 requests that is 3.2%, and 10% is 3.1 of them.
func TestLocustDistributed(t *testing.T) {
	base, scPath := refStack(t)
	sc, err := scenario.Load(scPath)
	if err != nil {
		t.Fatal(err)
	}
	const (
		users = 32
		rate  = 20.0
		dur   = 30 * time.Second
	)
	file := filepath.Join(t.TempDir(), "locustfile.py")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	warn, err := Locust(f, sc, ExportOptions{Users: users, Rate: rate, Duration: dur, BaseURL: base})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("export warnings: %q", warn)

	type benchOut struct {
		sum *benchrun.Summary
		err error
	}
	bc := make(chan benchOut, 1)
	go func() {
		// Locust needs a few seconds to start its processes and connect its
		// workers: start the bench when its users are loading.
		time.Sleep(4 * time.Second)
		sum, err := benchrun.Run(context.Background(), benchrun.Options{Scenario: scPath, BaseURL: base, Seed: 1,
			Load: loadgen.Options{Connections: users, Rate: rate, Duration: dur, Timeout: 10 * time.Second, KeepAlive: true}})
		bc <- benchOut{sum, err}
	}()
	run, err := sandbox.RunLocust(context.Background(), sandbox.LocustOptions{File: file, Host: base, Users: users, RunTime: dur, Workers: 2, Dir: t.TempDir()})
	b := <-bc
	if err != nil {
		t.Fatal(err)
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	sc2, _ := scenario.Load(scPath) // the export changed the first one's base URL
	im, err := ImportLocustCSV(run.CSVPrefix, sc2, ImportOptions{Rate: rate, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	ls := im.Score(sc2)
	r := im.Result
	t.Logf("locust: %d requests (%d errors %v) in %v, %.1f req/s, p99 %v, score %.0f passed %v %v", r.Requests, r.Errors, r.ErrorsByKind, r.Elapsed, r.RPS, r.Latency.P99, ls.Score, ls.Passed, ls.Reasons)
	for _, st := range r.Steps {
		t.Logf("  %-14s %4d requests %d errors %v p50 %v", st.Name, st.Requests, st.Errors, st.Details, st.Latency.P50)
	}
	if r.Steps[0].Name != "login" || r.Steps[0].Requests < users {
		t.Errorf("login: %+v: every user logs in first", r.Steps[0])
	}
	if !ls.Passed || r.Errors > 0 {
		t.Errorf("the Locust run failed: %v, %d errors %v", ls.Reasons, r.Errors, r.ErrorsByKind)
	}
	sum := b.sum
	t.Logf("bench:  %d requests (%d errors) %.1f req/s, p99 %.1f ms, score %.0f passed %v", sum.Requests, sum.Errors, sum.RPS, sum.LatencyMS.P99, sum.Score, sum.Passed)
	if !sum.Passed {
		t.Fatalf("the bench run failed: %v", sum.FailReasons)
	}
	if diff := math.Abs(ls.Score-sum.Score) / sum.Score; diff > 0.10 {
		t.Errorf("Locust scored %.0f, stacktune bench %.0f at the same rate: %.1f%% apart, more than 10%%", ls.Score, sum.Score, 100*diff)
	}
}
