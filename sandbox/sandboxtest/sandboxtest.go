// Package sandboxtest starts the sandbox's throwaway servers for a test:
// each is stopped in t.Cleanup, and a failed test logs the tail of the
// server's logs. It is the only place package testing meets package
// sandbox, so the stacktune binary does not link package testing.
package sandboxtest

import (
	"context"
	"testing"

	"github.com/stacktune/stacktune/sandbox"
)

// server is what every sandbox server type offers to the helpers.
type server interface {
	Stop() error
	Diagnostics() string
}

// register stops s at the end of the test; if the test failed, it first
// logs the tail of the server's logs to help explain the failure.
func register(t testing.TB, s server) {
	t.Cleanup(func() {
		if t.Failed() {
			if d := s.Diagnostics(); d != "" {
				t.Log(d)
			}
		}
		if err := s.Stop(); err != nil {
			t.Errorf("sandbox: stop: %v", err)
		}
	})
}

// start runs a sandbox start function for the test, and calls t.Fatal
// with the full error (naming the Debian package to install when the
// server is missing) if it cannot start. It never skips.
func start[S server, O any](t testing.TB, fn func(context.Context, O) (S, error), opts O) S {
	t.Helper()
	s, err := fn(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	register(t, s)
	return s
}

// NewMariaDB starts a MariaDB for the test.
func NewMariaDB(t testing.TB, opts sandbox.MariaDBOptions) *sandbox.MariaDB {
	t.Helper()
	return start(t, sandbox.StartMariaDB, opts)
}

// NewNginx starts an nginx for the test.
func NewNginx(t testing.TB, opts sandbox.NginxOptions) *sandbox.Nginx {
	t.Helper()
	return start(t, sandbox.StartNginx, opts)
}

// NewMemcached starts a memcached for the test.
func NewMemcached(t testing.TB, opts sandbox.MemcachedOptions) *sandbox.Memcached {
	t.Helper()
	return start(t, sandbox.StartMemcached, opts)
}

// NewRedis starts a redis-server for the test.
func NewRedis(t testing.TB, opts sandbox.RedisOptions) *sandbox.Redis {
	t.Helper()
	return start(t, sandbox.StartRedis, opts)
}

// NewSSHD starts an sshd for the test.
func NewSSHD(t testing.TB, opts sandbox.SSHDOptions) *sandbox.SSHD {
	t.Helper()
	return start(t, sandbox.StartSSHD, opts)
}

// NewFleetLab starts a fleet of SSH hosts in network namespaces for the
// test (see sandbox.StartFleetLab).
func NewFleetLab(t testing.TB, opts sandbox.FleetLabOptions) *sandbox.FleetLab {
	t.Helper()
	return start(t, sandbox.StartFleetLab, opts)
}

// NewPHPFPM starts a PHP-FPM master with one pool for the test.
func NewPHPFPM(t testing.TB, opts sandbox.PHPFPMOptions) *sandbox.PHPFPM {
	t.Helper()
	return start(t, sandbox.StartPHPFPM, opts)
}
