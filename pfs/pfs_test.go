package pfs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestDiffOnRealServer runs known statements between two snapshots of a
// throwaway MariaDB and checks the digest reports exactly them.
func TestDiffOnRealServer(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"performance_schema": "ON"}})
	ctx := context.Background()
	db := srv.DB()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(20), price INT)",
		"INSERT INTO shop.items VALUES (1,'a',10),(2,'b',20),(3,'c',30)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	before, err := Take(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "USE shop"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 25; i++ {
		var name string
		if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT name FROM items WHERE id = %d", 1+i%3)).Scan(&name); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 7; i++ {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("UPDATE items SET price = price + %d WHERE name LIKE 'z%%'", i)); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	after, err := Take(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Diff(before, after, Options{})
	if err != nil {
		t.Fatal(err)
	}
	byFP := map[string]digest.Class{}
	for _, c := range rep.Classes {
		byFP[c.Fingerprint] = c
	}
	sel, ok := byFP["select name from items where id = ?"]
	if !ok {
		t.Fatalf("no select class in %v", fingerprints(rep))
	}
	if sel.Count != 25 || sel.RowsSentTotal != 25 || sel.Databases["shop"] != 25 {
		t.Errorf("select class: count %d rows sent %d databases %v", sel.Count, sel.RowsSentTotal, sel.Databases)
	}
	// pt-query-digest's number rule takes the sign with the number:
	// "price + 3" fingerprints as "price ? ?" (pt-fingerprint agrees).
	upd, ok := byFP["update items set price = price ? ? where name like ?"]
	if !ok {
		t.Fatalf("no update class in %v", fingerprints(rep))
	}
	if upd.Count != 7 || upd.RowsExaminedTotal != 21 || upd.Plan == nil || upd.Plan.FullScans != 7 {
		t.Errorf("update class: count %d examined %d plan %+v", upd.Count, upd.RowsExaminedTotal, upd.Plan)
	}
	if sel.TimeTotal <= 0 || sel.TimeAvg <= 0 || sel.TimeP95 != nil {
		t.Errorf("select times: total %v avg %v p95 %v (MariaDB has no distribution)", sel.TimeTotal, sel.TimeAvg, sel.TimeP95)
	}
	if _, ok := byFP["create database shop"]; ok {
		t.Error("statements before the first snapshot were counted")
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "median and p95 are not available") {
		t.Errorf("notes %q do not say percentiles are unavailable", rep.Notes)
	}

	// A truncated summary between snapshots: counts restart, and the
	// report says so instead of going negative.
	if _, err := db.ExecContext(ctx, "TRUNCATE TABLE performance_schema.events_statements_summary_by_digest"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "SELECT name FROM shop.items WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	again, err := Take(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := Diff(after, again, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep2.Classes {
		if c.Count <= 0 || c.TimeTotal < 0 {
			t.Errorf("class %q count %d time %v after a reset", c.Fingerprint, c.Count, c.TimeTotal)
		}
	}
	if !strings.Contains(strings.Join(rep2.Notes, "\n"), "reset during the interval") {
		t.Errorf("notes %q do not mention the reset", rep2.Notes)
	}
}

func fingerprints(r *digest.Report) []string {
	var fps []string
	for _, c := range r.Classes {
		fps = append(fps, c.Fingerprint)
	}
	return fps
}

// TestDisabledSaysHowToEnable covers MariaDB's default (performance_schema
// off) and a disabled digest consumer.
func TestDisabledSaysHowToEnable(t *testing.T) {
	ctx := context.Background()
	t.Run("performance_schema off", func(t *testing.T) {
		srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
		_, err := Digest(ctx, srv.DB(), Options{Interval: time.Millisecond})
		if !errors.Is(err, ErrDisabled) || !strings.Contains(err.Error(), "performance_schema=ON") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("digest consumer off", func(t *testing.T) {
		srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"performance_schema": "ON"}})
		if _, err := srv.DB().ExecContext(ctx, "UPDATE performance_schema.setup_consumers SET ENABLED='NO' WHERE NAME='statements_digest'"); err != nil {
			t.Fatal(err)
		}
		_, err := Take(ctx, srv.DB())
		if !errors.Is(err, ErrDisabled) || !strings.Contains(err.Error(), "statements_digest") || !strings.Contains(err.Error(), "UPDATE performance_schema.setup_consumers") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestHistQuantiles checks median and p95 from MySQL 8's histogram
// buckets, as deltas between two readings.
func TestHistQuantiles(t *testing.T) {
	ps := func(sec float64) uint64 { return uint64(sec / picosecond) }
	a := map[int]bucket{0: {0, ps(0.001), 100}, 1: {ps(0.001), ps(0.01), 0}}
	b := map[int]bucket{0: {0, ps(0.001), 190}, 1: {ps(0.001), ps(0.01), 5}, 2: {ps(0.01), ps(0.1), 5}}
	med, p95, ok := histQuantiles(a, b, 0, 1)
	if !ok {
		t.Fatal("no quantiles")
	}
	// 100 new calls: 90 under 1 ms, 5 under 10 ms, 5 under 100 ms.
	if math := med; math != 0.001 {
		t.Errorf("median %v, want 0.001 (upper bound of the first bucket)", med)
	}
	if p95 != 0.01 {
		t.Errorf("p95 %v, want 0.01", p95)
	}
	if _, _, ok := histQuantiles(b, b, 0, 1); ok {
		t.Error("quantiles of an empty delta")
	}
}
