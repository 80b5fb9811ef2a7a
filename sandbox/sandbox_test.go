package sandbox

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

// alive reports whether a process with this pid exists and is not a zombie
// (an orphan killed by Stop may wait a moment for init to reap it).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	f := procStat(pid)
	return len(f) == 0 || f[0] != "Z"
}

// openDB opens dsn and closes it when the test ends.
func openDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func queryString(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var s sql.NullString
	if err := db.QueryRow(q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s.String
}

func TestMariaDB(t *testing.T) {
	t.Parallel()
	m := NewMariaDB(t, MariaDBOptions{Options: map[string]string{
		"slow_query_log":     "ON",
		"long_query_time":    "0",
		"performance_schema": "ON",
		"max-connections":    "42", // dashes work too
	}})
	t.Logf("MariaDB %s in %s, port %d", m.Version(), m.Dir(), m.Port())

	if !strings.Contains(m.Version(), "MariaDB") {
		t.Errorf("Version() = %q, want a MariaDB version", m.Version())
	}
	if got, want := m.DSN("mysql"), "root@unix("+m.Socket()+")/mysql"; got != want {
		t.Errorf("DSN = %q, want %q", got, want)
	}
	if len(m.Socket()) > maxSocketPath {
		t.Errorf("socket path %q too long", m.Socket())
	}

	conns := []struct {
		name, dsn string
	}{
		{"unix socket", m.DSN("mysql")},
		{"tcp", m.TCPDSN("mysql")},
	}
	for _, c := range conns {
		t.Run("connect over "+c.name, func(t *testing.T) {
			db := openDB(t, c.dsn)
			if err := db.Ping(); err != nil {
				t.Fatalf("ping: %v", err)
			}
			if got := queryString(t, db, "SELECT CURRENT_USER()"); !strings.HasPrefix(got, "root@") {
				t.Errorf("CURRENT_USER() = %q, want root@...", got)
			}
			if got := queryString(t, db, "SELECT DATABASE()"); got != "mysql" {
				t.Errorf("DATABASE() = %q, want mysql", got)
			}
		})
	}

	vars := []struct {
		name, query, want string
	}{
		{"extra option long_query_time", "SELECT @@long_query_time", "0"},
		{"extra option slow_query_log", "SELECT @@slow_query_log", "1"},
		{"extra option performance_schema", "SELECT @@performance_schema", "1"},
		{"extra option with dashes", "SELECT @@max_connections", "42"},
		{"default buffer pool", "SELECT @@innodb_buffer_pool_size", strconv.Itoa(64 << 20)},
		{"bind address", "SELECT @@bind_address", "127.0.0.1"},
		{"port", "SELECT @@port", strconv.Itoa(m.Port())},
		{"socket", "SELECT @@socket", m.Socket()},
		{"datadir", "SELECT @@datadir", m.DataDir() + "/"},
		{"slow log file", "SELECT @@slow_query_log_file", m.SlowLogPath()},
		{"error log", "SELECT @@log_error", m.ErrorLogPath()},
	}
	for _, v := range vars {
		t.Run(v.name, func(t *testing.T) {
			if got := queryString(t, m.DB(), v.query); got != v.want {
				t.Errorf("%s = %q, want %q", v.query, got, v.want)
			}
		})
	}

	t.Run("slow log written", func(t *testing.T) {
		if _, err := m.DB().Exec("SELECT 'sandbox-slow-marker'"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			data, err := os.ReadFile(m.SlowLogPath())
			if err == nil && strings.Contains(string(data), "sandbox-slow-marker") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("slow log %s lacks the query (err %v):\n%s", m.SlowLogPath(), err, data)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})

	t.Run("error log written", func(t *testing.T) {
		data, err := os.ReadFile(m.ErrorLogPath())
		if err != nil || !strings.Contains(string(data), "ready for connections") {
			t.Errorf("error log %s: %v\n%s", m.ErrorLogPath(), err, data)
		}
	})
}

func TestMariaDBInParallel(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		servers []*MariaDB
		wg      sync.WaitGroup
		errs    = make([]error, 2)
	)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := StartMariaDB(context.Background(), MariaDBOptions{})
			errs[i] = err
			if err == nil {
				mu.Lock()
				servers = append(servers, m)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, m := range servers {
		t.Cleanup(func() { m.Stop() })
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	a, b := servers[0], servers[1]
	if a.Port() == b.Port() || a.Socket() == b.Socket() || a.Dir() == b.Dir() {
		t.Fatalf("servers collide: ports %d/%d, sockets %s/%s", a.Port(), b.Port(), a.Socket(), b.Socket())
	}
	if _, err := a.DB().Exec("CREATE DATABASE only_in_a"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    *MariaDB
		want int
	}{{"first", a, 1}, {"second", b, 0}} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t, c.m.TCPDSN(""))
			var n int
			if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'only_in_a'").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != c.want {
				t.Errorf("only_in_a count over TCP = %d, want %d", n, c.want)
			}
		})
	}
}

