package loadgen

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCheckConnections(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		nofile uint64 // 0: unknown
		want   string // "" = accepted
		max    int
		byFile bool
	}{
		{name: "default under a small limit", n: DefaultConnections, nofile: 1024},
		{name: "the cap, limit unknown", n: MaxConnections, nofile: 0},
		{name: "above the cap, limit unknown", n: MaxConnections + 1, nofile: 0, want: "more than the cap of 10000", max: MaxConnections},
		{name: "above the cap under a large limit", n: 20000, nofile: 1 << 20, want: "more than the cap of 10000", max: MaxConnections},
		{name: "what a limit of 1024 allows", n: 1024 - ReservedFiles, nofile: 1024},
		{name: "one more than a limit of 1024 allows", n: 1024 - ReservedFiles + 1, nofile: 1024, want: "RLIMIT_NOFILE) is 1024, which allows at most 924", max: 924, byFile: true},
		{name: "limit below the reserve", n: 1, nofile: 50, want: "allows at most 0", max: 0, byFile: true},
		{name: "limit just above the cap", n: MaxConnections, nofile: MaxConnections + ReservedFiles},
		{name: "limit just below the cap", n: MaxConnections, nofile: MaxConnections + ReservedFiles - 1, want: "allows at most 9999", max: 9999, byFile: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkConnections(tt.n, tt.nofile)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ce *ConnectionsError
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *ConnectionsError containing %q", err, tt.want)
			}
			if ce.N != tt.n || ce.Max != tt.max || (ce.NoFile != 0) != tt.byFile {
				t.Errorf("%+v, want max %d (by the open-files limit: %v)", ce, tt.max, tt.byFile)
			}
		})
	}
}

func TestRunRefusesTooManyConnections(t *testing.T) {
	var users int
	plan := Workload{NewUser: func(int) (User, error) { users++; return &fakeUser{do: instant}, nil }}
	res, err := Run(context.Background(), plan, Options{Connections: MaxConnections + 1, Requests: 1})
	var ce *ConnectionsError
	if !errors.As(err, &ce) || res != nil || users != 0 {
		t.Fatalf("Run = %v, %v after %d users; want a *ConnectionsError before any user", res, err, users)
	}
}
