package nginxconf

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/internal/golden"
)

// applyCases apply a snippet to a configuration under testdata; the
// files that change are compared with testdata/golden/NAME.txt.
var applyCases = []struct {
	name, conf, snippet string
}{
	{"main-replace-and-insert", "debian", `
# --- in nginx main context (top of nginx.conf) ---
worker_processes 4;
worker_rlimit_nofile 65535;
`},
	{"events-replace-and-insert", "debian", `
# --- in nginx events {} ---
worker_connections 4096;
multi_accept on;
`},
	{"http-insert-keeps-comments", "debian", `
# --- in nginx http {} ---
# nginx-server-tokens: nginx announces its version (server_tokens on)
server_tokens off;
# nginx-sendfile: unchanged, so no change
tcp_nopush on;
gzip_types text/css application/javascript;
`},
	{"location-and-listen", "debian", `
# --- in nginx http>server>location / (testdata/debian/sites-enabled/default:48) ---
expires 1h;
# --- in nginx http>server (testdata/debian/sites-enabled/default:22) ---
listen 80 default_server backlog=4096;
`},
	{"log-format-before-its-use", "debian", `
# --- in nginx http {} ---
log_format timed '$remote_addr [$time_local] "$request" $status $request_time';
# --- in nginx http {} (testdata/debian/nginx.conf:42) ---
access_log logs/access.log timed;
`},
	{"http-in-included-file", "isucon", `
# --- in nginx http {} ---
log_format ltsv "time:$time_local\thost:$remote_addr\treq:$request\tstatus:$status\treqtime:$request_time";
# --- in nginx http (testdata/isucon/conf.d/log.conf:9) ---
access_log logs/access.log ltsv buffer=64k;
`},
	{"isucon-audit-snippet", "isucon", `
# Written by stacktune from the audit of db1 (snapshot taken 2026-11-22 12:00:00 UTC).
# --- in nginx upstream app {} (testdata/isucon/sites-enabled/isucon.conf:1) ---
# nginx-upstream-keepalive: nginx opens a new connection to upstream app for every request
keepalive 32;

# --- in nginx http>server>location / (testdata/isucon/sites-enabled/isucon.conf:24) ---
proxy_http_version 1.1;
proxy_set_header Connection "";

# --- in nginx http>server>location @app (testdata/isucon/sites-enabled/isucon.conf:29) ---
proxy_http_version 1.1;
proxy_set_header Connection "";

# --- in nginx http>server (testdata/isucon/sites-enabled/isucon.conf:6) ---
listen 80 backlog=32768;

# --- in nginx http {} ---
open_file_cache max=100000 inactive=20s;
open_file_cache_valid 30s;
tcp_nopush on;
server_tokens off;
`},
	{"upstream-servers-to-unix-socket", "keepalive", `
# --- in nginx upstream backend {} (testdata/keepalive/nginx.conf:47) ---
server unix:/run/app/app.sock;
`},
	{"upstream-two-servers", "isucon", `
# --- in nginx upstream app {} (testdata/isucon/sites-enabled/isucon.conf:1) ---
server 127.0.0.1:8080;
server 127.0.0.1:8081 backup;
`},
	{"first-argument-identity", "keepalive", `
# --- in nginx http>server>location /ws/ (testdata/keepalive/nginx.conf:78) ---
proxy_set_header connection "";
proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
# --- in nginx http {} ---
log_format main '$remote_addr [$time_local] "$request" $status $request_time';
# --- in nginx http>server (testdata/keepalive/nginx.conf:60) ---
listen [::1]:8443 http2 backlog=1024;
`},
	{"nested-location-by-path", "keepalive", `
# --- in nginx http>server>location /static/>location ~* \.(png|jpg)$ ---
expires 7d;
add_header Cache-Control public;
# --- in nginx http>server>location /api/ ---
proxy_read_timeout 5s;
`},
	{"duplicates-removed", "quirks", `
# --- in nginx http {} ---
server_tokens off;
add_header X-Note "a ; b";
`},
	{"inline-blocks-and-shared-lines", "quirks", `
# --- in nginx main context (top of nginx.conf) ---
worker_rlimit_nofile 65535;
worker_shutdown_timeout 10s;
# --- in nginx events {} ---
worker_connections 1024;
# --- in nginx http>server>location / (testdata/quirks/nginx.conf:25) ---
proxy_http_version 1.1;
proxy_set_header Connection "";
# --- in nginx http>server>location /if/>if ($http_user_agent ~ MSIE ) ---
return 404;
`},
}

