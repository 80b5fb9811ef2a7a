package apply

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// dropWorld is a library's loans table with the four kinds of index a
// drop must tell apart: one no query uses, a duplicate, a redundant
// prefix, and one that backs a unique constraint; and a foreign key.
func dropWorld(t *testing.T) *sandbox.MariaDB {
	t.Helper()
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	for _, q := range []string{"CREATE DATABASE lib",
		"CREATE TABLE lib.members (member_no INT PRIMARY KEY, name VARCHAR(40))",
		`CREATE TABLE lib.loans (loan_id INT PRIMARY KEY, member_no INT, isbn CHAR(13), due DATE, barcode CHAR(12),
			KEY ix_due (due), KEY ix_isbn (isbn), KEY ix_isbn_again (isbn), KEY ix_member (member_no), KEY ix_member_due (member_no, due),
			UNIQUE KEY uq_barcode (barcode), CONSTRAINT fk_member FOREIGN KEY (member_no) REFERENCES lib.members (member_no))`,
		"INSERT INTO lib.members VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO lib.loans VALUES (1, 1, '9780000000001', '2026-01-01', 'b1'), (2, 2, '9780000000002', '2026-02-01', 'b2')"} {
		if _, err := srv.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return srv
}

// indexStates is every index of lib.loans as the server lists it:
// columns and whether it is ignored.
func indexStates(t *testing.T, srv *sandbox.MariaDB) map[string]string {
	t.Helper()
	rows, err := srv.DB().Query("SELECT INDEX_NAME, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX), MAX(IGNORED) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'lib' AND TABLE_NAME = 'loans' GROUP BY INDEX_NAME")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, cols, ign string
		if err := rows.Scan(&name, &cols, &ign); err != nil {
			t.Fatal(err)
		}
		out[name] = cols + " ignored=" + ign
	}
	return out
}

func ixChange(name, from, to string) changeset.Change {
	return changeset.Change{Kind: changeset.Index, Target: "lib.loans", Name: name, From: from, To: to}
}

// TestSafeDrop: the three drops of an advice go first to ignored (the
// optimizer stops using them; EXPLAIN shows it), then are dropped, and
// each rollback brings back the state before it; an index that backs a
// unique constraint or a foreign key is never dropped or ignored.
func TestSafeDrop(t *testing.T) {
	srv := dropWorld(t)
	db := srv.DB()
	ctx := context.Background()
	start := indexStates(t, srv)
	ignore := []changeset.Change{ixChange("ix_due", "(`due`)", "(`due`) ignored"), ixChange("ix_isbn_again", "(`isbn`)", "(`isbn`) ignored"),
		ixChange("ix_member", "(`member_no`)", "(`member_no`) ignored")}
	// ix_member backs fk_member: refused whole, nothing touched.
	d, err := NewIndexes(db, "", ignore)
	if err != nil {
		t.Fatal(err)
	}
	optIgnore := Options{StateDir: t.TempDir()}
	if _, err := Run(ctx, []Target{d}, optIgnore); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "backs the foreign key fk_member") {
		t.Fatalf("ignoring the foreign key's index: %v", err)
	}
	if got := indexStates(t, srv); !equalStates(got, start) {
		t.Fatalf("a refused plan changed the indexes: %v", got)
	}
	// The unique one is refused too.
	uq, _ := NewIndexes(db, "", []changeset.Change{ixChange("uq_barcode", "(`barcode`)", changeset.Absent)})
	if _, err := Run(ctx, []Target{uq}, Options{StateDir: t.TempDir()}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "backs a unique constraint") {
		t.Fatalf("dropping the unique index: %v", err)
	}

	// The redundant prefix that is no foreign key's: ix_member_due's
	// prefix would be ix_member; the test drops the duplicate and the
	// unused one.
	ignore = ignore[:2]
	d, _ = NewIndexes(db, "", ignore)
	if _, err := Run(ctx, []Target{d}, optIgnore); err != nil {
		t.Fatal(err)
	}
	ignored := indexStates(t, srv)
	for _, n := range []string{"ix_due", "ix_isbn_again"} {
		if !strings.HasSuffix(ignored[n], "ignored=YES") {
			t.Errorf("%s after the ignore: %s", n, ignored[n])
		}
	}
	// The optimizer no longer knows it: a hint naming it is an error.
	if _, err := db.Exec("SELECT loan_id FROM lib.loans FORCE INDEX (ix_due) WHERE due = '2026-01-01'"); err == nil {
		t.Errorf("FORCE INDEX (ix_due) works on the ignored index")
	}
	if _, err := db.Exec("SELECT loan_id FROM lib.loans FORCE INDEX (ix_member_due) WHERE member_no = 1"); err != nil {
		t.Errorf("FORCE INDEX of a seen index: %v", err)
	}

	// Then dropped, from ignored.
	drop := []changeset.Change{ixChange("ix_due", "(`due`) ignored", changeset.Absent), ixChange("ix_isbn_again", "(`isbn`) ignored", changeset.Absent)}
	dd, _ := NewIndexes(db, "", drop)
	optDrop := Options{StateDir: t.TempDir()}
	if _, err := Run(ctx, []Target{dd}, optDrop); err != nil {
		t.Fatal(err)
	}
	dropped := indexStates(t, srv)
	if _, ok := dropped["ix_due"]; ok {
		t.Errorf("ix_due after the drop: %v", dropped)
	}
	if _, ok := dropped["ix_isbn_again"]; ok {
		t.Errorf("ix_isbn_again after the drop: %v", dropped)
	}
	// Rolled back: re-created, still ignored; then seen again.
	if _, err := Rollback(ctx, []Target{dd}, optDrop); err != nil {
		t.Fatal(err)
	}
	if got := indexStates(t, srv); !equalStates(got, ignored) {
		t.Errorf("after the drop's rollback: %v, want %v", got, ignored)
	}
	if _, err := Rollback(ctx, []Target{d}, optIgnore); err != nil {
		t.Fatal(err)
	}
	if got := indexStates(t, srv); !equalStates(got, start) {
		t.Errorf("after the ignore's rollback: %v, want %v", got, start)
	}
}

