package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"
)

// RedisOptions configures StartRedis. The zero value listens on a free port
// on 127.0.0.1, without persistence.
type RedisOptions struct {
	// Socket makes Redis listen on the unix socket Dir()/redis.sock
	// instead of TCP (the server runs with --port 0).
	Socket bool
	// ExtraArgs are appended to the redis-server command line as
	// "--name value" pairs, e.g. []string{"--maxmemory", "16mb"}; they
	// override the sandbox's settings.
	ExtraArgs []string
	// Dir is the working directory (--dir), holding the socket and log.
	// Empty means a new temporary directory that Stop removes; a caller's
	// Dir is left in place.
	Dir string
	// StartTimeout bounds the wait for the server to answer; default 10s.
	StartTimeout time.Duration
	// Binary overrides the redis-server binary (a path, or a name looked up
	// in PATH and /usr/sbin). Default: redis-server.
	Binary string
}

// Redis is a running throwaway redis-server. It never saves to disk:
// --save "" --appendonly no.
type Redis struct {
	inst    instance
	network string
	addr    string
	port    int
}

const (
	redisPackage      = "redis-server"
	redisStartTimeout = 10 * time.Second
	redisGrace        = 5 * time.Second
)

// StartRedis starts redis-server on a free loopback port (or a unix socket
// with Socket) and waits until it answers PING.
func StartRedis(ctx context.Context, opts RedisOptions) (*Redis, error) {
	bin, err := lookBinary(opts.Binary, redisPackage, "redis-server")
	if err != nil {
		return nil, err
	}
	dir, owned, err := serverDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	r := &Redis{inst: instance{
		name:  "redis-server",
		dir:   dir,
		owned: owned,
		grace: redisGrace,
		logs:  []string{filepath.Join(dir, "redis.log")},
	}}
	ok := false
	defer func() {
		if !ok {
			_ = r.inst.stop()
		}
	}()
	base := []string{
		"--daemonize", "no",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--logfile", r.inst.logs[0],
		"--pidfile", filepath.Join(dir, "redis.pid"),
		"--bind", "127.0.0.1",
	}
	timeout := orDefault(opts.StartTimeout, redisStartTimeout)
	attempt := func(listen []string) error {
		args := append(append(append([]string(nil), base...), listen...), opts.ExtraArgs...)
		return r.inst.launch(ctx, timeout, bin, args, r.ping)
	}
	if opts.Socket {
		r.network, r.addr = "unix", filepath.Join(dir, "redis.sock")
		if err := checkSocketPath(r.addr); err != nil {
			return nil, err
		}
		err = attempt([]string{"--port", "0", "--unixsocket", r.addr, "--unixsocketperm", "700"})
	} else {
		r.network = "tcp"
		err = startWithPortRetry(ctx, func(port int) error {
			r.port, r.addr = port, fmt.Sprintf("127.0.0.1:%d", port)
			return attempt([]string{"--port", strconv.Itoa(port)})
		})
	}
	if err != nil {
		return nil, err
	}
	ok = true
	return r, nil
}

// ping sends an inline PING and expects +PONG.
func (r *Redis) ping(ctx context.Context) error {
	line, err := textExchange(ctx, r.network, r.addr, "PING\r\n")
	if err != nil {
		return err
	}
	if line != "+PONG" {
		return fmt.Errorf("unexpected reply to PING: %q", line)
	}
	return nil
}

// Addr returns the address to dial: host:port for TCP, the socket path
// for a unix socket.
func (r *Redis) Addr() string { return r.addr }

// Network returns "tcp" or "unix", for net.Dial(Network(), Addr()).
func (r *Redis) Network() string { return r.network }

// Port returns the TCP port on 127.0.0.1, or 0 with Socket.
func (r *Redis) Port() int { return r.port }

// SocketPath returns the unix socket path, or "" without Socket.
func (r *Redis) SocketPath() string {
	if r.network == "unix" {
		return r.addr
	}
	return ""
}

// Dir returns the server's working directory.
func (r *Redis) Dir() string { return r.inst.dir }

// LogPath returns the path of the Redis log file.
func (r *Redis) LogPath() string { return r.inst.logs[0] }

// PID returns the redis-server process id.
func (r *Redis) PID() int { return r.inst.pid() }

// Stop stops Redis (SIGTERM, then SIGKILL after a grace period) and removes
// the temporary directory. It is idempotent and safe to call from any
// goroutine.
func (r *Redis) Stop() error { return r.inst.stop() }