// logPathInError extracts the first log path named in a start error.
var logPathInError = regexp.MustCompile(`--- last \d+ lines of (\S+) ---`)

func TestMariaDBBadOption(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		options map[string]string
		want    string
	}{
		{"bad value", map[string]string{"innodb_buffer_pool_size": "notanumber"}, "Error while setting value 'notanumber'"},
		{"unknown variable", map[string]string{"no_such_variable_xyz": "1"}, "unknown variable 'no_such_variable_xyz=1'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m, err := StartMariaDB(context.Background(), MariaDBOptions{Options: c.options})
			if err == nil {
				m.Stop()
				t.Fatal("StartMariaDB succeeded, want an error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error lacks %q from the error log:\n%v", c.want, err)
			}
			match := logPathInError.FindStringSubmatch(err.Error())
			if match == nil {
				t.Fatalf("error names no log:\n%v", err)
			}
			if _, statErr := os.Stat(filepath.Dir(match[1])); !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("failed start left %s behind (%v)", filepath.Dir(match[1]), statErr)
			}
		})
	}
	t.Run("managed option rejected", func(t *testing.T) {
		_, err := StartMariaDB(context.Background(), MariaDBOptions{Options: map[string]string{"Data-Dir": "/var/lib/mysql", "datadir": "/x"}})
		if err == nil || !strings.Contains(err.Error(), "managed by the sandbox") {
			t.Fatalf("err = %v, want a managed-option error", err)
		}
	})
}

