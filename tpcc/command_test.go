package tpcc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/dbconn"
)

// TestConnOpenRefuses: no server and a DSN that does not parse are
// refused before anything is dialled, the latter masked.
func TestConnOpenRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Conn
		want error
	}{
		{"no server", Conn{}, ErrNoServer},
		{"bad DSN", Conn{DSN: "root:secret@tcp(host"}, dbconn.ErrBadDSN},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, _, err := tc.c.Open(context.Background(), false, 1)
			if db != nil || !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
			if tc.c.DSN != "" && strings.Contains(err.Error(), "secret") {
				t.Errorf("the password is in %q", err)
			}
		})
	}
}
