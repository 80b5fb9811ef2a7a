package refapp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// errCacheMiss is returned by mcClient.get for a key that is not cached.
var errCacheMiss = errors.New("refapp: cache miss")

// mcClient is a minimal memcached text-protocol client (get, multi-get,
// set) with a small pool of connections, counting what it sends. By
// default the app keeps the first version's habits on top of it: one get
// per item although getMulti exists, and a set after every read
// (Config.CacheBatch fixes both).
type mcClient struct {
	network, addr string
	mu            sync.Mutex
	idle          []*mcConn

	// Counters behind Server.CacheStats.
	roundTrips, gets, keys, hits, sets atomic.Int64
}

type mcConn struct {
	c  net.Conn
	rw *bufio.ReadWriter
}

const mcMaxIdle = 8

// newMC returns a client for addr: a path (starting with '/') is a unix
// socket, anything else host:port.
func newMC(addr string) *mcClient {
	network := "tcp"
	if strings.HasPrefix(addr, "/") {
		network = "unix"
	}
	return &mcClient{network: network, addr: addr}
}

func (m *mcClient) conn() (*mcConn, error) {
	m.mu.Lock()
	if n := len(m.idle); n > 0 {
		c := m.idle[n-1]
		m.idle = m.idle[:n-1]
		m.mu.Unlock()
		return c, nil
	}
	m.mu.Unlock()
	c, err := net.DialTimeout(m.network, m.addr, 2*time.Second)
	if err != nil {
		return nil, fmt.Errorf("refapp: memcached: %w", err)
	}
	return &mcConn{c: c, rw: bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c))}, nil
}

// release returns c to the pool, or closes it after an error.
func (m *mcClient) release(c *mcConn, err error) {
	m.mu.Lock()
	if err == nil && len(m.idle) < mcMaxIdle {
		m.idle = append(m.idle, c)
		c = nil
	}
	m.mu.Unlock()
	if c != nil {
		c.c.Close()
	}
}

func (m *mcClient) close() {
	m.mu.Lock()
	idle := m.idle
	m.idle = nil
	m.mu.Unlock()
	for _, c := range idle {
		c.c.Close()
	}
}

// do runs one command on a pooled connection.
func (m *mcClient) do(f func(*mcConn) error) error {
	c, err := m.conn()
	if err != nil {
		return err
	}
	c.c.SetDeadline(time.Now().Add(2 * time.Second))
	m.roundTrips.Add(1)
	err = f(c)
	m.release(c, err)
	return err
}

// get returns the value of key, or errCacheMiss.
func (m *mcClient) get(key string) ([]byte, error) {
	vals, err := m.getMulti([]string{key})
	if err != nil {
		return nil, err
	}
	v, ok := vals[key]
	if !ok {
		return nil, errCacheMiss
	}
	return v, nil
}

// getMulti returns the cached values of keys in one round trip; missing
// keys are absent from the map.
func (m *mcClient) getMulti(keys []string) (map[string][]byte, error) {
	vals := make(map[string][]byte, len(keys))
	if len(keys) == 0 {
		return vals, nil
	}
	m.gets.Add(1)
	m.keys.Add(int64(len(keys)))
	defer func() { m.hits.Add(int64(len(vals))) }()
	err := m.do(func(c *mcConn) error {
		if _, err := fmt.Fprintf(c.rw, "get %s\r\n", strings.Join(keys, " ")); err != nil {
			return err
		}
		if err := c.rw.Flush(); err != nil {
			return err
		}
		for {
			line, err := c.rw.ReadSlice('\n')
			if err != nil {
				return err
			}
			if bytes.Equal(line, []byte("END\r\n")) {
				return nil
			}
			f := strings.Fields(string(line))
			if len(f) < 4 || f[0] != "VALUE" {
				return fmt.Errorf("refapp: memcached: unexpected reply %q", line)
			}
			n, err := strconv.Atoi(f[3])
			if err != nil || n < 0 {
				return fmt.Errorf("refapp: memcached: bad length in %q", line)
			}
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(c.rw, buf); err != nil {
				return err
			}
			vals[f[1]] = buf[:n]
		}
	})
	return vals, err
}

// set stores value under key for ttl seconds (0: no expiry).
func (m *mcClient) set(key string, value []byte, ttl int) error {
	m.sets.Add(1)
	return m.do(func(c *mcConn) error {
		if _, err := fmt.Fprintf(c.rw, "set %s 0 %d %d\r\n", key, ttl, len(value)); err != nil {
			return err
		}
		c.rw.Write(value)
		c.rw.WriteString("\r\n")
		if err := c.rw.Flush(); err != nil {
			return err
		}
		line, err := c.rw.ReadSlice('\n')
		if err != nil {
			return err
		}
		if !bytes.Equal(line, []byte("STORED\r\n")) {
			return fmt.Errorf("refapp: memcached: set: %q", line)
		}
		return nil
	})
}

// CacheStats counts what the app asked of memcached since Start (the
// start-up probe included): how well it batches is RoundTrips per page.
type CacheStats struct {
	// RoundTrips is the number of commands sent and answered, one per
	// network round trip: a get (of one key or many) or a set.
	RoundTrips int64 `json:"round_trips"`
	// Gets is the number of get commands, Keys the keys they asked for,
	// Hits the keys found.
	Gets int64 `json:"gets"`
	Keys int64 `json:"keys"`
	Hits int64 `json:"hits"`
	// Sets is the number of set commands.
	Sets int64 `json:"sets"`
}

// CacheStats returns the memcached client's counters; all zero when
// Config.Memcached is empty.
func (s *Server) CacheStats() CacheStats {
	if s.mc == nil {
		return CacheStats{}
	}
	return CacheStats{
		RoundTrips: s.mc.roundTrips.Load(),
		Gets:       s.mc.gets.Load(),
		Keys:       s.mc.keys.Load(),
		Hits:       s.mc.hits.Load(),
		Sets:       s.mc.sets.Load(),
	}
}
