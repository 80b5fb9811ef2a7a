package collect

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// redisCommands runs commands on one connection with the collector's own
// client, authenticating first when password is set.
func redisCommands(t *testing.T, network, addr, password string, cmds ...[]string) {
	t.Helper()
	conn, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	rc := &redisConn{w: conn, r: bufio.NewReader(conn)}
	if password != "" {
		cmds = append([][]string{{"AUTH", password}}, cmds...)
	}
	for _, cmd := range cmds {
		if _, err := rc.do(cmd...); err != nil {
			t.Fatalf("%s: %v", cmd[0], err)
		}
	}
}

// newRedisWithPassword starts a Redis that requires password. It sets
// requirepass once the server runs, with CONFIG SET: the sandbox checks
// readiness with a PING that --requirepass in ExtraArgs would refuse.
func newRedisWithPassword(t *testing.T, opts sandbox.RedisOptions, password string) *sandbox.Redis {
	t.Helper()
	r := sandboxtest.NewRedis(t, opts)
	redisCommands(t, r.Network(), r.Addr(), "", []string{"CONFIG", "SET", "requirepass", password})
	return r
}

// redisOps sets two keys and reads them back: 3 hits, 1 miss.
var redisOps = [][]string{
	{"SET", "a", "1"}, {"SET", "b", "2"},
	{"GET", "a"}, {"GET", "a"}, {"GET", "b"}, {"GET", "missing"},
}

// TestRedis collects from real servers over TCP and a unix socket, with a
// password, after reads with known hits and misses.
func TestRedis(t *testing.T) {
	const password = "s3cret-Pa55word"
	out, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		socket  bool
		extra   []string
		save    string
		aof     bool
		clients int64
	}{
		{name: "tcp with snapshots and AOF", extra: []string{"--save", "900 1 300 10", "--appendonly", "yes", "--maxclients", "500"}, save: "900 1 300 10", aof: true, clients: 500},
		{name: "unix socket without persistence", socket: true, save: "", clients: 10000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--maxmemory", "16mb", "--maxmemory-policy", "allkeys-lru"}, tc.extra...)
			r := newRedisWithPassword(t, sandbox.RedisOptions{Socket: tc.socket, ExtraArgs: args}, password)
			redisCommands(t, r.Network(), r.Addr(), password, redisOps...)
			s := Run(context.Background(), []Collector{NewRedis(r.Network(), r.Addr(), password)})
			if len(s.Errors) != 0 {
				t.Fatalf("errors %+v", s.Errors)
			}
			got := s.Redis
			if got.KeyspaceHits != 3 || got.KeyspaceMisses != 1 || got.HitRatio == nil || *got.HitRatio != 0.75 {
				t.Errorf("hits %d misses %d ratio %v, want 3, 1, 0.75", got.KeyspaceHits, got.KeyspaceMisses, got.HitRatio)
			}
			checks := []struct {
				name      string
				got, want any
			}{
				{"network", got.Network, r.Network()},
				{"addr", got.Addr, r.Addr()},
				{"unix", got.Unix, tc.socket},
				{"max_memory", got.MaxMemory, int64(16 << 20)},
				{"max_memory_policy", got.MaxMemoryPolicy, "allkeys-lru"},
				{"max_clients", got.MaxClients, tc.clients},
				{"save", got.Save, tc.save},
				{"rdb", got.RDB != nil && *got.RDB, tc.save != ""},
				{"aof", got.AOF, tc.aof},
				{"evicted_keys", got.EvictedKeys, int64(0)},
				{"config maxmemory", got.Config["maxmemory"], "16777216"},
				{"process_id", got.Info["server"]["process_id"], strconv.Itoa(r.PID())},
				{"keyspace db0", strings.HasPrefix(got.Info["keyspace"]["db0"], "keys=2,"), true},
				{"commandstats", strings.HasPrefix(got.Info["commandstats"]["cmdstat_get"], "calls=4,"), true},
				{"config error", got.ConfigError, ""},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
				}
			}
			if got.Version == "" || !strings.Contains(string(out), "v="+got.Version+" ") {
				t.Errorf("version %q, redis-server --version says %q", got.Version, out)
			}
			if got.ConnectedClients < 1 || got.UsedMemory <= 0 || got.UptimeSec < 0 {
				t.Errorf("clients %d memory %d uptime %d", got.ConnectedClients, got.UsedMemory, got.UptimeSec)
			}
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(password)) {
				t.Error("the password is in the snapshot")
			}
		})
	}
}

