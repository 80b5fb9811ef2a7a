package collect

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Memcached is what a memcached server reports about itself: `stats` and
// `stats settings` over the text protocol, and figures derived from them.
// Counters are totals since the server started (UptimeSec ago).
type Memcached struct {
	Network string `json:"network"` // tcp or unix
	Addr    string `json:"addr"`    // host:port or the socket path
	Unix    bool   `json:"unix"`
	Version string `json:"version"`

	// Stats and Settings are every field of `stats` and `stats settings`,
	// as sent.
	Stats    map[string]string `json:"stats"`
	Settings map[string]string `json:"settings"`

	UptimeSec int64 `json:"uptime_sec"`
	GetHits   int64 `json:"get_hits"`
	GetMisses int64 `json:"get_misses"`
	// HitRatio is get_hits / (get_hits + get_misses), nil before any get.
	HitRatio  *float64 `json:"hit_ratio"`
	Evictions int64    `json:"evictions"`
	CurrItems int64    `json:"curr_items"`
	Bytes     int64    `json:"bytes"`
	// LimitMaxbytes is the cache size (-m), in bytes.
	LimitMaxbytes int64 `json:"limit_maxbytes"`
	// CurrConnections is the open connections (memcached counts its
	// listening sockets too); MaxConns the limit (-c, settings maxconns).
	// RejectedConnections and ListenDisabledNum count the times the limit
	// was hit.
	CurrConnections     int64 `json:"curr_connections"`
	TotalConnections    int64 `json:"total_connections"`
	MaxConns            int64 `json:"max_conns"`
	RejectedConnections int64 `json:"rejected_connections"`
	ListenDisabledNum   int64 `json:"listen_disabled_num"`
	Threads             int64 `json:"threads"`
	// ItemSizeMax is the largest item accepted (-I), in bytes.
	ItemSizeMax int64 `json:"item_size_max"`
	// BindingProtocol is ascii, binary or auto-negotiate (-B).
	BindingProtocol string `json:"binding_protocol"`
	// TCPBacklog is the listen backlog (-b).
	TCPBacklog int64 `json:"tcp_backlog"`
	// UDPPort is the UDP port (-U), 0 when UDP is off.
	UDPPort int64 `json:"udp_port"`
	// CASEnabled is false with -C.
	CASEnabled bool `json:"cas_enabled"`
	// EvictionsEnabled is false with -M (errors instead of evictions).
	EvictionsEnabled bool `json:"evictions_enabled"`

	// TTL summarises the items' expiry times (lru_crawler metadump);
	// nil when the server could not be asked.
	TTL *MemcachedTTL `json:"ttl,omitempty"`

	// Interval holds the counters' growth between the collector's two
	// readings of `stats` (the run's interval); nil when it read once.
	Interval *CounterInterval `json:"interval,omitempty"`
}

// MemcachedTTL summarises the expiry times of the items, from `lru_crawler
// metadump all` (memcached 1.4.31 and later), read up to
// memcachedMaxDumpItems items. Keys are never kept: only counts. The
// crawler walks the LRUs while items move between them, so it can miss a
// few: the counts are a sample of Memcached.CurrItems, rules use shares.
type MemcachedTTL struct {
	// Items is how many items were read; NoExpiry how many never expire
	// (exp=-1: set with TTL 0); OverHour how many expire more than an
	// hour after the reading.
	Items    int64 `json:"items"`
	NoExpiry int64 `json:"no_expiry"`
	OverHour int64 `json:"over_hour"`
	// Truncated: the dump was cut at memcachedMaxDumpItems items (the
	// counts are of the first ones).
	Truncated bool `json:"truncated,omitempty"`
	// Error says why the dump could not be read (an old memcached, the
	// LRU crawler disabled or busy); the counts are then of what was read.
	Error string `json:"error,omitempty"`
}

// memcachedMaxDumpItems bounds the metadump read (the crawler walks every
// item; the connection is closed past this many).
const memcachedMaxDumpItems = 100000

