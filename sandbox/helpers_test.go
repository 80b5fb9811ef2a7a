package sandbox

import (
	"context"
	"testing"
)

// The package's own tests start servers as sandboxtest does (which they
// cannot import: it imports this package).
func startFor[S interface {
	Stop() error
	Diagnostics() string
}, O any](t *testing.T, fn func(context.Context, O) (S, error), opts O) S {
	t.Helper()
	s, err := fn(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(s.Diagnostics())
		}
		if err := s.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return s
}

func NewMariaDB(t *testing.T, o MariaDBOptions) *MariaDB {
	t.Helper()
	return startFor(t, StartMariaDB, o)
}
func NewNginx(t *testing.T, o NginxOptions) *Nginx { t.Helper(); return startFor(t, StartNginx, o) }
func NewMemcached(t *testing.T, o MemcachedOptions) *Memcached {
	t.Helper()
	return startFor(t, StartMemcached, o)
}
func NewRedis(t *testing.T, o RedisOptions) *Redis    { t.Helper(); return startFor(t, StartRedis, o) }
func NewPHPFPM(t *testing.T, o PHPFPMOptions) *PHPFPM { t.Helper(); return startFor(t, StartPHPFPM, o) }