func TestApply(t *testing.T) {
	for _, tc := range applyCases {
		t.Run(tc.name, func(t *testing.T) {
			edits, err := ParseSnippet([]byte(tc.snippet))
			if err != nil {
				t.Fatal(err)
			}
			c := loadConf(t, tc.conf)
			out, err := c.Apply(edits)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) == 0 {
				t.Fatal("nothing changed")
			}
			golden.Check(t, filepath.Join("testdata", "golden", tc.name+".txt"), render(t, out))
			checkIdempotent(t, c, edits, out)
			checkOnlyEdited(t, c, out)
		})
	}
}

// loadConf loads testdata/NAME/nginx.conf.
func loadConf(t testing.TB, name string) *Config {
	t.Helper()
	c, err := Load(filepath.Join("testdata", name, "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// render lists the changed files, relative to the package, with their
// new content.
func render(t testing.TB, out map[string][]byte) []byte {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	paths := make([]string, 0, len(out))
	for p := range out {
		if !filepath.IsAbs(p) {
			t.Errorf("%s is not absolute", p)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		rel, err := filepath.Rel(wd, p)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("=== " + filepath.ToSlash(rel) + "\n")
		b.Write(out[p])
	}
	return []byte(b.String())
}

// overlay reads the applied content of the files that changed, the
// others from disk.
func overlay(out map[string][]byte) readFunc {
	return func(p string, limit int64) ([]byte, error) {
		if abs, err := filepath.Abs(p); err == nil {
			if b, ok := out[abs]; ok {
				return b, nil
			}
		}
		return readFile(p, limit)
	}
}

// checkIdempotent applies the edits again to the result: nothing may
// change.
func checkIdempotent(t *testing.T, c *Config, edits []Edit, out map[string][]byte) {
	t.Helper()
	again, err := load(c.main.path, overlay(out))
	if err != nil {
		t.Fatalf("the result does not load: %v", err)
	}
	twice, err := again.Apply(edits)
	if err != nil {
		t.Fatalf("applying again: %v", err)
	}
	for p, b := range twice {
		t.Errorf("applying again changes %s:\n%s", p, golden.Diff(string(out[p]), string(b)))
	}
}

// checkOnlyEdited: what is left of a changed file outside the edited
// lines is the original, in order (comments and layout kept).
func checkOnlyEdited(t *testing.T, c *Config, out map[string][]byte) {
	t.Helper()
	for p, b := range out {
		f := c.byAbs[p]
		if f == nil {
			t.Errorf("%s was not read", p)
			continue
		}
		for _, l := range strings.Split(string(f.data), "\n") {
			if s := strings.TrimSpace(l); strings.HasPrefix(s, "#") && !strings.Contains(string(b), l) {
				t.Errorf("%s lost the comment line %q", p, l)
			}
		}
	}
}

// TestApplyErrors: a context that names no block (or several), a bad
// edit, a change to a shared file: an error naming it and no file.
func TestApplyErrors(t *testing.T) {
	cases := []struct {
		name, conf, snippet, want string
	}{
		{"no-such-upstream", "isucon", "# --- in nginx upstream nope {} (testdata/isucon/sites-enabled/isucon.conf:1) ---\nkeepalive 32;\n",
			`"nginx upstream nope {} (testdata/isucon/sites-enabled/isucon.conf:1)": no upstream nope {}`},
		{"no-such-location", "isucon", "# --- in nginx http>server>location /nope/ (testdata/isucon/sites-enabled/isucon.conf:99) ---\nexpires 1d;\n",
			`no block http>server>location /nope/`},
		{"all-or-nothing", "isucon", "# --- in nginx http {} ---\nserver_tokens off;\n# --- in nginx stream {} ---\nproxy_timeout 5s;\n",
			`"nginx stream {}": no block stream`},
		{"ambiguous-path", "quirks", "# --- in nginx http>server>location / ---\nexpires 1d;\n",
			`2 blocks http>server>location / in the configuration`},
		{"shared-file", "quirks", "# --- in nginx http>server>location /a/ (testdata/quirks/nginx.conf:26) ---\nproxy_set_header Host $http_host;\n",
			`testdata/quirks/snippets/proxy.conf is included 2 times`},
		{"no-events", "minimal", "# --- in nginx events {} ---\nworker_connections 1024;\n",
			`the configuration has no events block`},
		{"no-upstream-name", "isucon", "# --- in nginx upstream {} ---\nkeepalive 1;\n", `not an upstream name`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			edits, err := ParseSnippet([]byte(tc.snippet))
			if err != nil {
				t.Fatal(err)
			}
			out, err := loadConf(t, tc.conf).Apply(edits)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if out != nil {
				t.Errorf("a failed Apply returned files: %v", out)
			}
		})
	}
	for _, e := range []Edit{
		{Context: "nginx http {}", Name: "server_tokens off"},
		{Context: "nginx http {}", Name: "server_tokens", Args: "off; gzip on"},
		{Context: "nginx http {}", Name: "server_tokens", Args: "off # no"},
		{Context: "nginx http {}", Name: "", Args: "off"},
		{Context: "nginx http {}", Name: "add_header", Args: `X "unterminated`},
	} {
		if out, err := loadConf(t, "isucon").Apply([]Edit{e}); err == nil || out != nil {
			t.Errorf("Apply(%+v) = %v, %v; want an error", e, out, err)
		}
	}
}

// TestApplyNothing: no edits, or edits already in place, change nothing.
func TestApplyNothing(t *testing.T) {
	c := loadConf(t, "keepalive")
	for _, edits := range [][]Edit{nil, {
		{Context: "nginx http {}", Name: "sendfile", Args: "on"},
		{Context: "nginx upstream php {} (testdata/keepalive/nginx.conf:53)", Name: "keepalive", Args: "16"},
	}} {
		out, err := c.Apply(edits)
		if err != nil || len(out) != 0 {
			t.Errorf("Apply(%v) = %v, %v; want no change", edits, out, err)
		}
	}
}

func TestFiles(t *testing.T) {
	c := loadConf(t, "isucon")
	var rel []string
	wd, _ := os.Getwd()
	for _, f := range c.Files() {
		r, err := filepath.Rel(wd, f)
		if err != nil || !filepath.IsAbs(f) {
			t.Fatalf("%s: %v", f, err)
		}
		rel = append(rel, filepath.ToSlash(r))
	}
	want := "testdata/isucon/nginx.conf testdata/isucon/mime.types testdata/isucon/conf.d/log.conf testdata/isucon/sites-enabled/isucon.conf"
	if got := strings.Join(rel, " "); got != want {
		t.Errorf("Files() = %s\nwant %s", got, want)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ name, text, want string }{
		{"self.conf", "include self.conf;\n", "nested deeper than 32"},
		{"missing.conf", "events {}\ninclude nope.conf;\n", "missing.conf:2: include nope.conf"},
		{"brace.conf", "http {\n  server {\n}\n", "brace.conf:4: unexpected end of file"},
		{"quote.conf", "http {\n  add_header X \"abc;\n}\n", "quote.conf:2: unexpected end of file in a string"},
		{"after.conf", "a \"b\"c;\n", "after.conf:1: unexpected 'c' after a quoted string"},
		{"semi.conf", "events {}\n;\n", "semi.conf:2: unexpected \";\""},
		{"close.conf", "}\n", "close.conf:1: unexpected \"}\""},
		{"args.conf", "include a b;\n", "invalid number of arguments"},
	} {
		_, err := Load(write(tc.name, tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "absent.conf")); err == nil {
		t.Error("a missing main file loaded")
	}
}

// TestApplyFileNames: FILE in a context may be absolute, uncleaned, or
// another name of the same file, and still names the file read.
func TestApplyFileNames(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("testdata", "isucon", "sites-enabled", "isucon.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, file := range []string{
		"testdata/isucon/sites-enabled/isucon.conf",
		"testdata/isucon/./conf.d/../sites-enabled/isucon.conf",
		abs,
	} {
		out, err := loadConf(t, "isucon").Apply([]Edit{{Context: "nginx http>server>location @app (" + file + ":29)", Name: "proxy_http_version", Args: "1.1"}})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		got := out[abs]
		if got == nil || !strings.Contains(string(got), "proxy_pass http://app;\n        proxy_http_version 1.1;\n    }\n}\n") {
			t.Fatalf("%s: wrong result:\n%s", file, got)
		}
		if want != nil && string(got) != string(want) {
			t.Errorf("%s gives another result", file)
		}
		want = got
	}
}

// TestApplyCRLF: inserted lines end like the file's lines.
func TestApplyCRLF(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nginx.conf")
	text := "worker_processes 1;\r\n\r\nevents {\r\n\tworker_connections 512;\r\n}\r\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Apply([]Edit{
		{Context: "nginx events {}", Name: "multi_accept", Args: "on"},
		{Context: "nginx main context (top of nginx.conf)", Name: "worker_rlimit_nofile", Args: "8192"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "worker_processes 1;\r\nworker_rlimit_nofile 8192;\r\n\r\nevents {\r\n\tworker_connections 512;\r\n\tmulti_accept on;\r\n}\r\n"
	if got := string(out[c.Files()[0]]); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestResolve: which block a context names, including the fallbacks
// when the line no longer matches.
func TestResolve(t *testing.T) {
	const isu = "testdata/isucon/sites-enabled/isucon.conf"
	cases := []struct {
		name, conf, context string
		want                string // "FILE:LINE label" of the block
	}{
		{"main", "isucon", "nginx main context (top of nginx.conf)", "testdata/isucon/nginx.conf:0 "},
		{"http", "isucon", "nginx http {}", "testdata/isucon/nginx.conf:16 http"},
		{"http with a place", "isucon", "nginx http {} (testdata/isucon/conf.d/log.conf:9)", "testdata/isucon/nginx.conf:16 http"},
		{"events", "keepalive", "nginx events {}", "testdata/keepalive/nginx.conf:9 events"},
		{"upstream", "keepalive", "nginx upstream php {} (testdata/keepalive/nginx.conf:1)", "testdata/keepalive/nginx.conf:53 upstream php"},
		{"block on its line", "isucon", "nginx http>server>location / (" + isu + ":24)", isu + ":24 location /"},
		{"directive on the line", "isucon", "nginx http>server (" + isu + ":7)", isu + ":5 server"},
		{"line moved", "isucon", "nginx http>server>location / (" + isu + ":26)", isu + ":24 location /"},
		{"nearest of two", "quirks", "nginx http>server>location / (testdata/quirks/nginx.conf:27)", "testdata/quirks/nginx.conf:25 location /"},
		{"spanning", "quirks", "nginx http>server (testdata/quirks/nginx.conf:44)", "testdata/quirks/nginx.conf:40 server"},
		{"other file, one block", "isucon", "nginx http>server>location @app (elsewhere.conf:3)", isu + ":29 location @app"},
		{"no place", "keepalive", "nginx http>server>location ~ \\.php$", "testdata/keepalive/nginx.conf:84 location ~ \\.php$"},
		{"nested", "keepalive", "nginx http>server>location /static/>location ~* \\.(png|jpg)$ {}", "testdata/keepalive/nginx.conf:92 location ~* \\.(png|jpg)$"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := loadConf(t, tc.conf).resolve(tc.context)
			if err != nil {
				t.Fatal(err)
			}
			label := ""
			if b.parent != nil {
				label = b.label()
			}
			if got := fmt.Sprintf("%s:%d %s", b.f.path, b.line, label); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestHTTPInIncludedFile: events and http found in an included file.
func TestHTTPInIncludedFile(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"nginx.conf":         "worker_processes 1;\ninclude main.d/*.conf;\n",
		"main.d/events.conf": "events {\n  worker_connections 64;\n}\n",
		"main.d/http.conf":   "http {\n  sendfile on;\n}\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Load(filepath.Join(dir, "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Apply([]Edit{
		{Context: "nginx events {}", Name: "worker_connections", Args: "1024"},
		{Context: "nginx http {}", Name: "server_tokens", Args: "off"},
		{Context: "nginx main context (top of nginx.conf)", Name: "worker_processes", Args: "auto"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"nginx.conf":         "worker_processes auto;\ninclude main.d/*.conf;\n",
		"main.d/events.conf": "events {\n  worker_connections 1024;\n}\n",
		"main.d/http.conf":   "http {\n  sendfile on;\n  server_tokens off;\n}\n",
	}
	if len(out) != len(want) {
		t.Errorf("%d files changed, want %d", len(out), len(want))
	}
	for name, w := range want {
		if got := string(out[filepath.Join(dir, name)]); got != w {
			t.Errorf("%s: got %q, want %q", name, got, w)
		}
	}
}

func TestCurrent(t *testing.T) {
	conf := "events {}\nhttp {\n    sendfile on;\n    proxy_set_header Host $host;\n    upstream app { server 127.0.0.1:8080; }\n    server {\n        listen 80;\n        location / { proxy_pass http://app; }\n    }\n}\n"
	cfg, err := Parse("/etc/nginx/nginx.conf", []byte(conf), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		e     Edit
		want  string
		found bool
	}{
		{"set in its block", Edit{Context: "nginx http {}", Name: "sendfile", Args: "off"}, "on", true},
		{"inherited by a location", Edit{Context: "nginx http>server>location / (/etc/nginx/nginx.conf:8)", Name: "sendfile", Args: "off"}, "on", true},
		{"by first argument", Edit{Context: "nginx http {}", Name: "proxy_set_header", Args: `Connection ""`}, "", false},
		{"by first argument, found", Edit{Context: "nginx http {}", Name: "proxy_set_header", Args: `Host "$http_host"`}, "Host $host", true},
		{"nowhere: the default", Edit{Context: "nginx upstream app {}", Name: "keepalive", Args: "32"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, found, err := cfg.Current(tc.e)
			if err != nil || found != tc.found || strings.Join(args, " ") != tc.want {
				t.Errorf("Current = %q %v %v, want %q %v", args, found, err, tc.want, tc.found)
			}
		})
	}
}
