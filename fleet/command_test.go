package fleet

import (
	"slices"
	"strings"
	"testing"
)

// TestCollectArgs: the collectors' and the server's flags go to every
// host, others stay here; a variable of this shell or a password on the
// hosts' command lines is refused.
func TestCollectArgs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []Flag
		want  []string
		err   string
	}{
		{"server and collector flags", []Flag{{Name: "dsn", Value: "monitor@unix(/run/mysqld/mysqld.sock)/"}, {Name: "defaults-file", Value: "/etc/my.cnf"},
			{Name: "interval", Value: "1s"}, {Name: "hosts", Value: "hosts.ini"}, {Name: "parallel", Value: "4"}},
			[]string{"--dsn", "monitor@unix(/run/mysqld/mysqld.sock)/", "--defaults-file=/etc/my.cnf", "--interval=1s"}, ""},
		{"dsn-env", []Flag{{Name: "dsn-env", Value: "DSN"}}, nil, "--dsn-env names a variable of this shell"},
		{"password", []Flag{{Name: "dsn", Value: "root:secret@tcp(db:3306)/"}}, nil, "--dsn holds a password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, err := collectArgs(tc.flags)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(args, tc.want) {
				t.Errorf("args %q, %v; want %q", args, err, tc.want)
			}
		})
	}
}

// TestApplyArgs: the fleet's own flags and --format stay here, a list's
// values go one by one, and rollback gets the flags it takes.
func TestApplyArgs(t *testing.T) {
	flags := []Flag{{Name: "hosts", Value: "hosts.ini"}, {Name: "canary", Value: "2"}, {Name: "label", Value: "x"}, {Name: "format", Value: "json"},
		{Name: "dsn", Value: "root@unix(/run/mysqld/mysqld.sock)/"}, {Name: "skip", Value: "[a,b]", Values: []string{"a", "b"}}, {Name: "host-wide", Value: "true"}}
	takes := func(name string) bool { return name == "dsn" || name == "host-wide" }
	apply, rollback, err := applyArgs(flags, takes)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"--dsn=root@unix(/run/mysqld/mysqld.sock)/", "--skip=a", "--skip=b", "--host-wide=true"}; !slices.Equal(apply, want) {
		t.Errorf("apply %q, want %q", apply, want)
	}
	if want := []string{"--dsn=root@unix(/run/mysqld/mysqld.sock)/", "--host-wide=true"}; !slices.Equal(rollback, want) {
		t.Errorf("rollback %q, want %q", rollback, want)
	}
	for _, bad := range []Flag{{Name: "dsn-env", Value: "DSN"}, {Name: "dsn", Value: "root:secret@tcp(db:3306)/"}} {
		if _, _, err := applyArgs([]Flag{bad}, takes); err == nil {
			t.Errorf("%s=%s accepted", bad.Name, bad.Value)
		}
	}
}
