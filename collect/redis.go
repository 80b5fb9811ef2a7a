package collect

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Redis is what a Redis server reports about itself: INFO (every section)
// and a few CONFIG GET values, and figures derived from them. Counters are
// totals since the server started (UptimeSec ago).
type Redis struct {
	Network string `json:"network"` // tcp or unix
	Addr    string `json:"addr"`    // host:port or the socket path
	Unix    bool   `json:"unix"`
	Version string `json:"version"`

	// Info is INFO everything by section (lower case: "server",
	// "clients", "memory", "stats", "keyspace", "commandstats"...), every
	// value as sent.
	Info map[string]map[string]string `json:"info"`
	// Config holds the CONFIG GET values read: maxclients, maxmemory,
	// maxmemory-policy, save, appendonly. It is empty when CONFIG is
	// refused (renamed, or denied by an ACL); ConfigError says why.
	Config      map[string]string `json:"config"`
	ConfigError string            `json:"config_error,omitempty"`

	UptimeSec      int64 `json:"uptime_sec"`
	KeyspaceHits   int64 `json:"keyspace_hits"`
	KeyspaceMisses int64 `json:"keyspace_misses"`
	// HitRatio is keyspace_hits / (keyspace_hits + keyspace_misses), nil
	// before any read.
	HitRatio    *float64 `json:"hit_ratio"`
	EvictedKeys int64    `json:"evicted_keys"`
	ExpiredKeys int64    `json:"expired_keys"`
	// ConnectedClients is the open client connections, MaxClients the
	// limit (0 when neither CONFIG nor INFO tells it); RejectedConnections
	// counts the times it was hit.
	ConnectedClients    int64 `json:"connected_clients"`
	MaxClients          int64 `json:"max_clients"`
	RejectedConnections int64 `json:"rejected_connections"`
	// UsedMemory is in bytes; MaxMemory is the limit, 0 for none.
	UsedMemory      int64  `json:"used_memory"`
	MaxMemory       int64  `json:"max_memory"`
	MaxMemoryPolicy string `json:"max_memory_policy"`
	// Save is the RDB snapshot schedule ("3600 1 300 100", "" for none)
	// and RDB whether it is on; RDB is null when CONFIG could not be read.
	// AOF is appendonly.
	Save string `json:"save"`
	RDB  *bool  `json:"rdb"`
	AOF  bool   `json:"aof"`
}

// redisConfigKeys are the parameters read with CONFIG GET, one per call
// (Redis before 7 takes a single pattern).
var redisConfigKeys = []string{"maxclients", "maxmemory", "maxmemory-policy", "save", "appendonly"}

// Limits of the RESP reader.
const (
	redisMaxLine  = 64 << 10
	redisMaxBulk  = 64 << 20
	redisMaxArray = 1 << 20
	redisMaxDepth = 8
)

type redisCollector struct {
	network, addr string
	password      string // sent with AUTH, never stored in the snapshot
}

// NewRedis returns the collector of the Redis server at addr on network
// ("tcp": host:port; "unix": the socket path). A non-empty password is sent
// with AUTH first; it appears in no snapshot and no error.
func NewRedis(network, addr, password string) Collector {
	return &redisCollector{network: network, addr: addr, password: password}
}

func (c *redisCollector) Name() string { return "redis" }

// The password comes from the environment variable --redis-password-env
// names, never from a flag's value.
func init() {
	register(Registration{
		Name:  "redis",
		Layer: "redis",
		Order: 50,
		Flags: []Flag{
			{Name: "redis", Kind: FlagString, Usage: "Redis to read: host:port or a unix socket path"},
			{Name: "redis-password-env", Kind: FlagString, Usage: "name of the environment variable holding the Redis password (never given on the command line)"},
		},
		AskedBy: "redis",
		New: func(cfg Config) (Collector, error) {
			network, addr := splitAddr(cfg.Value("redis"))
			return NewRedis(network, addr, cfg.Env(cfg.Value("redis-password-env"))), nil
		},
	})
}

// fail builds an error naming the server, with the password masked should
// the server ever echo it.
func (c *redisCollector) fail(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if c.password != "" {
		msg = strings.ReplaceAll(msg, c.password, "[password]")
	}
	return fmt.Errorf("redis at %s %s: %s", c.network, c.addr, msg)
}

