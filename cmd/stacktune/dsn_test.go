package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestDSNSources connects a real MariaDB user that has a password
// without the password ever being on the command line: from a defaults
// file, from ~/.my.cnf filling in a DSN that has none, and from
// --dsn-env; every command that takes a server takes the same flags.
func TestDSNSources(t *testing.T) {
	db := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	const pw = "Tun3r-s3cret"
	for _, q := range []string{"CREATE USER 'tuner'@'localhost' IDENTIFIED BY '" + pw + "'", "GRANT ALL ON *.* TO 'tuner'@'localhost'"} {
		if _, err := db.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	defaults := write("client.cnf", "[client]\nuser = tuner\npassword = "+pw+"\nsocket = "+db.Socket()+"\n")
	wrong := write("wrong.cnf", "[client]\nuser = tuner\npassword = not-"+pw+"\nsocket = "+db.Socket()+"\n")
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".my.cnf"), []byte("[client]\npassword = "+pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("TUNER_DSN", "tuner:"+pw+"@unix("+db.Socket()+")/")

	mysqlOf := func(t *testing.T, args ...string) (*collect.Snapshot, string) {
		t.Helper()
		out, errOut, err := run(t, "", append([]string{"collect", "--no-linux", "--interval", "100ms"}, args...)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		if strings.Contains(out+errOut, pw) {
			t.Errorf("the password is printed:\n%s\n%s", out, errOut)
		}
		var s collect.Snapshot
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		return &s, errOut
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"--defaults-file", []string{"--defaults-file", defaults}},
		{"~/.my.cnf fills the DSN's password", []string{"--dsn", "tuner@unix(" + db.Socket() + ")/"}},
		{"--dsn-env", []string{"--dsn-env", "TUNER_DSN", "--no-defaults"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := mysqlOf(t, tc.args...)
			if s.MySQL == nil || s.MySQL.Flavor != "mariadb" {
				t.Errorf("not connected: %+v", s.Errors)
			}
		})
	}
	t.Run("a wrong password from a file: access denied, nothing printed", func(t *testing.T) {
		s, _ := mysqlOf(t, "--defaults-file", wrong)
		if s.MySQL != nil || len(s.Errors) == 0 || !strings.Contains(s.Errors[0].Error, "access denied") || strings.Contains(s.Errors[0].Error, "not-"+pw) {
			t.Errorf("errors %+v", s.Errors)
		}
	})
	t.Run("a password on the command line works, with a warning", func(t *testing.T) {
		_, errOut, err := run(t, "", "collect", "--no-linux", "--interval", "100ms", "--dsn", "tuner:"+pw+"@unix("+db.Socket()+")/")
		if err != nil || !strings.Contains(errOut, "visible to other users") {
			t.Errorf("%v\n%s", err, errOut)
		}
	})
	// The other commands take the same flags.
	for _, args := range [][]string{
		{"digest", "--defaults-file", defaults, "--interval", "100ms", "--format", "json"},
		{"indexes", "--defaults-file", defaults, "--interval", "100ms", "--format", "json"},
		{"apply", "--defaults-file", defaults, "--list", "--state", t.TempDir()},
		{"rollback", "--defaults-file", defaults, "--state", t.TempDir()},
	} {
		t.Run(args[0], func(t *testing.T) {
			out, errOut, err := run(t, "", args...)
			all := out + errOut
			if err != nil {
				all += err.Error()
			}
			if strings.Contains(all, pw) {
				t.Errorf("the password is printed: %s", all)
			}
			if err != nil && (strings.Contains(err.Error(), "access denied") || strings.Contains(err.Error(), "unreachable")) {
				t.Errorf("not connected: %v", err)
			}
		})
	}
}
