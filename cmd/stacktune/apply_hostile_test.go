package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestApplyRefusesHostileChangeFiles: a changes.json written by hand
// (or by an attacker) with a value outside its kind's grammar is refused
// whole, naming the change, by apply and by apply --dry-run, before
// anything is touched: the table, its data and indexes, the server's
// option files, the systemd and sysctl directories and the state
// directory end as they started. The first case is the one that dropped
// a real column and then printed "rolled back".
func TestApplyRefusesHostileChangeFiles(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	for _, q := range []string{"CREATE DATABASE victim",
		"CREATE TABLE victim.t (id INT PRIMARY KEY, a INT, b VARCHAR(20))",
		"INSERT INTO victim.t VALUES (1, 10, 'kept'), (2, 20, 'kept too')"} {
		if _, err := srv.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	etc := t.TempDir()
	proc := t.TempDir()
	knob := filepath.Join(proc, "net", "core", "somaxconn")
	os.MkdirAll(filepath.Dir(knob), 0o755)
	os.WriteFile(knob, []byte("128\n"), 0o644)
	pwned := filepath.Join(t.TempDir(), "pwned")
	state := t.TempDir()
	flags := []string{"--dsn", srv.DSN(""), "--state", state, "--host-wide",
		"--mysql-conf", filepath.Join(srv.ConfDir(), "99-stacktune.cnf"),
		"--mysql-check", srv.Binary() + " --defaults-file=" + srv.DefaultsFile() + " --help --verbose", "--mysql-restart", "none",
		"--proc-sys", proc, "--sysctl-conf", filepath.Join(etc, "sysctl.d", "99-stacktune.conf"), "--systemd-dir", etc}

	world := func() string {
		var b strings.Builder
		for _, q := range []string{
			"SELECT GROUP_CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'victim'",
			"SELECT GROUP_CONCAT(CONCAT_WS('|', id, a, b) ORDER BY id) FROM victim.t",
			"SELECT COALESCE(GROUP_CONCAT(INDEX_NAME, ':', COLUMN_NAME ORDER BY INDEX_NAME, SEQ_IN_INDEX), '') FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'victim'",
			"SELECT @@GLOBAL.max_connections",
		} {
			var v string
			if err := srv.DB().QueryRow(q).Scan(&v); err != nil {
				t.Fatal(err)
			}
			b.WriteString(v + "\n")
		}
		for _, root := range []string{srv.ConfDir(), etc, proc, state} {
			filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				b.WriteString(p)
				if !e.IsDir() {
					data, _ := os.ReadFile(p)
					s := sha256.Sum256(data)
					b.WriteString(" " + hex.EncodeToString(s[:]))
				}
				b.WriteString("\n")
				return nil
			})
		}
		if _, err := os.Stat(pwned); err == nil {
			b.WriteString("pwned\n")
		}
		return b.String()
	}
	start := world()

	for _, tc := range []struct {
		name, kind, target, cname, to string
	}{
		{"ddl: a column dropped after the key parts", "ddl", "victim.t", "ix", "(a), DROP COLUMN b"},
		{"ddl: a statement after the key parts", "ddl", "victim.t", "ix", "(a); DROP TABLE victim.t"},
		{"ddl: a comment hides the rest", "ddl", "victim.t", "ix", "(a) -- , DROP COLUMN b"},
		{"ddl: backquotes break out of the name", "ddl", "victim.t", "ix` (a), DROP COLUMN `b", "(a)"},
		{"ddl: backquotes break out of the table", "ddl", "victim.t` DROP COLUMN b, ADD INDEX `x", "ix", "(a)"},
		{"systemd: a command before the start", "systemd-limit", "mariadb.service", "ExecStartPre", "/bin/touch " + pwned},
		{"systemd: a directive that is no limit", "systemd-limit", "mariadb.service", "User", "root"},
		{"systemd: a newline in the value", "systemd-limit", "mariadb.service", "LimitNOFILE", "65536\nExecStartPre=/bin/touch " + pwned},
		{"my.cnf: a statement in the value", "mysql-variable", "mysqld", "max_connections", "500; DROP TABLE victim.t"},
		{"my.cnf: an init file", "mysql-option", "mysqld", "init-file", pwned + " x"},
		{"sysctl: a pipe to a shell", "sysctl", "/etc/sysctl.d", "kernel.core_pattern", "|/bin/touch " + pwned},
		{"nginx: an include", "nginx-directive", "nginx http {}", "include", "/tmp/evil.conf"},
		{"php-fpm: a prepended file", "php-fpm-pool", "php-fpm pool www", "php_admin_value[auto_prepend_file]", "/tmp/evil.php"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := map[string]string{"kind": tc.kind, "target": tc.target, "name": tc.cname, "from": "", "to": tc.to}
			if tc.kind == "ddl" {
				c["from"] = "absent"
			}
			b, _ := json.Marshal(map[string]any{"format": 1, "source": "an attacker", "changes": []any{
				map[string]string{"kind": "mysql-variable", "target": "mysqld", "name": "max_connections", "to": "90"}, c}})
			file := filepath.Join(t.TempDir(), "changes.json")
			if err := os.WriteFile(file, b, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, mode := range [][]string{{"apply"}, {"apply", "--dry-run"}} {
				out, errOut, err := run(t, "", append(append(mode, flags...), file)...)
				if err == nil {
					t.Fatalf("%v: no error\n%s", mode, out)
				}
				want := "change 2 (" + tc.kind + " " + tc.cname + ")"
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%v: err = %v, want it to name %q", mode, err, want)
				}
				if all := out + errOut; strings.Contains(all, "applied") || strings.Contains(all, "rolled back") {
					t.Errorf("%v: a refused set says it ran:\n%s", mode, all)
				}
				if now := world(); now != start {
					t.Fatalf("%v: the world changed:\nbefore:\n%s\nafter:\n%s", mode, start, now)
				}
			}
		})
	}
}
