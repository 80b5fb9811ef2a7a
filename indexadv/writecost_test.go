package indexadv

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
	"github.com/stacktune/stacktune/tpcc"
)

// TestWriteCostTPCC: on a write-heavy workload, TPC-C's mix, a read of
// order_line by item that runs once in the window gets an index that
// EXPLAIN proves on the copy, but the window's new-order INSERTs into
// order_line (replayed on the copy with and without it) cost more than
// the one read saves: it is refused, with the figures. The same read
// called often enough to pay for the writes is proposed.
func TestWriteCostTPCC(t *testing.T) {
	ctx := context.Background()
	prod := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"slow_query_log": "ON", "long_query_time": "0"}})
	db := prod.DB()
	if _, err := db.Exec("CREATE DATABASE tpcc"); err != nil {
		t.Fatal(err)
	}
	tdb, err := sql.Open("mysql", prod.DSN("tpcc"))
	if err != nil {
		t.Fatal(err)
	}
	defer tdb.Close()
	if _, err := tpcc.Load(ctx, tdb, tpcc.LoadOptions{Warehouses: 1, Sizes: tpcc.TinySizes}); err != nil {
		t.Fatal(err)
	}
	// The window is the mix's run, not the load.
	if err := os.Truncate(prod.SlowLogPath(), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("FLUSH SLOW LOGS"); err != nil {
		t.Fatal(err)
	}
	if _, err := tpcc.Run(ctx, tdb, tpcc.RunOptions{Duration: 4 * time.Second, Connections: 2}); err != nil {
		t.Fatal(err)
	}
	const rare = "SELECT ol_w_id, ol_d_id, ol_o_id FROM order_line WHERE ol_i_id = 77"
	if _, err := tdb.Exec(rare); err != nil {
		t.Fatal(err)
	}
	in, closer, err := input.Open(prod.SlowLogPath(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := digest.ReportOf(ctx, []input.Input{in}, []string{"slow.log"}, digest.Options{}, digest.ReportOptions{Sort: digest.SortTotal})
	closer.Close()
	if err != nil {
		t.Fatal(err)
	}
	var read digest.Class
	var writes int64
	for _, c := range rep.Classes {
		if strings.HasPrefix(c.Sample, "SELECT ol_w_id, ol_d_id, ol_o_id FROM order_line WHERE ol_i_id") {
			read = c
		}
		if strings.HasPrefix(strings.ToLower(c.Fingerprint), "insert into order_line") {
			writes += c.Count
		}
	}
	if read.ID == "" || writes < 100 {
		t.Fatalf("the window: read %+v, %d order_line inserts, of %d classes", read, writes, len(rep.Classes))
	}

	advise := func(calls int64) (*Proposal, bool) {
		t.Helper()
		r := read
		r.Count = calls
		workload := []digest.Class{r}
		for _, c := range rep.Classes {
			if c.ID != r.ID {
				workload = append(workload, c)
			}
		}
		res, err := Run(ctx, Options{Classes: []digest.Class{r}, Workload: workload, Source: tdb, Database: "tpcc", Runs: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, lists := range [][]Proposal{res.Proposals, res.Rejected} {
			for i, p := range lists {
				if p.Action == ActionAdd && p.Table == "tpcc.order_line" && strings.HasPrefix(strings.Join(p.Columns, ","), "ol_i_id") {
					return &lists[i], p.Rejected == ""
				}
			}
		}
		t.Fatalf("no candidate on order_line(ol_i_id): %+v %+v", res.Proposals, res.Rejected)
		return nil, false
	}
	figures := func(p *Proposal) string {
		return fmt.Sprintf("benefit %+v, write cost %+v", *p.Benefit, *p.WriteCost)
	}
	// The index adds a few microseconds to each of a few hundred
	// replayed inserts: one replay on a busy host can time the inserts
	// with it below those without (a cost of 0). Each try is a new
	// measurement on a new copy; all five finding no cost fails (three
	// did once, the host at CI's load: with 32.8 ms against 37.8).
	var once *Proposal
	var kept bool
	for try := 1; try <= 5; try++ {
		once, kept = advise(1)
		t.Logf("called once, try %d: %s; %s", try, figures(once), once.Rejected)
		if !kept {
			break
		}
	}
	if kept || !strings.HasPrefix(once.Rejected, "its write cost is more than it saves") {
		t.Fatalf("called once, kept=%v: %q (%s)", kept, once.Rejected, figures(once))
	}
	w := once.WriteCost
	if w.Classes == 0 || w.Statements == 0 || w.WindowCalls < writes || w.PerStatementMS <= 0 || w.IndexBytes <= 0 || once.Benefit.Calls != 1 {
		t.Errorf("figures: %s", figures(once))
	}
	// Called often enough to pay for them, the same index is proposed.
	calls := int64(w.WindowMS/max(once.Benefit.TimeSavedMS, 0.001)*4) + 10
	often, kept := advise(calls)
	t.Logf("called %d times: %s; %s", calls, figures(often), often.Rejected)
	if !kept {
		t.Errorf("called %d times: rejected %q (%s)", calls, often.Rejected, figures(often))
	}
}