func TestNginx(t *testing.T) {
	t.Parallel()
	get := func(t *testing.T, url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}

	t.Run("default config", func(t *testing.T) {
		t.Parallel()
		n := NewNginx(t, NginxOptions{})
		code, body := get(t, n.URL())
		if code != 200 || !strings.Contains(body, "stacktune sandbox") {
			t.Fatalf("GET %s = %d %q", n.URL(), code, body)
		}
		// The access log line is written after the response is sent.
		deadline := time.Now().Add(5 * time.Second)
		for {
			data, _ := os.ReadFile(n.AccessLogPath())
			if strings.Contains(string(data), "GET / HTTP/1.1") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("access log %s lacks the request:\n%s", n.AccessLogPath(), data)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := os.Stat(n.ErrorLogPath()); err != nil {
			t.Errorf("error log: %v", err)
		}
	})

	t.Run("http config with placeholders and reload", func(t *testing.T) {
		t.Parallel()
		conf := `    server {
        listen 127.0.0.1:{{PORT}};
        access_log {{DIR}}/custom.log;
        location / { return 200 "first\n"; }
    }
`
		n := NewNginx(t, NginxOptions{HTTPConfig: conf})
		if _, body := get(t, n.URL()); body != "first\n" {
			t.Fatalf("body = %q, want first", body)
		}
		if _, err := os.Stat(filepath.Join(n.Dir(), "custom.log")); err != nil {
			t.Errorf("{{DIR}} not substituted: %v", err)
		}
		data, err := os.ReadFile(n.ConfigPath())
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(data), `"first\n"`, `"second\n"`, 1)
		if err := os.WriteFile(n.ConfigPath(), []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		if _, body := get(t, n.URL()); body != "second\n" {
			t.Fatalf("after Reload body = %q, want second", body)
		}

		broken := strings.Replace(edited, "return 200", "no_such_directive 200", 1)
		if err := os.WriteFile(n.ConfigPath(), []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := n.Reload(ctx); err == nil || !strings.Contains(err.Error(), "unknown directive") {
			t.Fatalf("Reload of a broken config: err = %v, want nginx -t output", err)
		}
	})

	t.Run("full config", func(t *testing.T) {
		t.Parallel()
		conf := `user root;
error_log {{DIR}}/full-error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path {{DIR}}/tmp/client_body;
    proxy_temp_path {{DIR}}/tmp/proxy;
    fastcgi_temp_path {{DIR}}/tmp/fastcgi;
    uwsgi_temp_path {{DIR}}/tmp/uwsgi;
    scgi_temp_path {{DIR}}/tmp/scgi;
    server {
        listen 127.0.0.1:{{PORT}};
        location / { return 204; }
    }
}
`
		n := NewNginx(t, NginxOptions{FullConfig: conf})
		if code, _ := get(t, n.URL()); code != http.StatusNoContent {
			t.Fatalf("GET = %d, want 204", code)
		}
		// No pid directive in the config: the sandbox put it in Dir().
		pid, err := os.ReadFile(filepath.Join(n.Dir(), "nginx.pid"))
		if err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(n.PID()) {
			t.Errorf("nginx.pid = %q (%v), want %d", pid, err, n.PID())
		}
	})

	t.Run("stop after master crash kills workers", func(t *testing.T) {
		t.Parallel()
		n, err := StartNginx(context.Background(), NginxOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer n.Stop()
		workers := childPIDs(n.PID())
		if len(workers) == 0 {
			t.Fatal("no worker processes")
		}
		if err := syscall.Kill(n.PID(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-n.inst.proc.done
		if err := n.Stop(); err != nil {
			t.Fatal(err)
		}
		for _, w := range workers {
			deadline := time.Now().Add(5 * time.Second)
			for alive(w) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond) // SIGKILL is asynchronous
			}
			if alive(w) {
				t.Errorf("worker %d survived Stop", w)
			}
		}
	})

	t.Run("invalid config", func(t *testing.T) {
		t.Parallel()
		_, err := StartNginx(context.Background(), NginxOptions{HTTPConfig: "server { listen 127.0.0.1:{{PORT}}; bogus_directive on; }"})
		if err == nil || !strings.Contains(err.Error(), `unknown directive "bogus_directive"`) {
			t.Fatalf("err = %v, want nginx -t output", err)
		}
	})

	t.Run("config without port", func(t *testing.T) {
		_, err := StartNginx(context.Background(), NginxOptions{HTTPConfig: "server { listen 127.0.0.1:8080; }"})
		if err == nil || !strings.Contains(err.Error(), "{{PORT}}") {
			t.Fatalf("err = %v, want a {{PORT}} error", err)
		}
	})
}

// exchange sends req to network/addr and reads until the reply contains
// want or the deadline passes; it returns everything read.
func exchange(t *testing.T, network, addr, req, want string) string {
	t.Helper()
	conn, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	r := bufio.NewReader(conn)
	for !strings.Contains(got.String(), want) {
		line, err := r.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Fatalf("reply to %q: %v; read %q, want %q", req, err, got.String(), want)
		}
	}
	return got.String()
}

func TestMemcached(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		opts    MemcachedOptions
		network string
	}{
		{"tcp", MemcachedOptions{}, "tcp"},
		{"unix socket", MemcachedOptions{Socket: true, MemoryMB: 16, MaxConns: 64}, "unix"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := NewMemcached(t, c.opts)
			if m.Network() != c.network {
				t.Fatalf("Network() = %q, want %q", m.Network(), c.network)
			}
			if c.network == "tcp" && m.Addr() != fmt.Sprintf("127.0.0.1:%d", m.Port()) {
				t.Errorf("Addr() = %q, Port() = %d", m.Addr(), m.Port())
			}
			if c.network == "unix" && (m.Addr() != m.SocketPath() || m.Port() != 0) {
				t.Errorf("Addr() = %q, SocketPath() = %q, Port() = %d", m.Addr(), m.SocketPath(), m.Port())
			}
			exchange(t, m.Network(), m.Addr(), "version\r\n", "VERSION "+m.Version())
			exchange(t, m.Network(), m.Addr(), "set k 0 0 5\r\nhello\r\n", "STORED")
			exchange(t, m.Network(), m.Addr(), "get k\r\n", "hello\r\nEND")
			mem := 64
			if c.opts.MemoryMB != 0 {
				mem = c.opts.MemoryMB
			}
			exchange(t, m.Network(), m.Addr(), "stats settings\r\n", fmt.Sprintf("STAT maxbytes %d\r\n", mem<<20))
		})
	}

	t.Run("port taken", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		// -p in ExtraArgs overrides the sandbox's port, so every retry hits
		// the taken port and the error must come from memcached's own log.
		_, err = StartMemcached(context.Background(), MemcachedOptions{ExtraArgs: []string{"-p", port}})
		if err == nil || !errors.Is(err, errAddrInUse) || !strings.Contains(err.Error(), "failed to listen on one of interface(s) 127.0.0.1: Address already in use") {
			t.Fatalf("err = %v, want memcached's bind error", err)
		}
	})
}

