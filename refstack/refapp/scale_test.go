package refapp

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// explainType returns EXPLAIN's access type of q's first table and its
// Extra column.
func explainType(t *testing.T, db *sql.DB, q string, args ...any) (string, string) {
	t.Helper()
	rows, err := db.Query("EXPLAIN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		t.Fatalf("EXPLAIN %s: no rows", q)
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	var typ, extra string
	for i, c := range cols {
		switch strings.ToLower(c) {
		case "type":
			typ = vals[i].String
		case "extra":
			extra = vals[i].String
		}
	}
	return typ, extra
}

// TestScale1 loads scale 1, checks that the faults documented in doc.go
// are in the plans, and that the documented fixes remove them.
func TestScale1(t *testing.T) {
	if testing.Short() {
		t.Skip("loads scale 1")
	}
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	ctx := context.Background()
	if _, err := m.DB().ExecContext(ctx, "CREATE DATABASE refapp"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", m.DSN("refapp"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	if err := Generate(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	t.Logf("scale 1 generated in %s", time.Since(start).Round(time.Millisecond))
	for table, want := range map[string]int{"users": 1000, "entries": 10000, "comments": 30000, "footprints": 30000} {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil || n != want {
			t.Errorf("%s: %d rows (%v), want %d", table, n, err, want)
		}
	}
	if _, err := db.Exec("ANALYZE TABLE relations, footprints, comments"); err != nil {
		t.Fatal(err)
	}

	srv, err := Start(ctx, Config{DSN: m.DSN("refapp")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := client(t, nil)
	login(t, c, srv.URL(), 7)
	home := func() time.Duration {
		start := time.Now()
		if st, body, _ := fetch(t, c, http.MethodGet, srv.URL()+"/", nil); st != http.StatusOK {
			t.Fatalf("home: %d %.200s", st, body)
		}
		return time.Since(start)
	}
	home()
	slow := home()

	if typ, extra := explainType(t, db, qFriends, 7, 7); typ != "ALL" || !strings.Contains(extra, "filesort") {
		t.Errorf("friends: type %q extra %q, want a full scan with filesort", typ, extra)
	}
	if typ, _ := explainType(t, db, qFootprints, 7, 10); typ != "ALL" {
		t.Errorf("footprints: type %q, want ALL", typ)
	}
	for _, ddl := range []string{
		"ALTER TABLE relations ADD INDEX one_created (one, created_at), ADD INDEX another_created (another, created_at)",
		"ALTER TABLE footprints ADD INDEX user_created (user_id, created_at)",
	} {
		if _, err := db.Exec(ddl); err != nil {
			t.Fatal(err)
		}
	}
	if typ, extra := explainType(t, db, qFriends, 7, 7); typ != "index_merge" {
		t.Errorf("friends after the fix: type %q extra %q, want index_merge", typ, extra)
	}
	if typ, _ := explainType(t, db, qFootprints, 7, 10); typ != "ref" && typ != "range" {
		t.Errorf("footprints after the fix: type %q, want ref or range", typ)
	}
	checkScenarioUsers(t, db)
	home()
	fast := home()
	t.Logf("home page at scale 1: %s naive, %s with the relations and footprints indexes", slow.Round(time.Millisecond), fast.Round(time.Millisecond))
	if fast >= slow {
		t.Errorf("the indexes did not speed up the home page: %s → %s", slow, fast)
	}
}
