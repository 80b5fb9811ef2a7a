package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// victim is a table with data that a hostile index change once dropped
// a column of.
func victim(t *testing.T, srv *sandbox.MariaDB) {
	t.Helper()
	for _, q := range []string{"CREATE DATABASE victim",
		"CREATE TABLE victim.t (id INT PRIMARY KEY, a INT, b VARCHAR(20))",
		"INSERT INTO victim.t VALUES (1, 10, 'kept'), (2, 20, 'kept too')"} {
		if _, err := srv.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTargetsRefuseHostileChanges: a target built from changes without a
// Set (tune, the knob search, the demo build them directly) checks each
// change's grammar before anything is read or touched.
func TestTargetsRefuseHostileChanges(t *testing.T) {
	dir := t.TempDir()
	nginxConf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(nginxConf, []byte("events {}\nhttp {\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		build func() error
	}{
		{"ddl: SQL after the columns", func() error {
			_, err := NewIndexes(nil, "", []changeset.Change{{Kind: changeset.Index, Target: "victim.t", Name: "ix", From: changeset.Absent, To: "(a), DROP COLUMN b"}})
			return err
		}},
		{"ddl: a backquote in the name", func() error {
			_, err := NewIndexes(nil, "", []changeset.Change{{Kind: changeset.Index, Target: "victim.t", Name: "ix` (a), DROP COLUMN `b", From: changeset.Absent, To: "(a)"}})
			return err
		}},
		{"systemd: ExecStartPre", func() error {
			_, err := NewSystemdDropIn("x.service", filepath.Join(dir, "x.service.d", "stacktune.conf"),
				[]changeset.Change{{Kind: changeset.Systemd, Target: "x.service", Name: "ExecStartPre", To: "/bin/touch /tmp/pwned"}})
			return err
		}},
		{"my.cnf: a statement in the value", func() error {
			_, err := NewMySQL(nil, filepath.Join(dir, "99.cnf"), vars("max_connections=500; DROP TABLE t"))
			return err
		}},
		{"sysctl: a second line", func() error {
			_, err := NewSysctl(filepath.Join(dir, "99.conf"), []changeset.Change{{Kind: changeset.Sysctl, Target: "/etc/sysctl.d", Name: "net.core.somaxconn", To: "1\nkernel.core_pattern = |/bin/sh"}})
			return err
		}},
		{"nginx: include", func() error {
			_, err := NewNginx(nginxConf, nginxChanges("nginx http {}|include|/tmp/evil.conf"))
			return err
		}},
		{"php-fpm: a prepended file", func() error {
			_, err := NewPHPFPM(filepath.Join(dir, "php-fpm.conf"), phpfpmChanges("www|php_admin_value[auto_prepend_file]||/tmp/evil.php"))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.build()
			if err == nil || !errors.Is(err, changeset.ErrInvalid) {
				t.Fatalf("err = %v, want a refusal (changeset.ErrInvalid)", err)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a refused target wrote files: %v", entries)
	}
}

// TestRollbackCannotUndoAColumn: when something dropped a column while
// an index transaction ran (here a fault at the index's activation, as
// a hostile ALTER once did), the rollback drops the index but cannot
// bring the column back: it must say so, with the table's old columns,
// never "rolled back: the old files and settings are in place".
func TestRollbackCannotUndoAColumn(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	victim(t, srv)
	ix, err := NewIndexes(srv.DB(), "", []changeset.Change{{Kind: changeset.Index, Target: "victim.t", Name: "ix_a", From: changeset.Absent, To: "(`a`)"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(context.Background(), []Target{ix}, Options{StateDir: t.TempDir()}, func(p string) error {
		if p == "verify ddl" {
			if _, err := srv.DB().Exec("ALTER TABLE victim.t DROP COLUMN b"); err != nil {
				t.Fatal(err)
			}
			return errors.New("injected after a column was dropped")
		}
		return nil
	})
	if err == nil || strings.Contains(err.Error(), "the old files and settings are in place") {
		t.Fatalf("err = %v", err)
	}
	var rb *RollbackError
	if !errors.As(err, &rb) {
		t.Fatalf("err = %T %v, want a *RollbackError", err, err)
	}
	found := false
	for _, l := range rb.Leftovers {
		if strings.HasSuffix(l.Key, columnsSuffix) {
			found = true
			if !strings.Contains(l.Fix, "backup") || !strings.Contains(l.Want, "`b`") {
				t.Errorf("leftover %+v: want a fix from a backup naming the lost column", l)
			}
		}
	}
	if !found {
		t.Errorf("no leftover for the table's columns: %+v", rb.Leftovers)
	}
	// The index itself is gone again.
	var n int
	if err := srv.DB().QueryRow("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'victim' AND INDEX_NAME = 'ix_a'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the index is still there (%d parts, %v)", n, err)
	}
	if res == nil || !res.RolledBack {
		t.Errorf("result: %+v", res)
	}
}