// readMetadump reads `lru_crawler metadump all` replies: one "key=K
// exp=E la=L cas=C fetch=F cls=N size=S" line per item, then END. now
// is the server's clock (stats time). It stops after max items.
func readMetadump(r *bufio.Reader, now int64, max int64) *MemcachedTTL {
	t := &MemcachedTTL{}
	for {
		line, err := kvReadLine(r, memcachedMaxLine)
		if err != nil {
			t.Error = err.Error()
			return t
		}
		switch {
		case line == "END":
			return t
		case line == "ERROR" || strings.HasPrefix(line, "CLIENT_ERROR") || strings.HasPrefix(line, "SERVER_ERROR") || strings.HasPrefix(line, "BUSY"):
			t.Error = fmt.Sprintf("server replied %q", kvTruncate(line, 80))
			return t
		}
		if t.Items >= max {
			t.Truncated = true
			return t
		}
		exp, ok := metadumpField(line, "exp=")
		if !ok {
			t.Error = fmt.Sprintf("unexpected reply line %q", kvTruncate(line, 80))
			return t
		}
		t.Items++
		switch {
		case exp == -1:
			t.NoExpiry++
		case now > 0 && exp-now > 3600:
			t.OverHour++
		}
	}
}

// metadumpField reads the number after name in a metadump line.
func metadumpField(line, name string) (int64, bool) {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, name); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// CounterInterval is a server's counters over the collection interval:
// the second reading less the first, for every numeric field present in
// both that did not go down (a restart in between resets them: then the
// whole interval is dropped and Restarted says so).
type CounterInterval struct {
	Seconds float64            `json:"seconds"`
	Deltas  map[string]float64 `json:"deltas"`
	// Restarted is true when the server restarted between the readings
	// (its uptime went down): Deltas is empty.
	Restarted bool `json:"restarted,omitempty"`
}

// Rate is a counter's growth per second over the interval.
func (iv *CounterInterval) Rate(name string) (float64, bool) {
	if iv == nil || iv.Seconds <= 0 {
		return 0, false
	}
	d, ok := iv.Deltas[name]
	return d / iv.Seconds, ok
}

// counterInterval compares two readings of counters; uptime names the
// field that tells a restart, gauges the fields that are current values.
func counterInterval(a, b map[string]string, secs float64, uptime string, gauges map[string]bool) *CounterInterval {
	iv := &CounterInterval{Seconds: secs, Deltas: map[string]float64{}}
	if kvInt(b[uptime]) < kvInt(a[uptime]) {
		iv.Restarted = true
		return iv
	}
	for k, v2 := range b {
		v1, ok := a[k]
		if !ok || gauges[k] {
			continue
		}
		if d, ok := counterDelta(strings.TrimSpace(v1), strings.TrimSpace(v2)); ok {
			iv.Deltas[k] = d
		}
	}
	return iv
}

// memcachedGauges are the fields of memcached's stats that are not
// counters.
var memcachedGauges = setOf(`pid uptime time version libevent pointer_size rusage_user rusage_system
	max_connections curr_connections connection_structures response_obj_oom response_obj_count response_obj_bytes
	read_buf_oom reserved_fds threads conn_yields hash_power_level hash_bytes hash_is_expanding
	slab_reassign_rescues slab_reassign_chunk_rescues slab_reassign_evictions_nomem slab_reassign_inline_reclaim
	slab_reassign_busy_items slab_reassign_busy_deletes slab_reassign_running slabs_moved
	lru_crawler_running lru_maintainer_juggles malloc_fails log_worker_dropped log_worker_written log_watcher_skipped log_watcher_sent log_watchers
	unexpected_napi_ids round_robin_fallback bytes curr_items limit_maxbytes accepting_conns
	lru_crawler_starts lru_bumps_dropped`)

