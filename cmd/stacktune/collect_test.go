package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
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

// TestCollectFlags checks that collect and audit offer every registered
// collector's flags, with the names and defaults they always had, and the
// --dsn flags for the collector that needs a server.
func TestCollectFlags(t *testing.T) {
	want := map[string]string{
		"dsn": "", "dsn-env": "", "defaults-file": "", "no-defaults": "false",
		"interval": "10s", "nginx-conf": "", "memcached": "", "redis": "", "redis-password-env": "",
		"proc-root": "/proc", "no-linux": "false",
	}
	for _, r := range collect.Registered() {
		for _, f := range r.Flags {
			if _, ok := want[f.Name]; !ok {
				want[f.Name] = f.Default
			}
		}
	}
	for _, name := range []string{"collect", "audit"} {
		cmd, _, err := newRootCmd(strings.NewReader(""), io.Discard, io.Discard).Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		for flag, def := range want {
			f := cmd.Flags().Lookup(flag)
			if f == nil {
				t.Errorf("%s: no --%s", name, flag)
				continue
			}
			if f.DefValue != def {
				t.Errorf("%s --%s: default %q, want %q", name, flag, f.DefValue, def)
			}
		}
	}
	_, _, err := run(t, "", "collect", "--no-linux")
	if want := "nothing to collect: give --dsn, --nginx-conf, --memcached, --redis, --php-fpm-conf, --http-log or --queries (or drop --no-linux)"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if _, _, err := run(t, "", "audit", "--no-linux"); err == nil || !strings.Contains(err.Error(), "nothing to collect") {
		t.Errorf("audit: %v", err)
	}
}

// TestCollectWithoutServers follows the flags to the collectors with no
// server running: --proc-root reaches Linux, and a DSN variable that is not
// set and dead caches are recorded, in run order, while the rest is
// collected and audited.
func TestCollectWithoutServers(t *testing.T) {
	t.Setenv("STACKTUNE_TEST_NO_DSN", "")
	args := []string{"--proc-root", "../../collect/testdata/linux-basic", "--dsn-env", "STACKTUNE_TEST_NO_DSN", "--interval", "100ms",
		"--memcached", "127.0.0.1:1", "--redis", "unix:" + filepath.Join(t.TempDir(), "none.sock")}
	out, errOut, err := run(t, "", append([]string{"collect"}, args...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var s collect.Snapshot
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.Linux == nil || s.Linux.Cores != 4 || s.MySQL != nil {
		t.Errorf("linux %+v mysql %v", s.Linux, s.MySQL != nil)
	}
	var got []string
	for _, e := range s.Errors {
		got = append(got, e.Collector)
	}
	if strings.Join(got, " ") != "mysql memcached redis" || !strings.Contains(s.Errors[0].Error, "--dsn-env STACKTUNE_TEST_NO_DSN") {
		t.Errorf("errors %+v", s.Errors)
	}
	out, errOut, err = run(t, "", append([]string{"audit", "--format", "json"}, args...)...)
	if err != nil || !strings.Contains(out, `"collector_errors"`) {
		t.Errorf("audit: %v\n%s\n%s", err, out, errOut)
	}
}
