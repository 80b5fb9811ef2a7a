package refapp

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
	"github.com/stacktune/stacktune/scenario"
)

func TestScenarioLoads(t *testing.T) {
	sc, err := scenario.Load("scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.SetBaseURL("http://127.0.0.1:9"); err != nil {
		t.Fatalf("SetBaseURL: %v", err)
	}
	if sc.BaseURL != "http://127.0.0.1:9" {
		t.Errorf("BaseURL = %q", sc.BaseURL)
	}
	if _, err := sc.Workload(scenario.WorkloadOptions{}); err != nil {
		t.Fatalf("Plan: %v", err)
	}
	users, passwords, ids := sc.Data["users"], sc.Data["passwords"], sc.Data["entry_ids"]
	if len(users) == 0 || len(users) != len(passwords) {
		t.Fatalf("%d users, %d passwords", len(users), len(passwords))
	}
	for i, u := range users {
		if u != AccountName(i+1) || passwords[i] != Password(i+1) {
			t.Errorf("row %d: %s/%s, want %s/%s", i, u, passwords[i], AccountName(i+1), Password(i+1))
		}
	}
	if len(users) > tinySizes.Users {
		t.Errorf("%d scenario users, the test data has %d", len(users), tinySizes.Users)
	}
	for _, s := range ids {
		id, err := strconv.Atoi(s)
		if err != nil || id < 1 || id > tinySizes.Users*tinySizes.EntriesPerUser || IsPrivate(id) {
			t.Errorf("entry id %q is not a public generated entry", s)
		}
	}
}

func TestGenerateRejectsScale(t *testing.T) {
	if err := Generate(context.Background(), nil, 0); err == nil {
		t.Fatal("scale 0 accepted")
	}
}

