package mysqlconf

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// locate runs Locate on a sandbox server, reached by dsn.
func locate(t *testing.T, m *sandbox.MariaDB, dsn string, o Options) *Config {
	t.Helper()
	o.DSN, o.MariaDB = dsn, true
	c, err := Locate(context.Background(), m.DB(), o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// lineOf is the number of the line of path that is want.
func lineOf(t *testing.T, path, want string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if l == want {
			return i + 1
		}
	}
	t.Fatalf("%s has no line %q:\n%s", path, want, data)
	return 0
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLocateOwnDefaultsFile: servers started with their own
// --defaults-file, as a user runs one beside the distribution's: the
// files it read, the drop-in directory it reads last (and which line
// includes it), what is read after the drop-in, the check command.
func TestLocateOwnDefaultsFile(t *testing.T) {
	t.Run("a conf dir", func(t *testing.T) {
		m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
		c := locate(t, m, m.DSN(""), Options{})
		line := lineOf(t, m.DefaultsFile(), "!includedir "+m.ConfDir())
		want := fmt.Sprintf("my.cnf drop-in: %s (the server reads %s through '!includedir' in %s:%d; found from its command line --defaults-file=%s, pid %d)",
			filepath.Join(m.ConfDir(), DropInName), m.ConfDir(), m.DefaultsFile(), line, m.DefaultsFile(), m.PID())
		if c.Why != want {
			t.Errorf("Why:\n got %s\nwant %s", c.Why, want)
		}
		if c.Guess || c.DropIn != filepath.Join(m.ConfDir(), DropInName) || !c.Reads() {
			t.Errorf("guess %v, drop-in %q, reads %v", c.Guess, c.DropIn, c.Reads())
		}
		if !slices.Equal(c.Files, []string{m.DefaultsFile()}) {
			t.Errorf("files %q", c.Files)
		}
		if want := []string{m.Binary(), "--defaults-file=" + m.DefaultsFile(), "--help", "--verbose"}; !slices.Equal(c.Check, want) {
			t.Errorf("check %q, want %q", c.Check, want)
		}
		if c.Process.PID != m.PID() || !strings.HasPrefix(c.Process.FoundBy, "its pid file "+filepath.Join(m.Dir(), "mysqld.pid")) {
			t.Errorf("process %d found by %q", c.Process.PID, c.Process.FoundBy)
		}
		if o := c.Override("innodb_buffer_pool_size"); o != "" {
			t.Errorf("my.cnf's innodb_buffer_pool_size, read before conf.d, said to override the drop-in: %s", o)
		}
		if len(c.Notes) > 0 {
			t.Errorf("notes: %q", c.Notes)
		}
	})
	t.Run("no includedir", func(t *testing.T) {
		m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true, NoConfDir: true})
		c := locate(t, m, m.DSN(""), Options{})
		if c.DropIn != "" || c.Reads() {
			t.Errorf("drop-in %q in a server that includes no directory", c.DropIn)
		}
		dir := filepath.Join(m.Dir(), "stacktune.d")
		want := fmt.Sprintf("my.cnf drop-in: none: the server reads %s (found from its command line --defaults-file=%s, pid %d) and includes no directory with '!includedir': add '!includedir %s' as the last line of %s and give --mysql-conf %s",
			m.DefaultsFile(), m.DefaultsFile(), m.PID(), dir, m.DefaultsFile(), filepath.Join(dir, DropInName))
		if c.Why != want {
			t.Errorf("Why:\n got %s\nwant %s", c.Why, want)
		}
		if len(c.Check) != 4 {
			t.Errorf("check %q", c.Check)
		}
	})
	t.Run("two include levels", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "db")
		level1 := filepath.Join(dir, "level1.cnf")
		deep := filepath.Join(dir, "deep.d")
		writeFile(t, level1, "[mysqld]\n!includedir "+deep+"\n")
		writeFile(t, filepath.Join(deep, "50-app.cnf"), "[mysqld]\nwait_timeout = 600\n")
		m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true, Dir: dir, ConfigTail: "!include " + level1})
		c := locate(t, m, m.DSN(""), Options{})
		want := fmt.Sprintf("my.cnf drop-in: %s (the server reads %s through '!includedir' in %s:2, included from %s:%d; found from its command line --defaults-file=%s, pid %d)",
			filepath.Join(deep, DropInName), deep, level1, m.DefaultsFile(), lineOf(t, m.DefaultsFile(), "!include "+level1), m.DefaultsFile(), m.PID())
		if c.Why != want {
			t.Errorf("Why:\n got %s\nwant %s", c.Why, want)
		}
		if want := []string{m.DefaultsFile(), level1, filepath.Join(deep, "50-app.cnf")}; !slices.Equal(c.Files, want) {
			t.Errorf("files %q, want %q", c.Files, want)
		}
		if o := c.Override("wait_timeout"); o != "" {
			t.Errorf("50-app.cnf, read before 99-stacktune.cnf, said to override it: %s", o)
		}
	})
	t.Run("found by its socket, its pid file gone", func(t *testing.T) {
		m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
		if err := os.Remove(filepath.Join(m.Dir(), "mysqld.pid")); err != nil {
			t.Fatal(err)
		}
		c := locate(t, m, m.DSN(""), Options{})
		if c.Guess || c.Process.PID != m.PID() || c.Process.FoundBy != fmt.Sprintf("the process listening on its socket %s and port %d", m.Socket(), m.Port()) {
			t.Fatalf("guess %v, %+v", c.Guess, c.Process)
		}
		if c.DropIn != filepath.Join(m.ConfDir(), DropInName) {
			t.Errorf("drop-in %s", c.DropIn)
		}
	})
	t.Run("found over TCP", func(t *testing.T) {
		m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
		c := locate(t, m, m.TCPDSN(""), Options{})
		if c.Guess || c.Process.PID != m.PID() || c.DropIn != filepath.Join(m.ConfDir(), DropInName) {
			t.Fatalf("%s", c.Why)
		}
	})
	t.Run("--no-defaults", func(t *testing.T) {
		m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
		c := locate(t, m, m.DSN(""), Options{})
		want := fmt.Sprintf("my.cnf drop-in: none: the server reads no option file (its command line starts with --no-defaults, pid %d) and takes its settings from its command line; give --mysql-conf only for a file its next start reads", m.PID())
		if c.DropIn != "" || c.Why != want {
			t.Errorf("drop-in %q, Why:\n got %s\nwant %s", c.DropIn, c.Why, want)
		}
		given := filepath.Join(m.Dir(), "given.cnf")
		c.Given(given)
		if c.DropIn != given || c.Reads() || !strings.Contains(c.Why, "(given by --mysql-conf; WARNING: the server does not read it: its option files are none") {
			t.Errorf("given: reads %v, %s", c.Reads(), c.Why)
		}
	})
}

