package accesslog

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// liveConfig is the http {} text of the real nginx: it includes the log
// formats of the sample configuration (whose nested include needs
// snippets/ in the prefix) and writes one access log per format.
const liveConfig = `
include {{CONFD}}/*.conf;
log_format pathargs '$request_method $uri$is_args$args $status';
log_format pathq '$request_method $uri?$args $status $msec $time_iso8601 $bytes_sent';

server {
    listen 127.0.0.1:{{PORT}};
    root {{DIR}}/html;
    access_log {{DIR}}/upstream_time.log upstream_time;
    access_log {{DIR}}/timed.log timed;
    access_log {{DIR}}/json.log json_combined;
    access_log {{DIR}}/ltsv.log ltsv;
    access_log {{DIR}}/combined.log combined;
    access_log {{DIR}}/pathargs.log pathargs;
    access_log {{DIR}}/pathq.log pathq;

    location /slow/ {
        alias {{DIR}}/html/;
        limit_rate 16k;
    }
    location /up/ {
        proxy_pass http://127.0.0.1:{{PORT}}/;
    }
    location = /teapot {
        return 418;
    }
}
`

// liveRequest is one request sent to the real nginx and what came back.
type liveRequest struct {
	method, target, ua string
	status             int
	bytes              int
	elapsed            time.Duration
}

