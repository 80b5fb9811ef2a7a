package collect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestQueriesSlowLog: a real MariaDB logging every query with its plan
// (long_query_time 0, log_slow_verbosity query_plan); the collector digests
// only the queries run during the interval: single-row inserts, and a
// GROUP BY over a TEXT column that makes a temporary table on disk; the
// MySQL collector lists that TEXT column.
func TestQueriesSlowLog(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"slow_query_log": "ON", "long_query_time": "0", "log_slow_verbosity": "query_plan"}})
	db := srv.DB()
	for _, q := range []string{"CREATE DATABASE shop",
		"CREATE TABLE shop.notes (id INT PRIMARY KEY AUTO_INCREMENT, author INT, body TEXT, KEY (author))",
		"INSERT INTO shop.notes (author, body) SELECT seq % 10, REPEAT('x', seq) FROM shop.seq_1_to_200",
		"SELECT COUNT(*) FROM shop.notes WHERE author = 1"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	waitFor(t, srv.SlowLogPath(), "WHERE author = 1", 1) // logged before the run starts
	c := NewQueries(srv.SlowLogPath(), nil, 0)
	if err := c.(Starter).Start(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := 0; i < 30; i++ {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("INSERT INTO shop.notes (author, body) VALUES (%d, 'note %d')", i%5, i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 4; i++ {
		rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT body, COUNT(*) FROM shop.notes WHERE author > %d GROUP BY body", i))
		if err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	waitFor(t, srv.SlowLogPath(), "GROUP BY body", 4)
	var s Snapshot
	if err := c.Collect(ctx, &s); err != nil {
		t.Fatal(err)
	}
	q, err := LayerOf[Queries](&s, "queries")
	if err != nil || q == nil {
		t.Fatalf("%v %v", q, err)
	}
	if q.Window != "interval" || q.Source != "slowlog" || !q.PlanKnown {
		t.Errorf("window %s source %s plan known %v", q.Window, q.Source, q.PlanKnown)
	}
	byFP := map[string]QueryClass{}
	for _, cl := range q.Classes {
		byFP[cl.Fingerprint] = cl
		if strings.Contains(cl.Fingerprint, "count(*) from shop.notes where author =") {
			t.Errorf("a query from before the interval: %+v", cl)
		}
	}
	ins := byFP["insert into shop.notes (author, body) values(?+)"]
	if ins.Count != 30 || ins.RowsAffected != 30 || !strings.HasPrefix(ins.Sample, "INSERT INTO shop.notes") {
		t.Errorf("inserts %+v (classes %v)", ins, keys(byFP))
	}
	grp := byFP["select body, count(*) from shop.notes where author > ? group by body"]
	if grp.Count != 4 || grp.TmpDiskTables != 4 {
		t.Errorf("group by over TEXT: %+v", grp)
	}

	var ms Snapshot
	if err := NewMySQL(db, 100*time.Millisecond).Collect(ctx, &ms); err != nil {
		t.Fatal(err)
	}
	if len(ms.MySQL.BlobColumns) != 1 || ms.MySQL.BlobColumns[0] != (BlobColumn{"shop", "notes", "body", "text"}) {
		t.Errorf("blob columns %+v", ms.MySQL.BlobColumns)
	}
}

func keys(m map[string]QueryClass) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// waitFor waits until the file holds text n times.
func waitFor(t *testing.T, path, text string, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(path); strings.Count(string(b), text) >= n {
			return
		}
	}
	t.Fatalf("%s does not hold %q %d times", path, text, n)
}

// TestQueriesTail: a slow log that did not grow is read from its tail and
// said so; a missing one is an error.
func TestQueriesTail(t *testing.T) {
	log := filepath.Join(t.TempDir(), "slow.log")
	body := "# Time: 2026-11-22T10:00:00.000000Z\n# User@Host: app[app] @ localhost []\n# Query_time: 0.5  Lock_time: 0.0 Rows_sent: 1  Rows_examined: 1000\nSET timestamp=1795000000;\nSELECT * FROM t WHERE a = 1;\n"
	if err := os.WriteFile(log, []byte(strings.Repeat(body, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Run(context.Background(), []Collector{NewQueries(log, nil, 0)})
	q, _ := LayerOf[Queries](s, "queries")
	if q == nil || q.Window != "tail" || q.Events != 3 || len(q.Notes) == 0 || q.PlanKnown || q.Classes[0].TmpDiskTables != -1 {
		t.Errorf("%+v %+v", q, s.Errors)
	}
	s = Run(context.Background(), []Collector{NewQueries(log+".none", nil, 0)})
	if len(s.Errors) != 1 || s.Has("queries") {
		t.Errorf("a missing log: %+v", s.Errors)
	}
}
