package collect

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// memcachedCommands sends text-protocol commands (sets and gets) on one
// connection, reading each reply up to its last line.
func memcachedCommands(t *testing.T, network, addr string, cmds ...string) {
	t.Helper()
	conn, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	for _, cmd := range cmds {
		if _, err := io.WriteString(conn, cmd); err != nil {
			t.Fatal(err)
		}
		for {
			line, err := kvReadLine(r, 1<<20)
			if err != nil {
				t.Fatalf("%q: %v", cmd, err)
			}
			if line == "STORED" || line == "END" {
				break
			}
			if strings.HasPrefix(line, "VALUE ") {
				if _, err := kvReadLine(r, 1<<20); err != nil {
					t.Fatal(err)
				}
				continue
			}
			t.Fatalf("%q: unexpected reply %q", strings.TrimSpace(cmd), line)
		}
	}
}

// TestMemcached collects from real servers over TCP and a unix socket
// after gets with known hits and misses.
func TestMemcached(t *testing.T) {
	cases := []struct {
		name   string
		socket bool
	}{
		{"tcp", false},
		{"unix socket", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := sandboxtest.NewMemcached(t, sandbox.MemcachedOptions{
				Socket:    tc.socket,
				MaxConns:  500,
				ExtraArgs: []string{"-t", "3", "-b", "2048", "-I", "2m", "-C"},
			})
			memcachedCommands(t, m.Network(), m.Addr(),
				"set a 0 0 1\r\n1\r\n", "set b 0 0 1\r\n2\r\n",
				"get a\r\n", "get a\r\n", "get b\r\n", "get missing\r\n",
				"get a missing2\r\n", // a multi-get counts each key
			)
			s := Run(context.Background(), []Collector{NewMemcached(m.Network(), m.Addr())})
			if len(s.Errors) != 0 {
				t.Fatalf("errors %+v", s.Errors)
			}
			got := s.Memcached
			if got.GetHits != 4 || got.GetMisses != 2 || got.HitRatio == nil || *got.HitRatio != 4.0/6 {
				t.Errorf("hits %d misses %d ratio %v, want 4, 2, 0.667", got.GetHits, got.GetMisses, got.HitRatio)
			}
			checks := []struct {
				name      string
				got, want any
			}{
				{"network", got.Network, m.Network()},
				{"addr", got.Addr, m.Addr()},
				{"unix", got.Unix, tc.socket},
				{"version", got.Version, m.Version()},
				{"curr_items", got.CurrItems, int64(2)},
				{"evictions", got.Evictions, int64(0)},
				{"limit_maxbytes", got.LimitMaxbytes, int64(64 << 20)},
				{"max_conns", got.MaxConns, int64(500)},
				{"threads", got.Threads, int64(3)},
				{"tcp_backlog", got.TCPBacklog, int64(2048)},
				{"item_size_max", got.ItemSizeMax, int64(2 << 20)},
				{"cas_enabled", got.CASEnabled, false},
				{"evictions_enabled", got.EvictionsEnabled, true},
				{"binding_protocol", got.BindingProtocol, "auto-negotiate"},
				{"udp_port", got.UDPPort, int64(0)},
				{"settings maxconns", got.Settings["maxconns"], "500"},
				{"stats pid", got.Stats["pid"], fmt.Sprint(m.PID())},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
				}
			}
			if got.CurrConnections < 1 || got.CurrConnections >= got.MaxConns || got.TotalConnections < 2 || got.UptimeSec < 0 {
				t.Errorf("connections %d/%d total %d uptime %d", got.CurrConnections, got.MaxConns, got.TotalConnections, got.UptimeSec)
			}
		})
	}
	t.Run("no gets yet", func(t *testing.T) {
		t.Parallel()
		m := sandboxtest.NewMemcached(t, sandbox.MemcachedOptions{})
		var s Snapshot
		if err := NewMemcached(m.Network(), m.Addr()).Collect(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
		if s.Memcached.HitRatio != nil {
			t.Errorf("hit ratio %v before any get, want null", *s.Memcached.HitRatio)
		}
	})
	t.Run("evictions", func(t *testing.T) {
		t.Parallel()
		m := sandboxtest.NewMemcached(t, sandbox.MemcachedOptions{MemoryMB: 2})
		value := strings.Repeat("x", 100<<10)
		var cmds []string
		for i := 0; i < 60; i++ {
			cmds = append(cmds, fmt.Sprintf("set k%d 0 0 %d\r\n%s\r\n", i, len(value), value))
		}
		memcachedCommands(t, m.Network(), m.Addr(), cmds...)
		var s Snapshot
		if err := NewMemcached(m.Network(), m.Addr()).Collect(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
		if s.Memcached.Evictions == 0 || s.Memcached.CurrItems >= 60 {
			t.Errorf("60 items of 100 KiB in 2 MiB: %d evictions, %d items", s.Memcached.Evictions, s.Memcached.CurrItems)
		}
	})
}

// TestMemcachedUnreachable checks that a server that is not there, or does
// not answer, gives an error naming it, quickly, and no layer.
func TestMemcachedUnreachable(t *testing.T) {
	silent := silentListener(t)
	cases := []struct {
		name, network, addr string
		err                 string
	}{
		{"closed port", "tcp", closedPort(t), "connection refused"},
		{"missing socket", "unix", filepath.Join(t.TempDir(), "none.sock"), "no such file"},
		{"silent server", "tcp", silent, "i/o timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			s := Run(ctx, []Collector{NewMemcached(tc.network, tc.addr)})
			if s.Memcached != nil || len(s.Errors) != 1 {
				t.Fatalf("layer %v errors %+v", s.Memcached, s.Errors)
			}
			e := s.Errors[0]
			if e.Collector != "memcached" || e.Partial || !strings.Contains(e.Error, tc.addr) || !strings.Contains(e.Error, tc.err) {
				t.Errorf("error %+v, want one naming %s and containing %q", e, tc.addr, tc.err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// silentListener accepts connections and never answers.
func silentListener(t *testing.T) string {
	t.Helper()
	return fakeServer(t, func(net.Conn) {})
}

// fakeServer serves each connection with serve until the test ends.
func fakeServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				serve(c)
				<-done
				c.Close()
			}()
		}
	}()
	return l.Addr().String()
}

// TestMemcachedPartial: a server that answers stats but not stats settings
// fills the layer and reports a partial failure.
func TestMemcachedPartial(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			switch strings.TrimSpace(line) {
			case "stats":
				io.WriteString(c, "STAT pid 1\r\nSTAT version 1.4.0\r\nSTAT get_hits 3\r\nSTAT get_misses 1\r\nEND\r\n")
			default:
				io.WriteString(c, "ERROR\r\n")
			}
		}
	})
	s := Run(context.Background(), []Collector{NewMemcached("tcp", addr)})
	if s.Memcached == nil || s.Memcached.Version != "1.4.0" || *s.Memcached.HitRatio != 0.75 || len(s.Memcached.Settings) != 0 {
		t.Fatalf("layer %+v", s.Memcached)
	}
	if len(s.Errors) != 1 || !s.Errors[0].Partial || !strings.Contains(s.Errors[0].Error, `stats settings: server replied "ERROR"`) {
		t.Errorf("errors %+v", s.Errors)
	}
}