func equalStates(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestSafeDropFaults fails a transaction that ignores one index, drops
// another and adds a third at each of its steps, and then each step of
// the rollback that follows a failure: the indexes end as they were, at
// once or after Recover.
func TestSafeDropFaults(t *testing.T) {
	srv := dropWorld(t)
	ctx := context.Background()
	start := indexStates(t, srv)
	targets := func() []Target {
		d, err := NewIndexes(srv.DB(), "", []changeset.Change{ixChange("ix_due", "(`due`)", "(`due`) ignored"),
			ixChange("ix_isbn_again", "(`isbn`)", changeset.Absent), ixChange("ix_due_isbn", changeset.Absent, "(`due`, `isbn`)")})
		if err != nil {
			t.Fatal(err)
		}
		return []Target{d}
	}
	var points []string
	o := Options{StateDir: t.TempDir()}
	if _, err := run(ctx, targets(), o, recorder(&points)); err != nil {
		t.Fatal(err)
	}
	if got := indexStates(t, srv); got["ix_due"] != "due ignored=YES" || got["ix_isbn_again"] != "" || got["ix_due_isbn"] != "due,isbn ignored=NO" {
		t.Fatalf("the clean run: %v", got)
	}
	if _, err := Rollback(ctx, targets(), o); err != nil {
		t.Fatal(err)
	}
	if got := indexStates(t, srv); !equalStates(got, start) {
		t.Fatalf("after the clean run's rollback: %v", got)
	}
	for _, p := range points {
		t.Run("fail at "+p, func(t *testing.T) {
			o := Options{StateDir: t.TempDir()}
			if _, err := run(ctx, targets(), o, recorder(new([]string), p)); err == nil {
				t.Fatal("no error")
			}
			if got := indexStates(t, srv); !equalStates(got, start) {
				t.Errorf("not where it started: %v", got)
			}
		})
	}
	var undo []string
	if _, err := run(ctx, targets(), Options{StateDir: t.TempDir()}, recorder(&undo, "journal applied")); err == nil {
		t.Fatal("no error")
	}
	undo = slices.DeleteFunc(undo, func(p string) bool { return !strings.HasPrefix(p, "undo ") })
	if len(undo) == 0 {
		t.Fatal("no undo points")
	}
	for _, p := range undo {
		t.Run("fail at journal applied, then at "+p, func(t *testing.T) {
			o := Options{StateDir: t.TempDir()}
			_, err := run(ctx, targets(), o, recorder(new([]string), "journal applied", p))
			var rb *RollbackError
			if !errors.As(err, &rb) || len(rb.Leftovers) == 0 {
				t.Fatalf("err = %v", err)
			}
			for _, l := range rb.Leftovers {
				if l.Fix == "" {
					t.Errorf("leftover without a way to fix it: %+v", l)
				}
			}
			if _, err := Recover(ctx, targets(), o); err != nil {
				t.Fatal(err)
			}
			if got := indexStates(t, srv); !equalStates(got, start) {
				t.Errorf("not where it started after Recover: %v", got)
			}
		})
	}
}
