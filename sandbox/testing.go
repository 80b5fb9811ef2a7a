package sandbox

import (
	"context"
	"strings"
	"testing"
)

// stopper is what every server type offers to the test helpers.
type stopper interface {
	Stop() error
}

// register stops s at the end of the test; if the test failed, it first
// logs the tail of the server's logs to help explain the failure.
func register(t testing.TB, s stopper, in *instance) {
	t.Cleanup(func() {
		if t.Failed() {
			if tail := in.logTail(); tail != "" {
				t.Logf("sandbox %s in %s:%s", in.name, in.dir, strings.TrimRight(tail, "\n"))
			}
		}
		if err := s.Stop(); err != nil {
			t.Errorf("sandbox: stop %s: %v", in.name, err)
		}
	})
}

// NewMariaDB starts a MariaDB for the test, stops it in t.Cleanup, and
// calls t.Fatal with the full error (naming the Debian package to install
// when mariadbd is missing) if it cannot start. It never skips.
func NewMariaDB(t testing.TB, opts MariaDBOptions) *MariaDB {
	t.Helper()
	m, err := StartMariaDB(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	register(t, m, &m.inst)
	return m
}

// NewNginx starts an nginx for the test, stops it in t.Cleanup, and calls
// t.Fatal with the full error if it cannot start. It never skips.
func NewNginx(t testing.TB, opts NginxOptions) *Nginx {
	t.Helper()
	n, err := StartNginx(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	register(t, n, &n.inst)
	return n
}

// NewMemcached starts a memcached for the test, stops it in t.Cleanup, and
// calls t.Fatal with the full error if it cannot start. It never skips.
func NewMemcached(t testing.TB, opts MemcachedOptions) *Memcached {
	t.Helper()
	m, err := StartMemcached(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	register(t, m, &m.inst)
	return m
}

// NewRedis starts a redis-server for the test, stops it in t.Cleanup, and
// calls t.Fatal with the full error if it cannot start. It never skips.
func NewRedis(t testing.TB, opts RedisOptions) *Redis {
	t.Helper()
	r, err := StartRedis(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	register(t, r, &r.inst)
	return r
}