// Limits of the text protocol reader, so a wrong server cannot make the
// collector read forever or hold much memory.
const (
	memcachedMaxLine  = 64 << 10
	memcachedMaxStats = 10000
	// kvTimeout bounds a collector's network exchange when the
	// context has no deadline.
	kvTimeout     = 10 * time.Second
	kvDialTimeout = 5 * time.Second
)

type memcachedCollector struct {
	network, addr string
	// interval is the least time between the two readings.
	interval time.Duration
	// first is Start's reading of `stats`, at firstAt.
	first   map[string]string
	firstAt time.Time
}

var _ Starter = (*memcachedCollector)(nil)

// Start reads `stats` once, so Collect can give the counters' growth over
// the run's interval.
func (c *memcachedCollector) Start(ctx context.Context) error {
	conn, err := kvDial(ctx, c.network, c.addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	stats, err := memcachedStats(conn, bufio.NewReaderSize(conn, 4096), "stats")
	if err != nil {
		return err
	}
	c.first, c.firstAt = stats, time.Now()
	return nil
}

// NewMemcached returns the collector of the memcached server at addr on
// network ("tcp": host:port; "unix": the socket path).
func NewMemcached(network, addr string) Collector {
	return &memcachedCollector{network: network, addr: addr}
}

func (c *memcachedCollector) Name() string { return "memcached" }

func init() {
	register(Registration{
		Name:  "memcached",
		Layer: "memcached",
		Order: 40,
		Flags: []Flag{
			{Name: "memcached", Kind: FlagString, Usage: "memcached to read: host:port or a unix socket path"},
		},
		AskedBy: "memcached",
		New: func(cfg Config) (Collector, error) {
			c := NewMemcached(splitAddr(cfg.Value("memcached"))).(*memcachedCollector)
			c.interval = cfg.Duration("interval")
			return c, nil
		},
	})
}

func (c *memcachedCollector) Collect(ctx context.Context, s *Snapshot) error {
	if c.first != nil {
		if err := waitSince(ctx, c.firstAt, c.interval); err != nil {
			return fmt.Errorf("memcached at %s %s: %w", c.network, c.addr, err)
		}
	}
	conn, err := kvDial(ctx, c.network, c.addr)
	if err != nil {
		return fmt.Errorf("memcached at %s %s: %w", c.network, c.addr, err)
	}
	defer conn.Close()
	r := bufio.NewReaderSize(conn, 4096)
	stats, err := memcachedStats(conn, r, "stats")
	if err != nil {
		return fmt.Errorf("memcached at %s %s: stats: %w", c.network, c.addr, err)
	}
	m := &Memcached{Network: c.network, Addr: c.addr, Unix: c.network == "unix", Stats: stats, Settings: map[string]string{}}
	if c.first != nil {
		m.Interval = counterInterval(c.first, stats, time.Since(c.firstAt).Seconds(), "uptime", memcachedGauges)
	}
	settings, settingsErr := memcachedStats(conn, r, "stats settings")
	if settingsErr == nil {
		m.Settings = settings
	}
	m.derive()
	s.Memcached = m
	if settingsErr != nil {
		return fmt.Errorf("memcached at %s %s: stats settings: %w", c.network, c.addr, settingsErr)
	}
	// Last on the connection: a dump cut short leaves replies unread, and
	// the connection is closed after it.
	if _, err := io.WriteString(conn, "lru_crawler metadump all\r\n"); err != nil {
		m.TTL = &MemcachedTTL{Error: err.Error()}
	} else {
		m.TTL = readMetadump(r, kvInt(stats["time"]), memcachedMaxDumpItems)
	}
	return nil
}

// kvDial connects to network/addr and sets the connection's deadline
// from ctx (kvTimeout when ctx has none).
func kvDial(ctx context.Context, network, addr string) (net.Conn, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(kvTimeout)
	}
	d := net.Dialer{Timeout: kvDialTimeout, Deadline: dl}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if err := conn.SetDeadline(dl); err != nil {
		conn.Close()
		return nil, err
	}
	// Close the connection when ctx is cancelled, so a read returns.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	return &kvConn{Conn: conn, stop: stop}, nil
}