// TestRedisRefusals covers servers that refuse the collector something.
func TestRedisRefusals(t *testing.T) {
	const password = "right-Pa55word"
	t.Run("wrong password", func(t *testing.T) {
		t.Parallel()
		r := newRedisWithPassword(t, sandbox.RedisOptions{}, password)
		const wrong = "wrong-Pa55word"
		s := Run(context.Background(), []Collector{NewRedis(r.Network(), r.Addr(), wrong)})
		if s.Redis != nil || len(s.Errors) != 1 || s.Errors[0].Partial {
			t.Fatalf("layer %v errors %+v", s.Redis, s.Errors)
		}
		e := s.Errors[0].Error
		if !strings.Contains(e, "authentication failed") || !strings.Contains(e, "WRONGPASS") || !strings.Contains(e, r.Addr()) {
			t.Errorf("error %q", e)
		}
		if strings.Contains(e, wrong) || strings.Contains(e, password) {
			t.Errorf("error %q shows a password", e)
		}
	})
	t.Run("no password given", func(t *testing.T) {
		t.Parallel()
		r := newRedisWithPassword(t, sandbox.RedisOptions{}, password)
		s := Run(context.Background(), []Collector{NewRedis(r.Network(), r.Addr(), "")})
		if s.Redis != nil || len(s.Errors) != 1 || !strings.Contains(s.Errors[0].Error, "NOAUTH") || !strings.Contains(s.Errors[0].Error, "wants a password") {
			t.Fatalf("layer %v errors %+v", s.Redis, s.Errors)
		}
	})
	t.Run("password the server does not need", func(t *testing.T) {
		t.Parallel()
		r := sandboxtest.NewRedis(t, sandbox.RedisOptions{})
		s := Run(context.Background(), []Collector{NewRedis(r.Network(), r.Addr(), password)})
		if s.Redis == nil || len(s.Errors) != 0 {
			t.Fatalf("layer %v errors %+v", s.Redis, s.Errors)
		}
	})
	t.Run("CONFIG renamed", func(t *testing.T) {
		t.Parallel()
		r := sandboxtest.NewRedis(t, sandbox.RedisOptions{ExtraArgs: []string{"--rename-command", "CONFIG", "", "--maxmemory", "8mb"}})
		redisCommands(t, r.Network(), r.Addr(), "", redisOps...)
		s := Run(context.Background(), []Collector{NewRedis(r.Network(), r.Addr(), "")})
		if s.Redis == nil || len(s.Errors) != 1 || !s.Errors[0].Partial || !strings.Contains(s.Errors[0].Error, "CONFIG GET refused: ERR unknown command") {
			t.Fatalf("layer %v errors %+v", s.Redis, s.Errors)
		}
		got := s.Redis
		if len(got.Config) != 0 || !strings.Contains(got.ConfigError, "unknown command") || got.RDB != nil {
			t.Errorf("config %v error %q rdb %v", got.Config, got.ConfigError, got.RDB)
		}
		// The figures INFO also gives are still there.
		if got.MaxMemory != 8<<20 || got.MaxMemoryPolicy != "noeviction" || got.MaxClients != 10000 || got.AOF || *got.HitRatio != 0.75 {
			t.Errorf("from INFO: maxmemory %d policy %q maxclients %d aof %v", got.MaxMemory, got.MaxMemoryPolicy, got.MaxClients, got.AOF)
		}
	})
}

