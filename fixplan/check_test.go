package fixplan

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/refstack/refapp/refapptest"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// slowServer is a throwaway MariaDB logging every statement.
func slowServer(t *testing.T, db string) *sandbox.MariaDB {
	t.Helper()
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"slow_query_log": "ON", "long_query_time": "0"}})
	if _, err := m.DB().Exec("CREATE DATABASE " + db); err != nil {
		t.Fatal(err)
	}
	return m
}

// loopOf reads the slow log written while fn ran and returns the loop of
// fp in endpoint's busiest request.
func loopOf(t *testing.T, m *sandbox.MariaDB, fp, endpoint string, fn func()) *Loop {
	t.Helper()
	size := func() int64 {
		st, err := os.Stat(m.SlowLogPath())
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	start := size()
	fn()
	end := size()
	f, err := os.Open(m.SlowLogPath())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	loop, err := LoopFromSlowLog(context.Background(), io.NewSectionReader(f, start, end-start), fp, endpoint)
	if err != nil || loop == nil {
		t.Fatalf("no loop of %s in %s: %v", fp, endpoint, err)
	}
	return loop
}

// TestCheckRefappIsFriend: the reference app's home page checks each of
// its rows' authors for friendship with one query per row; the one query
// (the user's relations with the page's users) answers every call the
// same, read on the live server in a read-only transaction. A one query
// that misses rows is caught.
func TestCheckRefappIsFriend(t *testing.T) {
	m := slowServer(t, "refapp")
	ctx := context.Background()
	root, err := sql.Open("mysql", m.DSN("refapp"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := refapp.GenerateSmall(ctx, root); err != nil {
		t.Fatal(err)
	}
	app, err := refapp.Start(ctx, refapp.Config{DSN: m.DSN("refapp"), SQLTags: true})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	const me = 7
	checks, _, _ := refapptest.FriendChecks(t, root, me)
	trace := "0000000700000000000000000000abcd"
	loop := loopOf(t, m, fingerprint.Fingerprint(refapptest.QIsFriend), "GET /", func() { refapptest.HomePage(t, app.URL(), me, trace) })
	if loop.Request != "trace:"+trace || len(loop.Statements) != checks {
		t.Fatalf("loop of %s: %d calls, the page makes %d", loop.Request, len(loop.Statements), checks)
	}
	p, err := Build(loop.Statements)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Query(), fmt.Sprintf("SELECT one, another FROM relations WHERE (one = %d AND another IN (", me)) {
		t.Errorf("the one query: %s", p.Query())
	}
	var rw Rewrite
	Check(ctx, root, p, &rw)
	if rw.Check != CheckSameRows || rw.Calls != checks || rw.Distinct < 2 || !rw.Count {
		t.Fatalf("check: %+v", rw)
	}
	if rw.Rows == 0 {
		t.Fatalf("none of the page's users is a friend: the check compared only zeros: %+v", rw)
	}
	t.Logf("%d calls (%d distinct users) answered by one query of %d rows", rw.Calls, rw.Distinct, rw.Rows)

	// A one query that loses the rows of one direction differs.
	bad := *p
	bad.query = strings.Replace(p.query, ") OR (", ") OR (1 = 0 AND ", 1)
	var brw Rewrite
	Check(ctx, root, &bad, &brw)
	if brw.Check != CheckDifferentRows || brw.Differs == 0 {
		t.Errorf("a one query missing rows: %+v", brw)
	}
	// No database: said, not guessed.
	var nrw Rewrite
	Check(ctx, nil, p, &nrw)
	if nrw.Check != CheckUnchecked || nrw.Unchecked != UncheckedNoDatabase || nrw.Query == "" {
		t.Errorf("without a database: %+v", nrw)
	}
}

// TestCheckBookshopAverage: the second app (another schema, tags of its
// own) averages each book's reviews with one query per book of an
// author's page; the one grouped query gives every book's average,
// books without reviews included (their average NULL).
func TestCheckBookshopAverage(t *testing.T) {
	m := slowServer(t, "bookshop")
	base := startBookshop(t, m.DSN("bookshop"), "-sql-tags", "sqlcommenter")
	const author = 5
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/authors/%d", base, author), nil)
	req.Header.Set("traceparent", "00-000000000000000500000000000000aa-00f067aa0ba902b7-01")
	var books int
	loop := loopOf(t, m, fingerprint.Fingerprint("SELECT AVG(rating) FROM reviews WHERE book_id = ?"), "GET /authors/{id}", func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		books = strings.Count(string(b), "<li class=book>")
	})
	if books < 2 || len(loop.Statements) != books {
		t.Fatalf("%d calls for %d books", len(loop.Statements), books)
	}
	p, err := Build(loop.Statements)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Query(), "SELECT AVG(rating), book_id FROM reviews WHERE book_id IN (") || !strings.HasSuffix(p.Query(), "GROUP BY book_id") {
		t.Errorf("the one query: %s", p.Query())
	}
	db, err := sql.Open("mysql", m.DSN("bookshop"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rw Rewrite
	Check(context.Background(), db, p, &rw)
	if rw.Check != CheckSameRows || rw.Calls != books || rw.Distinct != books {
		t.Fatalf("check: %+v", rw)
	}
	// A one query over other books differs.
	bad := *p
	bad.query = strings.Replace(p.query, "book_id IN (", "book_id IN (-1, ", 1)
	bad.query = strings.Replace(bad.query, "WHERE", "WHERE book_id < 0 AND", 1)
	var brw Rewrite
	Check(context.Background(), db, &bad, &brw)
	if brw.Check != CheckDifferentRows {
		t.Errorf("a one query over other books: %+v", brw)
	}
}

// startBookshop builds and starts the second app (testdata/bookshop) on
// dsn and returns its base URL.
func startBookshop(t *testing.T, dsn string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bookshop")
	if out, err := exec.Command("go", "build", "-o", bin, "../testdata/bookshop").CombinedOutput(); err != nil {
		t.Fatalf("building the bookshop: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"-listen", addr, "-dsn", dsn}, flags...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Post(base+"/initialize", "text/plain", nil)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("initialize: %s", resp.Status)
			}
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bookshop did not start: %v", err)
		}
	}
}
