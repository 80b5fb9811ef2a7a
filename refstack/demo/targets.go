package demo

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/go-sql-driver/mysql"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/sandbox"
)

// The demo's own apply targets: the app's configuration file and the
// memcached the stack started. Changes of kind "code" (the app reaches
// MySQL through a socket, a cache client that batches) are what a
// developer would change in the application; the reference app has each
// fix behind a setting, so the loop can apply and measure it the same way
// as a server setting.

// appTarget replaces the app's JSON config and restarts the app. It
// wants only the settings it changes from the config the app ran with
// when the step was planned, so a later step's change to another setting
// does not read as this one lost.
type appTarget struct {
	s         *stack
	cfg, base refapp.Config
}

// newAppTarget changes the running app's config to cfg.
func newAppTarget(s *stack, cfg refapp.Config) *appTarget {
	return &appTarget{s: s, cfg: cfg, base: s.appCfg}
}

func appState(c refapp.Config) apply.State {
	return apply.State{"listen": c.Listen, "dsn": c.DSN, "memcached": c.Memcached,
		"cache_batch": strconv.FormatBool(c.CacheBatch), "friend_set": strconv.FormatBool(c.FriendSet), "sql_tags": strconv.FormatBool(c.SQLTags),
		"profiling": strconv.FormatBool(c.Profiling), "profile_labels": strconv.FormatBool(c.ProfileLabels), "burn_rounds": strconv.Itoa(c.BurnRounds)}
}

func (a *appTarget) Name() string { return "app" }
func (a *appTarget) Files() []apply.File {
	return []apply.File{{Path: a.s.appConfig, Data: a.cfg.JSON(), Perm: 0o600}}
}
func (a *appTarget) Wanted() apply.State {
	want, base := appState(a.cfg), appState(a.base)
	for k, v := range base {
		if want[k] == v {
			delete(want, k)
		}
	}
	return want
}
func (a *appTarget) Snapshot(context.Context) (apply.State, error) {
	return appState(a.s.appCfg), nil
}

// Validate reads the file back as the app will. The sockets it names
// may not exist yet (memcached moves to its socket in the same
// transaction, after validation): the restart in Activate finds out.
func (a *appTarget) Validate(context.Context) error {
	cfg, err := refapp.LoadConfig(a.s.appConfig)
	if err != nil {
		return err
	}
	if _, err := mysql.ParseDSN(cfg.DSN); err != nil {
		return fmt.Errorf("app DSN: %w", err)
	}
	return nil
}

func (a *appTarget) Activate(ctx context.Context, _ apply.State) error { return a.s.restartApp(ctx) }

func (a *appTarget) Verify(ctx context.Context, want apply.State) error {
	got := appState(a.s.appCfg)
	for k, v := range want {
		if got[k] != v {
			return fmt.Errorf("the app runs with %s = %q, wanted %q", k, got[k], v)
		}
	}
	return a.s.probeApp(ctx)
}

// memcachedTarget restarts the stack's memcached with other options (the
// memcached-unix-socket finding's -s).
type memcachedTarget struct {
	s   *stack
	opt sandbox.MemcachedOptions
}

func mcState(m *sandbox.Memcached) apply.State {
	return apply.State{"network": m.Network()}
}

func (m *memcachedTarget) Name() string { return "memcached" }
func (m *memcachedTarget) Wanted() apply.State {
	return apply.State{"network": map[bool]string{true: "unix", false: "tcp"}[m.opt.Socket]}
}
func (m *memcachedTarget) Snapshot(context.Context) (apply.State, error) {
	return mcState(m.s.mc), nil
}
func (m *memcachedTarget) Activate(ctx context.Context, want apply.State) error {
	opt := m.s.mcOpt
	opt.Socket = want["network"] == "unix"
	if err := m.s.mc.Restart(ctx, opt); err != nil {
		return err
	}
	m.s.mcOpt = opt
	return nil
}
func (m *memcachedTarget) Verify(_ context.Context, want apply.State) error {
	if got := m.s.mc.Network(); got != want["network"] {
		return fmt.Errorf("memcached listens on %s, wanted %s", got, want["network"])
	}
	return nil
}

// unixTransport is an HTTP transport that dials one unix socket.
func unixTransport(path string) *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		DisableKeepAlives: true,
	}
}