func (c *redisCollector) Collect(ctx context.Context, s *Snapshot) error {
	conn, err := kvDial(ctx, c.network, c.addr)
	if err != nil {
		return c.fail("%v", err)
	}
	defer conn.Close()
	rc := &redisConn{w: conn, r: bufio.NewReaderSize(conn, 16<<10)}
	if c.password != "" {
		if _, err := rc.do("AUTH", c.password); err != nil {
			var re redisError
			if !errors.As(err, &re) {
				return c.fail("AUTH: %v", err)
			}
			// A server without a password refuses AUTH; it needs none.
			if !strings.Contains(string(re), "without any password configured") && !strings.Contains(string(re), "no password is set") {
				return c.fail("authentication failed: %s", re)
			}
		}
	}
	// INFO everything (Redis 7), else all, else the default sections: an
	// older server answers an unknown section with nothing.
	var info string
	for _, section := range []string{"everything", "all", ""} {
		args := []string{"INFO"}
		if section != "" {
			args = append(args, section)
		}
		var v redisValue
		if v, err = rc.do(args...); err == nil && v.str != "" {
			info = v.str
			break
		}
		var re redisError
		if err != nil && (!errors.As(err, &re) || strings.HasPrefix(string(re), "NOAUTH") || strings.HasPrefix(string(re), "NOPERM")) {
			break
		}
	}
	if err != nil {
		var re redisError
		if errors.As(err, &re) && strings.HasPrefix(string(re), "NOAUTH") {
			return c.fail("INFO: %s (the server wants a password)", re)
		}
		return c.fail("INFO: %v", err)
	}
	if info == "" {
		return c.fail("INFO: empty reply")
	}
	r := &Redis{Network: c.network, Addr: c.addr, Unix: c.network == "unix", Info: parseRedisInfo(info), Config: map[string]string{}}
	var configErr error
	for _, key := range redisConfigKeys {
		v, err := rc.do("CONFIG", "GET", key)
		if err != nil {
			var re redisError
			if !errors.As(err, &re) {
				r.derive()
				s.Redis = r
				return c.fail("CONFIG GET %s: %v", key, err)
			}
			configErr = err
			r.ConfigError = string(re)
			break
		}
		for i := 0; i+1 < len(v.array); i += 2 {
			r.Config[v.array[i].str] = v.array[i+1].str
		}
	}
	r.derive()
	s.Redis = r
	if configErr != nil {
		return c.fail("CONFIG GET refused: %v", configErr)
	}
	return nil
}

// derive fills the typed figures from Info and Config.
func (r *Redis) derive() {
	get := func(section, key string) string { return r.Info[section][key] }
	r.Version = get("server", "redis_version")
	r.UptimeSec = kvInt(get("server", "uptime_in_seconds"))
	r.KeyspaceHits = kvInt(get("stats", "keyspace_hits"))
	r.KeyspaceMisses = kvInt(get("stats", "keyspace_misses"))
	r.HitRatio = kvRatio(r.KeyspaceHits, r.KeyspaceMisses)
	r.EvictedKeys = kvInt(get("stats", "evicted_keys"))
	r.ExpiredKeys = kvInt(get("stats", "expired_keys"))
	r.ConnectedClients = kvInt(get("clients", "connected_clients"))
	r.RejectedConnections = kvInt(get("stats", "rejected_connections"))
	r.UsedMemory = kvInt(get("memory", "used_memory"))
	if v, ok := r.Config["maxclients"]; ok {
		r.MaxClients = kvInt(v)
	} else {
		r.MaxClients = kvInt(get("clients", "maxclients"))
	}
	if v, ok := r.Config["maxmemory"]; ok {
		r.MaxMemory = kvInt(v)
	} else {
		r.MaxMemory = kvInt(get("memory", "maxmemory"))
	}
	if v, ok := r.Config["maxmemory-policy"]; ok {
		r.MaxMemoryPolicy = v
	} else {
		r.MaxMemoryPolicy = get("memory", "maxmemory_policy")
	}
	if v, ok := r.Config["save"]; ok {
		r.Save = v
		on := strings.TrimSpace(v) != ""
		r.RDB = &on
	}
	if v, ok := r.Config["appendonly"]; ok {
		r.AOF = v == "yes"
	} else {
		r.AOF = get("persistence", "aof_enabled") == "1"
	}
}