// TestLocateOverride: a setting the server reads after the drop-in (a
// file sorted after it, a line after the "!includedir") is named, one
// read before is not, and the running server agrees: the later file's
// value is the one it starts with.
func TestLocateOverride(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true,
		ConfigTail: "[mysqld]\nmax_allowed_packet = 32M\n"})
	later := filepath.Join(m.ConfDir(), "zz-local.cnf")
	writeFile(t, later, "[mysqld]\nmax-connections = 77\n")
	writeFile(t, filepath.Join(m.ConfDir(), "10-early.cnf"), "[mysqld]\nwait_timeout = 600\n")
	c := locate(t, m, m.DSN(""), Options{})
	tail := lineOf(t, m.DefaultsFile(), "max_allowed_packet = 32M")
	for _, tc := range []struct{ key, want string }{
		{"max_connections", later + ":2 sets max_connections = 77, read after " + c.DropIn},
		{"max_allowed_packet", fmt.Sprintf("%s:%d sets max_allowed_packet = 32M, read after %s", m.DefaultsFile(), tail, c.DropIn)},
		{"wait_timeout", ""},
		{"innodb_buffer_pool_size", ""},
	} {
		t.Run(tc.key, func(t *testing.T) {
			if got := c.Override(tc.key); got != tc.want {
				t.Errorf("Override(%s)\n got %q\nwant %q", tc.key, got, tc.want)
			}
		})
	}
	t.Run("the server agrees", func(t *testing.T) {
		writeFile(t, c.DropIn, "[mysqld]\nmax_connections = 500\nwait_timeout = 700\n")
		if err := m.Restart(context.Background()); err != nil {
			t.Fatal(err)
		}
		var conns, wait string
		if err := m.DB().QueryRow("SELECT @@max_connections, @@wait_timeout").Scan(&conns, &wait); err != nil {
			t.Fatal(err)
		}
		if conns != "77" || wait != "700" {
			t.Errorf("after a restart with the drop-in: max_connections %s (want the later file's 77), wait_timeout %s (want the drop-in's 700)", conns, wait)
		}
	})
}