func TestRedis(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		opts    RedisOptions
		network string
	}{
		{"tcp", RedisOptions{ExtraArgs: []string{"--maxmemory", "16mb"}}, "tcp"},
		{"unix socket", RedisOptions{Socket: true}, "unix"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := NewRedis(t, c.opts)
			if r.Network() != c.network {
				t.Fatalf("Network() = %q, want %q", r.Network(), c.network)
			}
			if c.network == "tcp" && (r.Addr() != fmt.Sprintf("127.0.0.1:%d", r.Port()) || r.SocketPath() != "") {
				t.Errorf("Addr() = %q, Port() = %d, SocketPath() = %q", r.Addr(), r.Port(), r.SocketPath())
			}
			if c.network == "unix" && (r.Addr() != r.SocketPath() || r.Port() != 0) {
				t.Errorf("Addr() = %q, SocketPath() = %q, Port() = %d", r.Addr(), r.SocketPath(), r.Port())
			}
			exchange(t, r.Network(), r.Addr(), "PING\r\n", "+PONG")
			exchange(t, r.Network(), r.Addr(), "SET k hello\r\nGET k\r\n", "+OK\r\n$5\r\nhello\r\n")
			exchange(t, r.Network(), r.Addr(), "CONFIG GET save\r\n", "$4\r\nsave\r\n$0\r\n\r\n")
			exchange(t, r.Network(), r.Addr(), "CONFIG GET appendonly\r\n", "appendonly\r\n$2\r\nno\r\n")
			exchange(t, r.Network(), r.Addr(), "CONFIG GET dir\r\n", r.Dir())
			if c.opts.ExtraArgs != nil {
				exchange(t, r.Network(), r.Addr(), "CONFIG GET maxmemory\r\n", "$8\r\n16777216\r\n")
			}
		})
	}
}

// server is what TestStop needs from every server type.
type server interface {
	Stop() error
	PID() int
	Dir() string
}

func TestStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name  string
		start func() (server, error)
	}{
		{"mariadb", func() (server, error) { return StartMariaDB(ctx, MariaDBOptions{}) }},
		{"nginx", func() (server, error) { return StartNginx(ctx, NginxOptions{}) }},
		{"memcached", func() (server, error) { return StartMemcached(ctx, MemcachedOptions{}) }},
		{"memcached socket", func() (server, error) { return StartMemcached(ctx, MemcachedOptions{Socket: true}) }},
		{"redis", func() (server, error) { return StartRedis(ctx, RedisOptions{}) }},
		{"redis socket", func() (server, error) { return StartRedis(ctx, RedisOptions{Socket: true}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, err := c.start()
			if err != nil {
				t.Fatal(err)
			}
			pid := s.PID()
			children := childPIDs(pid) // nginx workers
			if !alive(pid) {
				t.Fatalf("pid %d not running after start", pid)
			}
			// Concurrent Stops all return after the server is gone.
			var wg sync.WaitGroup
			errs := make([]error, 3)
			for i := range errs {
				wg.Add(1)
				go func() { defer wg.Done(); errs[i] = s.Stop() }()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			for _, p := range append(children, pid) {
				if alive(p) {
					t.Errorf("pid %d still alive after Stop", p)
				}
			}
			if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Dir %s still there after Stop (%v)", s.Dir(), err)
			}
			if err := s.Stop(); err != nil {
				t.Errorf("second Stop: %v", err)
			}
		})
	}
}

