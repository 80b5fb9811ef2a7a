package dbconn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMask(t *testing.T) {
	cases := []struct{ dsn, want string }{
		{"app:s3cret@tcp(10.0.0.5:3306)/shop", "app:***@tcp(10.0.0.5:3306)/shop"},
		{"root@unix(/run/mysqld/mysqld.sock)/", "root@unix(/run/mysqld/mysqld.sock)/"},
		{"app:p@ss:w0rd@tcp(db:3306)/x?parseTime=true", "app:***@tcp(db:3306)/x?parseTime=true"},
		{"not a dsn at all :secret@", "(unparseable DSN)"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			got := Mask(tc.dsn)
			if got != tc.want {
				t.Errorf("Mask(%q) = %q, want %q", tc.dsn, got, tc.want)
			}
			for _, secret := range []string{"s3cret", "p@ss:w0rd", "secret"} {
				if strings.Contains(tc.dsn, secret) && strings.Contains(got, secret) {
					t.Errorf("password %q leaked", secret)
				}
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, "app:hunter2@tcp(127.0.0.1:1)/db", 2*time.Second)
	if !errors.Is(err, ErrUnreachable) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("unreachable: %v", err)
	}
	_, err = Open(ctx, "app:hunter2@bogus", time.Second)
	if !errors.Is(err, ErrBadDSN) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad DSN: %v", err)
	}
}