// stack is one MariaDB (with a generated tiny data set) and memcached over
// TCP, shared by the subtests.
func newDB(t *testing.T) (*sandbox.MariaDB, *sql.DB) {
	t.Helper()
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	ctx := context.Background()
	if _, err := m.DB().ExecContext(ctx, "CREATE DATABASE refapp"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", m.DSN("refapp"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	start := time.Now()
	if err := generate(ctx, db, tinySizes); err != nil {
		t.Fatal(err)
	}
	t.Logf("generated the tiny data set in %s", time.Since(start).Round(time.Millisecond))
	return m, db
}

// client is a logged-out browser that does not follow redirects.
func client(t *testing.T, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Client {
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{DialContext: dial}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Jar:           jar,
		Transport:     tr,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func fetch(t *testing.T, c *http.Client, method, u string, form url.Values) (int, string, http.Header) {
	t.Helper()
	var resp *http.Response
	var err error
	if method == http.MethodPost {
		resp, err = c.PostForm(u, form)
	} else {
		resp, err = c.Get(u)
	}
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// count returns how many elements match sel in body.
func count(t *testing.T, body, sel string) int {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return len(cascadia.MustCompile(sel).MatchAll(doc))
}

func login(t *testing.T, c *http.Client, base string, id int) {
	t.Helper()
	st, body, h := fetch(t, c, http.MethodPost, base+"/login", url.Values{"email": {Email(id)}, "password": {Password(id)}})
	if st != http.StatusFound || h.Get("Location") != "/" {
		t.Fatalf("login: status %d, Location %q: %s", st, h.Get("Location"), body)
	}
}

func TestApp(t *testing.T) {
	m, db := newDB(t)
	mc := sandboxtest.NewMemcached(t, sandbox.MemcachedOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Start(ctx, Config{DSN: m.TCPDSN("refapp"), Memcached: mc.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.Network() != "tcp" || !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("Network %q, URL %q", srv.Network(), srv.URL())
	}
	base := srv.URL()
	c := client(t, nil)

	t.Run("login", func(t *testing.T) {
		if st, _, h := fetch(t, c, http.MethodGet, base+"/", nil); st != http.StatusFound || h.Get("Location") != "/login" {
			t.Errorf("logged out home: %d to %q, want 302 to /login", st, h.Get("Location"))
		}
		st, body, _ := fetch(t, c, http.MethodPost, base+"/login", url.Values{"email": {Email(1)}, "password": {"wrong"}})
		if st != http.StatusUnauthorized || count(t, body, "#login-error") != 1 {
			t.Errorf("bad password: status %d", st)
		}
		login(t, c, base, 1)
	})

	pages := []struct {
		path    string
		markers map[string]int // selector → minimum matches
	}{
		{"/", map[string]int{"#welcome": 1, "#prof-account-name": 1, "#friends-count": 1, "#entries": 1,
			"#comments-for-me": 1, "#friend-entries li.friend-entry": 1, "#friend-comments li.friend-comment": 1, "#footprints": 1}},
		{"/profile/" + AccountName(2), map[string]int{"#profile-account-name": 1, "#profile-entries": 1}},
		{"/profile/" + AccountName(1), map[string]int{"#profile-account-name": 1, "#profile-friend": 1}},
		{"/diary/entries/" + AccountName(2), map[string]int{"#diary-owner": 1, "#diary-entries": 1}},
		{"/diary/entry/1", map[string]int{"#entry-title": 1, "#entry-body": 1, "#entry-comments": 1, "#comment-form": 1}},
		{"/footprints", map[string]int{"#footprints-title": 1, "#footprints li.footprint": 1}},
		{"/friends", map[string]int{"#friends li.friend": 1}},
	}
	t.Run("pages", func(t *testing.T) {
		for _, p := range pages {
			st, body, _ := fetch(t, c, http.MethodGet, base+p.path, nil)
			if st != http.StatusOK {
				t.Errorf("GET %s: status %d: %.200s", p.path, st, body)
				continue
			}
			for sel, min := range p.markers {
				if n := count(t, body, sel); n < min {
					t.Errorf("GET %s: %q matched %d, want ≥ %d", p.path, sel, n, min)
				}
			}
		}
		if st, _, _ := fetch(t, c, http.MethodGet, base+"/profile/nobody", nil); st != http.StatusNotFound {
			t.Errorf("unknown profile: status %d, want 404", st)
		}
		if st, _, _ := fetch(t, c, http.MethodGet, base+"/diary/entry/999999", nil); st != http.StatusNotFound {
			t.Errorf("unknown entry: status %d, want 404", st)
		}
	})

	t.Run("comment and initialize", func(t *testing.T) {
		const text = "a comment from the test"
		st, _, h := fetch(t, c, http.MethodPost, base+"/diary/comment/1", url.Values{"comment": {text}})
		if st != http.StatusFound || h.Get("Location") != "/diary/entry/1" {
			t.Fatalf("comment: status %d to %q", st, h.Get("Location"))
		}
		_, body, _ := fetch(t, c, http.MethodGet, base+"/diary/entry/1", nil)
		if !strings.Contains(body, text) {
			t.Fatal("the comment is not on the entry page")
		}
		st, body, _ = fetch(t, c, http.MethodGet, base+"/initialize", nil)
		if st != http.StatusOK {
			t.Fatalf("initialize: %d %s", st, body)
		}
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM footprints WHERE id > (SELECT max_id FROM generated WHERE name = 'footprints')").Scan(&n); err != nil || n != 0 {
			t.Errorf("footprints left after /initialize: %d (%v)", n, err)
		}
		if _, body, _ = fetch(t, c, http.MethodGet, base+"/diary/entry/1", nil); strings.Contains(body, text) {
			t.Error("the comment survived /initialize")
		}
	})

	t.Run("private entry", func(t *testing.T) {
		// Find a private entry whose owner is no friend of user 1.
		var id int
		err := db.QueryRow(`SELECT e.id FROM entries e WHERE e.private = 1 AND e.user_id <> 1 AND NOT EXISTS
  (SELECT 1 FROM relations r WHERE (r.one = 1 AND r.another = e.user_id) OR (r.another = 1 AND r.one = e.user_id)) ORDER BY e.id LIMIT 1`).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		if st, _, _ := fetch(t, c, http.MethodGet, base+"/diary/entry/"+strconv.Itoa(id), nil); st != http.StatusForbidden {
			t.Errorf("a stranger's private entry %d: status %d, want 403", id, st)
		}
	})

	t.Run("every scenario user", func(t *testing.T) {
		checkScenarioUsers(t, db)
	})

	t.Run("cache faults", func(t *testing.T) {
		// /friends reads each friend with its own get and writes it back
		// with set even on a hit: the second view sets as many as it hits.
		fetch(t, c, http.MethodGet, base+"/friends", nil)
		before := mcStats(t, mc.Addr())
		_, body, _ := fetch(t, c, http.MethodGet, base+"/friends", nil)
		after := mcStats(t, mc.Addr())
		friends := count(t, body, "#friends li.friend")
		hits, sets := after["get_hits"]-before["get_hits"], after["cmd_set"]-before["cmd_set"]
		if friends == 0 || hits < friends || sets < friends {
			t.Errorf("%d friends: %d hits, %d sets; want at least one of each per friend", friends, hits, sets)
		}
	})

	t.Run("scenario", func(t *testing.T) {
		runScenario(t, base)
	})
}

// runScenario drives a few scenario users directly and wants no error.
func runScenario(t *testing.T, base string) {
	sc, err := scenario.Load("scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.SetBaseURL(base); err != nil {
		t.Fatal(err)
	}
	plan, err := sc.Workload(scenario.WorkloadOptions{Timeout: 10 * time.Second, KeepAlive: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	const users, requests = 4, 25
	var mu sync.Mutex
	perStep := make(map[string]int)
	var wg sync.WaitGroup
	for id := 0; id < users; id++ {
		u, err := plan.NewUser(id)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer u.Close()
			for range requests {
				s := u.Do(context.Background(), time.Now())
				name := plan.Steps[s.Step]
				mu.Lock()
				perStep[name]++
				mu.Unlock()
				if s.Err != loadgen.OK {
					t.Errorf("user %d, step %s: %s: %s", id, name, s.Err, s.Detail)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("requests per step: %v", perStep)
	if perStep["login"] != users {
		t.Errorf("%d logins, want %d", perStep["login"], users)
	}
}

func TestUnixSockets(t *testing.T) {
	m, _ := newDB(t)
	mc := sandboxtest.NewMemcached(t, sandbox.MemcachedOptions{Socket: true})
	dir := t.TempDir()
	notSock := filepath.Join(dir, "file")
	if err := os.WriteFile(notSock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), Config{Listen: "unix:" + notSock, DSN: m.DSN("refapp")}); err == nil {
		t.Error("Start listened over a regular file")
	}
	// A stale socket (left by a killed server) is replaced.
	sock := filepath.Join(dir, "app.sock")
	stale, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Start(ctx, Config{Listen: "unix:" + sock, DSN: m.DSN("refapp"), Memcached: mc.SocketPath()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.Network() != "unix" || srv.Addr() != sock {
		t.Fatalf("Network %q, Addr %q", srv.Network(), srv.Addr())
	}
	c := client(t, func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	})
	login(t, c, srv.URL(), 3)
	for _, p := range []string{"/", "/friends", "/diary/entry/2"} {
		st, body, _ := fetch(t, c, http.MethodGet, srv.URL()+p, nil)
		if st != http.StatusOK {
			t.Errorf("GET %s over the socket: %d: %.200s", p, st, body)
		}
	}
	// The cache was used over its socket: user 3 is in it.
	if v, err := srv.mc.get("user:3"); err != nil || !strings.Contains(string(v), AccountName(3)) {
		t.Errorf("memcached user:3 = %q, %v", v, err)
	}
	// Cancelling Start's context stops the server; Close still works.
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(sock); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the socket is still there after the context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// mcStats reads memcached's counters.
func mcStats(t *testing.T, addr string) map[string]int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "stats\r\n"); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int)
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(line)
		if len(f) == 1 && f[0] == "END" {
			return out
		}
		if len(f) == 3 && f[0] == "STAT" {
			if n, err := strconv.Atoi(f[2]); err == nil {
				out[f[1]] = n
			}
		}
	}
}

// checkScenarioUsers checks, in SQL, that every user the scenario logs in
// as has a home page its checks accept: a friend and a friend's entry among
// the latest 1000.
func checkScenarioUsers(t *testing.T, db *sql.DB) {
	t.Helper()
	sc, err := scenario.Load("scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const q = `SELECT u.id FROM users u WHERE u.id <= ? AND NOT EXISTS (
  SELECT 1 FROM (SELECT user_id FROM entries ORDER BY created_at DESC LIMIT 1000) le
  JOIN relations r ON (r.one = u.id AND r.another = le.user_id) OR (r.another = u.id AND r.one = le.user_id))`
	rows, err := db.Query(q, len(sc.Data["users"]))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%s has no friend entry on the home page: the scenario's home check fails for it", AccountName(id))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestScenarioCatchesBrokenPages runs the scenario against pages that
// answer 200 without their content: every page step must fail its check,
// so a "fix" that breaks a page cannot pass a bench run.
func TestScenarioCatchesBrokenPages(t *testing.T) {
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Redirect(w, r, "/", http.StatusFound)
			return
		}
		io.WriteString(w, "<!DOCTYPE html><html><body><h1>Welcome</h1></body></html>")
	}))
	defer broken.Close()
	sc, err := scenario.Load("scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.SetBaseURL(broken.URL); err != nil {
		t.Fatal(err)
	}
	plan, err := sc.Workload(scenario.WorkloadOptions{Timeout: 5 * time.Second, KeepAlive: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	u, err := plan.NewUser(0)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	seen := make(map[string]bool)
	for range 300 {
		s := u.Do(context.Background(), time.Now())
		name := plan.Steps[s.Step]
		seen[name] = true
		passes := name == "login" || name == "comment"
		if passes != (s.Err == loadgen.OK) {
			t.Errorf("step %s on a broken page: %q %s", name, s.Err, s.Detail)
		}
	}
	for _, name := range plan.Steps {
		if !seen[name] {
			t.Errorf("step %s never ran", name)
		}
	}
}
