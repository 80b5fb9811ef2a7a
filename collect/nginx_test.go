package collect

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/internal/golden"
	"github.com/stacktune/stacktune/nginxconf"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// nginxFixtures are the configuration trees under testdata, each with its
// golden snapshot.
var nginxFixtures = []string{"nginx-isucon", "nginx-keepalive", "nginx-minimal", "nginx-debian"}

// collectNginxFixture reads a fixture without running nginx (so the result
// does not depend on the installed version) with 4 cores for "auto".
func collectNginxFixture(t *testing.T, name string) *Nginx {
	t.Helper()
	c := &nginxCollector{conf: filepath.Join("testdata", name, "nginx.conf"), cores: 4}
	var s Snapshot
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Nginx == nil {
		t.Fatal("no nginx layer")
	}
	return s.Nginx
}

// TestNginxGolden compares each fixture's layer, as JSON, with its golden
// file (paths made relative to the package).
func TestNginxGolden(t *testing.T) {
	abs, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range nginxFixtures {
		t.Run(name, func(t *testing.T) {
			n := collectNginxFixture(t, name)
			b, err := json.MarshalIndent(n, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			b = []byte(strings.ReplaceAll(string(b), abs+"/", "testdata/") + "\n")
			golden.Check(t, filepath.Join("testdata", name, "snapshot.golden.json"), b)
		})
	}
}

// TestNginxFacts checks, fixture by fixture, the figures the rules read.
func TestNginxFacts(t *testing.T) {
	t.Run("isucon", func(t *testing.T) {
		n := collectNginxFixture(t, "nginx-isucon")
		if n.Workers != 4 || n.Settings["worker_processes"].Value != "auto" {
			t.Errorf("workers %d (%q), want auto resolved to 4", n.Workers, n.Settings["worker_processes"].Value)
		}
		if n.WorkerConnections != 4096 || n.WorkerRlimitNofile != 65535 {
			t.Errorf("worker_connections %d, worker_rlimit_nofile %d", n.WorkerConnections, n.WorkerRlimitNofile)
		}
		if !n.Sendfile || n.TCPNopush || !n.TCPNodelay || !n.Settings["tcp_nopush"].Default {
			t.Errorf("sendfile %v tcp_nopush %v tcp_nodelay %v: want on, off (default), on (default)", n.Sendfile, n.TCPNopush, n.TCPNodelay)
		}
		if n.KeepaliveTimeoutSec != 65 || n.KeepaliveRequests != 1000 {
			t.Errorf("keepalive %v s, %d requests", n.KeepaliveTimeoutSec, n.KeepaliveRequests)
		}
		if n.ServerTokens != "on" {
			t.Errorf("server_tokens %q: the hidden conf.d/.disabled.conf must not be read", n.ServerTokens)
		}
		if !n.Gzip || strings.Join(n.GzipTypes, " ") != "text/html text/css application/javascript application/json" {
			t.Errorf("gzip %v types %q", n.Gzip, n.GzipTypes)
		}
		if n.OpenFileCache.Enabled {
			t.Error("open_file_cache enabled")
		}
		if len(n.Files) != 4 {
			t.Errorf("files %q: want nginx.conf, mime.types, conf.d/log.conf, sites-enabled/isucon.conf", n.Files)
		}
		if len(n.Upstreams) != 1 {
			t.Fatalf("upstreams %+v", n.Upstreams)
		}
		u := n.Upstreams[0]
		if u.Name != "app" || len(u.Servers) != 1 || !u.Servers[0].Unix || u.Keepalive != 0 || len(u.UsedBy) != 2 {
			t.Errorf("upstream %+v", u)
		}
		for _, use := range u.UsedBy {
			if use.HTTPVersion != "1.0" || use.Connection != "close" || use.KeepaliveReady {
				t.Errorf("use %+v: want HTTP/1.0 with Connection: close", use)
			}
		}
		if len(n.Listens) != 1 || n.Listens[0].Port != 80 || n.Listens[0].Backlog != 4096 || n.Listens[0].BacklogDefault || n.Listens[0].Address != "*" {
			t.Errorf("listens %+v", n.Listens)
		}
		if len(n.AccessLogs) != 2 {
			t.Fatalf("access logs %+v", n.AccessLogs)
		}
		if l := n.AccessLogs[0]; l.Format != "ltsv" || !l.RequestTime || !l.UpstreamResponseTime || l.Context != "http" || !strings.HasPrefix(l.FormatText, "time:$time_local\thost:") {
			t.Errorf("ltsv access log %+v", l)
		}
		if l := n.AccessLogs[1]; !l.Off || l.Context != "http>server>location = /favicon.ico" {
			t.Errorf("favicon access log %+v", l)
		}
		kinds := map[string]string{}
		for _, l := range n.Locations {
			kinds[l.Match] = l.Kind + " " + l.Root + l.Pass
		}
		want := map[string]string{
			"/css/":          "static /home/isucon/webapp/public",
			"/image/":        "static /home/isucon/webapp/public",
			"= /favicon.ico": "static /home/isucon/webapp/public",
			"/":              "proxy http://app",
			"@app":           "proxy http://app",
		}
		for m, k := range want {
			if kinds[m] != k {
				t.Errorf("location %s: %q, want %q", m, kinds[m], k)
			}
		}
	})
	t.Run("keepalive", func(t *testing.T) {
		n := collectNginxFixture(t, "nginx-keepalive")
		ready := map[string]bool{}
		for _, u := range n.Upstreams {
			for _, use := range u.UsedBy {
				ready[u.Name+" "+use.Context] = use.KeepaliveReady
			}
		}
		want := map[string]bool{
			"backend http>server>location /api/":   true,  // inherits 1.1 and Connection ""
			"backend http>server>location /admin/": false, // its own proxy_set_header drops Connection ""
			"backend http>server>location /ws/":    false, // $connection_upgrade is "close" without Upgrade
			`php http>server>location ~ \.php$`:    true,  // fastcgi_keep_conn on
		}
		if len(ready) != len(want) {
			t.Errorf("uses %v", ready)
		}
		for k, v := range want {
			if got, ok := ready[k]; !ok || got != v {
				t.Errorf("%s: keepalive ready %v (found %v), want %v", k, got, ok, v)
			}
		}
		if u := n.Upstreams[0]; u.Keepalive != 64 || u.UsedBy[2].Connection != "$connection_upgrade" || u.UsedBy[2].ConnectionValue != "close" || !u.UsedBy[0].ConnectionCleared {
			t.Errorf("backend %+v", u)
		}
		if !n.Sendfile || !n.TCPNopush || !n.TCPNodelay || len(n.Settings["sendfile"].Inner) != 1 || n.Settings["sendfile"].Inner[0].Value != "off" {
			t.Errorf("sendfile %v %+v tcp_nopush %v tcp_nodelay %v", n.Sendfile, n.Settings["sendfile"], n.TCPNopush, n.TCPNodelay)
		}
		if want := (NginxOpenFileCache{Enabled: true, Max: 100000, InactiveSec: 20, ValidSec: 30, MinUses: 2, Errors: true}); n.OpenFileCache != want {
			t.Errorf("open_file_cache %+v", n.OpenFileCache)
		}
		if n.ServerTokens != "off" || n.ClientBodyTempPath != "tmp/client_body" || n.KeepaliveRequests != 2000 || n.KeepaliveTimeoutSec != 10 {
			t.Errorf("server_tokens %q client_body_temp_path %q keepalive %d %v", n.ServerTokens, n.ClientBodyTempPath, n.KeepaliveRequests, n.KeepaliveTimeoutSec)
		}
		if s := n.Settings["accept_mutex_delay"]; s.Value != "100ms" || s.Default {
			t.Errorf("accept_mutex_delay %+v", s)
		}
		if len(n.Listens) != 2 {
			t.Fatalf("listens %+v", n.Listens)
		}
		if l := n.Listens[0]; l.Address != "127.0.0.1" || l.Port != 80 || l.Backlog != 32768 || !l.Reuseport || l.Fastopen != 32768 || !l.DefaultServer {
			t.Errorf("listen %+v", l)
		}
		if l := n.Listens[1]; l.Address != "[::1]" || l.Port != 8443 || !l.HTTP2 || l.Backlog != 511 || !l.BacklogDefault {
			t.Errorf("listen %+v", l)
		}
		if l := n.AccessLogs[0]; l.Format != "timed" || !l.RequestTime || !l.UpstreamResponseTime || l.Buffer != "64k" {
			t.Errorf("access log %+v", l)
		}
		for _, l := range n.Locations {
			switch l.Match {
			case "= /healthcheck":
				if l.Kind != "empty_gif" || !l.AccessLogOff {
					t.Errorf("healthcheck %+v", l)
				}
			case `~* \.(png|jpg)$`:
				if l.Kind != "static" || l.Alias != "html/static/" || l.Root != "" {
					t.Errorf("nested location inherits the alias: %+v", l)
				}
			case "/legacy/":
				if l.Kind != "proxy" || l.Upstream != "" || l.Unix {
					t.Errorf("legacy %+v", l)
				}
			case `~ \.php$`:
				if l.Kind != "fastcgi" || l.Upstream != "php" || !l.Unix {
					t.Errorf("php %+v", l)
				}
			}
		}
	})
	t.Run("minimal", func(t *testing.T) {
		n := collectNginxFixture(t, "nginx-minimal")
		if n.Workers != 1 || n.WorkerConnections != 512 || n.WorkerRlimitNofile != 0 {
			t.Errorf("workers %d connections %d rlimit %d", n.Workers, n.WorkerConnections, n.WorkerRlimitNofile)
		}
		if n.Sendfile || n.TCPNopush || !n.TCPNodelay || n.Gzip || n.ServerTokens != "on" || n.KeepaliveTimeoutSec != 75 || n.KeepaliveRequests != 1000 {
			t.Errorf("defaults: %+v", n)
		}
		if n.ClientBodyTempPath != "client_body_temp" {
			t.Errorf("client_body_temp_path %q", n.ClientBodyTempPath)
		}
		for name, s := range n.Settings {
			if !s.Default || s.File != "" {
				t.Errorf("%s: %+v, want nginx's default", name, s)
			}
		}
		if len(n.Listens) != 1 || !n.Listens[0].Implicit || n.Listens[0].Port != 80 || n.Listens[0].Backlog != 511 {
			t.Errorf("listens %+v", n.Listens)
		}
		if len(n.AccessLogs) != 1 || !n.AccessLogs[0].Default || n.AccessLogs[0].Format != "combined" || n.AccessLogs[0].RequestTime || n.AccessLogs[0].UpstreamResponseTime {
			t.Errorf("access logs %+v", n.AccessLogs)
		}
		if len(n.Locations) != 1 || n.Locations[0].Kind != "static" || n.Locations[0].Root != "html" {
			t.Errorf("locations %+v", n.Locations)
		}
	})
	t.Run("debian", func(t *testing.T) {
		n := collectNginxFixture(t, "nginx-debian")
		if !n.Sendfile || !n.TCPNopush || !n.Gzip || n.WorkerConnections != 768 || n.Workers != 4 {
			t.Errorf("%+v", n)
		}
		if len(n.Listens) != 2 || n.Listens[1].Address != "[::]" || !n.Listens[0].DefaultServer {
			t.Errorf("listens %+v", n.Listens)
		}
		for _, d := range n.Directives {
			if d.Parent().Path() == "http>types" {
				t.Fatalf("MIME type entry listed: %+v", d)
			}
		}
		if l := n.AccessLogs[0]; l.Format != "combined" || l.RequestTime || l.Path != "logs/access.log" {
			t.Errorf("access log %+v", l)
		}
	})
}

// TestNginxDirectives checks the flat list: contexts, parents telling two
// servers apart, files and lines through includes.
func TestNginxDirectives(t *testing.T) {
	dir := t.TempDir()
	nginxWriteFiles(t, dir, map[string]string{
		"nginx.conf":     "events {}\nhttp {\n  include servers/*.conf;\n}\n",
		"servers/a.conf": "server {\n  listen 81;\n  location /api {\n    proxy_pass http://127.0.0.1:9;\n  }\n}\n",
		"servers/b.conf": "server { listen 82; location \"/x y\" { return 204; } }\n",
		"mime.types":     "types { text/html html; }",
	})
	n := &Nginx{}
	if err := n.read(filepath.Join(dir, "nginx.conf"), 2); err != nil {
		t.Fatal(err)
	}
	var got []string
	// As the snapshot's JSON lists them, and as read back: the same
	// list, the same tree.
	b, err := json.Marshal(n.Directives)
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		Name    string
		Args    []string
		Context string
		File    string
		Line    int
		Block   bool
		Parent  int
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatal(err)
	}
	var back nginxconf.Listing
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != len(n.Directives) {
		t.Fatalf("read back %d directives of %d", len(back), len(n.Directives))
	}
	for i, d := range entries {
		got = append(got, strings.Join([]string{
			strconv.Itoa(i), d.Name, strings.Join(d.Args, ","), d.Context, filepath.Base(d.File) + ":" + strconv.Itoa(d.Line), strconv.Itoa(d.Parent), map[bool]string{true: "{"}[d.Block],
		}, "|"))
		r := back[i]
		if r.Name() != d.Name || strings.Join(r.Args(), ",") != strings.Join(d.Args, ",") || r.Parent().Path() != d.Context || r.File() != d.File || r.Line() != d.Line || r.IsBlock() != d.Block {
			t.Errorf("directive %d read back as %s %q in %q at %s:%d", i, r.Name(), r.Args(), r.Parent().Path(), r.File(), r.Line())
		}
		if (d.Parent < 0) != (r.Parent().Parent() == nil) || d.Parent >= 0 && back[d.Parent] != r.Parent() {
			t.Errorf("directive %d read back in another block", i)
		}
	}
	want := []string{
		"0|events|||nginx.conf:1|-1|{",
		"1|http|||nginx.conf:2|-1|{",
		"2|include|servers/*.conf|http|nginx.conf:3|1|",
		"3|server||http|a.conf:1|1|{",
		"4|listen|81|http>server|a.conf:2|3|",
		"5|location|/api|http>server|a.conf:3|3|{",
		"6|proxy_pass|http://127.0.0.1:9|http>server>location /api|a.conf:4|5|",
		"7|server||http|b.conf:1|1|{",
		"8|listen|82|http>server|b.conf:1|7|",
		"9|location|/x y|http>server|b.conf:1|7|{",
		"10|return|204|http>server>location /x y|b.conf:1|9|",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("directives:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(n.Listens) != 2 || n.Listens[0].Port != 81 || n.Listens[1].Port != 82 {
		t.Errorf("listens %+v", n.Listens)
	}
}

func nginxWriteFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNginxErrors covers configurations the collector cannot read: it
// returns an error naming the file and line and leaves the layer nil.
func TestNginxErrors(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		err   string
	}{
		{name: "missing file", files: map[string]string{}, err: "no such file"},
		{name: "unclosed block", files: map[string]string{"nginx.conf": "http {\n server {\n"}, err: "nginx.conf:3: unexpected end of file"},
		{name: "stray brace", files: map[string]string{"nginx.conf": "events {}\n}\n"}, err: "nginx.conf:2: unexpected \"}\""},
		{name: "missing include", files: map[string]string{"nginx.conf": "http {\n include nope.conf;\n}"}, err: "nginx.conf:2: include nope.conf"},
		{name: "include cycle", files: map[string]string{"nginx.conf": "include nginx.conf;"}, err: "a cycle?"},
		{name: "unterminated string", files: map[string]string{"nginx.conf": "http { log_format x 'abc; }"}, err: "unexpected end of file in a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			nginxWriteFiles(t, dir, tc.files)
			s := Run(context.Background(), []Collector{&nginxCollector{conf: filepath.Join(dir, "nginx.conf")}})
			if s.Nginx != nil {
				t.Error("layer filled")
			}
			if len(s.Errors) != 1 || s.Errors[0].Collector != "nginx" || s.Errors[0].Partial || !strings.Contains(s.Errors[0].Error, tc.err) {
				t.Errorf("errors %+v, want one containing %q", s.Errors, tc.err)
			}
		})
	}
}