// parseRedisInfo splits INFO text into sections ("# Server" starts
// "server") of key:value lines. Lines before any section header go in "".
func parseRedisInfo(text string) map[string]map[string]string {
	info := map[string]map[string]string{}
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		if h, ok := strings.CutPrefix(line, "#"); ok {
			section = strings.ToLower(strings.TrimSpace(h))
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" {
			continue
		}
		if info[section] == nil {
			info[section] = map[string]string{}
		}
		info[section][k] = v
	}
	return info
}

// redisError is an error reply ("-ERR ...", "-WRONGPASS ...").
type redisError string

func (e redisError) Error() string { return string(e) }

// redisValue is one RESP2 reply.
type redisValue struct {
	kind  byte // '+', ':', '$', '*'
	str   string
	n     int64
	null  bool
	array []redisValue
}

// redisConn is a minimal RESP2 client connection.
type redisConn struct {
	w io.Writer
	r *bufio.Reader
}

// do sends a command and reads its reply; an error reply is returned as a
// redisError.
func (c *redisConn) do(args ...string) (redisValue, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.w.Write(b.Bytes()); err != nil {
		return redisValue{}, err
	}
	return readRESP(c.r, 0)
}

// readRESP reads one reply. An error reply is returned as a redisError
// (after the whole reply is read, so the connection stays usable).
func readRESP(r *bufio.Reader, depth int) (redisValue, error) {
	if depth > redisMaxDepth {
		return redisValue{}, fmt.Errorf("RESP: replies nested deeper than %d", redisMaxDepth)
	}
	line, err := kvReadLine(r, redisMaxLine)
	if err != nil {
		return redisValue{}, fmt.Errorf("RESP: %w", err)
	}
	if line == "" {
		return redisValue{}, fmt.Errorf("RESP: empty reply line")
	}
	kind, rest := line[0], line[1:]
	switch kind {
	case '+':
		return redisValue{kind: kind, str: rest}, nil
	case '-':
		return redisValue{}, redisError(rest)
	case ':':
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return redisValue{}, fmt.Errorf("RESP: bad integer %q", kvTruncate(rest, 40))
		}
		return redisValue{kind: kind, n: n}, nil
	case '$':
		n, err := strconv.ParseInt(rest, 10, 64)
		switch {
		case err != nil || n < -1:
			return redisValue{}, fmt.Errorf("RESP: bad bulk length %q", kvTruncate(rest, 40))
		case n == -1:
			return redisValue{kind: kind, null: true}, nil
		case n > redisMaxBulk:
			return redisValue{}, fmt.Errorf("RESP: bulk of %d bytes, over the %d limit", n, redisMaxBulk)
		}
		// Copy rather than allocate n bytes up front: a lying length
		// costs only what was really sent.
		var b bytes.Buffer
		if _, err := io.CopyN(&b, r, n+2); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return redisValue{}, fmt.Errorf("RESP: %w", err)
		}
		data := b.Bytes()
		if !bytes.HasSuffix(data, []byte("\r\n")) {
			return redisValue{}, fmt.Errorf("RESP: bulk string not followed by CRLF")
		}
		return redisValue{kind: kind, str: string(data[:n])}, nil
	case '*':
		n, err := strconv.ParseInt(rest, 10, 64)
		switch {
		case err != nil || n < -1:
			return redisValue{}, fmt.Errorf("RESP: bad array length %q", kvTruncate(rest, 40))
		case n == -1:
			return redisValue{kind: kind, null: true}, nil
		case n > redisMaxArray:
			return redisValue{}, fmt.Errorf("RESP: array of %d elements, over the %d limit", n, redisMaxArray)
		}
		v := redisValue{kind: kind, array: make([]redisValue, 0, min(n, 64))}
		var firstErr error
		for i := int64(0); i < n; i++ {
			e, err := readRESP(r, depth+1)
			if err != nil {
				var re redisError
				if !errors.As(err, &re) {
					return redisValue{}, err
				}
				if firstErr == nil {
					firstErr = err
				}
			}
			v.array = append(v.array, e)
		}
		if firstErr != nil {
			return redisValue{}, firstErr
		}
		return v, nil
	}
	return redisValue{}, fmt.Errorf("RESP: unexpected reply type %q", kind)
}