func TestReadMemcachedStats(t *testing.T) {
	cases := []struct {
		name, reply string
		want        map[string]string
		err         string
	}{
		{name: "stats", reply: "STAT pid 7\r\nSTAT version 1.6.18\r\nSTAT rusage_user 0.1\r\nEND\r\n",
			want: map[string]string{"pid": "7", "version": "1.6.18", "rusage_user": "0.1"}},
		{name: "value with spaces", reply: "STAT domain_socket /run/memcached.sock\r\nSTAT inter NULL\r\nSTAT odd a b c\r\nEND\r\n",
			want: map[string]string{"domain_socket": "/run/memcached.sock", "inter": "NULL", "odd": "a b c"}},
		{name: "bare LF", reply: "STAT pid 7\nEND\n", want: map[string]string{"pid": "7"}},
		{name: "empty", reply: "END\r\n", want: map[string]string{}},
		{name: "error", reply: "ERROR\r\n", err: `server replied "ERROR"`},
		{name: "server error", reply: "STAT pid 1\r\nSERVER_ERROR out of memory\r\n", err: "SERVER_ERROR out of memory"},
		{name: "garbage", reply: "HTTP/1.1 400 Bad Request\r\n", err: "unexpected reply line"},
		{name: "cut short", reply: "STAT pid 7\r\nSTAT vers", err: "unexpected EOF"},
		{name: "line too long", reply: "STAT x " + strings.Repeat("y", memcachedMaxLine) + "\r\nEND\r\n", err: "too long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readMemcachedStats(bufio.NewReaderSize(strings.NewReader(tc.reply), 16))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMemcachedInterval reads a real memcached at the run's start and
// end: the gets and sets made in between are the interval's deltas, and
// the metadump counts items that never expire (TTL 0) and those with a
// TTL over an hour, without their keys.
func TestMemcachedInterval(t *testing.T) {
	m := sandboxtest.NewMemcached(t, sandbox.MemcachedOptions{})
	memcachedCommands(t, m.Network(), m.Addr(), "set before 0 0 1\r\n1\r\n", "get before\r\n")
	c := NewMemcached(m.Network(), m.Addr())
	if err := c.(Starter).Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	memcachedCommands(t, m.Network(), m.Addr(),
		"set forever 0 0 1\r\n1\r\n", "set day 0 86400 1\r\n1\r\n", "set minute 0 60 1\r\n1\r\n",
		"get forever\r\n", "get day\r\n", "get nothing\r\n")
	var s Snapshot
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	iv := s.Memcached.Interval
	if iv == nil || iv.Seconds <= 0 || iv.Restarted {
		t.Fatalf("interval %+v", iv)
	}
	for k, want := range map[string]float64{"cmd_set": 3, "cmd_get": 3, "get_hits": 2, "get_misses": 1} {
		if iv.Deltas[k] != want {
			t.Errorf("%s delta %v, want %v (totals since start: %s)", k, iv.Deltas[k], want, s.Memcached.Stats[k])
		}
	}
	if _, ok := iv.Deltas["curr_items"]; ok {
		t.Errorf("a gauge has a delta")
	}
	// The crawler walks the LRUs while items move between them, so it
	// can miss one: the counts are a sample of the curr_items.
	ttl := s.Memcached.TTL
	if ttl == nil || ttl.Error != "" || ttl.Items < 3 || ttl.Items > 4 || ttl.NoExpiry < 1 || ttl.NoExpiry > 2 || ttl.OverHour != 1 || ttl.Truncated || s.Memcached.CurrItems != 4 {
		t.Errorf("ttl %+v of %d items, want 4 (or one missed), 2 without expiry, 1 over an hour", ttl, s.Memcached.CurrItems)
	}
	if b, _ := json.Marshal(s.Memcached.TTL); strings.Contains(string(b), "forever") {
		t.Errorf("a key reached the snapshot: %s", b)
	}
}

func TestReadMetadump(t *testing.T) {
	cases := []struct {
		name, in string
		max      int64
		want     MemcachedTTL
	}{
		{"items", "key=a exp=-1 la=1 cas=1 fetch=no cls=1 size=61\r\nkey=b exp=5000 la=1 cas=2 fetch=no cls=1 size=61\r\nkey=c exp=1100 la=1 cas=3 fetch=no cls=1 size=61\r\nEND\r\n", 10,
			MemcachedTTL{Items: 3, NoExpiry: 1, OverHour: 1}},
		{"cut at the limit", "key=a exp=-1 la=1\r\nkey=b exp=-1 la=1\r\nkey=c exp=-1 la=1\r\n", 2, MemcachedTTL{Items: 2, NoExpiry: 2, Truncated: true}},
		{"an old server", "ERROR\r\n", 10, MemcachedTTL{Error: `server replied "ERROR"`}},
		{"busy crawler", "BUSY currently processing crawler request\r\n", 10, MemcachedTTL{Error: `server replied "BUSY currently processing crawler request"`}},
		{"junk", "key=a la=1\r\n", 10, MemcachedTTL{Error: `unexpected reply line "key=a la=1"`}},
		{"cut off", "key=a exp=-1\r\n", 10, MemcachedTTL{Items: 1, NoExpiry: 1, Error: "unexpected EOF"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := readMetadump(bufio.NewReader(strings.NewReader(tc.in)), 1000, tc.max)
			if *got != tc.want {
				t.Errorf("got %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func FuzzReadMetadump(f *testing.F) {
	f.Add("key=a exp=-1 la=1 cas=1 fetch=no cls=1 size=61\r\nEND\r\n", int64(5))
	f.Add("BUSY\r\n", int64(1))
	f.Add("key=a exp=99999999999999999999\r\n", int64(0))
	f.Fuzz(func(t *testing.T, in string, max int64) {
		got := readMetadump(bufio.NewReader(strings.NewReader(in)), 1000, max)
		if got.NoExpiry+got.OverHour > got.Items || (max >= 0 && got.Items > max) {
			t.Fatalf("%q: %+v", in, got)
		}
	})
}

func FuzzProcStat(f *testing.F) {
	f.Add("12 (php-fpm8.2) S 1 12 0 0 -1 0 0 0 0 0 150 30 0 0 20 0 1 0 4000 0 0")
	f.Add("12 (a) b) (c) S 1 12 0 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0")
	f.Add("1 (x")
	f.Fuzz(func(t *testing.T, in string) {
		p, ok := parseProcStat([]byte(in))
		if !ok && (p.ticks != 0 || p.start != 0) {
			t.Fatalf("%q: %+v", in, p)
		}
	})
}
