package refapp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestCacheBatch serves the same data with the naive cache and with
// CacheBatch, each with its own memcached, and wants the same pages, far
// fewer round trips with batching, sets only on a miss, and a TTL.
func TestCacheBatch(t *testing.T) {
	m, _ := newDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type app struct {
		srv *Server
		mc  *sandbox.Memcached
		c   *http.Client
	}
	start := func(batch bool) app {
		mc := sandboxtest.NewMemcached(t, sandbox.MemcachedOptions{})
		srv, err := Start(ctx, Config{DSN: m.DSN("refapp"), Memcached: mc.Addr(), CacheBatch: batch})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		c := client(t, nil)
		login(t, c, srv.URL(), 1)
		return app{srv, mc, c}
	}
	naive, batch := start(false), start(true)

	get := func(a app, path string) (string, CacheStats) {
		t.Helper()
		before := a.srv.CacheStats()
		st, body, _ := fetch(t, a.c, http.MethodGet, a.srv.URL()+path, nil)
		if st != http.StatusOK {
			t.Fatalf("GET %s: status %d: %.200s", path, st, body)
		}
		after := a.srv.CacheStats()
		return body, CacheStats{
			RoundTrips: after.RoundTrips - before.RoundTrips, Gets: after.Gets - before.Gets,
			Keys: after.Keys - before.Keys, Hits: after.Hits - before.Hits, Sets: after.Sets - before.Sets,
		}
	}

	// Pages whose content no request of this test changes (footprints are
	// left on user 2 and on entry 1's owner, never shown to user 1 here
	// but on their pages, which are not compared after a visit).
	pages := []string{"/", "/friends", "/footprints", "/diary/entry/1", "/profile/" + AccountName(2), "/diary/entries/" + AccountName(2)}
	for _, p := range pages {
		want, naiveStats := get(naive, p)
		cold, coldStats := get(batch, p)
		warm, warmStats := get(batch, p)
		if cold != want || warm != want {
			t.Errorf("GET %s differs with CacheBatch (cold %v, warm %v):\nnaive:\n%s\nbatched:\n%s", p, cold == want, warm == want, want, cold)
		}
		t.Logf("GET %-28s naive %+v; batched cold %+v, warm %+v", p, naiveStats, coldStats, warmStats)
		if warmStats.Sets != 0 || coldStats.Sets != coldStats.Keys-coldStats.Hits {
			t.Errorf("GET %s batched: cold %+v, warm %+v: want a set per miss and none on a warm cache", p, coldStats, warmStats)
		}
		if warmStats.RoundTrips > 3 {
			t.Errorf("GET %s batched on a warm cache: %d round trips, want at most 3 (the session's user and one multi-get)", p, warmStats.RoundTrips)
		}
	}

	// The home page: about two round trips per user shown, against two.
	_, naiveHome := get(naive, "/")
	_, batchHome := get(batch, "/")
	if naiveHome.RoundTrips < 10 || naiveHome.Sets != naiveHome.Hits {
		t.Errorf("naive home: %+v, want a get and a set per user shown", naiveHome)
	}
	if batchHome.RoundTrips != 2 || batchHome.Gets != 2 || batchHome.Sets != 0 || batchHome.Hits != batchHome.Keys {
		t.Errorf("batched home on a warm cache: %+v, want 2 gets, all hits, no set", batchHome)
	}

	// Batched sets carry a TTL of an hour; naive ones none (meta get's t
	// flag: the remaining TTL, -1 for none).
	ttl := func(mc *sandbox.Memcached) int {
		line := exchangeLine(t, mc, "mg "+userKey(1)+" t\r\n")
		f := strings.Fields(line)
		if len(f) != 2 || f[0] != "HD" || !strings.HasPrefix(f[1], "t") {
			t.Fatalf("mg reply %q", line)
		}
		n, err := strconv.Atoi(f[1][1:])
		if err != nil {
			t.Fatalf("mg reply %q", line)
		}
		return n
	}
	if n := ttl(naive.mc); n != -1 {
		t.Errorf("naive TTL %d, want -1 (none)", n)
	}
	if n := ttl(batch.mc); n < CacheTTL-60 || n > CacheTTL {
		t.Errorf("batched TTL %d, want about %d", n, CacheTTL)
	}
}

// exchangeLine sends req to mc and returns the first reply line.
func exchangeLine(t *testing.T, mc *sandbox.Memcached, req string) string {
	t.Helper()
	c, err := net.DialTimeout(mc.Network(), mc.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("reply to %q: %v", req, err)
	}
	return strings.TrimRight(line, "\r\n")
}

func TestConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "refapp.json")
	cfg := Config{Listen: "unix:/tmp/app.sock", DSN: "root@unix(/tmp/m.sock)/refapp", Memcached: "/tmp/mc.sock", CacheBatch: true}
	if err := cfg.Write(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"listen"`, `"dsn"`, `"memcached"`, `"cache_batch": true`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("written config lacks %s:\n%s", key, data)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600", fi.Mode(), err)
	}
	got, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cfg) {
		t.Errorf("LoadConfig = %+v, want %+v", got, cfg)
	}
	// A tool's edit: the default (false) when the key is missing.
	if err := os.WriteFile(path, []byte(`{"dsn": "root@tcp(127.0.0.1:3306)/refapp"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadConfig(path); err != nil || got != (Config{DSN: "root@tcp(127.0.0.1:3306)/refapp"}) {
		t.Errorf("partial file: %+v, %v", got, err)
	}
	for _, bad := range []string{`{"cache_bach": true}`, `{"listen": 1}`, `{} {}`, `not json`} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(path); err == nil {
			t.Errorf("LoadConfig accepted %s", bad)
		}
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("LoadConfig of a missing file succeeded")
	}
}