func TestCallerDirIsKept(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "st-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dir = filepath.Join(dir, "redis")
	r, err := StartRedis(context.Background(), RedisOptions{Dir: dir, Socket: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Dir() != dir || filepath.Dir(r.SocketPath()) != dir {
		t.Errorf("Dir() = %q, SocketPath() = %q, want them in %q", r.Dir(), r.SocketPath(), dir)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.LogPath()); err != nil {
		t.Errorf("caller's Dir not kept: %v", err)
	}
}

func TestMissingBinary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const missing = "/nonexistent/stacktune-sandbox-binary"
	cases := []struct {
		name  string
		pkg   string
		start func() error
	}{
		{"mariadbd", "mariadb-server", func() error { _, err := StartMariaDB(ctx, MariaDBOptions{Binary: missing}); return err }},
		{"mariadb-install-db", "mariadb-server", func() error {
			_, err := StartMariaDB(ctx, MariaDBOptions{InstallBinary: missing})
			return err
		}},
		{"nginx", "nginx", func() error { _, err := StartNginx(ctx, NginxOptions{Binary: missing}); return err }},
		{"memcached", "memcached", func() error { _, err := StartMemcached(ctx, MemcachedOptions{Binary: missing}); return err }},
		{"redis", "redis-server", func() error { _, err := StartRedis(ctx, RedisOptions{Binary: missing}); return err }},
		{"php-fpm", "php-fpm", func() error { _, err := StartPHPFPM(ctx, PHPFPMOptions{Binary: missing}); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.start()
			if !errors.Is(err, ErrMissingBinary) {
				t.Fatalf("err = %v, want ErrMissingBinary", err)
			}
			if want := fmt.Sprintf("install the Debian package %q", c.pkg); !strings.Contains(err.Error(), want) {
				t.Errorf("err = %q, want it to contain %q", err, want)
			}
		})
	}
	t.Run("bare name", func(t *testing.T) {
		_, err := lookBinary("stacktune-no-such-server", "nginx")
		want := `sandbox: stacktune-no-such-server not found in PATH or /usr/sbin: install the Debian package "nginx"`
		if !errors.Is(err, ErrMissingBinary) || err.Error() != want {
			t.Fatalf("err = %v, want %s", err, want)
		}
	})
}

// TestServerDiesWithParent kills a process that started a server and checks
// that Pdeathsig took the server down with it.
func TestServerDiesWithParent(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SANDBOX_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	var pid int
	var dir string
	sc := bufio.NewScanner(out)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if _, err := fmt.Sscanf(sc.Text(), "SERVER %d %s", &pid, &dir); err == nil {
			break
		}
	}
	if pid == 0 {
		t.Fatalf("helper printed no server pid (%v):\n%s", sc.Err(), strings.Join(lines, "\n"))
	}
	defer os.RemoveAll(dir) // the killed helper could not clean up
	if !alive(pid) {
		t.Fatalf("server %d not running", pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("server %d outlived its parent", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMain turns the test binary into TestServerDiesWithParent's helper
// when SANDBOX_HELPER=1: it starts a memcached, prints its pid and hangs
// until killed.
func TestMain(m *testing.M) {
	if os.Getenv("SANDBOX_HELPER") != "1" {
		m.Run()
		return
	}
	mc, err := StartMemcached(context.Background(), MemcachedOptions{})
	if err != nil {
		fmt.Println("ERROR", err)
		return
	}
	fmt.Printf("SERVER %d %s\n", mc.PID(), mc.Dir())
	time.Sleep(time.Minute)
	mc.Stop()
}

// globalVar reads one variable with SHOW GLOBAL VARIABLES.
func globalVar(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var n, v string
	if err := db.QueryRow("SHOW GLOBAL VARIABLES LIKE '"+name+"'").Scan(&n, &v); err != nil {
		t.Fatalf("SHOW GLOBAL VARIABLES LIKE '%s': %v", name, err)
	}
	return v
}

func TestMariaDBConfigFiles(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	m := NewMariaDB(t, MariaDBOptions{ConfigFiles: true, Options: map[string]string{"max_connections": "50", "slow_query_log": ""}})
	if m.DefaultsFile() != filepath.Join(m.Dir(), "my.cnf") || m.ConfDir() != filepath.Join(m.Dir(), "conf.d") {
		t.Fatalf("DefaultsFile() = %q, ConfDir() = %q", m.DefaultsFile(), m.ConfDir())
	}
	if entries, err := os.ReadDir(m.ConfDir()); err != nil || len(entries) != 0 {
		t.Fatalf("conf.d: %v, %v; want an empty directory", entries, err)
	}
	if !filepath.IsAbs(m.Binary()) {
		t.Errorf("Binary() = %q, want an absolute path", m.Binary())
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", m.PID()))
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"); len(args) != 2 || args[1] != "--defaults-file="+m.DefaultsFile() {
		t.Errorf("mariadbd command line = %q, want only --defaults-file", args)
	}
	cnf, err := os.ReadFile(m.DefaultsFile())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[mysqld]\n", "\ndatadir=" + m.DataDir() + "\n", "\nsocket=" + m.Socket() + "\n",
		fmt.Sprintf("\nport=%d\n", m.Port()), "\ninnodb_buffer_pool_size=64M\n", "\nmax_connections=50\n",
		"\nslow_query_log\n", "\n!includedir " + m.ConfDir() + "\n"} {
		if !strings.Contains(string(cnf), want) {
			t.Errorf("my.cnf lacks %q:\n%s", want, cnf)
		}
	}
	if got := globalVar(t, m.DB(), "max_connections"); got != "50" {
		t.Errorf("max_connections = %s, want 50 from my.cnf", got)
	}
	if got := globalVar(t, m.DB(), "slow_query_log"); got != "ON" {
		t.Errorf("slow_query_log = %s, want ON from a bare option", got)
	}
	if err := m.CheckConfig(ctx); err != nil {
		t.Fatalf("CheckConfig of the generated my.cnf: %v", err)
	}
	for _, q := range []string{"CREATE DATABASE keep", "CREATE TABLE keep.t (id INT PRIMARY KEY) ENGINE=InnoDB", "INSERT INTO keep.t VALUES (1), (2)"} {
		if _, err := m.DB().Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tcp := openDB(t, m.TCPDSN("keep"))
	if err := tcp.Ping(); err != nil {
		t.Fatal(err)
	}

	bad := filepath.Join(m.ConfDir(), "90-bad.cnf")
	for _, c := range []struct{ name, text, want string }{
		{"unknown variable", "[mysqld]\nno_such_variable_xyz = 1\n", "unknown variable 'no_such_variable_xyz=1'"},
		{"bad plugin value", "[mysqld]\ninnodb_buffer_pool_size = notanumber\n", "Error while setting value 'notanumber'"},
		{"bad server value", "[mysqld]\nmax_connections = lots\n", "lots"},
		{"option without a group", "max_connections = 5\n", "Found option without preceding group"},
	} {
		t.Run("CheckConfig "+c.name, func(t *testing.T) {
			if err := os.WriteFile(bad, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(bad)
			pid := m.PID()
			err := m.CheckConfig(ctx)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("CheckConfig = %v, want an error with %q", err, c.want)
			}
			t.Logf("CheckConfig: %v", err)
			if m.PID() != pid || m.DB().Ping() != nil {
				t.Errorf("CheckConfig disturbed the running server")
			}
		})
	}

	t.Run("Restart reads conf.d", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(m.ConfDir(), "50-tune.cnf"), []byte("[mysqld]\nmax_connections = 77\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := m.CheckConfig(ctx); err != nil {
			t.Fatalf("CheckConfig: %v", err)
		}
		oldPID, port := m.PID(), m.Port()
		if err := m.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		if m.PID() == oldPID || !alive(m.PID()) || alive(oldPID) {
			t.Errorf("after Restart PID() = %d (alive %v), old %d (alive %v)", m.PID(), alive(m.PID()), oldPID, alive(oldPID))
		}
		if m.Port() != port {
			t.Errorf("port changed from %d to %d", port, m.Port())
		}
		if got := globalVar(t, m.DB(), "max_connections"); got != "77" {
			t.Errorf("after Restart max_connections = %s, want 77 from conf.d", got)
		}
		var n int
		if err := tcp.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 2 {
			t.Errorf("after Restart, over the pool opened before it: %d rows (%v), want 2", n, err)
		}
	})

	t.Run("Restart with a bad file fails, then recovers", func(t *testing.T) {
		if err := os.WriteFile(bad, []byte("[mysqld]\nno_such_variable_xyz = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := m.Restart(ctx)
		if err == nil || !strings.Contains(err.Error(), "unknown variable 'no_such_variable_xyz=1'") || !strings.Contains(err.Error(), "--- last") {
			t.Fatalf("Restart with a bad file = %v, want the error log's tail", err)
		}
		if err := os.Remove(bad); err != nil {
			t.Fatal(err)
		}
		if err := m.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := m.DB().QueryRow("SELECT COUNT(*) FROM keep.t").Scan(&n); err != nil || n != 2 {
			t.Errorf("after recovery: %d rows (%v), want 2", n, err)
		}
	})

	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(ctx); err == nil {
		t.Error("Restart after Stop succeeded")
	}
}

func TestMariaDBServerDefaultsAndRestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	m := NewMariaDB(t, MariaDBOptions{ServerDefaults: true})
	if m.ConfDir() != "" || m.DefaultsFile() != "" {
		t.Errorf("without ConfigFiles: ConfDir() = %q, DefaultsFile() = %q", m.ConfDir(), m.DefaultsFile())
	}
	for name, want := range map[string]string{
		"innodb_buffer_pool_size": "134217728", // mariadbd's compiled-in 128M
		"innodb_log_file_size":    "100663296", // 96M: the template's 8M redo log was resized
		"key_buffer_size":         "134217728",
		"skip_name_resolve":       "ON",
	} {
		if got := globalVar(t, m.DB(), name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	for _, q := range []string{"CREATE DATABASE keep", "CREATE TABLE keep.t (id INT PRIMARY KEY) ENGINE=InnoDB", "INSERT INTO keep.t VALUES (1), (2), (3)"} {
		if _, err := m.DB().Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := m.CheckConfig(ctx); err != nil {
		t.Errorf("CheckConfig of a command-line configuration: %v", err)
	}
	oldPID := m.PID()
	if err := m.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if m.PID() == oldPID || alive(oldPID) {
		t.Errorf("PID() = %d after Restart, old %d alive %v", m.PID(), oldPID, alive(oldPID))
	}
	var n int
	if err := m.DB().QueryRow("SELECT COUNT(*) FROM keep.t").Scan(&n); err != nil || n != 3 {
		t.Errorf("after Restart: %d rows (%v), want 3", n, err)
	}
	if got := globalVar(t, m.DB(), "innodb_buffer_pool_size"); got != "134217728" {
		t.Errorf("after Restart innodb_buffer_pool_size = %s", got)
	}
}

func TestMemcachedRestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := NewMemcached(t, MemcachedOptions{MemoryMB: 16})
	port, pid := m.Port(), m.PID()
	exchange(t, m.Network(), m.Addr(), "set k 0 0 5\r\nhello\r\n", "STORED")

	// TCP to TCP with other options: same port, new process, empty cache.
	if err := m.Restart(ctx, MemcachedOptions{MemoryMB: 32}); err != nil {
		t.Fatal(err)
	}
	if m.Network() != "tcp" || m.Port() != port || m.PID() == pid || alive(pid) {
		t.Errorf("after Restart: %s port %d (was %d), pid %d (was %d, alive %v)", m.Network(), m.Port(), port, m.PID(), pid, alive(pid))
	}
	exchange(t, m.Network(), m.Addr(), "stats settings\r\n", fmt.Sprintf("STAT maxbytes %d\r\n", 32<<20))
	exchange(t, m.Network(), m.Addr(), "get k\r\n", "END\r\n")

	// TCP to a unix socket in the same Dir: the port is closed.
	dir := m.Dir()
	if err := m.Restart(ctx, MemcachedOptions{Socket: true, ExtraArgs: []string{"-t", "2"}}); err != nil {
		t.Fatal(err)
	}
	if m.Network() != "unix" || m.SocketPath() != filepath.Join(dir, "memcached.sock") || m.Port() != 0 || m.Dir() != dir || m.Addr() != m.SocketPath() {
		t.Fatalf("after Restart with Socket: Network %q, SocketPath %q, Port %d, Dir %q", m.Network(), m.SocketPath(), m.Port(), m.Dir())
	}
	exchange(t, "unix", m.SocketPath(), "stats settings\r\n", "STAT num_threads 2\r\n")
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		c.Close()
		t.Errorf("port %d still answers after moving to the socket", port)
	}

	// And back to TCP, on the port clients knew (a rollback of the move
	// restores their configuration, which names it).
	if err := m.Restart(ctx, MemcachedOptions{}); err != nil {
		t.Fatal(err)
	}
	if m.Network() != "tcp" || m.Port() != port || m.SocketPath() != "" {
		t.Fatalf("back to TCP: Network %q, Port %d (was %d), SocketPath %q", m.Network(), m.Port(), port, m.SocketPath())
	}
	exchange(t, m.Network(), m.Addr(), "version\r\n", "VERSION "+m.Version())

	// A bad option fails with memcached's own message; a good one recovers.
	if err := m.Restart(ctx, MemcachedOptions{ExtraArgs: []string{"-o", "no_such_option_xyz"}}); err == nil || !strings.Contains(err.Error(), "did not start") {
		t.Fatalf("Restart with a bad option: %v", err)
	}
	if err := m.Restart(ctx, MemcachedOptions{Dir: "/elsewhere"}); err == nil || !strings.Contains(err.Error(), "is not the server's") {
		t.Fatalf("Restart in another Dir: %v", err)
	}
	if err := m.Restart(ctx, MemcachedOptions{Socket: true}); err != nil {
		t.Fatal(err)
	}
	exchange(t, m.Network(), m.Addr(), "version\r\n", "VERSION")
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stop after Restart left %s (%v)", dir, err)
	}
	if err := m.Restart(ctx, MemcachedOptions{}); err == nil {
		t.Error("Restart after Stop succeeded")
	}
}

func TestNginxTest(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conf := `    server {
        listen 127.0.0.1:{{PORT}};
        location / { return 200 "first\n"; }
    }
`
	n := NewNginx(t, NginxOptions{HTTPConfig: conf})
	if !filepath.IsAbs(n.Binary()) || n.Prefix() != n.Dir()+"/" {
		t.Errorf("Binary() = %q, Prefix() = %q", n.Binary(), n.Prefix())
	}
	if err := n.Test(ctx); err != nil {
		t.Fatalf("Test of the running configuration: %v", err)
	}
	good, err := os.ReadFile(n.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	workers := childPIDs(n.PID())
	body := func() string {
		t.Helper()
		resp, err := http.Get(n.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}

	// A candidate beside the live file: checked, nothing reloaded.
	candidate := filepath.Join(n.Dir(), "candidate.conf")
	if err := os.WriteFile(candidate, []byte(strings.Replace(string(good), `"first\n"`, `"second\n"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := n.TestConfig(ctx, candidate); err != nil {
		t.Fatalf("TestConfig of a good candidate: %v", err)
	}
	broken := strings.Replace(string(good), "return 200", "bogus_directive 200", 1)
	if err := os.WriteFile(candidate, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := n.TestConfig(ctx, candidate); err == nil || !strings.Contains(err.Error(), `unknown directive "bogus_directive" in `+candidate) {
		t.Fatalf("TestConfig of a broken candidate: %v", err)
	}

	// The live file broken: Test fails and the running nginx is untouched.
	if err := os.WriteFile(n.ConfigPath(), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := n.Test(ctx); err == nil || !strings.Contains(err.Error(), `unknown directive "bogus_directive"`) {
		t.Fatalf("Test of a broken config: %v", err)
	}
	if got := body(); got != "first\n" {
		t.Errorf("after Test: body %q, want first", got)
	}
	if now := childPIDs(n.PID()); fmt.Sprint(now) != fmt.Sprint(workers) {
		t.Errorf("workers changed from %v to %v: Test reloaded nginx", workers, now)
	}
}
