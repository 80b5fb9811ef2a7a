package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// includeLine is the number of the line of the sandbox's my.cnf that
// includes its conf.d.
func includeLine(t *testing.T, srv *sandbox.MariaDB) int {
	t.Helper()
	data, err := os.ReadFile(srv.DefaultsFile())
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if l == "!includedir "+srv.ConfDir() {
			return i + 1
		}
	}
	t.Fatalf("no !includedir in %s", srv.DefaultsFile())
	return 0
}

// TestApplyFindsTheServersOptionFiles: apply without --mysql-conf and
// --mysql-check on a server started with its own --defaults-file (as a
// new user's was): the drop-in goes in the directory that server
// includes, said in one line with why; the check is that server's binary
// with its defaults file, so a value it refuses fails it; a setting read
// after the drop-in refuses the change; a server whose file includes no
// directory asks for --mysql-conf. Each case stops the test on failure:
// a drop-in in the wrong place must not be applied.
func TestApplyFindsTheServersOptionFiles(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	state := t.TempDir()
	dropIn := filepath.Join(srv.ConfDir(), "99-stacktune.cnf")
	why := fmt.Sprintf("my.cnf drop-in: %s (the server reads %s through '!includedir' in %s:%d; found from its command line --defaults-file=%s, pid %d)",
		dropIn, srv.ConfDir(), srv.DefaultsFile(), includeLine(t, srv), srv.DefaultsFile(), srv.PID())
	apply := func(extra ...string) (string, string, error) {
		return run(t, "", append([]string{"apply", "--dsn", srv.DSN(""), "--state", state, "--mysql-restart", "none"}, extra...)...)
	}
	steps := []struct {
		name string
		test func(t *testing.T)
	}{
		{"dry run: the server's conf dir, said why", func(t *testing.T) {
			out, errOut, err := apply("--dry-run", changeDir(t, myVar("max_connections", "77")))
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			for _, w := range []string{"mysql: would create " + dropIn + ":", why} {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		}},
		{"apply: written there, read back", func(t *testing.T) {
			out, errOut, err := apply(changeDir(t, myVar("max_connections", "77")))
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			for _, w := range []string{"wrote " + dropIn, "  " + why + "\n", "max_connections: "} {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if b, err := os.ReadFile(dropIn); err != nil || !strings.Contains(string(b), "max_connections = 77") {
				t.Errorf("drop-in: %v\n%s", err, b)
			}
		}},
		{"a value the server refuses fails its own check", func(t *testing.T) {
			_, _, err := apply("--mysql-restart", "false", changeDir(t, change(changeset.MySQLOption, "mysqld", "innodb_sort_buffer_size", "", "abc")))
			if err == nil || !strings.Contains(err.Error(), "validating mysql") || !strings.Contains(err.Error(), srv.Binary()+" --defaults-file="+srv.DefaultsFile()+" --help --verbose") ||
				!strings.Contains(err.Error(), "innodb-sort-buffer-size") {
				t.Fatalf("err = %v", err)
			}
			if b, _ := os.ReadFile(dropIn); strings.Contains(string(b), "abc") {
				t.Errorf("the bad value stayed:\n%s", b)
			}
		}},
		{"a later file overrides: refused, named", func(t *testing.T) {
			later := filepath.Join(srv.ConfDir(), "zz-local.cnf")
			if err := os.WriteFile(later, []byte("[mysqld]\nmax_connections = 60\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(later)
			_, _, err := apply(changeDir(t, myVar("max_connections", "90")))
			if err == nil || !strings.Contains(err.Error(), "max_connections: "+later+":2 sets max_connections = 60, read after "+dropIn) {
				t.Fatalf("err = %v", err)
			}
			if got := globalVar(t, srv, "max_connections"); got != "77" {
				t.Errorf("max_connections = %s", got)
			}
		}},
		{"--mysql-conf and --mysql-check still override", func(t *testing.T) {
			other := filepath.Join(t.TempDir(), "other.cnf")
			out, errOut, err := apply("--dry-run", "--mysql-conf", other, "--mysql-check", "none", changeDir(t, myVar("max_connections", "78")))
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if !strings.Contains(out, "would create "+other) || !strings.Contains(out, "my.cnf drop-in: "+other+" (given by --mysql-conf; WARNING: the server does not read it") {
				t.Errorf("output:\n%s", out)
			}
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.test) {
			t.FailNow()
		}
	}
	t.Run("no includedir: --mysql-conf asked for", func(t *testing.T) {
		srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true, NoConfDir: true})
		_, _, err := run(t, "", "apply", "--dsn", srv.DSN(""), "--state", t.TempDir(), "--mysql-restart", "none", changeDir(t, myVar("max_connections", "77")))
		if err == nil || !strings.Contains(err.Error(), "no destination for the my.cnf drop-in: my.cnf drop-in: none: the server reads "+srv.DefaultsFile()) ||
			!strings.Contains(err.Error(), "give --mysql-conf "+filepath.Join(srv.Dir(), "stacktune.d", "99-stacktune.cnf")) {
			t.Fatalf("err = %v", err)
		}
	})
}