// kvConn unregisters the context hook of kvDial on Close.
type kvConn struct {
	net.Conn
	stop func() bool
}

func (c *kvConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// memcachedStats sends cmd and reads "STAT name value" lines up to END.
func memcachedStats(w io.Writer, r *bufio.Reader, cmd string) (map[string]string, error) {
	if _, err := io.WriteString(w, cmd+"\r\n"); err != nil {
		return nil, err
	}
	return readMemcachedStats(r)
}

// readMemcachedStats reads a stats reply: STAT lines up to END.
func readMemcachedStats(r *bufio.Reader) (map[string]string, error) {
	stats := map[string]string{}
	for {
		line, err := kvReadLine(r, memcachedMaxLine)
		if err != nil {
			return nil, err
		}
		switch {
		case line == "END":
			return stats, nil
		case line == "ERROR" || strings.HasPrefix(line, "CLIENT_ERROR") || strings.HasPrefix(line, "SERVER_ERROR"):
			return nil, fmt.Errorf("server replied %q", line)
		}
		rest, ok := strings.CutPrefix(line, "STAT ")
		if !ok {
			return nil, fmt.Errorf("unexpected reply line %q", kvTruncate(line, 80))
		}
		name, value, _ := strings.Cut(rest, " ")
		if len(stats) >= memcachedMaxStats {
			return nil, fmt.Errorf("more than %d stats", memcachedMaxStats)
		}
		stats[name] = value
	}
}

// errKVLineTooLong is returned by kvReadLine for a line over its limit.
var errKVLineTooLong = errors.New("reply line too long")

// kvReadLine reads one line ending in LF (CR LF) of at most max bytes,
// without its end.
func kvReadLine(r *bufio.Reader, max int) (string, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > max {
			return "", errKVLineTooLong
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return "", err
	}
	buf = buf[:len(buf)-1]
	if n := len(buf); n > 0 && buf[n-1] == '\r' {
		buf = buf[:n-1]
	}
	return string(buf), nil
}

func kvTruncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// kvInt parses a decimal counter, 0 when it is absent or not a number.
func kvInt(s string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n
}

// kvRatio returns a/(a+b), nil when a+b is 0.
func kvRatio(a, b int64) *float64 {
	if a+b <= 0 {
		return nil
	}
	r := float64(a) / float64(a+b)
	return &r
}

func (m *Memcached) derive() {
	st, se := m.Stats, m.Settings
	m.Version = st["version"]
	m.UptimeSec = kvInt(st["uptime"])
	m.GetHits = kvInt(st["get_hits"])
	m.GetMisses = kvInt(st["get_misses"])
	m.HitRatio = kvRatio(m.GetHits, m.GetMisses)
	m.Evictions = kvInt(st["evictions"])
	m.CurrItems = kvInt(st["curr_items"])
	m.Bytes = kvInt(st["bytes"])
	m.LimitMaxbytes = kvInt(st["limit_maxbytes"])
	m.CurrConnections = kvInt(st["curr_connections"])
	m.TotalConnections = kvInt(st["total_connections"])
	m.RejectedConnections = kvInt(st["rejected_connections"])
	m.ListenDisabledNum = kvInt(st["listen_disabled_num"])
	m.MaxConns = kvInt(se["maxconns"])
	if m.MaxConns == 0 {
		m.MaxConns = kvInt(st["max_connections"])
	}
	m.Threads = kvInt(st["threads"])
	if m.Threads == 0 {
		m.Threads = kvInt(se["num_threads"])
	}
	m.ItemSizeMax = kvInt(se["item_size_max"])
	m.BindingProtocol = se["binding_protocol"]
	m.TCPBacklog = kvInt(se["tcp_backlog"])
	m.UDPPort = kvInt(se["udpport"])
	m.CASEnabled = se["cas_enabled"] == "yes"
	m.EvictionsEnabled = se["evictions"] == "on"
}
