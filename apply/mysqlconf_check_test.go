package apply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/mysqlconf"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestCheckCatchesBadDropIn: the check command is the server's binary
// with its own defaults file, so it reads the drop-in where Locate put
// it and fails on a value the server would refuse.
func TestCheckCatchesBadDropIn(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	c, err := mysqlconf.Locate(context.Background(), m.DB(), mysqlconf.Options{DSN: m.DSN(""), MariaDB: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, dropIn, err string }{
		{"a good value", "[mysqld]\nmax_connections = 90\n", ""},
		{"a bad size ([ERROR] line, exit 0)", "[mysqld]\ninnodb_buffer_pool_size = abc\n", "Unknown suffix 'a' used for variable 'innodb-buffer-pool-size'"},
		{"an unknown variable", "[mysqld]\nno_such_variable = 1\n", "unknown variable 'no_such_variable=1'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Dir(c.DropIn), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(c.DropIn, []byte(tc.dropIn), 0o644); err != nil {
				t.Fatal(err)
			}
			err := CommandCheckStrict(c.Check...)(context.Background())
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("check failed on a good drop-in: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("check error %v, want one holding %q", err, tc.err)
			}
		})
	}
}
