package accesslog

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNginxFormatFromConfig reads each format of the sample configuration,
// which spreads them over included files, globs and several quoted strings.
func TestNginxFormatFromConfig(t *testing.T) {
	cases := map[string]string{
		"upstream_time": `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" rt=$request_time uct="$upstream_connect_time" uht="$upstream_header_time" urt="$upstream_response_time"`,
		"main":          Main,
		"timed":         CombinedTimed,
		"combined":      Combined,
		"json_combined": `{"time_local":"$time_local","remote_addr":"$remote_addr","remote_user":"$remote_user","request":"$request","status": "$status","body_bytes_sent":"$body_bytes_sent","request_time":"$request_time","upstream_response_time":"$upstream_response_time","http_referrer":"$http_referer","http_user_agent":"$http_user_agent"}`,
		"ltsv":          "time:$time_local\thost:$remote_addr\tforwardedfor:$http_x_forwarded_for\treq:$request\tmethod:$request_method\turi:$request_uri\tstatus:$status\tsize:$body_bytes_sent\treferer:$http_referer\tua:$http_user_agent\treqtime:$request_time\truntime:$upstream_http_x_runtime\tapptime:$upstream_response_time\tcache:$upstream_http_x_cache\tvhost:$host",
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := NginxFormatFromConfig(sampleConf, name)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("got  %q\nwant %q", got, want)
			}
			if _, err := NewNginx(name, got); err != nil {
				t.Error(err)
			}
		})
	}
	_, err := NginxFormatFromConfig(sampleConf, "nope")
	if err == nil || !strings.Contains(err.Error(), "json_combined, ltsv, main, timed, upstream_time") || !strings.Contains(err.Error(), "4 files") {
		t.Errorf("not-found error: %v", err)
	}
}