// TestLocateNotOnThisHost: without the server's process here the
// distribution's directory stays, said as a guess with why and how to
// override it.
func TestLocateNotOnThisHost(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	// A /proc whose tables list no listener: the server is elsewhere.
	emptyProc := t.TempDir()
	writeFile(t, filepath.Join(emptyProc, "net", "unix"), "Num       RefCount Protocol Flags    Type St Inode Path\n")
	for _, n := range []string{"tcp", "tcp6"} {
		writeFile(t, filepath.Join(emptyProc, "net", n), "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n")
	}
	mariadbd := "/usr/sbin/mariadbd"
	for _, tc := range []struct {
		name   string
		dsn    string
		o      Options
		reason string
		check  []string
	}{
		{"no process listens here", m.DSN(""), Options{Proc: emptyProc, LookPath: func(...string) string { return mariadbd }},
			fmt.Sprintf("no process on this host listens on %s or port %d: pid %d of its pid file %s is not running here", m.Socket(), m.Port(), m.PID(), filepath.Join(m.Dir(), "mysqld.pid")),
			[]string{mariadbd, "--help", "--verbose"}},
		{"another host's address", "root@tcp(192.0.2.1:3306)/", Options{LookPath: func(...string) string { return mariadbd }},
			"the DSN reaches it at 192.0.2.1:3306, not an address of this host", []string{mariadbd, "--help", "--verbose"}},
		{"no binary to check with", "root@tcp(192.0.2.1:3306)/", Options{LookPath: func(...string) string { return "" }},
			"the DSN reaches it at 192.0.2.1:3306, not an address of this host", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := locate(t, m, tc.dsn, tc.o)
			checked := "--mysql-check is needed"
			if tc.check != nil {
				checked = "checked with " + strings.Join(tc.check, " ")
			}
			want := fmt.Sprintf("my.cnf drop-in: /etc/mysql/mariadb.conf.d/99-stacktune.cnf (a guess, the distribution's directory, %s: the server's process is not on this host: %s; give --mysql-conf and --mysql-check if its option files are elsewhere)", checked, tc.reason)
			if !c.Guess || c.Process != nil || c.DropIn != Distribution(true) || c.Why != want {
				t.Errorf("guess %v, drop-in %q, Why:\n got %s\nwant %s", c.Guess, c.DropIn, c.Why, want)
			}
			if !slices.Equal(c.Check, tc.check) {
				t.Errorf("check %q, want %q", c.Check, tc.check)
			}
			if c.Override("max_connections") != "" || c.Reads() {
				t.Errorf("a guess claims to know what the server reads")
			}
			c.Given("/srv/db/conf.d/x.cnf")
			if c.Guess || c.Why != "my.cnf drop-in: /srv/db/conf.d/x.cnf (given by --mysql-conf; the server's process is not on this host, so whether it reads the file is not known)" {
				t.Errorf("given: %s", c.Why)
			}
		})
	}
}
