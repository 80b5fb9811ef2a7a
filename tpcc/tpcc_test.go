package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// newDB starts a throwaway MariaDB and returns a pool on its database
// "tpcc".
func newDB(t *testing.T) (*sandbox.MariaDB, *sql.DB) {
	t.Helper()
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"innodb_buffer_pool_size": "128M"}})
	if _, err := m.DB().Exec("CREATE DATABASE tpcc"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", m.DSN("tpcc"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return m, db
}

// cloneDB copies the load in database from into a new database to
// (every table, row for row) and returns a pool on it.
func cloneDB(t *testing.T, m *sandbox.MariaDB, from, to string) *sql.DB {
	t.Helper()
	if _, err := m.DB().Exec("CREATE DATABASE " + to); err != nil {
		t.Fatal(err)
	}
	for _, tb := range append(slices.Clone(Tables), "tpcc_meta", "tpcc_load") {
		for _, q := range []string{"CREATE TABLE " + to + "." + tb + " LIKE " + from + "." + tb, "INSERT INTO " + to + "." + tb + " SELECT * FROM " + from + "." + tb} {
			if _, err := m.DB().Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	db, err := sql.Open("mysql", m.DSN(to))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// counts are the rows of every table.
func counts(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, tb := range Tables {
		var n int64
		if err := db.QueryRow("SELECT COUNT(*) FROM " + tb).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[tb] = n
	}
	return out
}

// wantCounts are the rows a load of w warehouses at sizes s holds,
// except order_line, whose count is random (5 to 15 per order).
func wantCounts(w int, s Sizes) map[string]int64 {
	W, C := int64(w), int64(s.Customers)
	return map[string]int64{
		"warehouse": W, "district": W * Districts, "customer": W * Districts * C, "history": W * Districts * C,
		"orders": W * Districts * C, "new_orders": W * Districts * int64(s.NewOrders), "item": int64(s.Items), "stock": W * int64(s.Items),
	}
}

func checkCounts(t *testing.T, what string, got map[string]int64, w int, s Sizes) {
	t.Helper()
	for tb, n := range wantCounts(w, s) {
		if got[tb] != n {
			t.Errorf("%s: %s has %d rows, want %d", what, tb, got[tb], n)
		}
	}
	orders := got["orders"]
	if ol := got["order_line"]; ol < 5*orders || ol > 15*orders {
		t.Errorf("%s: %d order lines for %d orders", what, ol, orders)
	}
}

// mustCheck runs Check and wants every condition to hold: checked
// (rows looked at), without a violation; 11 only as loaded.
func mustCheck(t *testing.T, db *sql.DB, what string) {
	t.Helper()
	res, err := Check(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conditions) != 12 {
		t.Fatalf("%s: %d conditions checked", what, len(res.Conditions))
	}
	info, err := ReadInfo(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range res.Conditions {
		if c.Number != i+1 {
			t.Errorf("%s: condition %d in place %d", what, c.Number, i+1)
		}
		if c.Number == 11 && info.Ran != "" {
			if c.NotChecked == "" || c.Checked != 0 || !strings.Contains(c.NotChecked, info.Ran) {
				t.Errorf("%s: condition 11 after a run: checked %d, not checked %q", what, c.Checked, c.NotChecked)
			}
			continue
		}
		if !c.OK() || c.Checked == 0 || c.NotChecked != "" {
			t.Errorf("%s: condition %d (%s): %d checked, %d violations %v %s", what, c.Number, c.Rule, c.Checked, c.Violations, c.Examples, c.NotChecked)
		}
	}
	if !res.Holds || !res.OK() {
		t.Errorf("%s: the check does not hold", what)
	}
}

// TestLoadRunCheck loads a tiny scale, runs each transaction on its own,
// then a short mixed run, and checks the consistency conditions after
// each step; then breaks the data and sees the check say so.
func TestLoadRunCheck(t *testing.T) {
	_, db := newDB(t)
	ctx := context.Background()
	const W = 2
	res, err := Load(ctx, db, LoadOptions{Warehouses: W, Sizes: TinySizes, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Loaded != 1+4*W || res.Skipped != 0 || res.Resumed != 0 {
		t.Errorf("load: %+v", res)
	}
	checkCounts(t, "after the load", counts(t, db), W, TinySizes)
	mustCheck(t, db, "after the load")
	info, err := ReadInfo(ctx, db)
	if err != nil || info.Warehouses != W || info.Sizes != TinySizes || !info.Complete || info.Ran != "" {
		t.Fatalf("info %+v, %v", info, err)
	}

	if err := InstallProcedures(ctx, db); err != nil {
		t.Fatal(err)
	}
	// The transactions as statements and as stored procedures.
	modes := []struct {
		name     string
		procs    bool
		scenario string // in the history
	}{{"statements", false, "tpcc 2w 4c tiny"}, {"procedures", true, "tpcc 2w 4c sp tiny"}}
	for _, mode := range modes {
		t.Run("each transaction/"+mode.name, func(t *testing.T) {
			eachTransaction(t, db, mode.procs)
		})
	}
	for _, mode := range modes {
		t.Run("mixed run/"+mode.name, func(t *testing.T) {
			var ticks atomic.Int64
			r, err := Run(ctx, db, RunOptions{Duration: 3 * time.Second, WarmUp: time.Second, Connections: 4, Procedures: mode.procs,
				Progress: func(Progress) { ticks.Add(1) }})
			if err != nil {
				t.Fatal(err)
			}
			if r.TpmC <= 0 || r.TpmTotal < r.TpmC || r.Completed == 0 || r.SpecSizes || len(r.Notes) == 0 {
				t.Errorf("result: tpmC %.0f tpmTotal %.0f completed %d notes %v", r.TpmC, r.TpmTotal, r.Completed, r.Notes)
			}
			mix := 0.0
			for _, x := range r.Transactions {
				mix += x.Mix
				if x.Completed == 0 && (x.Name == "New-Order" || x.Name == "Payment") {
					t.Errorf("%s: none completed", x.Name)
				}
				if x.Completed > 0 && (x.P90 <= 0 || x.P50 > x.P90 || x.P90 > x.P99 || x.P99 > x.Max) {
					t.Errorf("%s: p50 %f p90 %f p99 %f max %f", x.Name, x.P50, x.P90, x.P99, x.Max)
				}
				if x.Failed > 0 {
					t.Errorf("%s: %d failed: %v", x.Name, x.Failed, x.Errors)
				}
			}
			if r.Completed > 0 && (mix < 99.9 || mix > 100.1) {
				t.Errorf("the mix sums to %.2f%%", mix)
			}
			if ticks.Load() < 2 {
				t.Errorf("%d progress calls in a 4 s run", ticks.Load())
			}
			h := r.HistoryRun("baseline", "root@unix(/x)/tpcc")
			if h.Score != r.TpmC || h.Scenario != mode.scenario || h.Requests != r.Completed || len(h.Details) == 0 {
				t.Errorf("history run %+v", h)
			}
			t.Logf("tpmC %.0f tpmTotal %.0f completed %d retries %d deadlocks %d tx %+v", r.TpmC, r.TpmTotal, r.Completed, r.Retries, r.Deadlocks, r.Transactions)
			mustCheck(t, db, "after the run")
		})
	}

	t.Run("think times", func(t *testing.T) {
		r, err := Run(ctx, db, RunOptions{Duration: 2 * time.Second, ThinkTimes: true})
		if err != nil {
			t.Fatal(err)
		}
		// Ten terminals per warehouse, each keying for at least 2 s: at
		// most a few transactions in 2 s, and an efficiency figure.
		if r.Terminals != 10*W || !r.ThinkTimes || r.Completed > int64(r.Terminals) {
			t.Errorf("think-time run: %d terminals, %d completed", r.Terminals, r.Completed)
		}
	})

	t.Run("check finds broken data", func(t *testing.T) {
		for _, q := range []string{
			"UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 2",
			"DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 1 AND ol_number = 1",
			"DELETE FROM new_orders WHERE no_w_id = 1 AND no_d_id = 5 ORDER BY no_o_id DESC LIMIT 1",
			"DELETE FROM new_orders WHERE no_w_id = 2 AND no_d_id = 7 AND no_o_id = (SELECT m FROM (SELECT MIN(no_o_id) + 2 m FROM new_orders WHERE no_w_id = 2 AND no_d_id = 7) x)",
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		res, err := Check(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]string{1: "warehouse 2:", 2: "warehouse 1 district 5:", 3: "warehouse 2 district 7:", 4: "warehouse 1 district 2:"}
		for _, c := range res.Conditions[:4] { // TestCheckConditions breaks the others one by one
			if c.Violations != 1 || len(c.Examples) != 1 || !strings.HasPrefix(c.Examples[0], want[c.Number]) {
				t.Errorf("condition %d: %d violations %v, want one on %s", c.Number, c.Violations, c.Examples, want[c.Number])
			}
		}
		if res.OK() {
			t.Error("OK with broken data")
		}
	})
}

// eachTransaction runs each of the five transactions once on its own,
// as statements or as procedures, and checks what each changed.
func eachTransaction(t *testing.T, db *sql.DB, procs bool) {
	ctx := context.Background()
	const W = 2
	if _, err := db.Exec(markRanSQL); err != nil { // as Run does before its first transaction
		t.Fatal(err)
	}
	s, err := openSession(ctx, db, procs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	term := &terminal{w: 1, d: 3, warehouses: W, sizes: TinySizes, g: newGen(1, 1, runConstants(loadConstants(1), newGen(2, 2, constants{}).r))}
	var nextBefore, nextAfter int
	in := term.newOrderInput()
	db.QueryRow("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", in.w, in.d).Scan(&nextBefore)
	if err := s.newOrder(ctx, in, time.Now()); err != nil && !errors.Is(err, errRollback) {
		t.Fatalf("New-Order: %v", err)
	}
	db.QueryRow("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", in.w, in.d).Scan(&nextAfter)
	var lines int
	db.QueryRow("SELECT COUNT(*) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", in.w, in.d, nextBefore).Scan(&lines)
	if nextAfter != nextBefore+1 || lines != len(in.items) {
		t.Errorf("New-Order: d_next_o_id %d → %d, %d lines for %d items", nextBefore, nextAfter, lines, len(in.items))
	}

	// The 1% rollback: an unused item leaves nothing behind.
	bad := term.newOrderInput()
	bad.items[len(bad.items)-1].i = TinySizes.Items + 1
	db.QueryRow("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", bad.w, bad.d).Scan(&nextBefore)
	err = s.newOrder(ctx, bad, time.Now())
	s.rollback()
	if !errors.Is(err, errRollback) {
		t.Fatalf("New-Order with an unused item: %v, want the rollback", err)
	}
	db.QueryRow("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", bad.w, bad.d).Scan(&nextAfter)
	if nextAfter != nextBefore {
		t.Errorf("a rolled-back New-Order moved d_next_o_id %d → %d", nextBefore, nextAfter)
	}

	for i := 0; i < 5; i++ { // by last name and by number
		p := term.paymentInput()
		if err := s.payment(ctx, p, time.Now()); err != nil {
			t.Fatalf("Payment %+v: %v", p, err)
		}
		o := term.orderStatusInput()
		if err := s.orderStatus(ctx, o); err != nil {
			t.Fatalf("Order-Status %+v: %v", o, err)
		}
	}
	var noBefore, noAfter, deliveredBefore, deliveredAfter int
	db.QueryRow("SELECT COUNT(*) FROM new_orders WHERE no_w_id = 1").Scan(&noBefore)
	db.QueryRow("SELECT COUNT(*) FROM orders WHERE o_w_id = 1 AND o_carrier_id IS NOT NULL").Scan(&deliveredBefore)
	skipped, err := s.delivery(ctx, 1, 4, time.Now())
	if err != nil {
		t.Fatalf("Delivery: %v", err)
	}
	db.QueryRow("SELECT COUNT(*) FROM new_orders WHERE no_w_id = 1").Scan(&noAfter)
	db.QueryRow("SELECT COUNT(*) FROM orders WHERE o_w_id = 1 AND o_carrier_id IS NOT NULL").Scan(&deliveredAfter)
	if skipped != 0 || noAfter != noBefore-Districts || deliveredAfter != deliveredBefore+Districts {
		t.Errorf("Delivery: skipped %d, new orders %d → %d, delivered %d → %d", skipped, noBefore, noAfter, deliveredBefore, deliveredAfter)
	}
	if err := s.stockLevel(ctx, 1, 3, 15); err != nil {
		t.Fatalf("Stock-Level: %v", err)
	}
	mustCheck(t, db, "after each transaction")
}

// TestLoadResumes stops a load part way, as a crash would, and runs it
// again: the units finished are kept, a unit started and not recorded
// is cleared and loaded again, and nothing fails on a duplicate key.
func TestLoadResumes(t *testing.T) {
	_, db := newDB(t)
	const W = 3
	ctx, cancel := context.WithCancel(context.Background())
	var once atomic.Bool
	_, err := Load(ctx, db, LoadOptions{Warehouses: W, Sizes: TinySizes, Workers: 1, Progress: func(p LoadProgress) {
		if p.UnitsDone >= 3 && once.CompareAndSwap(false, true) {
			cancel()
		}
	}})
	if err == nil {
		t.Fatal("a cancelled load reported success")
	}
	info, err := ReadInfo(context.Background(), db)
	if err != nil || info.Complete {
		t.Fatalf("after the stop: %+v, %v", info, err)
	}
	if _, err := Run(context.Background(), db, RunOptions{Duration: time.Second}); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("run on an incomplete load: %v", err)
	}
	// A unit whose rows are in but whose record is not (killed between
	// its last INSERT and its record).
	if _, err := db.Exec("DELETE FROM tpcc_load WHERE unit = 'w1:warehouse'"); err != nil {
		t.Fatal(err)
	}
	res, err := Load(context.Background(), db, LoadOptions{Warehouses: W, Sizes: TinySizes, Workers: 2})
	if err != nil {
		t.Fatalf("resumed load: %v", err)
	}
	if res.Skipped == 0 || res.Resumed == 0 || res.Skipped+res.Loaded != res.Units {
		t.Errorf("resumed load: %+v", res)
	}
	checkCounts(t, "after the resumed load", counts(t, db), W, TinySizes)
	mustCheck(t, db, "after the resumed load")

	// Again: nothing to do. More warehouses: only the new ones load.
	res, err = Load(context.Background(), db, LoadOptions{Warehouses: W, Sizes: TinySizes})
	if err != nil || res.Loaded != 0 || res.Skipped != res.Units {
		t.Errorf("third load: %+v, %v", res, err)
	}
	res, err = Load(context.Background(), db, LoadOptions{Warehouses: W + 1, Sizes: TinySizes})
	if err != nil || res.Loaded != 4 {
		t.Errorf("one more warehouse: %+v, %v", res, err)
	}
	checkCounts(t, "with one more warehouse", counts(t, db), W+1, TinySizes)
	// Other sizes, another seed, fewer warehouses: refused.
	for name, o := range map[string]LoadOptions{
		"sizes": {Warehouses: W + 1, Sizes: Sizes{Items: 2000, Customers: 60, NewOrders: 18}},
		"seed":  {Warehouses: W + 1, Sizes: TinySizes, Seed: 9},
		"fewer": {Warehouses: 1, Sizes: TinySizes},
	} {
		if _, err := Load(context.Background(), db, o); err == nil {
			t.Errorf("%s: a different load was accepted", name)
		}
	}
	// Reload: the same rows again, after a run changed them.
	if _, err := Run(context.Background(), db, RunOptions{Duration: time.Second, Connections: 2}); err != nil {
		t.Fatal(err)
	}
	var paid, paidAfter int
	db.QueryRow("SELECT COUNT(*) FROM customer WHERE c_payment_cnt <> 1").Scan(&paid)
	if _, err := Reload(context.Background(), db, 2); err != nil {
		t.Fatal(err)
	}
	db.QueryRow("SELECT COUNT(*) FROM customer WHERE c_payment_cnt <> 1").Scan(&paidAfter)
	if paid == 0 || paidAfter != 0 {
		t.Errorf("customers with payments: %d after the run, %d after the reload (want some, then none)", paid, paidAfter)
	}
	checkCounts(t, "after the reload", counts(t, db), W+1, TinySizes)
	mustCheck(t, db, "after the reload")
	// The same seed gives the same data.
	var sum1 string
	db.QueryRow("SELECT SUM(CRC32(CONCAT(s_i_id, s_dist_01, s_data))) FROM stock WHERE s_w_id = 2").Scan(&sum1)
	if _, err := db.Exec("DELETE FROM tpcc_load WHERE unit = 'w2:stock'"); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), db, LoadOptions{Warehouses: W + 1, Sizes: TinySizes}); err != nil {
		t.Fatal(err)
	}
	var sum2 string
	db.QueryRow("SELECT SUM(CRC32(CONCAT(s_i_id, s_dist_01, s_data))) FROM stock WHERE s_w_id = 2").Scan(&sum2)
	if sum1 == "" || sum1 != sum2 {
		t.Errorf("stock of warehouse 2 loaded twice: checksums %s and %s", sum1, sum2)
	}
}

func TestNotLoaded(t *testing.T) {
	_, db := newDB(t)
	if _, err := ReadInfo(context.Background(), db); !errors.Is(err, ErrNotLoaded) {
		t.Errorf("ReadInfo on an empty database: %v", err)
	}
	if _, err := Run(context.Background(), db, RunOptions{Duration: time.Second}); !errors.Is(err, ErrNotLoaded) {
		t.Errorf("Run on an empty database: %v", err)
	}
	if _, err := Check(context.Background(), db); !errors.Is(err, ErrNotLoaded) {
		t.Errorf("Check on an empty database: %v", err)
	}
	for _, o := range []RunOptions{{}, {Duration: -time.Second}, {Duration: 3 * time.Hour}, {Duration: time.Second, WarmUp: -1}} {
		if _, err := Run(context.Background(), db, o); err == nil {
			t.Errorf("Run %+v accepted", o)
		}
	}
	if _, err := Load(context.Background(), db, LoadOptions{Warehouses: 0}); err == nil {
		t.Error("a load of 0 warehouses accepted")
	}
}

// TestIsolation: Stock-Level runs at READ COMMITTED and every other
// transaction at the server's level, whatever ran before it on the
// connection, so the isolation level set on the server (a setting being
// tuned) is the one the benchmark measures. A transaction's level is
// seen by what it does: it reads a row twice while another connection
// commits a change to it in between; only under READ COMMITTED does the
// second read see the change.
func TestIsolation(t *testing.T) {
	m, _ := newDB(t)
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE tpcc.one (a INT PRIMARY KEY, v INT) ENGINE=InnoDB", "INSERT INTO tpcc.one VALUES (1, 0)"} {
		if _, err := m.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		stockLevel bool
		want       string // "" is the server's level
	}{{false, ""}, {true, "READ-COMMITTED"}, {false, ""}, {true, "READ-COMMITTED"}, {true, "READ-COMMITTED"}, {false, ""}}
	for _, global := range []string{"REPEATABLE-READ", "READ-COMMITTED"} {
		t.Run(global, func(t *testing.T) {
			if _, err := m.DB().Exec("SET GLOBAL tx_isolation = ?", global); err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("mysql", m.DSN("tpcc")) // new connections take the global level
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s := &session{conn: conn}
			defer s.close()
			read := func() (v int) {
				if err := conn.QueryRowContext(ctx, "SELECT v FROM one WHERE a = 1").Scan(&v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			for i, st := range steps {
				if err := s.begin(ctx, st.stockLevel, st.stockLevel); err != nil {
					t.Fatal(err)
				}
				before := read()
				if _, err := m.DB().Exec("UPDATE tpcc.one SET v = v + 1 WHERE a = 1"); err != nil {
					t.Fatal(err)
				}
				level := "REPEATABLE-READ"
				if read() != before {
					level = "READ-COMMITTED"
				}
				if err := s.commit(ctx); err != nil {
					t.Fatal(err)
				}
				want := st.want
				if want == "" {
					want = global
				}
				if level != want {
					t.Errorf("transaction %d (Stock-Level %v) ran at %s, want %s", i, st.stockLevel, level, want)
				}
			}
		})
	}
}

// TestProceduresMatchStatements is the differential test of the two ways
// to run a transaction: two copies of one load, the same 600 transactions
// (the same terminal's deck and inputs, the same clock) run as statements
// on one and as stored procedures on the other, must end with the same
// outcomes and every table the same, row for row (CHECKSUM TABLE).
func TestProceduresMatchStatements(t *testing.T) {
	m, db := newDB(t)
	ctx := context.Background()
	const W = 2
	if _, err := Load(ctx, db, LoadOptions{Warehouses: W, Sizes: TinySizes, Workers: 1, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	procDB := cloneDB(t, m, "tpcc", "tpcc_procs")
	if err := InstallProcedures(ctx, procDB); err != nil {
		t.Fatal(err)
	}

	clock := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	r := &runner{opt: RunOptions{MaxRetries: 5, now: func() time.Time { return clock }}}
	run := func(db *sql.DB, procs bool) []string {
		s, err := openSession(ctx, db, procs)
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		term := &terminal{w: 2, d: 4, warehouses: W, sizes: TinySizes, g: newGen(1, 1, runConstants(loadConstants(7), newGen(5, 5, constants{}).r))}
		var outcomes []string
		for i := 0; i < 600; i++ {
			k := term.draw()
			o := r.execute(ctx, term, s, k)
			what := "ok"
			switch {
			case errors.Is(o.err, errRollback):
				what = "rolled back"
			case o.err != nil:
				what = "failed" // the message differs: a client error against a SIGNAL
			}
			outcomes = append(outcomes, fmt.Sprintf("%d %s: %s, %d skipped", i, k, what, o.skipped))
		}
		return outcomes
	}
	for _, d := range []*sql.DB{db, procDB} {
		if _, err := d.Exec(markRanSQL); err != nil { // as Run does before its first transaction
			t.Fatal(err)
		}
	}
	stmts, procs := run(db, false), run(procDB, true)
	rolledBack := 0
	for i := range stmts {
		if stmts[i] != procs[i] {
			t.Errorf("transaction %s as statements, %s as procedures", stmts[i], procs[i])
		}
		if strings.Contains(stmts[i], "rolled back") {
			rolledBack++
		}
	}
	if rolledBack == 0 {
		t.Error("no New-Order rolled back in 600 transactions: the rollback path was not compared")
	}
	for _, tb := range Tables {
		var name string
		var a, b int64
		if err := m.DB().QueryRow("CHECKSUM TABLE tpcc."+tb).Scan(&name, &a); err != nil {
			t.Fatal(err)
		}
		if err := m.DB().QueryRow("CHECKSUM TABLE tpcc_procs."+tb).Scan(&name, &b); err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Errorf("%s differs after the same transactions: checksum %d as statements, %d as procedures", tb, a, b)
		}
	}
	mustCheck(t, procDB, "after the procedures")
}

// TestInstallProceduresFails fails each statement of the install in turn:
// Run says which procedure, runs no transaction, and the next run
// installs every procedure again and completes.
func TestInstallProceduresFails(t *testing.T) {
	_, db := newDB(t)
	ctx := context.Background()
	if _, err := Load(ctx, db, LoadOptions{Warehouses: 1, Sizes: TinySizes, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	nextOrders := func() (n int64) {
		if err := db.QueryRow("SELECT SUM(d_next_o_id) FROM district").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	orig := installExec
	defer func() { installExec = orig }()
	opt := RunOptions{Duration: time.Second, Connections: 2, Procedures: true}
	for step := 0; step < 2*len(procedures); step++ {
		p := procedures[step/2]
		t.Run(fmt.Sprintf("step %d (%s)", step, p.name), func(t *testing.T) {
			n := 0
			installExec = func(ctx context.Context, conn *sql.Conn, q string) error {
				if n++; n-1 == step {
					return errors.New("injected")
				}
				return orig(ctx, conn, q)
			}
			before := nextOrders()
			_, err := Run(ctx, db, opt)
			if err == nil || !strings.Contains(err.Error(), "procedure "+p.name+": injected") {
				t.Fatalf("Run with step %d failing: %v", step, err)
			}
			if after := nextOrders(); after != before {
				t.Errorf("a New-Order ran after the install failed: d_next_o_id sum %d → %d", before, after)
			}
			installExec = orig
			r, err := Run(ctx, db, opt)
			if err != nil || r.Completed == 0 || r.Failed != 0 {
				t.Fatalf("the next run: %v (%+v)", err, r)
			}
			var count int
			if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE'").Scan(&count); err != nil || count != len(procedures) {
				t.Errorf("%d procedures after the next run (%v), want %d", count, err, len(procedures))
			}
		})
	}
	mustCheck(t, db, "after the failed installs and the runs")
}
