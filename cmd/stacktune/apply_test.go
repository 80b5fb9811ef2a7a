package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// changeDir writes a change set of changes as stacktune audit --emit
// does and returns the directory.
func changeDir(t *testing.T, changes ...changeset.Change) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := changeset.Write(dir, &changeset.Set{Source: "test", Host: "test", Changes: changes}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// change is a change of kind on target, name to value, from a finding.
func change(kind changeset.Kind, target, name, from, to string) changeset.Change {
	return changeset.Change{Kind: kind, Target: target, Name: name, From: from, To: to, Finding: "F1", Title: "a test finding"}
}

func myVar(name, to string) changeset.Change {
	return change(changeset.MySQLVariable, "mysqld", name, "", to)
}

func globalVar(t *testing.T, srv *sandbox.MariaDB, name string) string {
	t.Helper()
	var k, v string
	if err := srv.DB().QueryRow("SHOW GLOBAL VARIABLES LIKE '"+name+"'").Scan(&k, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// transactions lists --state through apply --list --format json.
func transactions(t *testing.T, state string) []map[string]any {
	t.Helper()
	out, _, err := run(t, "", "apply", "--list", "--format", "json", "--state", state)
	if err != nil {
		t.Fatal(err)
	}
	var h []map[string]any
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return h
}

// TestApplyMySQLCLI applies my.cnf drop-ins and index DDL to a real
// MariaDB reading its option files from conf.d, and rolls them back.
func TestApplyMySQLCLI(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	state := t.TempDir()
	conf := filepath.Join(srv.ConfDir(), "99-stacktune.cnf")
	flags := []string{"--dsn", srv.DSN(""), "--state", state,
		"--mysql-conf", conf,
		"--mysql-check", srv.Binary() + " --defaults-file=" + srv.DefaultsFile() + " --help --verbose",
		"--mysql-restart", "none"}
	applyArgs := func(extra ...string) []string { return append(append([]string{"apply"}, flags...), extra...) }
	initial := globalVar(t, srv, "max_connections")
	if initial == "77" {
		t.Fatal("the sandbox already runs with max_connections 77")
	}

	t.Run("apply a dynamic variable, read back", func(t *testing.T) {
		dir := changeDir(t, myVar("max_connections", "77"))
		out, errOut, err := run(t, "", applyArgs("--label", "first", dir)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		for _, w := range []string{"applied transaction ", "(first)", "wrote " + conf, "max_connections: " + initial + " → 77"} {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, out)
			}
		}
		if got := globalVar(t, srv, "max_connections"); got != "77" {
			t.Errorf("max_connections = %s", got)
		}
		if b, _ := os.ReadFile(conf); !strings.Contains(string(b), "max_connections = 77") {
			t.Errorf("drop-in:\n%s", b)
		}
	})
	t.Run("a refused value changes nothing", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			ch    changeset.Change
			extra []string
			err   string
		}{
			// Variables stacktune does not type pass the change set's
			// grammar as one word: the plan reads the variable's type from
			// the server. (A typed one, max_connections=lots, is refused
			// before: TestApplyRefusesHostileChangeFiles.)
			{"not a number", myVar("max_user_connections", "lots"), nil, "refused, nothing was changed"},
			// Startup options pass the plan (a restart is given) and fail
			// the server's own check of the files, before the restart.
			{"exit status", change(changeset.MySQLOption, "mysqld", "max_user_connections", "", "lots"), []string{"--mysql-restart", "false"}, "validating mysql"},
			// mariadbd --help --verbose exits 0 here, with an [ERROR] line.
			{"[ERROR] line", change(changeset.MySQLOption, "mysqld", "innodb_sort_buffer_size", "", "abc"), []string{"--mysql-restart", "false"}, "validating mysql"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				n := len(transactions(t, state))
				out, _, err := run(t, "", applyArgs(append(tc.extra, changeDir(t, tc.ch))...)...)
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if got := globalVar(t, srv, "max_connections"); got != "77" {
					t.Errorf("max_connections = %s", got)
				}
				if b, _ := os.ReadFile(conf); !strings.Contains(string(b), "max_connections = 77") || strings.Contains(string(b), "abc") || strings.Contains(string(b), "lots") {
					t.Errorf("the drop-in changed:\n%s", b)
				}
				h := transactions(t, state)
				if tc.err == "validating mysql" {
					if !strings.Contains(out, "failed and was rolled back") || len(h) != n+1 || h[0]["state"] != "rolled-back" {
						t.Errorf("output:\n%s\nhistory: %v", out, h)
					}
				} else if len(h) != n {
					t.Errorf("a refused plan left a transaction: %v", h)
				}
			})
		}
	})
	t.Run("dry run writes nothing", func(t *testing.T) {
		n := len(transactions(t, state))
		old, _ := os.ReadFile(conf)
		out, _, err := run(t, "", applyArgs("--dry-run", changeDir(t, myVar("max_connections", "99")))...)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"dry run", "would change " + conf, "-max_connections = 77", "+max_connections = 99", "max_connections: 77 → 99"} {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, out)
			}
		}
		if b, _ := os.ReadFile(conf); string(b) != string(old) {
			t.Errorf("the drop-in changed")
		}
		if got := globalVar(t, srv, "max_connections"); got != "77" {
			t.Errorf("max_connections = %s", got)
		}
		if len(transactions(t, state)) != n {
			t.Errorf("a dry run left a transaction")
		}
	})
	t.Run("DDL from stdin, then rollbacks walk back", func(t *testing.T) {
		for _, q := range []string{"CREATE DATABASE app", "CREATE TABLE app.relations (id INT PRIMARY KEY, one INT, created_at DATETIME)"} {
			if _, err := srv.DB().Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		index := func() int {
			var n int
			srv.DB().QueryRow("SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema='app' AND index_name='idx_one_created_at'").Scan(&n)
			return n
		}
		ddl := "ALTER TABLE `app`.`relations` ADD INDEX `idx_one_created_at` (`one`, `created_at`), ALGORITHM=INPLACE, LOCK=NONE;\n"
		out, errOut, err := run(t, ddl, applyArgs("--ddl", "-")...)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		if !strings.Contains(out, "app.relations.idx_one_created_at: absent → (`one`, `created_at`)") {
			t.Errorf("output:\n%s", out)
		}
		if index() == 0 {
			t.Fatal("the index was not added")
		}
		rb := []string{"rollback", "--dsn", srv.DSN(""), "--state", state, "--mysql-restart", "none"}
		out, errOut, err = run(t, "", rb...)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		if !strings.Contains(out, "rolled back transaction") || index() != 0 {
			t.Errorf("after the first rollback (%d indexes):\n%s", index(), out)
		}
		if got := globalVar(t, srv, "max_connections"); got != "77" {
			t.Errorf("the first rollback undid more than the DDL: max_connections = %s", got)
		}
		out, errOut, err = run(t, "", rb...)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		if !strings.Contains(out, "restored "+conf) || !strings.Contains(out, "max_connections: 77 → "+initial) {
			t.Errorf("output:\n%s", out)
		}
		if got := globalVar(t, srv, "max_connections"); got != initial {
			t.Errorf("max_connections = %s after rollback, want %s", got, initial)
		}
		if _, err := os.Stat(conf); !os.IsNotExist(err) {
			t.Errorf("the drop-in the first apply created is still there: %v", err)
		}
		if _, _, err := run(t, "", rb...); err == nil || !strings.Contains(err.Error(), "no applied change") {
			t.Errorf("third rollback: %v", err)
		}
	})
	t.Run("rollback without --dsn restores the file and says what to restart", func(t *testing.T) {
		state := t.TempDir()
		args := append(append([]string{"apply"}, flags...), "--state", state, changeDir(t, myVar("max_connections", "66")))
		if _, errOut, err := run(t, "", args...); err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		_, errOut, err := run(t, "", "rollback", "--state", state)
		if err == nil || !strings.Contains(err.Error(), "reload or restart mysql") {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(errOut, "mysql not reachable with these flags") {
			t.Errorf("stderr:\n%s", errOut)
		}
		if _, err := os.Stat(conf); !os.IsNotExist(err) {
			t.Errorf("the drop-in is still there")
		}
		if _, err := srv.DB().Exec("SET GLOBAL max_connections = " + initial); err != nil {
			t.Fatal(err)
		}
	})
}

// TestApplyNginxCLI edits a real nginx's configuration with a snippet,
// reloads it with the sandbox's command line, and rolls back.
func TestApplyNginxCLI(t *testing.T) {
	n := sandboxtest.NewNginx(t, sandbox.NginxOptions{HTTPConfig: `    upstream app {
        server 127.0.0.1:9;
    }
    server {
        listen 127.0.0.1:{{PORT}};
        root {{DIR}}/html;
    }
`})
	state := t.TempDir()
	base := n.Binary() + " -p " + n.Prefix() + " -c " + n.ConfigPath() + " -e " + n.ErrorLogPath() + " -g 'daemon off;'"
	flags := []string{"--state", state, "--nginx-conf", n.ConfigPath(),
		"--nginx-test", base + " -t", "--nginx-reload", base + " -s reload", "--nginx-probe", n.URL()}
	server := func(want func(string) bool) string {
		t.Helper()
		var s string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			resp, err := http.Get(n.URL())
			if err != nil {
				continue
			}
			resp.Body.Close()
			if s = resp.Header.Get("Server"); want(s) {
				break
			}
		}
		return s
	}
	old, _ := os.ReadFile(n.ConfigPath())

	dir := changeDir(t, change(changeset.Nginx, "nginx upstream app {}", "keepalive", "", "32"), change(changeset.Nginx, "nginx http {}", "server_tokens", "", "off"))
	out, errOut, err := run(t, "", append(append([]string{"apply"}, flags...), dir)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if !strings.Contains(out, "applied transaction") || !strings.Contains(out, "wrote "+n.ConfigPath()) {
		t.Errorf("output:\n%s", out)
	}
	b, _ := os.ReadFile(n.ConfigPath())
	if !strings.Contains(string(b), "keepalive 32;") || !strings.Contains(string(b), "server_tokens off;") {
		t.Fatalf("config:\n%s", b)
	}
	if s := server(func(s string) bool { return s == "nginx" }); s != "nginx" {
		t.Errorf("Server header %q: the reload did not take server_tokens off", s)
	}
	applied := b

	bad := changeDir(t, change(changeset.Nginx, "nginx http {}", "keepalive_timeout", "", "forever"))
	if _, _, err := run(t, "", append(append([]string{"apply"}, flags...), bad)...); err == nil || !strings.Contains(err.Error(), "validating nginx") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(n.ConfigPath()); string(b) != string(applied) {
		t.Errorf("a refused snippet changed the file")
	}

	out, errOut, err = run(t, "", append([]string{"rollback"}, flags...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if !strings.Contains(out, "restored "+n.ConfigPath()) {
		t.Errorf("output:\n%s", out)
	}
	if b, _ := os.ReadFile(n.ConfigPath()); string(b) != string(old) {
		t.Errorf("rollback did not restore nginx.conf")
	}
	if s := server(func(s string) bool { return strings.HasPrefix(s, "nginx/") }); !strings.HasPrefix(s, "nginx/") {
		t.Errorf("Server header %q after the rollback: not reloaded", s)
	}
}

// TestApplyHostWideCLI: sysctl and systemd drop-ins are skipped without
// --host-wide; with it, a sysctl file is applied to a fake /proc/sys (the
// real host is never touched) and rolled back.
func TestApplyHostWideCLI(t *testing.T) {
	proc := t.TempDir()
	knob := filepath.Join(proc, "net", "core", "somaxconn")
	os.MkdirAll(filepath.Dir(knob), 0o755)
	os.WriteFile(knob, []byte("128\n"), 0o644)
	etc := t.TempDir()
	sysctlConf := filepath.Join(etc, "99-stacktune.conf")
	state := t.TempDir()
	flags := []string{"--state", state, "--proc-sys", proc, "--sysctl-conf", sysctlConf, "--systemd-dir", etc}

	dir := changeDir(t,
		change(changeset.Sysctl, "/etc/sysctl.d", "net.core.somaxconn", "128", "4096"),
		change(changeset.Systemd, "nginx.service", "LimitNOFILE", "1024", "65536"),
		change(changeset.Memcached, "memcached", "-c", "1024", "4096"),
		change(changeset.Redis, "redis", "maxmemory-policy", "noeviction", "allkeys-lru"))
	t.Run("skipped without --host-wide", func(t *testing.T) {
		out, errOut, err := run(t, "", append(append([]string{"apply"}, flags...), dir)...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "skipped (host-wide") || !strings.Contains(out, "sysctl") || !strings.Contains(out, "systemd nginx.service") {
			t.Errorf("output:\n%s", out)
		}
		for _, w := range []string{"not applied: memcached-flag -c", "not applied: redis-config maxmemory-policy", "CONFIG SET"} {
			if !strings.Contains(errOut, w) {
				t.Errorf("stderr lacks %q:\n%s", w, errOut)
			}
		}
		if _, err := os.Stat(sysctlConf); !os.IsNotExist(err) {
			t.Errorf("sysctl.d file written without --host-wide")
		}
		if _, err := os.Stat(filepath.Join(etc, "nginx.service.d")); !os.IsNotExist(err) {
			t.Errorf("systemd drop-in written without --host-wide")
		}
		if b, _ := os.ReadFile(knob); string(b) != "128\n" {
			t.Errorf("somaxconn = %q", b)
		}
		if len(transactions(t, state)) != 0 {
			t.Errorf("a transaction was recorded")
		}
	})
	t.Run("applied to a fake /proc/sys with --host-wide, rolled back", func(t *testing.T) {
		only := changeDir(t, change(changeset.Sysctl, "/etc/sysctl.d", "net.core.somaxconn", "128", "4096"))
		out, errOut, err := run(t, "", append(append([]string{"apply", "--host-wide"}, flags...), only)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		if !strings.Contains(out, "net.core.somaxconn: 128 → 4096") {
			t.Errorf("output:\n%s", out)
		}
		if b, _ := os.ReadFile(knob); strings.TrimSpace(string(b)) != "4096" {
			t.Errorf("somaxconn = %q", b)
		}
		if _, err := os.Stat(sysctlConf); err != nil {
			t.Errorf("sysctl.d file: %v", err)
		}
		if _, errOut, err := run(t, "", append([]string{"rollback", "--host-wide"}, flags...)...); err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		if b, _ := os.ReadFile(knob); strings.TrimSpace(string(b)) != "128" {
			t.Errorf("somaxconn = %q after rollback", b)
		}
		if _, err := os.Stat(sysctlConf); !os.IsNotExist(err) {
			t.Errorf("sysctl.d file still there after rollback")
		}
	})
	t.Run("--format json prints the result", func(t *testing.T) {
		only := changeDir(t, change(changeset.Sysctl, "/etc/sysctl.d", "net.core.somaxconn", "128", "1024"))
		out, errOut, err := run(t, "", append(append([]string{"apply", "--host-wide", "--format", "json", "--label", "json"}, flags...), only)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		var res struct {
			ID      string `json:"id"`
			Label   string `json:"label"`
			Targets []struct {
				Name          string
				Before, After map[string]string
			} `json:"targets"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if res.ID == "" || res.Label != "json" || len(res.Targets) != 1 || res.Targets[0].Before["net.core.somaxconn"] != "128" || res.Targets[0].After["net.core.somaxconn"] != "1024" {
			t.Errorf("result: %+v", res)
		}
		if h := transactions(t, state); len(h) == 0 || h[0]["id"] != res.ID || h[0]["state"] != "applied" {
			t.Errorf("--list: %v", h)
		}
		if _, errOut, err := run(t, "", append([]string{"rollback", "--host-wide"}, flags...)...); err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
	})
	t.Run("dry run shows the files, writes nothing", func(t *testing.T) {
		out, _, err := run(t, "", append(append([]string{"apply", "--dry-run", "--host-wide"}, flags...), dir)...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "would create "+sysctlConf) || !strings.Contains(out, "+net.core.somaxconn = 4096") || !strings.Contains(out, "net.core.somaxconn: 128 → 4096") {
			t.Errorf("output:\n%s", out)
		}
		if _, err := os.Stat(sysctlConf); !os.IsNotExist(err) {
			t.Errorf("dry run wrote %s", sysctlConf)
		}
		if b, _ := os.ReadFile(knob); string(b) != "128\n" {
			t.Errorf("somaxconn = %q", b)
		}
	})
}

// TestApplyCLIErrors: the flags' errors, and a DSN's password is never
// printed.
func TestApplyCLIErrors(t *testing.T) {
	state := t.TempDir()
	mysqlDir := changeDir(t, myVar("max_connections", "77"))
	const dsn = "stacktune:s3cretPW@tcp(127.0.0.1:1)/app?timeout=1s"
	for _, args := range [][]string{
		{"apply", "--state", state, "--dsn", dsn, mysqlDir},
		{"apply", "--state", state, "--dsn", dsn, "--ddl", "-"},
		{"rollback", "--state", state, "--dsn", dsn},
	} {
		out, errOut, err := run(t, "ALTER TABLE t ADD INDEX i (c);", args...)
		if err == nil {
			t.Fatalf("%v: no error", args)
		}
		all := out + errOut + err.Error()
		if strings.Contains(all, "s3cretPW") {
			t.Errorf("%v: the password is printed: %s", args[0], all)
		}
		if !strings.Contains(err.Error(), "***") {
			t.Errorf("%v: the masked DSN is not named: %v", args[0], err)
		}
	}
	cases := []struct {
		args []string
		err  string
	}{
		{[]string{"apply", "--state", state}, "nothing to apply"},
		{[]string{"apply", "--state", state, mysqlDir}, "give --dsn"},
		{[]string{"apply", "--state", state, "--ddl", "x.sql"}, "--ddl needs --dsn"},
		{[]string{"apply", "--state", state, t.TempDir()}, "holds no changes.json"},
		{[]string{"apply", "--state", state, "--format", "yaml", mysqlDir}, "yaml"},
		{[]string{"rollback", "--state", state}, "no applied change"},
	}
	for _, tc := range cases {
		if _, _, err := run(t, "", tc.args...); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.err)
		}
	}
	out, _, err := run(t, "", "apply", "--list", "--state", state)
	if err != nil || !strings.Contains(out, "no transactions") {
		t.Errorf("--list: %v %q", err, out)
	}
}

// TestAuditApplyPHPFPMCLI: the whole way for a PHP-FPM pool on a real
// server: audit reads the pool (--php-fpm-conf), finds the defaults the smartphone game
// backend changed (pm.max_requests 0, request_terminate_timeout 0), --emit
// writes them, apply edits the pool file, checks it with php-fpm -t,
// reloads the master (SIGUSR2, as systemd does) and reads back new
// workers; rollback puts the file and the workers back.
func TestAuditApplyPHPFPMCLI(t *testing.T) {
	p := sandboxtest.NewPHPFPM(t, sandbox.PHPFPMOptions{Pool: map[string]string{"pm": "static", "pm.max_children": "2"}})
	emit := filepath.Join(t.TempDir(), "emit")
	if _, errOut, err := run(t, "", "audit", "--no-linux", "--php-fpm-conf", p.ConfigPath(), "--interval", "100ms", "--emit", emit); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	view, err := os.ReadFile(filepath.Join(emit, "php-fpm", "stacktune.conf"))
	if err != nil || !strings.Contains(string(view), "[www]") || !strings.Contains(string(view), "pm.max_requests = 2000") {
		t.Fatalf("php-fpm view: %v\n%s", err, view)
	}
	old, _ := os.ReadFile(p.PoolPath())
	workers := p.Workers()
	flags := []string{"--state", t.TempDir(), "--php-fpm-conf", p.ConfigPath(),
		"--php-fpm-test", strings.Join(p.TestCommand(), " "), "--php-fpm-reload", "kill -USR2 " + strconv.Itoa(p.PID())}
	out, errOut, err := run(t, "", append(append([]string{"apply"}, flags...), emit)...)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	b, _ := os.ReadFile(p.PoolPath())
	if !strings.Contains(string(b), "pm.max_requests = 2000\n") || !strings.Contains(string(b), "request_terminate_timeout = 30s\n") {
		t.Fatalf("pool after apply:\n%s", b)
	}
	for _, w := range p.Workers() {
		if slices.Contains(workers, w) {
			t.Errorf("worker %d from before the reload still runs", w)
		}
	}
	out, errOut, err = run(t, "", append([]string{"rollback"}, flags...)...)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if b, _ := os.ReadFile(p.PoolPath()); string(b) != string(old) {
		t.Errorf("rollback did not restore the pool:\n%s", b)
	}
}

// TestApplyRefusedSaysSo: an apply that changes nothing never says it
// applied. Here transaction A was cut short after writing its sysctl.d
// file (its journal still "activating", as a kill leaves it); B, whose
// change was computed from that file, first puts A's backups back, then
// finds the file no longer what B was computed from, and refuses.
func TestApplyRefusedSaysSo(t *testing.T) {
	proc := t.TempDir()
	knob := filepath.Join(proc, "net", "core", "somaxconn")
	os.MkdirAll(filepath.Dir(knob), 0o755)
	os.WriteFile(knob, []byte("128\n"), 0o644)
	etc := t.TempDir()
	sysctlConf := filepath.Join(etc, "99-stacktune.conf")
	state := t.TempDir()
	flags := []string{"apply", "--host-wide", "--state", state, "--proc-sys", proc, "--sysctl-conf", sysctlConf}
	a := changeDir(t, change(changeset.Sysctl, "/etc/sysctl.d", "net.core.somaxconn", "128", "4096"))
	if _, errOut, err := run(t, "", append(flags, "--label", "A", a)...); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	h := transactions(t, state)
	if len(h) != 1 {
		t.Fatalf("transactions: %v", h)
	}
	idA, _ := h[0]["id"].(string)
	journal := filepath.Join(state, idA, "journal.json")
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Replace(string(b), `"state": "applied"`, `"state": "activating"`, 1)
	if cut == string(b) {
		t.Fatalf("no applied state in %s:\n%s", journal, b)
	}
	if err := os.WriteFile(journal, []byte(cut), 0o600); err != nil {
		t.Fatal(err)
	}

	bDir := changeDir(t, change(changeset.Sysctl, "/etc/sysctl.d", "net.core.somaxconn", "128", "1024"))
	out, errOut, err := run(t, "", append(flags, "--label", "B", bDir)...)
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("B: err %v\n%s%s", err, out, errOut)
	}
	if strings.Contains(out, "applied transaction") || !strings.Contains(out, "restored the half-done transaction "+idA) || !strings.Contains(out, "nothing applied") {
		t.Errorf("B's output:\n%s", out)
	}
	if b, _ := os.ReadFile(knob); strings.TrimSpace(string(b)) != "128" {
		t.Errorf("somaxconn = %q", b)
	}
	if _, err := os.Stat(sysctlConf); !os.IsNotExist(err) {
		t.Errorf("%s is left: %v", sysctlConf, err)
	}
	for _, tr := range transactions(t, state) {
		if tr["label"] == "B" {
			t.Errorf("B is in the journal: %v", tr)
		}
	}
}
