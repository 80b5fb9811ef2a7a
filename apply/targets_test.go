package apply

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// vars makes MySQL variable changes from "name=value" or
// "name=from>value".
func vars(specs ...string) []changeset.Change {
	var out []changeset.Change
	for _, s := range specs {
		name, v, _ := strings.Cut(s, "=")
		from, to, ok := strings.Cut(v, ">")
		if !ok {
			from, to = "", v
		}
		out = append(out, changeset.Change{Kind: changeset.MySQLVariable, Target: "mysqld", Name: name, From: from, To: to, Finding: "test", Title: "a test change"})
	}
	return out
}

// mysqlTarget points a MySQL target at the sandbox's conf.d.
func mysqlTarget(t *testing.T, srv *sandbox.MariaDB, db DB, cs []changeset.Change) *MySQL {
	t.Helper()
	if db == nil {
		db = srv.DB()
	}
	m, err := NewMySQL(db, filepath.Join(srv.ConfDir(), "99-stacktune.cnf"), cs)
	if err != nil {
		t.Fatal(err)
	}
	m.Check, m.Restart = srv.CheckConfig, srv.Restart
	return m
}

func variable(t *testing.T, srv *sandbox.MariaDB, name string) string {
	t.Helper()
	var k, v string
	if err := srv.DB().QueryRow("SHOW GLOBAL VARIABLES LIKE '"+name+"'").Scan(&k, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// allVariables is SHOW GLOBAL VARIABLES, whole.
func allVariables(t *testing.T, srv *sandbox.MariaDB) map[string]string {
	t.Helper()
	rows, err := srv.DB().Query("SHOW GLOBAL VARIABLES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// sameVariables lists the variables that differ.
func diffVariables(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, fmt.Sprintf("%s: %q -> %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s: (none) -> %q", k, v))
		}
	}
	return out
}

// TestMySQLTarget applies changes to a real MariaDB that reads its files
// from conf.d: dynamic variables by SET GLOBAL, a read-only one by
// restart, read back; a value the server would clamp is refused before
// anything changes.
func TestMySQLTarget(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	ctx := context.Background()
	opt := Options{StateDir: t.TempDir()}
	pid := srv.PID()

	t.Run("dynamic only: no restart", func(t *testing.T) {
		m := mysqlTarget(t, srv, nil, vars("max_connections=77", "tmp_table_size=32M", "max_heap_table_size=32M"))
		res, err := Run(ctx, []Target{m}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := variable(t, srv, "max_connections"); got != "77" {
			t.Errorf("max_connections = %s", got)
		}
		if got := variable(t, srv, "tmp_table_size"); got != "33554432" {
			t.Errorf("tmp_table_size = %s", got)
		}
		if srv.PID() != pid {
			t.Errorf("the server was restarted for dynamic variables")
		}
		if len(res.Plan) != 3 || res.Plan[0].How != HowSet || !strings.HasPrefix(res.Plan[0].Command, "SET GLOBAL ") {
			t.Errorf("plan %+v", res.Plan)
		}
	})
	t.Run("read-only variable: restart, then rollback restores both", func(t *testing.T) {
		before := variable(t, srv, "table_open_cache_instances")
		want := "3"
		if before == want {
			want = "5"
		}
		m := mysqlTarget(t, srv, nil, vars("max_connections=88", "table_open_cache_instances="+want))
		res, err := Run(ctx, []Target{m}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := variable(t, srv, "table_open_cache_instances"); got != want {
			t.Errorf("table_open_cache_instances = %s, want %s", got, want)
		}
		if srv.PID() == pid {
			t.Errorf("no restart for a read-only variable")
		}
		if res.Plan[1].How != HowRestart {
			t.Errorf("plan %+v", res.Plan)
		}
		// The drop-in holds the first transaction's settings too.
		b, _ := os.ReadFile(m.Path)
		if !strings.Contains(string(b), "tmp_table_size = 32M") || !strings.Contains(string(b), "max_connections = 88") {
			t.Errorf("drop-in:\n%s", b)
		}
		if _, err := Rollback(ctx, []Target{m}, opt); err != nil {
			t.Fatal(err)
		}
		if got := variable(t, srv, "table_open_cache_instances"); got != before {
			t.Errorf("after rollback table_open_cache_instances = %s, want %s", got, before)
		}
		if got := variable(t, srv, "max_connections"); got != "77" {
			t.Errorf("after rollback max_connections = %s, want the previous transaction's 77", got)
		}
		b, _ = os.ReadFile(m.Path)
		if !strings.Contains(string(b), "max_connections = 77") {
			t.Errorf("the drop-in is not the previous one:\n%s", b)
		}
	})
	t.Run("values the server would clamp or refuse: refused, nothing changes", func(t *testing.T) {
		for _, spec := range []string{"max_connections=1000000", "max_connections=5", "max_connections=lots", "slow_query_log=maybe", "no_such_variable=1"} {
			before := allVariables(t, srv)
			file, _ := os.ReadFile(filepath.Join(srv.ConfDir(), "99-stacktune.cnf"))
			// A value outside the variable's type is refused by its
			// grammar before the target is built; one of the right type
			// that this server would clamp, or a variable it lacks, by
			// the plan.
			m, err := NewMySQL(srv.DB(), filepath.Join(srv.ConfDir(), "99-stacktune.cnf"), vars(spec))
			if err == nil {
				m.Check, m.Restart = srv.CheckConfig, srv.Restart
				_, err = Run(ctx, []Target{m}, opt)
			}
			if !errors.Is(err, ErrRefused) && !errors.Is(err, changeset.ErrInvalid) {
				t.Errorf("%s: err = %v, want refused", spec, err)
			}
			if d := diffVariables(before, allVariables(t, srv)); len(d) > 0 {
				t.Errorf("%s changed variables: %v", spec, d)
			}
			if now, _ := os.ReadFile(filepath.Join(srv.ConfDir(), "99-stacktune.cnf")); string(now) != string(file) {
				t.Errorf("%s changed the drop-in", spec)
			}
		}
	})
	t.Run("a value the server rounds: planned, said, verified", func(t *testing.T) {
		m := mysqlTarget(t, srv, nil, vars("tmp_table_size=20000"))
		res, err := Run(ctx, []Target{m}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if s := res.Plan[0]; s.Expect != "16384" || !strings.Contains(s.Note, "rounds it down") {
			t.Errorf("step %+v", s)
		}
		if got := variable(t, srv, "tmp_table_size"); got != "16384" {
			t.Errorf("tmp_table_size = %s", got)
		}
	})
}

// failingDB fails the statements that start with one of its prefixes.
type failingDB struct {
	DB
	mu    sync.Mutex
	fail  []string
	execs []string
}

func (f *failingDB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	f.mu.Lock()
	f.execs = append(f.execs, q)
	fail := f.fail
	f.mu.Unlock()
	for _, p := range fail {
		if strings.HasPrefix(q, p) {
			return nil, errors.New("injected failure of " + q)
		}
	}
	return f.DB.ExecContext(ctx, q, args...)
}

// TestIssueFailures reproduces the four ways apply broke its promises,
// on real servers, and shows each now holds.
func TestIssueFailures(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	ctx := context.Background()
	cnf := filepath.Join(srv.ConfDir(), "99-stacktune.cnf")

	t.Run("1: dynamic and restart-only changes with no way to restart: refused whole", func(t *testing.T) {
		opt := Options{StateDir: t.TempDir()}
		before := allVariables(t, srv)
		m := mysqlTarget(t, srv, nil, vars("max_connections=200", "tmp_table_size=64M", "table_open_cache=4000", "thread_cache_size=32",
			"slow_query_log=ON", "innodb_log_file_size=32M", "innodb_log_buffer_size=32M"))
		m.Restart = nil // --mysql-restart none
		res, err := Run(ctx, []Target{m}, opt)
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "innodb_log_buffer_size: SET GLOBAL cannot change it") {
			t.Fatalf("err = %v", err)
		}
		if d := diffVariables(before, allVariables(t, srv)); len(d) > 0 {
			t.Errorf("variables changed: %v", d)
		}
		if _, err := os.Stat(cnf); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a drop-in was written")
		}
		if hist, _ := History(opt.StateDir); len(hist) != 0 || res.ID != "" {
			t.Errorf("a refused plan left a journal: %+v", hist)
		}
	})
	t.Run("1: a failure half-way through the SET GLOBALs rolls every one back", func(t *testing.T) {
		opt := Options{StateDir: t.TempDir()}
		before := allVariables(t, srv)
		db := &failingDB{DB: srv.DB(), fail: []string{"SET GLOBAL thread_cache_size"}}
		m := mysqlTarget(t, srv, db, vars("max_connections=200", "tmp_table_size=64M", "table_open_cache=4000", "thread_cache_size=32", "slow_query_log=ON"))
		_, err := Run(ctx, []Target{m}, opt)
		if err == nil || !strings.Contains(err.Error(), "rolled back") {
			t.Fatalf("err = %v", err)
		}
		if d := diffVariables(before, allVariables(t, srv)); len(d) > 0 {
			t.Errorf("variables left changed: %v", d)
		}
	})
	t.Run("1: a rollback the server refuses at run time takes the old value from the files", func(t *testing.T) {
		// MariaDB takes innodb_log_file_size = 32M at run time but refuses
		// its old 8M (below innodb_log_buffer_size = 16M): the rollback
		// that stopped there left five variables behind.
		opt := Options{StateDir: t.TempDir()}
		before := allVariables(t, srv)
		m := mysqlTarget(t, srv, nil, vars("max_connections=200", "tmp_table_size=64M", "innodb_log_file_size=32M"))
		// The last read-back fails, so everything is undone.
		_, err := run(ctx, []Target{m}, opt, failAt("journal applied"))
		if err == nil || !strings.Contains(err.Error(), "rolled back") {
			t.Fatalf("err = %v", err)
		}
		if d := diffVariables(before, allVariables(t, srv)); len(d) > 0 {
			t.Errorf("variables left changed: %v", d)
		}
		// With no restart, the rollback goes on past the refusal and says
		// exactly what is left and how to put it back.
		m = mysqlTarget(t, srv, nil, vars("max_connections=200", "tmp_table_size=64M", "innodb_log_file_size=32M"))
		m.RestartHint = "systemctl restart mariadb"
		if _, err := Run(ctx, []Target{m}, opt); err != nil {
			t.Fatal(err)
		}
		m.Restart = nil
		_, err = Rollback(ctx, []Target{m}, opt)
		var rb *RollbackError
		if !errors.As(err, &rb) || len(rb.Leftovers) != 1 || rb.Leftovers[0].Key != "innodb_log_file_size" ||
			!strings.Contains(rb.Leftovers[0].Fix, "systemctl restart mariadb") {
			t.Fatalf("err = %v", err)
		}
		if got := variable(t, srv, "max_connections"); got != before["max_connections"] {
			t.Errorf("the rollback stopped early: max_connections = %s", got)
		}
		// Once it can restart, the next rollback finishes the job.
		m.Restart = srv.Restart
		if _, err := Rollback(ctx, []Target{m}, opt); err != nil {
			t.Fatal(err)
		}
		if d := diffVariables(before, allVariables(t, srv)); len(d) > 0 {
			t.Errorf("variables left changed: %v", d)
		}
		if hist, _ := History(opt.StateDir); hist[0].State != stateRolledBack {
			t.Errorf("journal %+v", hist[0])
		}
	})
	t.Run("2: stale advice is refused", func(t *testing.T) {
		opt := Options{StateDir: t.TempDir()}
		running := variable(t, srv, "max_connections")
		m := mysqlTarget(t, srv, nil, vars("max_connections=12>20"))
		_, err := Run(ctx, []Target{m}, opt)
		want := "max_connections: advised from 12, running " + running + "; re-run the audit, or --force-drift"
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
		if got := variable(t, srv, "max_connections"); got != running {
			t.Errorf("max_connections = %s", got)
		}
		opt.ForceDrift = true
		if _, err := Run(ctx, []Target{mysqlTarget(t, srv, nil, vars("max_connections=12>20"))}, opt); err != nil {
			t.Fatal(err)
		}
		if got := variable(t, srv, "max_connections"); got != "20" {
			t.Errorf("with --force-drift max_connections = %s", got)
		}
		if _, err := Rollback(ctx, []Target{mysqlTarget(t, srv, nil, vars("max_connections=20"))}, opt); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("3: two applies at once: the second is refused, naming the first", func(t *testing.T) {
		opt := Options{StateDir: t.TempDir(), Label: "first"}
		before := allVariables(t, srv)
		entered, release := make(chan struct{}), make(chan struct{})
		first := mysqlTarget(t, srv, nil, vars("max_connections=300", "slow_query_log=ON"))
		var once sync.Once
		blocker := &fake{name: "blocker", want: State{"k": "new"}, running: State{"k": "old"}, onActivate: func() {
			once.Do(func() {
				close(entered)
				<-release
			})
		}}
		done := make(chan error)
		go func() {
			_, err := Run(ctx, []Target{first, blocker}, opt)
			done <- err
		}()
		<-entered
		second := mysqlTarget(t, srv, nil, vars("max_connections=400"))
		_, err := Run(ctx, []Target{second}, Options{StateDir: opt.StateDir, Label: "second"})
		var le *LockedError
		if !errors.As(err, &le) || le.Holder == nil || le.Holder.PID != os.Getpid() || le.Holder.Label != "first" {
			t.Errorf("second apply: %v", err)
		}
		if _, err := Rollback(ctx, []Target{second}, Options{StateDir: opt.StateDir}); !errors.Is(err, ErrLocked) {
			t.Errorf("rollback while applying: %v", err)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := variable(t, srv, "max_connections"); got != "300" {
			t.Errorf("max_connections = %s", got)
		}
		// One rollback takes all of the first back, the slow log too.
		if _, err := Rollback(ctx, []Target{first, blocker}, opt); err != nil {
			t.Fatal(err)
		}
		if d := diffVariables(before, allVariables(t, srv)); len(d) > 0 {
			t.Errorf("variables left changed: %v", d)
		}
	})
	t.Run("a drop-in edited after the advice was rendered: refused", func(t *testing.T) {
		opt := Options{StateDir: t.TempDir()}
		m := mysqlTarget(t, srv, nil, vars("max_connections=222"))
		orig, _ := os.ReadFile(cnf)
		if err := os.WriteFile(cnf, append(append([]byte{}, orig...), "# someone's note\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(cnf, orig, 0o644)
		if _, err := Run(ctx, []Target{m}, opt); err == nil || !strings.Contains(err.Error(), "changed since the change was computed") {
			t.Errorf("err = %v", err)
		}
		if got := variable(t, srv, "max_connections"); got == "222" {
			t.Errorf("applied anyway")
		}
	})
}

// failAt is a fault failing at one point.
func failAt(point string) fault {
	return func(p string) error {
		if p == point {
			return errors.New("injected at " + p)
		}
		return nil
	}
}

func TestIndexesTarget(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	db := srv.DB()
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE app", "CREATE TABLE app.relations (id INT PRIMARY KEY, one INT, another INT, created_at DATETIME, body TEXT)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := ParseIndexDDL("ALTER TABLE `app`.`relations` ADD INDEX `idx_one_created_at` (`one`, `created_at`), ADD INDEX `idx_body` (`body`(20)), ALGORITHM=INPLACE, LOCK=NONE;", "")
	if err != nil || len(cs) != 2 {
		t.Fatalf("%v %+v", err, cs)
	}
	d, err := NewIndexes(db, "", cs)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{StateDir: t.TempDir()}
	if _, err := Run(ctx, []Target{d}, opt); err != nil {
		t.Fatal(err)
	}
	st, _ := d.Snapshot(ctx)
	if st["app.relations.idx_one_created_at"] != "(`one`, `created_at`)" || st["app.relations.idx_body"] != "(`body`(20))" {
		t.Fatalf("after apply: %v", st)
	}
	// Again: already in force, nothing to do.
	res, err := Run(ctx, []Target{d}, opt)
	if err != nil || res.Plan[0].How != HowNone {
		t.Fatalf("second run: %+v %v", res, err)
	}
	// Another index of that name: drift, refused.
	other, _ := ParseIndexDDL("CREATE INDEX idx_one_created_at ON app.relations (another)", "")
	od, _ := NewIndexes(db, "", other)
	if _, err := Run(ctx, []Target{od}, opt); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "exists on (`one`, `created_at`)") {
		t.Errorf("other columns: %v", err)
	}
	missing, _ := ParseIndexDDL("CREATE INDEX i ON app.nope (a)", "")
	md, _ := NewIndexes(db, "", missing)
	if _, err := Run(ctx, []Target{md}, opt); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "no table app.nope") {
		t.Errorf("missing table: %v", err)
	}
	for range 2 {
		if _, err := Rollback(ctx, []Target{d}, opt); err != nil {
			t.Fatal(err)
		}
	}
	st, _ = d.Snapshot(ctx)
	if st["app.relations.idx_one_created_at"] != "absent" || st["app.relations.idx_body"] != "absent" {
		t.Fatalf("after rollback: %v", st)
	}
}

func TestReadIndexChanges(t *testing.T) {
	cases := []struct{ name, in, want, err string }{
		{name: "indexes' SQL with its comments", in: "-- relations (one): rows 20069 -> 38\n# also a comment\nALTER TABLE `s`.`t` ADD INDEX `a` (`x`, `y` DESC), ALGORITHM=INPLACE, LOCK=NONE;", want: "s.t a (`x`, `y` DESC)"},
		{name: "default schema", in: "CREATE INDEX i ON t (c(10))", want: "db.t i (`c`(10))"},
		{name: "indexes' JSON", in: `{"proposals": [], "changes": {"format": 1, "changes": [{"kind": "ddl", "target": "s.t", "name": "a", "from": "absent", "to": "(` + "`x`" + `)"}]}}`, want: "s.t a (`x`)"},
		{name: "a change set", in: `{"format": 1, "changes": [{"kind": "ddl", "target": "s.t", "name": "a", "to": "(x)"}]}`, want: "s.t a (x)"},
		{name: "JSON of something else", in: `{"classes": []}`, err: "without a change set"},
		{name: "a change set with other changes", in: `{"format": 1, "changes": [{"kind": "sysctl", "name": "vm.swappiness", "to": "1"}]}`, err: "no index"},
		{name: "the text report", in: "Proven on a throwaway MariaDB with a copy...\nALTER TABLE t ADD INDEX i (a);", err: "--format sql"},
		{name: "a drop is refused", in: "ALTER TABLE t DROP INDEX i", err: "only ADD INDEX"},
		{name: "anything else is refused", in: "DELETE FROM t", err: "only ALTER TABLE"},
		{name: "unnamed index", in: "ALTER TABLE t ADD INDEX (c)", err: "without a name"},
		{name: "unique is refused", in: "CREATE UNIQUE INDEX u ON t (c)", err: "only plain"},
		{name: "junk", in: "ALTER TABLE ((", err: "DDL:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := ReadIndexChanges([]byte(tc.in), "db")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(cs) != 1 {
				t.Fatalf("%v %+v", err, cs)
			}
			if got := cs[0].Target + " " + cs[0].Name + " " + cs[0].To; got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// nginxChanges makes nginx changes from "context|name|args" strings.
func nginxChanges(specs ...string) []changeset.Change {
	var out []changeset.Change
	for _, s := range specs {
		p := strings.SplitN(s, "|", 4)
		c := changeset.Change{Kind: changeset.Nginx, Target: p[0], Name: p[1], To: p[2]}
		if len(p) == 4 {
			c.From = p[3]
		}
		out = append(out, c)
	}
	return out
}

// TestNginxTarget edits a real nginx's configuration: good changes are
// validated, reloaded and probed; ones nginx -t refuses leave the old
// files; a directive that moved since the advice is drift.
func TestNginxTarget(t *testing.T) {
	n := sandboxtest.NewNginx(t, sandbox.NginxOptions{HTTPConfig: `    upstream app {
        server 127.0.0.1:9;
    }
    server {
        listen 127.0.0.1:{{PORT}};
        root {{DIR}}/html;
        location /app/ {
            proxy_pass http://app;
        }
    }
`})
	ctx := context.Background()
	opt := Options{StateDir: t.TempDir()}
	probe := func(ctx context.Context) error {
		resp, err := http.Get(n.URL())
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	target := func(cs []changeset.Change) (*Nginx, error) {
		tg, err := NewNginx(n.ConfigPath(), cs)
		if err != nil {
			return nil, err
		}
		tg.Test, tg.Reload, tg.Probe = n.Test, n.Reload, probe
		return tg, nil
	}
	old, _ := os.ReadFile(n.ConfigPath())
	tg, err := target(nginxChanges("nginx upstream app {}|keepalive|32", "nginx http {}|server_tokens|off|on"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, []Target{tg}, opt); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(n.ConfigPath())
	if !strings.Contains(string(b), "keepalive 32;") || !strings.Contains(string(b), "server_tokens off;") {
		t.Fatalf("config:\n%s", b)
	}
	resp, err := http.Get(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := resp.Header.Get("Server"); s != "nginx" {
		t.Errorf("Server header %q: the reload did not take server_tokens off", s)
	}
	applied := b

	bad, err := target(nginxChanges("nginx http {}|keepalive_timeout|forever"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, []Target{bad}, opt); err == nil || !strings.Contains(err.Error(), "validating nginx") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(n.ConfigPath()); string(b) != string(applied) {
		t.Errorf("a refused change changed the file")
	}
	// server_tokens is off now: advice made when it was "on" to set it to
	// "build" has drifted.
	drift, err := target(nginxChanges("nginx http {}|server_tokens|build|on"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, []Target{drift}, opt); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "advised from on, running off") {
		t.Errorf("drift: %v", err)
	}
	if _, err := Rollback(ctx, []Target{tg}, opt); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(n.ConfigPath()); string(b) != string(old) {
		t.Errorf("rollback did not restore nginx.conf")
	}
}

// TestMySQLDropInOverridden: a change that a setting read after the
// drop-in would undo at the next start is refused before anything
// changes, naming that setting; the others of the transaction with it.
// Where the drop-in went and why is in the result and the dry run.
func TestMySQLDropInOverridden(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	ctx := context.Background()
	opt := Options{StateDir: t.TempDir()}
	later := filepath.Join(srv.ConfDir(), "zz-local.cnf")
	if err := os.WriteFile(later, []byte("[mysqld]\nmax_connections = 60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	override := func(k string) string {
		if k == "max_connections" {
			return later + ":2 sets max_connections = 60, read after the drop-in"
		}
		return ""
	}
	why := "my.cnf drop-in: " + filepath.Join(srv.ConfDir(), "99-stacktune.cnf") + " (the test says why)"
	t.Run("overridden: refused", func(t *testing.T) {
		before := allVariables(t, srv)
		m := mysqlTarget(t, srv, nil, vars("max_connections=90", "wait_timeout=700"))
		m.Override, m.Why = override, why
		_, err := Run(ctx, []Target{m}, opt)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "max_connections: "+later+":2 sets max_connections = 60, read after the drop-in: the server's next start takes that value") {
			t.Fatalf("err = %v", err)
		}
		if d := diffVariables(before, allVariables(t, srv)); len(d) > 0 {
			t.Errorf("changed variables: %v", d)
		}
		if _, err := os.Stat(m.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the drop-in was written: %v", err)
		}
	})
	t.Run("not overridden: applied, and said where", func(t *testing.T) {
		m := mysqlTarget(t, srv, nil, vars("wait_timeout=700"))
		m.Override, m.Why = override, why
		plan, err := DryRun(ctx, []Target{m}, opt)
		if err != nil || len(plan.Files) != 1 || plan.Files[0].Where != why {
			t.Fatalf("dry run: %v, %+v", err, plan)
		}
		res, err := Run(ctx, []Target{m}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Targets) != 1 || res.Targets[0].Where != why {
			t.Errorf("targets %+v", res.Targets)
		}
	})
}
