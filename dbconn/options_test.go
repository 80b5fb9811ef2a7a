package dbconn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// files writes name → content under a new directory and returns it.
func files(t *testing.T, fs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range fs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(data, "DIR", dir)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestResolve(t *testing.T) {
	env := map[string]string{"APP_DSN": "app:envpw@tcp(db:3306)/shop", "EMPTY": ""}
	getenv := func(k string) string { return env[k] }
	home := files(t, map[string]string{".my.cnf": "[client]\nuser = monitor\npassword = \"home pw\"\nsocket = /run/home.sock\n[mysqld]\nbind-address = 0.0.0.0\n"})
	defaults := files(t, map[string]string{
		"my.cnf":       "[client]\nuser=tuner\npassword='file pw'\nhost=db.example\nport=3307\n!includedir DIR/conf.d\n",
		"conf.d/a.cnf": "[client-mariadb]\ndatabase = app\n",
		"conf.d/b.txt": "[client]\nuser = ignored\n",
		"loop.cnf":     "[client]\nuser = x\n!include DIR/loop.cnf\n",
		"bad.cnf":      "[client\nuser = x\n",
		"socket.cnf":   "[client]\nsocket = /run/file.sock\nuser = s\n",
	})
	cases := []struct {
		name string
		src  Source
		want string // the resolved DSN, or the error's text with "error: "
	}{
		{"nothing asked", Source{Home: home}, ""},
		{"a DSN alone, no option files", Source{DSN: "root@unix(/run/m.sock)/", NoDefaults: true}, "root@unix(/run/m.sock)/"},
		{"~/.my.cnf fills user, password and socket", Source{DSN: "@/", Home: home}, "monitor:home pw@unix(/run/home.sock)/"},
		{"the DSN's own values win", Source{DSN: "root:dsnpw@tcp(10.0.0.1:3306)/x", Home: home}, "root:dsnpw@tcp(10.0.0.1:3306)/x"},
		{"a DSN without a password takes the file's", Source{DSN: "monitor@unix(/run/m.sock)/", Home: home}, "monitor:home pw@unix(/run/m.sock)/"},
		{"--defaults-file alone, host and port, includedir (only .cnf)", Source{DefaultsFile: filepath.Join(defaults, "my.cnf"), Home: home}, "tuner:file pw@tcp(db.example:3307)/app"},
		{"--defaults-file with a socket", Source{DefaultsFile: filepath.Join(defaults, "socket.cnf")}, "s@unix(/run/file.sock)/"},
		{"--dsn-env", Source{DSNEnv: "APP_DSN", NoDefaults: true, Getenv: getenv}, "app:envpw@tcp(db:3306)/shop"},
		{"--dsn-env unset", Source{DSNEnv: "NOPE", Getenv: getenv}, "error: --dsn-env NOPE: the variable is not set or empty"},
		{"--dsn-env empty", Source{DSNEnv: "EMPTY", Getenv: getenv}, "error: --dsn-env EMPTY"},
		{"both", Source{DSN: "a@/", DSNEnv: "APP_DSN", Getenv: getenv}, "error: give --dsn or --dsn-env, not both"},
		{"a missing defaults file", Source{DefaultsFile: filepath.Join(defaults, "none.cnf")}, "error: none.cnf: no such file or directory"},
		{"an include loop", Source{DefaultsFile: filepath.Join(defaults, "loop.cnf")}, "error: option files: more than 64 read"},
		{"a broken file", Source{DefaultsFile: filepath.Join(defaults, "bad.cnf")}, "error: unclosed section header"},
		{"a directory", Source{DefaultsFile: defaults}, "error: not a regular file"},
		{"a bad DSN does not echo its password", Source{DSN: "app:hunter2@bogus", NoDefaults: true}, "error: invalid DSN"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.src.Resolve()
			if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want %q", err, want)
				}
				for _, pw := range []string{"hunter2", "envpw", "file pw", "home pw"} {
					if strings.Contains(err.Error(), pw) {
						t.Errorf("the error holds a password: %v", err)
					}
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestResolveBounded: a FIFO or /dev/zero as an option file, or a huge
// one, is refused without reading it whole.
func TestResolveBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.cnf")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.cnf")
	if err := os.WriteFile(big, []byte("[client]\n"+strings.Repeat("# padding\n", 200000)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero", big} {
		if _, err := (Source{DefaultsFile: p}).Resolve(); err == nil {
			t.Errorf("%s: no error", p)
		}
	}
	if _, err := (Source{DefaultsFile: "/dev/zero"}).Resolve(); !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
	var pe *os.PathError
	if _, err := (Source{DefaultsFile: filepath.Join(dir, "none")}).Resolve(); !errors.As(err, &pe) {
		t.Errorf("missing: %v", err)
	}
}

func FuzzResolveOptionFile(f *testing.F) {
	f.Add("[client]\nuser=a\npassword=b\nsocket=/s\n")
	f.Add("[client-server]\nhost = h\nport = 1\n!include /nonexistent\n")
	f.Add("[client\n")
	f.Fuzz(func(t *testing.T, data string) {
		p := filepath.Join(t.TempDir(), "f.cnf")
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _ = Source{DefaultsFile: p}.Resolve()
	})
}
