package mysqlconf

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestParseHelp reads real `mariadbd --help --verbose` output: the whole
// of it with --no-defaults, and the heads of two runs with defaults
// options.
func TestParseHelp(t *testing.T) {
	groups := []string{"mysqld", "server", "mysqld-10.11", "mariadb", "mariadb-10.11", "mariadbd", "mariadbd-10.11", "client-server", "galera"}
	for _, tc := range []struct {
		name   string
		file   string
		files  []string
		groups []string
	}{
		{"the default search", "mariadbd-10.11-help-verbose.txt", []string{"/etc/my.cnf", "/etc/mysql/my.cnf", "~/.my.cnf"}, groups},
		{"--defaults-file and a group suffix", "mariadbd-10.11-defaults-file-suffix.txt", []string{"/etc/mysql/my.cnf"},
			append(slices.Clone(groups), "mysqld.blue", "server.blue", "mysqld-10.11.blue", "mariadb.blue", "mariadb-10.11.blue", "mariadbd.blue", "mariadbd-10.11.blue", "client-server.blue", "galera.blue")},
		{"--defaults-extra-file", "mariadbd-10.11-extra-file.txt", []string{"/etc/my.cnf", "/etc/mysql/my.cnf", "/etc/mysql/my.cnf", "~/.my.cnf"}, groups},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			s, err := ParseHelp(out)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Files, tc.files) || !slices.Equal(s.Groups, tc.groups) {
				t.Errorf("files %q groups %q\nwant %q %q", s.Files, s.Groups, tc.files, tc.groups)
			}
		})
	}
	for _, tc := range []struct{ name, out, err string }{
		{"not a server's help", "Usage: mariadbd [OPTIONS]\n", "no \"Default options are read from the following files in the given order:\" line in the first 200 lines"},
		{"no file after the header", filesHeader + "\n\n", "is followed by no file"},
		{"the header past 200 lines", strings.Repeat("x\n", 200) + filesHeader + "\n/etc/my.cnf\n", "in the first 200 lines"},
		{"too many files", filesHeader + "\n" + strings.Repeat("/a.cnf ", 33) + "\n", "--help line 2: 33 option files in the search order, more than the 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseHelp([]byte(tc.out)); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

// fakeProc lays out the parts of /proc Locate reads, for a server run
// the usual way (no defaults options, the binary's search order) that a
// sandbox cannot be without reading the host's /etc/mysql: the real
// server's pid, its unix socket as a listening socket held by that pid,
// and the command line given.
func fakeProc(t *testing.T, m *sandbox.MariaDB, home string, args ...string) string {
	t.Helper()
	proc := t.TempDir()
	pid := strconv.Itoa(m.PID())
	writeFile(t, filepath.Join(proc, "net", "unix"), "Num       RefCount Protocol Flags    Type St Inode Path\n"+
		"0000000000000000: 00000002 00000000 00010000 0001 01 4711 /run/systemd/notify\n"+
		"0000000000000000: 00000002 00000000 00010000 0001 01 777 "+m.Socket()+"\n")
	for _, n := range []string{"tcp", "tcp6"} {
		writeFile(t, filepath.Join(proc, "net", n), "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n")
	}
	writeFile(t, filepath.Join(proc, pid, "cmdline"), strings.Join(args, "\x00")+"\x00")
	writeFile(t, filepath.Join(proc, pid, "environ"), "LANG=C\x00HOME="+home+"\x00")
	for name, target := range map[string]string{"exe": args[0], "root": "/", "cwd": m.DataDir(), "fd/3": "socket:[777]", "fd/0": "/dev/null"} {
		p := filepath.Join(proc, pid, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	return proc
}

// debianEtc copies Debian 12's MariaDB files (mariadb-common's
// mariadb.cnf as /etc/mysql/my.cnf, mariadb-server's mariadb.conf.d) under
// root, their paths moved there, with mysql-common's conf.d.
func debianEtc(t *testing.T, root string) {
	t.Helper()
	src := filepath.Join("testdata", "debian12", "etc", "mysql")
	for from, to := range map[string]string{
		"mariadb.cnf":                       "my.cnf",
		"mariadb.conf.d/50-server.cnf":      "mariadb.conf.d/50-server.cnf",
		"mariadb.conf.d/50-mysqld_safe.cnf": "mariadb.conf.d/50-mysqld_safe.cnf",
	} {
		data, err := os.ReadFile(filepath.Join(src, from))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, "etc", "mysql", to), strings.ReplaceAll(string(data), "/etc/mysql/", root+"/etc/mysql/"))
	}
	writeFile(t, filepath.Join(root, "etc", "mysql", "conf.d", "mysql.cnf"), "[mysql]\n")
}

// TestLocateDefaultSearch: a server started the usual way (systemd,
// the distribution's files: no defaults options) reads its binary's
// search order; the drop-in goes in the directory /etc/mysql/my.cnf
// includes last, and its user's ~/.my.cnf and its command line, read
// after it, are named where they override it.
func TestLocateDefaultSearch(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	root := t.TempDir()
	debianEtc(t, root)
	home := filepath.Join(root, "home", "mysql")
	writeFile(t, filepath.Join(home, ".my.cnf"), "[mysqld]\nmax_connections = 10\n")
	help, err := os.ReadFile(filepath.Join("testdata", "mariadbd-10.11-help-verbose.txt"))
	if err != nil {
		t.Fatal(err)
	}
	search := root + "/etc/my.cnf " + root + "/etc/mysql/my.cnf ~/.my.cnf"
	help = []byte(strings.Replace(string(help), "/etc/my.cnf /etc/mysql/my.cnf ~/.my.cnf", search, 1))
	const bin = "/usr/sbin/mariadbd"
	var ran [][]string
	o := Options{
		Proc: fakeProc(t, m, home, bin, "--innodb-buffer-pool-size=2G"),
		Run: func(_ context.Context, argv []string) ([]byte, error) {
			ran = append(ran, argv)
			return help, nil
		},
	}
	c := locate(t, m, m.DSN(""), o)
	etc := filepath.Join(root, "etc", "mysql")
	dropIn := filepath.Join(etc, "mariadb.conf.d", DropInName)
	want := fmt.Sprintf("my.cnf drop-in: %s (the server reads %s through '!includedir' in %s:%d; found from the search order of %s --help --verbose (%s), pid %d)",
		dropIn, filepath.Join(etc, "mariadb.conf.d"), filepath.Join(etc, "my.cnf"), lineOf(t, filepath.Join(etc, "my.cnf"), "!includedir "+etc+"/mariadb.conf.d/"), bin, search, m.PID())
	if c.Why != want {
		t.Errorf("Why:\n got %s\nwant %s", c.Why, want)
	}
	wantFiles := []string{filepath.Join(etc, "my.cnf"), filepath.Join(etc, "conf.d", "mysql.cnf"), filepath.Join(etc, "mariadb.conf.d", "50-mysqld_safe.cnf"),
		filepath.Join(etc, "mariadb.conf.d", "50-server.cnf"), filepath.Join(home, ".my.cnf")}
	if !slices.Equal(c.Files, wantFiles) {
		t.Errorf("files\n got %q\nwant %q", c.Files, wantFiles)
	}
	check := []string{bin, "--help", "--verbose"}
	if !slices.Equal(c.Check, check) || len(ran) != 1 || !slices.Equal(ran[0], check) {
		t.Errorf("check %q, ran %q", c.Check, ran)
	}
	for _, tc := range []struct{ key, want string }{
		{"max_connections", filepath.Join(home, ".my.cnf") + ":2 sets max_connections = 10, read after " + dropIn},
		{"innodb_buffer_pool_size", fmt.Sprintf("the server's command line (pid %d) sets innodb_buffer_pool_size = 2G, read after %s", m.PID(), dropIn)},
		{"bind_address", ""}, // 50-server.cnf, read before 99-stacktune.cnf
	} {
		if got := c.Override(tc.key); got != tc.want {
			t.Errorf("Override(%s)\n got %q\nwant %q", tc.key, got, tc.want)
		}
	}
	t.Run("a given file the server does not read", func(t *testing.T) {
		given := filepath.Join(root, "etc", "mysql", "other.d", "x.cnf")
		c := locate(t, m, m.DSN(""), o)
		c.Given(given)
		if c.Reads() || !strings.Contains(c.Why, "WARNING: the server does not read it") || !strings.Contains(c.Why, "no '!includedir' names "+filepath.Dir(given)) {
			t.Errorf("%s", c.Why)
		}
	})
	t.Run("a given file in an included directory", func(t *testing.T) {
		given := filepath.Join(etc, "conf.d", "zz.cnf")
		c := locate(t, m, m.DSN(""), o)
		c.Given(given)
		if !c.Reads() || c.Via == nil || c.Via.Path != filepath.Join(etc, "conf.d") {
			t.Fatalf("%s", c.Why)
		}
		// conf.d comes before mariadb.conf.d, whose 50-server.cnf sets
		// bind-address after it.
		if got := c.Override("bind_address"); !strings.HasPrefix(got, filepath.Join(etc, "mariadb.conf.d", "50-server.cnf")+":") {
			t.Errorf("Override(bind_address) = %q", got)
		}
	})
}

// TestLocateNotAServer: the process holding the server's socket is not
// a server binary (a container's proxy): its binary is never run, and
// the distribution's guess says why.
func TestLocateNotAServer(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	const proxy = "/usr/bin/docker-proxy"
	proc := fakeProc(t, m, t.TempDir(), proxy, "-proto", "tcp", "-host-port", "3306")
	ran := false
	c := locate(t, m, m.DSN(""), Options{Proc: proc, LookPath: func(...string) string { return "/usr/sbin/mariadbd" },
		Run: func(context.Context, []string) ([]byte, error) { ran = true; return nil, nil }})
	want := fmt.Sprintf("pid %d, found by its pid file %s (pid %d listens on its socket %s), runs %s, not a MySQL/MariaDB server (mysqld, mariadbd): the server may run in a container or behind a proxy",
		m.PID(), filepath.Join(m.Dir(), "mysqld.pid"), m.PID(), m.Socket(), proxy)
	if ran || !c.Guess || !strings.Contains(c.Why, want) {
		t.Errorf("ran %v, guess %v, Why:\n%s\nwant it to hold\n%s", ran, c.Guess, c.Why, want)
	}
}

// TestLocateRelativeDefaultsFile: a --defaults-file relative to the
// server's working directory is read there, checked by its absolute
// path, and said to be a guess at where it started.
func TestLocateRelativeDefaultsFile(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	const bin = "/usr/sbin/mariadbd"
	proc := fakeProc(t, m, t.TempDir(), bin, "--defaults-file=my.cnf")
	// Its working directory is the data dir (the server's chdir), where
	// this my.cnf includes conf.d.
	conf := filepath.Join(m.DataDir(), "my.cnf")
	confDir := filepath.Join(m.DataDir(), "conf.d")
	writeFile(t, conf, "[mysqld]\n!includedir "+confDir+"\n")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	help, err := os.ReadFile(filepath.Join("testdata", "mariadbd-10.11-defaults-file-suffix.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	c := locate(t, m, m.DSN(""), Options{Proc: proc, Run: func(_ context.Context, argv []string) ([]byte, error) {
		ran = argv
		return []byte(strings.Replace(string(help), "\n/etc/mysql/my.cnf\n", "\n"+conf+"\n", 1)), nil
	}})
	check := []string{bin, "--defaults-file=" + conf, "--help", "--verbose"}
	if !slices.Equal(c.Check, check) || !slices.Equal(ran, check) {
		t.Errorf("check %q, ran %q", c.Check, ran)
	}
	if c.DropIn != filepath.Join(confDir, DropInName) {
		t.Errorf("%s", c.Why)
	}
	want := "--defaults-file=my.cnf is relative: read against the server's working directory now, " + m.DataDir() + ", which may not be the one it started in"
	if !slices.Contains(c.Notes, want) {
		t.Errorf("notes %q", c.Notes)
	}
}