// TestRedisUnreachable: no server, or one that never answers, gives an
// error naming the address, quickly, and no layer.
func TestRedisUnreachable(t *testing.T) {
	cases := []struct {
		name, network, addr string
		err                 string
	}{
		{"closed port", "tcp", closedPort(t), "connection refused"},
		{"missing socket", "unix", filepath.Join(t.TempDir(), "none.sock"), "no such file"},
		{"silent server", "tcp", silentListener(t), "i/o timeout"},
		{"not redis", "tcp", fakeServer(t, func(c net.Conn) { io.WriteString(c, "SSH-2.0-OpenSSH_9.2\r\n") }), "unexpected reply type 'S'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			s := Run(ctx, []Collector{NewRedis(tc.network, tc.addr, "pw")})
			if s.Redis != nil || len(s.Errors) != 1 {
				t.Fatalf("layer %v errors %+v", s.Redis, s.Errors)
			}
			if e := s.Errors[0]; e.Collector != "redis" || !strings.Contains(e.Error, tc.addr) || !strings.Contains(e.Error, tc.err) {
				t.Errorf("error %+v, want one naming %s and containing %q", e, tc.addr, tc.err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestReadRESP(t *testing.T) {
	cases := []struct {
		name, in string
		want     redisValue
		err      string
	}{
		{name: "simple string", in: "+OK\r\n", want: redisValue{kind: '+', str: "OK"}},
		{name: "integer", in: ":-42\r\n", want: redisValue{kind: ':', n: -42}},
		{name: "bulk", in: "$5\r\na\r\nbc\r\n", want: redisValue{kind: '$', str: "a\r\nbc"}},
		{name: "empty bulk", in: "$0\r\n\r\n", want: redisValue{kind: '$', str: ""}},
		{name: "null bulk", in: "$-1\r\n", want: redisValue{kind: '$', null: true}},
		{name: "null array", in: "*-1\r\n", want: redisValue{kind: '*', null: true}},
		{name: "config get pair", in: "*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n",
			want: redisValue{kind: '*', array: []redisValue{{kind: '$', str: "maxmemory"}, {kind: '$', str: "0"}}}},
		{name: "nested", in: "*2\r\n*1\r\n:1\r\n+x\r\n",
			want: redisValue{kind: '*', array: []redisValue{{kind: '*', array: []redisValue{{kind: ':', n: 1}}}, {kind: '+', str: "x"}}}},
		{name: "error", in: "-ERR unknown command 'CONFIG'\r\n", err: "ERR unknown command 'CONFIG'"},
		{name: "error inside an array", in: "*2\r\n-ERR x\r\n:1\r\n", err: "ERR x"},
		{name: "bad integer", in: ":x\r\n", err: "bad integer"},
		{name: "negative bulk length", in: "$-2\r\n", err: "bad bulk length"},
		{name: "bulk over the limit", in: "$999999999999\r\n", err: "over the"},
		{name: "bulk cut short", in: "$10\r\nabc", err: "unexpected EOF"},
		{name: "bulk without CRLF", in: "$3\r\nabcde", err: "not followed by CRLF"},
		{name: "array over the limit", in: "*99999999\r\n", err: "over the"},
		{name: "too deep", in: strings.Repeat("*1\r\n", 20) + ":1\r\n", err: "nested deeper"},
		{name: "unknown type", in: "%1\r\n", err: "unexpected reply type '%'"},
		{name: "empty line", in: "\r\n", err: "empty reply line"},
		{name: "nothing", in: "", err: "unexpected EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readRESP(bufio.NewReader(strings.NewReader(tc.in)), 0)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normalRESP(got), normalRESP(tc.want)) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// normalRESP makes empty and nil arrays compare equal.
func normalRESP(v redisValue) redisValue {
	if len(v.array) == 0 {
		v.array = nil
	}
	for i := range v.array {
		v.array[i] = normalRESP(v.array[i])
	}
	return v
}

// encodeRESP writes v back in RESP2.
func encodeRESP(b *bytes.Buffer, v redisValue) {
	switch {
	case v.kind == '+':
		fmt.Fprintf(b, "+%s\r\n", v.str)
	case v.kind == ':':
		fmt.Fprintf(b, ":%d\r\n", v.n)
	case v.null:
		fmt.Fprintf(b, "%c-1\r\n", v.kind)
	case v.kind == '$':
		fmt.Fprintf(b, "$%d\r\n%s\r\n", len(v.str), v.str)
	case v.kind == '*':
		fmt.Fprintf(b, "*%d\r\n", len(v.array))
		for _, e := range v.array {
			encodeRESP(b, e)
		}
	}
}

// FuzzRESP: any input is read without panic within the limits, and what is
// read encodes back to a reply read the same way.
func FuzzRESP(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", ":1\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*-1\r\n", "-ERR x\r\n",
		"*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n", "*1\r\n*1\r\n*0\r\n", "$2\r\na\n\r\n",
		"$10\r\n# Server\r\n\r\n", "*3\r\n:1\r\n-ERR\r\n+x\r\n", "+a\nb\r\n", "$4\r\nab",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := readRESP(bufio.NewReader(bytes.NewReader(data)), 0)
		if err != nil {
			return
		}
		var b bytes.Buffer
		encodeRESP(&b, v)
		v2, err := readRESP(bufio.NewReader(&b), 0)
		if err != nil {
			t.Fatalf("%q read as %+v, whose encoding %q fails: %v", data, v, b.String(), err)
		}
		if !reflect.DeepEqual(normalRESP(v), normalRESP(v2)) {
			t.Fatalf("%q: %+v, then %+v", data, v, v2)
		}
	})
}

func TestParseRedisInfo(t *testing.T) {
	text := "# Server\r\nredis_version:7.0.15\r\nexecutable:/usr/bin/redis-server\r\n\r\n# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\n# Latencystats\r\nlatency_percentiles_usec_get:p50=1.003,p99=2.007\r\nno colon line\r\n:empty key\r\n"
	want := map[string]map[string]string{
		"server":       {"redis_version": "7.0.15", "executable": "/usr/bin/redis-server"},
		"keyspace":     {"db0": "keys=2,expires=0,avg_ttl=0"},
		"latencystats": {"latency_percentiles_usec_get": "p50=1.003,p99=2.007"},
	}
	if got := parseRedisInfo(text); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if got := parseRedisInfo("a:1\nb:2:3\n"); !reflect.DeepEqual(got, map[string]map[string]string{"": {"a": "1", "b": "2:3"}}) {
		t.Errorf("without sections: %v", got)
	}
}

// renderRedisInfo writes info back as INFO text.
func renderRedisInfo(info map[string]map[string]string) string {
	var sections []string
	for s := range info {
		sections = append(sections, s)
	}
	sort.Strings(sections) // "" first: its lines come before any header
	var b strings.Builder
	for _, s := range sections {
		if s != "" {
			fmt.Fprintf(&b, "# %s\r\n", s)
		}
		for k, v := range info[s] {
			fmt.Fprintf(&b, "%s:%s\r\n", k, v)
		}
		b.WriteString("\r\n")
	}
	return b.String()
}

// FuzzRedisInfo: any text parses without panic into keys without line
// ends or colons, and rendering and parsing again gives the same map.
func FuzzRedisInfo(f *testing.F) {
	for _, s := range []string{
		"# Server\r\nredis_version:7.0.15\r\n", "a:b:c\n#\n:x\n", "# Keyspace\r\ndb0:keys=1\r\r\n", "#  Mixed Case \nk:v\r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		info := parseRedisInfo(text)
		for s, kv := range info {
			if strings.ContainsAny(s, "\n") {
				t.Fatalf("section %q", s)
			}
			for k, v := range kv {
				if k == "" || strings.ContainsAny(k, ":\n") || strings.HasPrefix(k, "#") || strings.ContainsAny(v, "\n") || strings.HasSuffix(v, "\r") {
					t.Fatalf("%q: key %q value %q", text, k, v)
				}
			}
		}
		again := parseRedisInfo(renderRedisInfo(info))
		if !reflect.DeepEqual(info, again) {
			t.Fatalf("%q: %v, then %v", text, info, again)
		}
	})
}
