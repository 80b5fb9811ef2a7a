package apply

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/sandbox"
)

// mysqlTarget points a MySQL target at the sandbox's conf.d.
func mysqlTarget(t *testing.T, srv *sandbox.MariaDB, cnf string) *MySQL {
	t.Helper()
	m, err := NewMySQL(srv.DB(), filepath.Join(srv.ConfDir(), "99-stacktune.cnf"), []byte(cnf))
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

// TestMySQLTarget applies my.cnf drop-ins to a real MariaDB that reads
// its files from conf.d: dynamic variables by SET GLOBAL, a read-only one
// by restart, read back; a value the server refuses and a value it
// silently ignores both roll back.
func TestMySQLTarget(t *testing.T) {
	srv := sandbox.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	ctx := context.Background()
	opt := Options{StateDir: t.TempDir()}
	pid := srv.PID()

	t.Run("dynamic only: no restart", func(t *testing.T) {
		m := mysqlTarget(t, srv, "[mysqld]\nmax_connections = 77\ntmp_table_size = 32M\nmax_heap_table_size = 32M\n")
		if _, err := Run(ctx, []Target{m}, opt); err != nil {
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
	})
	t.Run("read-only variable: restart, then rollback restores both", func(t *testing.T) {
		before := variable(t, srv, "table_open_cache_instances")
		want := "3"
		if before == want {
			want = "5"
		}
		m := mysqlTarget(t, srv, "[mysqld]\nmax_connections = 88\ntable_open_cache_instances = "+want+"\n")
		if _, err := Run(ctx, []Target{m}, opt); err != nil {
			t.Fatal(err)
		}
		if got := variable(t, srv, "table_open_cache_instances"); got != want {
			t.Errorf("table_open_cache_instances = %s, want %s", got, want)
		}
		if srv.PID() == pid {
			t.Errorf("no restart for a read-only variable")
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
		b, _ := os.ReadFile(m.Path)
		if !strings.Contains(string(b), "max_connections = 77") {
			t.Errorf("the drop-in is not the previous one:\n%s", b)
		}
	})
	t.Run("a value the option check refuses: nothing changes", func(t *testing.T) {
		m := mysqlTarget(t, srv, "[mysqld]\nmax_connections = lots\n")
		_, err := Run(ctx, []Target{m}, opt)
		if err == nil || !strings.Contains(err.Error(), "validating mysql") {
			t.Fatalf("err = %v", err)
		}
		if got := variable(t, srv, "max_connections"); got != "77" {
			t.Errorf("max_connections = %s", got)
		}
		if err := srv.CheckConfig(ctx); err != nil {
			t.Errorf("the config left behind does not pass the check: %v", err)
		}
	})
	t.Run("the server silently keeps another value: read-back fails, rolled back", func(t *testing.T) {
		// max_connections is capped at 100000: the server clamps 1e6.
		m := mysqlTarget(t, srv, "[mysqld]\nmax_connections = 1000000\n")
		_, err := Run(ctx, []Target{m}, opt)
		if err == nil || !strings.Contains(err.Error(), "verifying mysql") || !strings.Contains(err.Error(), "rolled back") {
			t.Fatalf("err = %v", err)
		}
		if got := variable(t, srv, "max_connections"); got != "77" {
			t.Errorf("max_connections = %s after the rollback", got)
		}
	})
}

func TestDDLTarget(t *testing.T) {
	srv := sandbox.NewMariaDB(t, sandbox.MariaDBOptions{})
	db := srv.DB()
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE app", "CREATE TABLE app.relations (id INT PRIMARY KEY, one INT, another INT, created_at DATETIME)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ixs, err := ParseIndexDDL("ALTER TABLE `app`.`relations` ADD INDEX `idx_one_created_at` (`one`, `created_at`), ADD INDEX `idx_another_created_at` (`another`, `created_at`), ALGORITHM=INPLACE, LOCK=NONE;", "")
	if err != nil || len(ixs) != 2 {
		t.Fatalf("%v %+v", err, ixs)
	}
	d := &DDL{DB: db, Indexes: ixs}
	opt := Options{StateDir: t.TempDir()}
	if _, err := Run(ctx, []Target{d}, opt); err != nil {
		t.Fatal(err)
	}
	st, _ := d.Snapshot(ctx)
	if st["app.relations.idx_one_created_at"] != "present" || st["app.relations.idx_another_created_at"] != "present" {
		t.Fatalf("after apply: %v", st)
	}
	if _, err := Rollback(ctx, []Target{d}, opt); err != nil {
		t.Fatal(err)
	}
	st, _ = d.Snapshot(ctx)
	if st["app.relations.idx_one_created_at"] != "absent" {
		t.Fatalf("after rollback: %v", st)
	}
}

func TestParseIndexDDL(t *testing.T) {
	cases := []struct{ name, sql, want, err string }{
		{name: "indexes' output", sql: "ALTER TABLE `s`.`t` ADD INDEX `a` (`x`, `y` DESC), ALGORITHM=INPLACE, LOCK=NONE;", want: "s.t.a `a` (`x`, `y` DESC)"},
		{name: "default schema", sql: "CREATE INDEX i ON t (c(10))", want: "db.t.i `i` (`c`(10))"},
		{name: "a drop is refused", sql: "ALTER TABLE t DROP INDEX i", err: "only ADD INDEX"},
		{name: "anything else is refused", sql: "DELETE FROM t", err: "only ALTER TABLE"},
		{name: "unnamed index", sql: "ALTER TABLE t ADD INDEX (c)", err: "without a name"},
		{name: "unique is refused", sql: "CREATE UNIQUE INDEX u ON t (c)", err: "only plain"},
		{name: "junk", sql: "ALTER TABLE ((", err: "DDL:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ixs, err := ParseIndexDDL(tc.sql, "db")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(ixs) != 1 {
				t.Fatalf("%v %+v", err, ixs)
			}
			if got := ixs[0].key() + " " + ixs[0].Spec; got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNginxTarget edits a real nginx's configuration: a good snippet is
// validated, reloaded and probed; one nginx -t refuses leaves the old
// files.
func TestNginxTarget(t *testing.T) {
	n := sandbox.NewNginx(t, sandbox.NginxOptions{HTTPConfig: `    upstream app {
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
	target := func(snippet string) (*Nginx, error) {
		tg, err := NewNginx(n.ConfigPath(), []byte(snippet))
		if err != nil {
			return nil, err
		}
		tg.Test, tg.Reload, tg.Probe = n.Test, n.Reload, probe
		return tg, nil
	}
	old, _ := os.ReadFile(n.ConfigPath())
	tg, err := target("# --- in nginx upstream app {} ---\nkeepalive 32;\n\n# --- in nginx http {} ---\nserver_tokens off;\n")
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

	bad, err := target("# --- in nginx http {} ---\nkeepalive_timeout forever;\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, []Target{bad}, opt); err == nil || !strings.Contains(err.Error(), "validating nginx") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(n.ConfigPath()); string(b) != string(applied) {
		t.Errorf("a refused snippet changed the file")
	}
	if _, err := Rollback(ctx, []Target{tg}, opt); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(n.ConfigPath()); string(b) != string(old) {
		t.Errorf("rollback did not restore nginx.conf")
	}
}