// nginxBinary returns the installed nginx; the tests that need it fail
// without it, as the sandbox does.
func nginxBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if bin, err := exec.LookPath(p); err == nil {
			return bin
		}
	}
	t.Fatal("nginx not found: install the Debian package nginx")
	return ""
}

// TestNginxConfigTest runs the collector with the nginx binary on every
// fixture: nginx -t must accept each (under a throwaway prefix), and the
// version comes from nginx -V.
func TestNginxConfigTest(t *testing.T) {
	bin := nginxBinary(t)
	for _, name := range nginxFixtures {
		t.Run(name, func(t *testing.T) {
			if name == "nginx-minimal" && os.Geteuid() != 0 {
				t.Skip("nginx -t opens the built-in /var/log/nginx/access.log, writable by root only")
			}
			prefix := t.TempDir()
			for _, d := range []string{"logs", "tmp"} {
				if err := os.MkdirAll(filepath.Join(prefix, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			c := &nginxCollector{
				conf:     filepath.Join("testdata", name, "nginx.conf"),
				bin:      bin,
				testArgs: []string{"-p", prefix + "/", "-e", filepath.Join(prefix, "error.log")},
			}
			var s Snapshot
			if err := c.Collect(context.Background(), &s); err != nil {
				t.Fatal(err)
			}
			n := s.Nginx
			if n.ConfigTest == nil || !n.ConfigTest.OK || !strings.Contains(n.ConfigTest.Output, "test is successful") {
				t.Errorf("nginx -t: %+v", n.ConfigTest)
			}
			if n.Version == "" || strings.Count(n.Version, ".") != 2 || n.Binary != bin {
				t.Errorf("version %q binary %q", n.Version, n.Binary)
			}
			if !filepath.IsAbs(n.ConfPath) {
				t.Errorf("conf path %q is not absolute", n.ConfPath)
			}
		})
	}
}

// TestNginxSandbox reads the configuration of a running sandbox nginx,
// with an upstream over a unix socket and a timed log format.
func TestNginxSandbox(t *testing.T) {
	n := sandboxtest.NewNginx(t, sandbox.NginxOptions{HTTPConfig: `
    log_format timed '$remote_addr [$time_local] "$request" $status $request_time $upstream_response_time';
    upstream app {
        server unix:{{DIR}}/app.sock;
        keepalive 8;
    }
    server {
        listen 127.0.0.1:{{PORT}} backlog=1024;
        listen unix:{{DIR}}/nginx.sock;
        server_name sandbox;
        root {{DIR}}/html;
        access_log {{DIR}}/timed.log timed;
        location /app/ {
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_pass http://app;
        }
    }
`})
	c := NewNginx(n.ConfigPath()).(*nginxCollector)
	if c.bin == "" {
		t.Fatal("NewNginx did not find the nginx binary")
	}
	c.testArgs = []string{"-p", n.Dir() + "/", "-e", n.ErrorLogPath()}
	s := Run(context.Background(), []Collector{c})
	if len(s.Errors) != 0 {
		t.Fatalf("errors %+v", s.Errors)
	}
	got := s.Nginx
	if got.ConfPath != n.ConfigPath() || got.ConfigTest == nil || !got.ConfigTest.OK {
		t.Errorf("conf %q test %+v", got.ConfPath, got.ConfigTest)
	}
	out, _ := exec.Command(c.bin, "-v").CombinedOutput()
	if !strings.Contains(string(out), "nginx/"+got.Version+"\n") {
		t.Errorf("version %q, nginx -v says %q", got.Version, out)
	}
	if got.Workers != 1 || got.WorkerConnections != 256 {
		t.Errorf("workers %d connections %d", got.Workers, got.WorkerConnections)
	}
	if len(got.Listens) != 2 || got.Listens[0].Port != n.Port() || got.Listens[0].Backlog != 1024 || !got.Listens[1].Unix || got.Listens[1].Address != n.Dir()+"/nginx.sock" {
		t.Errorf("listens %+v", got.Listens)
	}
	if len(got.Upstreams) != 1 || !got.Upstreams[0].Servers[0].Unix || got.Upstreams[0].Keepalive != 8 || !got.Upstreams[0].UsedBy[0].KeepaliveReady {
		t.Errorf("upstreams %+v", got.Upstreams)
	}
	var paths []string
	for _, l := range got.AccessLogs {
		paths = append(paths, l.Path+" "+l.Format+" "+map[bool]string{true: "timed", false: "untimed"}[l.RequestTime && l.UpstreamResponseTime])
	}
	want := []string{n.AccessLogPath() + " combined untimed", n.Dir() + "/timed.log timed timed"}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("access logs:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}
}

// TestNginxBuildDefaults: the settings nginx leaves unset take the
// defaults of the binary's version and build (nginxconf.Defaults).
func TestNginxBuildDefaults(t *testing.T) {
	b := nginxconf.ParseBuild("nginx version: nginx/1.18.0\nconfigure arguments: --http-client-body-temp-path=/var/lib/nginx/body\n")
	args := b.ConfigureArgs
	n := &Nginx{Version: "1.18.0", ConfigureArgs: args}
	dir := t.TempDir()
	nginxWriteFiles(t, dir, map[string]string{"nginx.conf": "events {} http { server { listen 80; } }"})
	if err := n.read(filepath.Join(dir, "nginx.conf"), 1); err != nil {
		t.Fatal(err)
	}
	if n.KeepaliveRequests != 100 || n.ClientBodyTempPath != "/var/lib/nginx/body" || n.Settings["sendfile_max_chunk"].Value != "0" {
		t.Errorf("defaults of nginx 1.18 built for Debian: keepalive_requests %d, client_body_temp_path %q, sendfile_max_chunk %q",
			n.KeepaliveRequests, n.ClientBodyTempPath, n.Settings["sendfile_max_chunk"].Value)
	}
}

// FuzzNginxConfig: any configuration text (without includes, which could
// name any file) is read without panic, and every directive's parent is a
// block listed before it.
func FuzzNginxConfig(f *testing.F) {
	for _, name := range nginxFixtures {
		for _, file := range []string{"nginx.conf", "sites-enabled/isucon.conf", "sites-enabled/default"} {
			if b, err := os.ReadFile(filepath.Join("testdata", name, file)); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Add("http { server { http2; listen; location { proxy_pass; } } upstream u { server; keepalive; } map $a $b { '' ''; } }")
	f.Add("http { access_log; log_format; proxy_set_header Connection; location / { proxy_pass http://u; } upstream u {} }")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		if strings.Contains(text, "include") {
			return
		}
		path := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		n := &Nginx{}
		if err := n.read(path, 2); err != nil {
			return
		}
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		var entries struct {
			Directives []struct {
				Parent int
				Block  bool
			}
		}
		if err := json.Unmarshal(b, &entries); err != nil {
			t.Fatal(err)
		}
		for i, d := range entries.Directives {
			if d.Parent >= i || d.Parent < -1 || d.Parent >= 0 && !entries.Directives[d.Parent].Block {
				t.Fatalf("directive %d %+v: bad parent", i, d)
			}
		}
		var back Nginx
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("the snapshot's directives do not read back: %v", err)
		}
	})
}

// TestNginxAccessLogFormats: the snapshot's formats come from nginxconf's
// LogFormat, the profiler's lookup, so both follow nginx's rule: a name
// defined twice, the predefined combined included, has no format (nginx
// refuses the configuration).
func TestNginxAccessLogFormats(t *testing.T) {
	cases := []struct {
		name string
		conf string
		want []string // per access log: format, its text, request_time logged
	}{
		{"combined, predefined", "http { access_log /l; }", []string{"combined|" + accesslog.Combined + "|false"}},
		{"a format of the configuration", "http { log_format timed '$status $request_time'; access_log /l timed; }", []string{"timed|$status $request_time|true"}},
		{"combined redefined: none (it used to be taken)", "http { log_format combined '$status $request_time'; access_log /l; }", []string{"combined||false"}},
		{"a name defined twice: none for any", "http { log_format t '$a'; log_format t '$request_time'; log_format u '$b'; access_log /l t; access_log /m u; }",
			[]string{"t||false", "u||false"}},
		{"the default log without an access_log", "http { log_format timed '$request_time'; }", []string{"combined|" + accesslog.Combined + "|false"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			nginxWriteFiles(t, dir, map[string]string{"nginx.conf": tc.conf})
			n := &Nginx{}
			if err := n.read(filepath.Join(dir, "nginx.conf"), 2); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range n.AccessLogs {
				got = append(got, l.Format+"|"+l.FormatText+"|"+strconv.FormatBool(l.RequestTime))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("access logs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
