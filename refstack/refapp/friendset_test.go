package refapp

import (
	"context"
	"net/http"
	"testing"
)

// TestFriendSet serves the home page with the per-row isFriend queries
// and with FriendSet, and wants the same page for several users with far
// fewer queries (counted by the server: Com_select).
func TestFriendSet(t *testing.T) {
	m, _ := newDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	selects := func() int64 {
		var name string
		var n int64
		if err := m.DB().QueryRow("SHOW GLOBAL STATUS LIKE 'Com_select'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	start := func(set bool) *Server {
		srv, err := Start(ctx, Config{DSN: m.DSN("refapp"), FriendSet: set})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		return srv
	}
	naive, fixed := start(false), start(true)
	for _, user := range []int{1, 2, 37} {
		home := func(srv *Server) (string, int64) {
			c := client(t, nil)
			login(t, c, srv.URL(), user)
			before := selects()
			st, body, _ := fetch(t, c, http.MethodGet, srv.URL()+"/", nil)
			if st != http.StatusOK {
				t.Fatalf("user %d: status %d", user, st)
			}
			return body, selects() - before
		}
		want, nq := home(naive)
		got, fq := home(fixed)
		if got != want {
			t.Errorf("user %d: the home page differs with FriendSet:\nnaive:\n%s\nfixed:\n%s", user, want, got)
		}
		t.Logf("user %d: %d SELECTs naive, %d with FriendSet", user, nq, fq)
		if fq*2 > nq {
			t.Errorf("user %d: %d SELECTs with FriendSet against %d naive: the N+1 is still there", user, fq, nq)
		}
	}
}
