package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	bin     string
	mu      sync.Mutex // serialises Restart, Stop and the accessors
	network string
	addr    string
	port    int
	tcpPort int // the last TCP port, kept while on a socket so a move back to TCP gets it again
	version string
	stopped bool
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
	m := &Memcached{bin: bin, inst: instance{name: "memcached", dir: dir, owned: owned, grace: memcachedGrace}}
	if err := m.start(ctx, opts, 0); err != nil {
		_ = m.inst.stop()
		return nil, err
	}
	return m, nil
}

// start launches memcached in m's directory with opts (whose Dir and
// Binary are ignored), trying port first over TCP when it is not 0.
func (m *Memcached) start(ctx context.Context, opts MemcachedOptions, port int) error {
	dir := m.inst.dir
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
		return m.inst.launch(ctx, timeout, m.bin, args, m.ping)
	}
	m.port = 0
	if opts.Socket {
		m.network, m.addr = "unix", filepath.Join(dir, "memcached.sock")
		if err := checkSocketPath(m.addr); err != nil {
			return err
		}
		return attempt([]string{"-s", m.addr, "-a", "0700"})
	}
	m.network = "tcp"
	return startWithPreferredPort(ctx, port, func(port int) error {
		m.port, m.tcpPort, m.addr = port, port, fmt.Sprintf("127.0.0.1:%d", port)
		return attempt([]string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0"})
	})
}

// Restart stops memcached (SIGTERM, then SIGKILL after a grace period;
// its cache is lost) and starts it again in the same Dir() with opts,
// which may differ from the first start's: for example Socket to move it
// from TCP to the unix socket Dir()/memcached.sock, or other MemoryMB,
// MaxConns or ExtraArgs. opts.Dir must be empty or Dir(); an empty
// opts.Binary keeps the binary in use. Over TCP it keeps its previous TCP
// port (also after a time on the socket, so a move back restores the
// address clients knew) when the port is still free, else it gets a new one:
// read Network(), Addr(), Port() and SocketPath() again afterwards. On
// failure the error carries the tail of memcached's log and memcached is
// down; Restart may be called again. Stop still removes a temporary Dir().
func (m *Memcached) Restart(ctx context.Context, opts MemcachedOptions) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return fmt.Errorf("sandbox: memcached restart: the server has been stopped")
	}
	if opts.Dir != "" {
		if abs, err := filepath.Abs(opts.Dir); err != nil || abs != m.inst.dir {
			return fmt.Errorf("sandbox: memcached restart: Dir %q is not the server's %s", opts.Dir, m.inst.dir)
		}
	}
	if opts.Binary != "" {
		bin, err := lookBinary(opts.Binary, memcachedPackage, "memcached")
		if err != nil {
			return err
		}
		m.bin = bin
	}
	port := m.port
	if port == 0 {
		port = m.tcpPort // back from a socket: the TCP port clients knew
	}
	if p := m.inst.proc; p != nil {
		p.kill(m.inst.grace)
		m.inst.proc = nil
	}
	if err := m.start(ctx, opts, port); err != nil {
		return fmt.Errorf("sandbox: memcached restart: %w", err)
	}
	return nil
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
func (m *Memcached) Addr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addr
}

// Network returns "tcp" or "unix", for net.Dial(Network(), Addr()).
func (m *Memcached) Network() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.network
}

// Port returns the TCP port on 127.0.0.1, or 0 with Socket.
func (m *Memcached) Port() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.port
}

// SocketPath returns the unix socket path, or "" without Socket.
func (m *Memcached) SocketPath() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.network == "unix" {
		return m.addr
	}
	return ""
}

// Version returns the version memcached reported, e.g. "1.6.18".
func (m *Memcached) Version() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version
}

// Dir returns the server's directory.
func (m *Memcached) Dir() string { return m.inst.dir }

// LogPath returns the file receiving memcached's stdout and stderr (its
// only log; add "-v" to ExtraArgs for more).
func (m *Memcached) LogPath() string { return m.inst.consolePath() }

// PID returns the memcached process id (the new process after a Restart).
func (m *Memcached) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inst.pid()
}

// Binary returns the path of the memcached binary in use.
func (m *Memcached) Binary() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bin
}

// Stop stops memcached (SIGTERM, then SIGKILL after a grace period) and
// removes the temporary directory. It is idempotent and safe to call from
// any goroutine; a Stop during a Restart waits for it.
func (m *Memcached) Stop() error {
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	return m.inst.stop()
}