// TestRealNginx is the end-to-end check: a real nginx writes access logs
// with the sample configuration's formats, and every parser reads back the
// status, size and timing of each request sent.
func TestRealNginx(t *testing.T) {
	confd, err := filepath.Abs("testdata/nginx/conf.d")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "snippets"), os.DirFS("testdata/nginx/snippets")); err != nil {
		t.Fatal(err)
	}
	n := sandboxtest.NewNginx(t, sandbox.NginxOptions{Dir: dir, HTTPConfig: strings.ReplaceAll(liveConfig, "{{CONFD}}", confd)})
	// nginx sends a second's worth at once, then 16k a second: the
	// 24 KiB take about half a second.
	big := bytes.Repeat([]byte("0123456789abcdef"), 1536)
	if err := os.WriteFile(filepath.Join(n.Dir(), "html", "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}

	base := strings.TrimSuffix(n.URL(), "/")
	reqs := []*liveRequest{
		{method: "GET", target: "/index.html?x=1&y=2", ua: "Go-http-client/1.1"},
		{method: "GET", target: "/missing", ua: `agent "with quotes" and \ backslash`},
		{method: "GET", target: "/teapot", ua: "curl/8.0"},
		{method: "POST", target: "/index.html", ua: "poster"},
		{method: "HEAD", target: "/", ua: "header"},
		{method: "GET", target: "/up/index.html", ua: "proxied"},
		{method: "GET", target: `/q?x="y"&z=caf%C3%A9`, ua: "café ünïcode"},
		{method: "GET", target: "/slow/big.bin", ua: "slow"},
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, r := range reqs {
		req, err := http.NewRequest(r.method, base+r.target, strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", r.ua)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		r.elapsed = time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		r.status, r.bytes = resp.StatusCode, len(body)
	}
	// The log has the readiness check, the requests, and the proxied
	// request nginx sent itself (logged before the one that proxied it).
	want := len(reqs) + 2

	read := func(name string) []byte {
		t.Helper()
		path := filepath.Join(n.Dir(), name)
		deadline := time.Now().Add(5 * time.Second)
		for {
			data, err := os.ReadFile(path)
			if err == nil && bytes.Count(data, []byte("\n")) >= want || time.Now().After(deadline) {
				if err != nil {
					t.Fatal(err)
				}
				return data
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// records parses a log and leaves out the readiness check and the
	// proxied request, so the rest line up with reqs.
	records := func(p Parser, name string) []Record {
		t.Helper()
		data := read(name)
		var out []Record
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) != want {
			t.Fatalf("%s: %d lines, want %d:\n%s", name, len(lines), want, data)
		}
		for i, l := range lines {
			var r Record
			ok, reason := p.Parse([]byte(l), &r)
			if !ok {
				t.Fatalf("%s line %d: %s: %s", name, i+1, reason, l)
			}
			if i == 6 && (string(r.Method) != "GET" || !bytes.HasSuffix(r.URI, []byte("/index.html"))) {
				t.Fatalf("%s line %d is not the proxied request: %s", name, i+1, l)
			}
			if i == 0 || i == 6 {
				continue
			}
			r.Method, r.URI = bytes.Clone(r.Method), bytes.Clone(r.URI)
			out = append(out, r)
		}
		if len(out) != len(reqs) {
			t.Fatalf("%s: %d records after the skips, want %d", name, len(out), len(reqs))
		}
		return out
	}
	check := func(format, name string, p Parser, recs []Record, wantURI func(*liveRequest) string) {
		t.Helper()
		if testing.Verbose() {
			for _, r := range recs {
				t.Logf("%s %s: %s", format, name, recordText(&r))
			}
		}
		has := Fields(p)
		for i, r := range recs {
			q := reqs[i]
			if string(r.Method) != q.method || string(r.URI) != wantURI(q) {
				t.Errorf("%s %s: request %q %q, want %s %s", format, name, r.Method, r.URI, q.method, wantURI(q))
			}
			if r.Has&HasStatus == 0 || r.Status != q.status {
				t.Errorf("%s %s %s: status %d, client got %d", format, name, q.target, r.Status, q.status)
			}
			if has&HasTime != 0 && (r.Has&HasTime == 0 || time.Since(r.Time) > time.Minute || time.Since(r.Time) < -time.Second) {
				t.Errorf("%s %s %s: time %v", format, name, q.target, r.Time)
			}
			// $bytes_sent (pathq) counts the headers too.
			if has&HasBytes != 0 && (r.Has&HasBytes == 0 || int(r.BodyBytes) != q.bytes && format != "pathq" || int(r.BodyBytes) < q.bytes) {
				t.Errorf("%s %s %s: %d bytes, client got %d", format, name, q.target, r.BodyBytes, q.bytes)
			}
			if has&HasRequestTime == 0 {
				continue
			}
			if r.Has&HasRequestTime == 0 || r.RequestTime > q.elapsed.Seconds()+0.002 {
				t.Errorf("%s %s %s: request time %v, client waited %v", format, name, q.target, r.RequestTime, q.elapsed)
			}
			if strings.HasPrefix(q.target, "/slow/") && r.RequestTime < 0.25 {
				t.Errorf("%s %s: request time %v, client waited %v", format, name, r.RequestTime, q.elapsed)
			}
			up := strings.HasPrefix(q.target, "/up/")
			if up != (r.Has&HasUpstreamTime != 0) || up && (r.UpstreamTime > r.RequestTime+0.001 || r.UpstreamTime < 0) {
				t.Errorf("%s %s %s: upstream time %v (has %v), request time %v", format, name, q.target, r.UpstreamTime, r.Has&HasUpstreamTime != 0, r.RequestTime)
			}
		}
	}
	// nginx's default escaping writes '"' as \x22 in the request line.
	asLogged := func(q *liveRequest) string { return strings.ReplaceAll(q.target, `"`, `\x22`) }
	asSent := func(q *liveRequest) string { return q.target }

	for _, name := range []string{"upstream_time", "timed"} {
		f, err := NginxFormatFromConfig(n.ConfigPath(), name)
		if err != nil {
			t.Fatal(err)
		}
		p := mustNginx(t, f)
		check(name, "NewNginx", p, records(p, name+".log"), asLogged)
	}
	f, err := NginxFormatFromConfig(n.ConfigPath(), "json_combined")
	if err != nil {
		t.Fatal(err)
	}
	jp := mustNginx(t, f)
	check("json_combined", "NewNginx", jp, records(jp, "json.log"), asSent)
	check("json_combined", "NewJSON", NewJSON(), records(NewJSON(), "json.log"), asSent)
	check("ltsv", "NewLTSV", NewLTSV(), records(NewLTSV(), "ltsv.log"), asLogged)

	lines := bytes.Split(read("combined.log"), []byte("\n"))
	p, err := Detect(lines)
	if err != nil {
		t.Fatal(err)
	}
	if p.Format() != "combined" {
		t.Errorf("Detect: %s", p.Format())
	}
	check("combined", "Detect", p, records(p, "combined.log"), asLogged)
	if NoRequestTimeHint(p.Format()) == "" {
		t.Error("no hint for combined")
	}

	// $uri is the path after internal redirects (index), and nginx logs
	// $args as "-" when there is none.
	path := func(q *liveRequest) string {
		switch q.target {
		case "/":
			return "/index.html"
		case "/up/index.html":
			return q.target
		}
		return asLogged(q)
	}
	for _, name := range []string{"pathargs", "pathq"} {
		f, err := NginxFormatFromConfig(n.ConfigPath(), name)
		if err != nil {
			t.Fatal(err)
		}
		p := mustNginx(t, f)
		check(name, "NewNginx", p, records(p, name+".log"), path)
	}
}
