package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MemcachedOptions configures StartMemcached. The zero value listens on a
// free port on 127.0.0.1 with 64 MB of cache.
type MemcachedOptions struct {
	// Socket makes memcached listen on the unix socket Dir()/memcached.sock
	// instead of TCP (memcached cannot do both at once).
	Socket bool
	// MemoryMB is the cache size (-m); default 64.
	MemoryMB int
	// MaxConns is the connection limit (-c); default 1024.
	MaxConns int
	// ExtraArgs are appended to the memcached command line, e.g.
	// []string{"-t", "2", "-o", "modern"}.
	ExtraArgs []string
	// Dir holds the socket and the console log. Empty means a new temporary
	// directory that Stop removes; a caller's Dir is left in place.
	Dir string
	// StartTimeout bounds the wait for the server to answer; default 10s.
	StartTimeout time.Duration
	// Binary overrides the memcached binary (a path, or a name looked up in
	// PATH and /usr/sbin). Default: memcached.
	Binary string
}

// Memcached is a running throwaway memcached.
type Memcached struct {
	inst    instance
	network string
	addr    string
	port    int
	version string
}

const (
	memcachedPackage      = "memcached"
	memcachedStartTimeout = 10 * time.Second
	memcachedGrace        = 5 * time.Second
)

// StartMemcached starts memcached on a free loopback port (or a unix socket
// with Socket) and waits until it answers the "version" command.
func StartMemcached(ctx context.Context, opts MemcachedOptions) (*Memcached, error) {
	bin, err := lookBinary(opts.Binary, memcachedPackage, "memcached")
	if err != nil {
		return nil, err
	}
	dir, owned, err := serverDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	m := &Memcached{inst: instance{name: "memcached", dir: dir, owned: owned, grace: memcachedGrace}}
	ok := false
	defer func() {
		if !ok {
			_ = m.inst.stop()
		}
	}()
	base := []string{
		"-m", strconv.Itoa(orDefault(opts.MemoryMB, 64)),
		"-c", strconv.Itoa(orDefault(opts.MaxConns, 1024)),
		"-P", filepath.Join(dir, "memcached.pid"),
	}
	if os.Geteuid() == 0 {
		base = append(base, "-u", "root")
	}
	timeout := orDefault(opts.StartTimeout, memcachedStartTimeout)
	attempt := func(listen []string) error {
		args := append(append(append([]string(nil), base...), listen...), opts.ExtraArgs...)
		return m.inst.launch(ctx, timeout, bin, args, m.ping)
	}
	if opts.Socket {
		m.network, m.addr = "unix", filepath.Join(dir, "memcached.sock")
		if err := checkSocketPath(m.addr); err != nil {
			return nil, err
		}
		err = attempt([]string{"-s", m.addr, "-a", "0700"})
	} else {
		m.network = "tcp"
		err = startWithPortRetry(ctx, func(port int) error {
			m.port, m.addr = port, fmt.Sprintf("127.0.0.1:%d", port)
			return attempt([]string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0"})
		})
	}
	if err != nil {
		return nil, err
	}
	ok = true
	return m, nil
}

// ping sends "version" and records the reply.
func (m *Memcached) ping(ctx context.Context) error {
	line, err := textExchange(ctx, m.network, m.addr, "version\r\n")
	if err != nil {
		return err
	}
	v, found := strings.CutPrefix(line, "VERSION ")
	if !found {
		return fmt.Errorf("unexpected reply to version: %q", line)
	}
	m.version = v
	return nil
}

// Addr returns the address to dial: host:port for TCP, the socket path
// for a unix socket.
func (m *Memcached) Addr() string { return m.addr }

// Network returns "tcp" or "unix", for net.Dial(Network(), Addr()).
func (m *Memcached) Network() string { return m.network }

// Port returns the TCP port on 127.0.0.1, or 0 with Socket.
func (m *Memcached) Port() int { return m.port }

// SocketPath returns the unix socket path, or "" without Socket.
func (m *Memcached) SocketPath() string {
	if m.network == "unix" {
		return m.addr
	}
	return ""
}

// Version returns the version memcached reported, e.g. "1.6.18".
func (m *Memcached) Version() string { return m.version }

// Dir returns the server's directory.
func (m *Memcached) Dir() string { return m.inst.dir }

// LogPath returns the file receiving memcached's stdout and stderr (its
// only log; add "-v" to ExtraArgs for more).
func (m *Memcached) LogPath() string { return m.inst.consolePath() }

// PID returns the memcached process id.
func (m *Memcached) PID() int { return m.inst.pid() }

// Stop stops memcached (SIGTERM, then SIGKILL after a grace period) and
// removes the temporary directory. It is idempotent and safe to call from
// any goroutine.
func (m *Memcached) Stop() error { return m.inst.stop() }
