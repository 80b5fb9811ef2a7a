package indexadv

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// libraryLoans is a library's loans: an index nobody reads (ix_due), a
// duplicate (ix_isbn_again), a redundant prefix (ix_shelf of
// ix_shelf_due), a unique index that is also unread and a prefix
// (uq_barcode of ix_barcode_due), and the index of a foreign key
// (ix_member, unread).
func libraryLoans(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, q := range []string{"CREATE DATABASE lib",
		"CREATE TABLE lib.members (member_no INT PRIMARY KEY, name VARCHAR(40))",
		`CREATE TABLE lib.loans (loan_id INT PRIMARY KEY, member_no INT, isbn CHAR(13), shelf VARCHAR(8), due DATE, barcode CHAR(12),
			KEY ix_due (due), KEY ix_isbn (isbn), KEY ix_isbn_again (isbn), KEY ix_shelf (shelf), KEY ix_shelf_due (shelf, due),
			UNIQUE KEY uq_barcode (barcode), KEY ix_barcode_due (barcode, due), KEY ix_member (member_no),
			CONSTRAINT fk_member FOREIGN KEY (member_no) REFERENCES lib.members (member_no))`,
		"INSERT INTO lib.members SELECT seq, CONCAT('m', seq) FROM lib.seq_1_to_50",
		"INSERT INTO lib.loans SELECT seq, 1 + seq % 50, LPAD(seq % 300, 13, '9'), CONCAT('S', seq % 40), '2026-01-01' + INTERVAL seq % 90 DAY, CONCAT('b', seq) FROM lib.seq_1_to_3000",
		"ANALYZE TABLE lib.loans",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
}

// loanClasses is the window's workload: lookups by isbn and by shelf and
// due date, and new loans.
var loanClasses = []digest.Class{
	{ID: "BYISBN", StatementType: "select", Fingerprint: "select loan_id from loans where isbn = ?", Sample: "SELECT loan_id FROM loans WHERE isbn = '9999999999042'", SampleDB: "lib", Count: 400},
	{ID: "SHELF", StatementType: "select", Fingerprint: "select loan_id from loans where shelf = ? and due < ?", Sample: "SELECT loan_id FROM loans WHERE shelf = 'S7' AND due < '2026-02-01'", SampleDB: "lib", Count: 300},
	{ID: "LOAN", StatementType: "insert", Fingerprint: "insert into loans values(?+)", Sample: "INSERT INTO loans VALUES (9000001, 3, '9780000000001', 'S1', '2026-03-01', 'new1')", SampleDB: "lib", Count: 200},
}

// readLoans runs the reading classes on the server, so its counters see
// them.
func readLoans(t *testing.T, db *sql.DB) {
	t.Helper()
	for range 20 {
		for _, c := range loanClasses[:2] {
			rows, err := db.Query(strings.Replace(c.Sample, "FROM loans", "FROM lib.loans", 1))
			if err != nil {
				t.Fatal(err)
			}
			rows.Close()
		}
	}
}

// TestDropsOnMariaDB: with performance_schema's counters over a window
// long enough, the unused index, the duplicate and the redundant prefix
// are proposed as drops with their evidence, and the unique index and the
// foreign key's never; a window shorter than the threshold proposes no
// unused index and says why. The first drop then goes through apply as
// the advice says: ignored (the query plans no longer use it, measured),
// dropped, and each rollback brings back the state before it.
func TestDropsOnMariaDB(t *testing.T) {
	ctx := context.Background()
	prod := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"performance_schema": "ON"}})
	libraryLoans(t, prod.DB())
	readLoans(t, prod.DB())
	time.Sleep(1100 * time.Millisecond)

	short, err := Run(ctx, Options{Classes: loanClasses, Source: prod.DB(), Database: "lib", Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if u := short.Usage; u == nil || u.Source != UsagePerfSchema || u.Enough || u.MinWindowSeconds != DefaultMinUsageWindow.Seconds() {
		t.Fatalf("usage on a short window: %+v", short.Usage)
	}
	if got := drops(short); got["ix_due"] != "" || got["ix_isbn_again"] != ReasonDuplicate || got["ix_shelf"] != ReasonRedundant {
		t.Errorf("drops on a short window: %v", got)
	}

	res, err := Run(ctx, Options{Classes: loanClasses, Source: prod.DB(), Database: "lib", Runs: 1, MinUsageWindow: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got := drops(res)
	// ix_barcode_due is unread too; ix_isbn, which the optimizer did not
	// choose over its twin, stays: the duplicate gives way to it.
	want := map[string]Reason{"ix_due": ReasonUnused, "ix_barcode_due": ReasonUnused, "ix_isbn_again": ReasonDuplicate, "ix_shelf": ReasonRedundant}
	for ix, reason := range want {
		if got[ix] != reason {
			t.Errorf("%s: %q, want %q (all: %v)", ix, got[ix], reason, got)
		}
	}
	for _, never := range []string{"uq_barcode", "ix_member", "PRIMARY", "ix_isbn", "ix_shelf_due"} {
		if got[never] != "" {
			t.Errorf("%s proposed as a drop (%s): it backs a constraint", never, got[never])
		}
	}
	var first changeset.Change
	for _, p := range res.Proposals {
		if p.Action != ActionDrop {
			continue
		}
		switch p.Reason {
		case ReasonUnused:
			if p.Evidence.Usage == nil || p.Evidence.Reads == nil || p.Evidence.Reads.Reads != 0 || p.Evidence.Reads.TableReads == 0 || !p.Evidence.Usage.Enough {
				t.Errorf("%s: evidence %+v", p.Index, p.Evidence)
			}
			if p.Index == "ix_due" {
				first = p.Change
			}
		case ReasonDuplicate, ReasonRedundant:
			if p.Evidence.Of == "" || len(p.Evidence.OfColumns) == 0 {
				t.Errorf("%s: evidence %+v", p.Index, p.Evidence)
			}
		}
		if p.Evidence.Staged != "ignore_first" || !strings.HasSuffix(p.Change.To, " ignored") || p.Benefit == nil || p.Benefit.BytesFreed <= 0 {
			t.Errorf("%s: staged %q, change %+v, benefit %+v", p.Index, p.Evidence.Staged, p.Change, p.Benefit)
		}
	}
	// The loans' INSERT is the window's write: each drop on the copied
	// table has the write cost it saves, measured.
	for _, p := range res.Proposals {
		if p.Action == ActionDrop && (p.WriteCost == nil || p.WriteCost.Statements == 0 || p.WriteCost.Classes != 1 || p.WriteCost.IndexBytes <= 0) {
			t.Errorf("%s: write cost %+v", p.Index, p.WriteCost)
		}
	}
	if len(res.Drops) != len(want) {
		t.Errorf("drop changes: %+v", res.Drops)
	}

	// The unused index through apply: ignored, measured, dropped, and
	// rolled back step by step.
	state := func() string {
		var cols, ign string
		err := prod.DB().QueryRow("SELECT GROUP_CONCAT(COLUMN_NAME), MAX(IGNORED) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'lib' AND TABLE_NAME = 'loans' AND INDEX_NAME = 'ix_due'").Scan(&cols, &ign)
		if err != nil {
			return "absent"
		}
		return cols + " ignored=" + ign
	}
	if first.Name != "ix_due" || state() != "due ignored=NO" {
		t.Fatalf("first drop %+v, state %s", first, state())
	}
	ign, err := apply.NewIndexes(prod.DB(), "", []changeset.Change{first})
	if err != nil {
		t.Fatal(err)
	}
	optIgnore := apply.Options{StateDir: t.TempDir()}
	if _, err := apply.Run(ctx, []apply.Target{ign}, optIgnore); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != "due ignored=YES" {
		t.Fatalf("after the ignore: %s", s)
	}
	// Measured: the plan of a query by due date no longer reaches it.
	conn, err := prod.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Explain(ctx, conn, "SELECT loan_id FROM lib.loans WHERE due = '2026-01-05'")
	conn.Close()
	if err != nil || strings.Contains(PlanSummary(plan), "ix_due") {
		t.Fatalf("plan with ix_due ignored: %v %v", plan, err)
	}
	final, err := FinalDrop(first)
	if err != nil {
		t.Fatal(err)
	}
	dr, err := apply.NewIndexes(prod.DB(), "", []changeset.Change{final})
	if err != nil {
		t.Fatal(err)
	}
	optDrop := apply.Options{StateDir: t.TempDir()}
	if _, err := apply.Run(ctx, []apply.Target{dr}, optDrop); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != "absent" {
		t.Fatalf("after the drop: %s", s)
	}
	if _, err := apply.Rollback(ctx, []apply.Target{dr}, optDrop); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != "due ignored=YES" {
		t.Fatalf("after the drop's rollback: %s", s)
	}
	if _, err := apply.Rollback(ctx, []apply.Target{ign}, optIgnore); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != "due ignored=NO" {
		t.Fatalf("after the ignore's rollback: %s", s)
	}
}

// TestDropWithoutIgnore: on a server that cannot ignore an index, the
// drop is the change, and its evidence says beforehand how long a
// rollback's re-creation takes (timed on the copy); applied, the index is
// gone, and the rollback re-creates it online.
func TestDropWithoutIgnore(t *testing.T) {
	ctx := context.Background()
	prod := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	libraryLoans(t, prod.DB())
	res, err := Run(ctx, Options{Classes: loanClasses, Source: prod.DB(), Database: "lib", Runs: 1, noIgnore: true})
	if err != nil {
		t.Fatal(err)
	}
	var ch changeset.Change
	for _, p := range res.Proposals {
		if p.Action == ActionDrop && p.Index == "ix_isbn_again" {
			if p.Evidence.Staged != "drop_recreate" || p.Evidence.RecreateSeconds <= 0 || p.Change.To != changeset.Absent ||
				!strings.Contains(strings.Join(p.Change.Evidence, "\n"), "re-creates it online in about") || !strings.Contains(strings.Join(p.Change.Evidence, "\n"), "timed on the copy") {
				t.Fatalf("the drop: %+v", p)
			}
			ch = p.Change
		}
	}
	if ch.Name == "" {
		t.Fatalf("no drop of ix_isbn_again: %v", drops(res))
	}
	d, err := apply.NewIndexes(prod.DB(), "", []changeset.Change{ch})
	if err != nil {
		t.Fatal(err)
	}
	opt := apply.Options{StateDir: t.TempDir()}
	if _, err := apply.Run(ctx, []apply.Target{d}, opt); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := prod.DB().QueryRow("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'lib' AND INDEX_NAME = 'ix_isbn_again'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("after the drop: %d", n)
	}
	if _, err := apply.Rollback(ctx, []apply.Target{d}, opt); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("after the rollback: %d", n)
	}
}

// drops are a result's drop proposals: reason by index.
func drops(r *Result) map[string]Reason {
	out := map[string]Reason{}
	for _, p := range r.Proposals {
		if p.Action == ActionDrop {
			out[p.Index] = p.Reason
		}
	}
	for _, p := range r.Rejected {
		if p.Action == ActionDrop && !slices.Contains([]string{""}, p.Index) {
			out[p.Index] = Reason("rejected: " + p.Rejected)
		}
	}
	return out
}

// TestUsageSources: without performance_schema the evidence comes from
// MariaDB's userstat counters, and without those from the plans of the
// window's classes, whose coverage must be enough: a reading class that
// could not be explained and holds most of the calls leaves no index
// called unused.
func TestUsageSources(t *testing.T) {
	ctx := context.Background()
	t.Run("userstat", func(t *testing.T) {
		prod := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"userstat": "ON", "performance_schema": "OFF"}})
		libraryLoans(t, prod.DB())
		readLoans(t, prod.DB())
		time.Sleep(1100 * time.Millisecond)
		res, err := Run(ctx, Options{Classes: loanClasses, Source: prod.DB(), Database: "lib", Runs: 1, MinUsageWindow: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		u := res.Usage
		if u == nil || u.Source != UsageUserstat || !u.Enough || u.Caveat != "enabled_unseen" || !slices.Contains(u.Unavailable, "performance_schema_off") {
			t.Fatalf("usage: %+v", u)
		}
		if got := drops(res); got["ix_due"] != ReasonUnused || got["ix_isbn"] != "" || got["uq_barcode"] != "" || got["ix_member"] != "" {
			t.Errorf("drops from userstat: %v", got)
		}
	})
	t.Run("explain", func(t *testing.T) {
		prod := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"performance_schema": "OFF"}})
		libraryLoans(t, prod.DB())
		day := DefaultMinUsageWindow.Seconds()
		res, err := Run(ctx, Options{Classes: loanClasses, Source: prod.DB(), Database: "lib", Runs: 1, WindowSeconds: 2 * day})
		if err != nil {
			t.Fatal(err)
		}
		u := res.Usage
		if u == nil || u.Source != UsageExplain || !u.Enough || u.Coverage != 1 || u.WindowSeconds != 2*day || !slices.Contains(u.Unavailable, "userstat_off") {
			t.Fatalf("usage: %+v", u)
		}
		if got := drops(res); got["ix_due"] != ReasonUnused || got["ix_barcode_due"] != ReasonUnused || got["uq_barcode"] != "" || got["ix_member"] != "" {
			t.Errorf("drops from the plans: %v", got)
		}
		// A reading class with most of the calls and no sample: the
		// plans cover too little of the window.
		blind := append(slices.Clone(loanClasses), digest.Class{ID: "BLIND", StatementType: "select", Fingerprint: "select * from loans where due = ?", Count: 100000})
		res, err = Run(ctx, Options{Classes: loanClasses, Workload: blind, Source: prod.DB(), Database: "lib", Runs: 1, WindowSeconds: 2 * day})
		if err != nil {
			t.Fatal(err)
		}
		if u := res.Usage; u.Enough || u.Coverage > 0.01 {
			t.Fatalf("usage with a blind class: %+v", u)
		}
		if got := drops(res); got["ix_due"] != "" || got["ix_isbn_again"] != ReasonDuplicate {
			t.Errorf("drops with a blind class: %v", got)
		}
	})
}