// TestNginxConfigSyntax covers the tokenizer's rules and its errors, each
// on a small configuration tree.
func TestNginxConfigSyntax(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string // nginx.conf and what it includes
		want  string            // the format of log_format "f"
		err   string            // or a substring of the error
	}{
		{name: "double quotes with escapes", files: map[string]string{"nginx.conf": `http { log_format f "a \"b\" \\ \t$status"; }`},
			want: "a \"b\" \\ \t$status"},
		{name: "single quotes with escaped quote", files: map[string]string{"nginx.conf": `http { log_format f 'it\'s $status' ; }`},
			want: "it's $status"},
		{name: "unquoted words and braced variables", files: map[string]string{"nginx.conf": "http {\n log_format f ${status}|$request_time#x;\n}"},
			want: "${status}|$request_time#x"},
		{name: "comments everywhere", files: map[string]string{"nginx.conf": "# top\nhttp { # open\n  log_format f # name\n   '$status' # part\n   ' $body_bytes_sent'; # end\n} # done\n"},
			want: "$status $body_bytes_sent"},
		{name: "escape parameter is not part of the format", files: map[string]string{"nginx.conf": `http { log_format f escape=default '$status'; }`},
			want: "$status"},
		{name: "a stream log_format does not count", files: map[string]string{"nginx.conf": "stream { log_format f '$protocol'; }\nhttp { log_format f '$status'; }"},
			want: "$status"},
		{name: "a snippet file on its own", files: map[string]string{"nginx.conf": "log_format f '$status';"},
			want: "$status"},
		{name: "nested include relative to the main file", files: map[string]string{
			"nginx.conf":    "http { include a/one.conf; }",
			"a/one.conf":    "include b/two.conf;",
			"b/two.conf":    "log_format f '$request_time';",
			"a/b/two.conf":  "log_format f 'wrong: relative to the including file';",
			"a/unused.conf": "log_format g 'x';",
		}, want: "$request_time"},
		{name: "glob include skips hidden files", files: map[string]string{
			"nginx.conf":      "http { include conf.d/*; }",
			"conf.d/f.conf":   "log_format f '$status';",
			"conf.d/.f.conf":  "log_format f 'hidden';",
			"conf.d/g.conf":   "log_format g '$status';",
			"conf.d/z.conf":   "# nothing",
			"conf.d/empty.cf": "",
		}, want: "$status"},
		// nginx -t fails on it too ("Is a directory").
		{name: "glob include matching a directory", files: map[string]string{
			"nginx.conf":    "http { include conf.d/*; }",
			"conf.d/f.conf": "log_format f '$status';",
			"conf.d/sub/x":  "log_format f 'in a directory';",
		}, err: "sub is a directory, not a regular file"},
		{name: "absolute include", files: map[string]string{"nginx.conf": "http { include {{DIR}}/x/f.conf; }", "x/f.conf": "log_format f '$msec';"},
			want: "$msec"},

		{name: "unterminated string", files: map[string]string{"nginx.conf": "http {\n log_format f '$status\n;\n}\n"},
			err: "nginx.conf:2: unexpected end of file in a string"},
		{name: "missing semicolon at end", files: map[string]string{"nginx.conf": "http {\n log_format f '$status'\n"},
			err: `nginx.conf:3: unexpected end of file, expecting ";" or "}"`},
		{name: "unclosed block", files: map[string]string{"nginx.conf": "http {\n log_format f '$status';\n"},
			err: `unexpected end of file, expecting ";" or "}"`},
		{name: "stray closing brace", files: map[string]string{"nginx.conf": "log_format f '$status';\n}\n"},
			err: `nginx.conf:2: unexpected "}"`},
		{name: "stray closing brace in an included file", files: map[string]string{"nginx.conf": "http {\ninclude x.conf;\n}", "x.conf": "\n\n}"},
			err: `x.conf:3: unexpected "}"`},
		{name: "text right after a quoted string", files: map[string]string{"nginx.conf": "log_format f '$status'x;"},
			err: `nginx.conf:1: unexpected 'x' after a quoted string`},
		{name: "missing include", files: map[string]string{"nginx.conf": "http {\n\n  include missing.conf;\n}"},
			err: "nginx.conf:3: include missing.conf: stat"},
		{name: "include cycle", files: map[string]string{"nginx.conf": "include nginx.conf;"},
			err: "includes nested deeper than 32"},
		{name: "duplicate", files: map[string]string{"nginx.conf": "http {\n log_format f '$status';\n include d.conf;\n}", "d.conf": "\nlog_format f '$msec';"},
			err: `d.conf:2: duplicate log_format name "f" (first defined at`},
		{name: "log_format without a format", files: map[string]string{"nginx.conf": "log_format f;"},
			err: `nginx.conf:1: invalid number of arguments in "log_format"`},
		{name: "not found", files: map[string]string{"nginx.conf": "http { log_format g '$status'; }"},
			err: `log_format "f" not found in`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tc.files {
				path := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(strings.ReplaceAll(text, "{{DIR}}", dir)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := NginxFormatFromConfig(filepath.Join(dir, "nginx.conf"), "f")
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("got %q, %v; want an error with %q", got, err, tc.err)
				}
			case err != nil:
				t.Error(err)
			case got != tc.want:
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := NginxFormatFromConfig(filepath.Join(t.TempDir(), "none.conf"), "f"); err == nil || !strings.Contains(err.Error(), "none.conf") {
		t.Errorf("missing file: %v", err)
	}
	// A redefined combined is an error in nginx, and here.
	dir := t.TempDir()
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte("http { log_format combined '$status'; }"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NginxFormatFromConfig(conf, "combined"); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("redefined combined: %v", err)
	}
}

// nginxTest runs nginx -t on conf with a scratch prefix and returns its
// output and whether it accepted the configuration.
func nginxTest(t *testing.T, conf string) (string, bool) {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("nginx is not installed (Debian package nginx; scripts/setup.sh installs it): %v", err)
	}
	prefix := t.TempDir()
	if err := os.MkdirAll(filepath.Join(prefix, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-t", "-p", prefix+"/", "-c", conf, "-e", filepath.Join(prefix, "error.log"),
		"-g", "pid "+filepath.Join(prefix, "nginx.pid")+";").CombinedOutput()
	return string(out), err == nil
}

// TestNginxConfigAccepted is a differential check of the sample
// configuration: nginx -t accepts it, and with the hidden duplicate made
// visible both nginx and NginxFormatFromConfig reject it, at the same place.
func TestNginxConfigAccepted(t *testing.T) {
	abs, err := filepath.Abs(sampleConf)
	if err != nil {
		t.Fatal(err)
	}
	if out, ok := nginxTest(t, abs); !ok {
		t.Fatalf("nginx -t rejects %s:\n%s", sampleConf, out)
	}

	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Dir(abs))); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "conf.d", ".disabled.conf"), filepath.Join(dir, "conf.d", "disabled.conf")); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "nginx.conf")
	out, ok := nginxTest(t, conf)
	if ok || !strings.Contains(out, `duplicate "log_format" name "upstream_time"`) {
		t.Fatalf("nginx -t should reject the duplicate:\n%s", out)
	}
	_, err = NginxFormatFromConfig(conf, "upstream_time")
	if err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("NginxFormatFromConfig: %v", err)
	}
	// nginx names the second definition's file and line; so must we.
	where := filepath.Join(dir, "conf.d", "disabled.conf") + ":3"
	if !strings.Contains(out, where) || !strings.Contains(err.Error(), where) {
		t.Errorf("want both to name %s:\nnginx: %s\nours: %v", where, out, err)
	}
}
