package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/internal/sandbox"
	"github.com/stacktune/stacktune/internal/sandbox/sandboxtest"
)

// TestCollectCLI collects from real throwaway servers into a snapshot file,
// including a wrong password and an unreachable cache, which are recorded
// while the rest is collected.
func TestCollectCLI(t *testing.T) {
	db := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	ng := sandboxtest.NewNginx(t, sandbox.NginxOptions{})
	mc := sandboxtest.NewMemcached(t, sandbox.MemcachedOptions{Socket: true})
	rd := sandboxtest.NewRedis(t, sandbox.RedisOptions{})
	out := filepath.Join(t.TempDir(), "snap.json")

	_, errOut, err := run(t, "", "collect", "--dsn", db.DSN(""), "--interval", "200ms", "--nginx-conf", ng.ConfigPath(),
		"--memcached", mc.Addr(), "--redis", rd.Addr(), "-o", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	s, err := collect.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.MySQL == nil || s.Linux == nil || s.Nginx == nil || s.Memcached == nil || s.Redis == nil {
		t.Fatalf("layers missing; errors %+v", s.Errors)
	}
	if s.MySQL.Flavor != "mariadb" || s.Linux.Cores <= 0 || !s.Memcached.Unix {
		t.Errorf("mysql %q cores %d memcached unix %v", s.MySQL.Flavor, s.Linux.Cores, s.Memcached.Unix)
	}

	// A wrong password and a dead cache: recorded, the rest collected, the
	// password never written.
	stdout, _, err := run(t, "", "collect", "--dsn", "root:n0t-the-pw@unix("+db.Socket()+")/", "--memcached", "127.0.0.1:1", "--interval", "100ms")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stdout, "n0t-the-pw") {
		t.Fatal("password written into the snapshot")
	}
	var partial collect.Snapshot
	if err := json.Unmarshal([]byte(stdout), &partial); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range partial.Errors {
		got[e.Collector] = e.Error
	}
	if !strings.Contains(got["mysql"], "access denied") || got["memcached"] == "" || partial.Linux == nil {
		t.Errorf("errors %v, linux %v", got, partial.Linux != nil)
	}

	if _, _, err := run(t, "", "collect", "--no-linux"); err == nil || !strings.Contains(err.Error(), "nothing to collect") {
		t.Errorf("empty collect: %v", err)
	}
	if _, _, err := run(t, "", "collect", "--no-linux", "--memcached", mc.Addr(), "-o", filepath.Join(t.TempDir(), "no", "such", "dir.json")); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	os.Remove(out)
}
