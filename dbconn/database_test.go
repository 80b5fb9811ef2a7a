package dbconn

import (
	"context"
	"testing"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestCurrentDatabase reads the DSN's database from a real server, and ""
// for a DSN that names none.
func TestCurrentDatabase(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	ctx := context.Background()
	for db, want := range map[string]string{"mysql": "mysql", "": ""} {
		conn, err := Open(ctx, srv.DSN(db), 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := CurrentDatabase(ctx, conn)
		conn.Close()
		if err != nil || got != want {
			t.Errorf("DSN database %q: CurrentDatabase = %q, %v; want %q", db, got, err, want)
		}
	}
}
