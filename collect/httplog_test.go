package collect

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestHTTPLogInterval: a real nginx logs requests during the run; the
// collector reads only those (not the ones before its start), with their
// client and User-Agent, profiled by endpoint.
func TestHTTPLogInterval(t *testing.T) {
	ng := sandboxtest.NewNginx(t, sandbox.NginxOptions{HTTPConfig: `    log_format timed '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time';
    server {
        listen 127.0.0.1:{{PORT}};
        access_log {{DIR}}/timed.log timed;
        root {{DIR}}/html;
        location = /healthcheck { return 200 "ok"; }
    }
`})
	log := filepath.Join(ng.Dir(), "timed.log")
	get := func(path, agent string, n int) {
		for i := 0; i < n; i++ {
			req, _ := http.NewRequest("GET", strings.TrimSuffix(ng.URL(), "/")+path, nil)
			req.Header.Set("User-Agent", agent)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	// The log also holds the sandbox's readiness probe (GET /), written
	// after its response: wait for it too, so that every line before the
	// interval is in the file when it starts.
	get("/before", "early", 3)
	waitLines(t, log, 4)
	c := NewHTTPLog([]string{log}, 0)
	if err := c.(Starter).Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	get("/", "visitor", 4)
	get("/healthcheck", "ELB-HealthChecker/2.0", 6)
	waitLines(t, log, 14)
	var s Snapshot
	if err := c.Collect(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	h, err := LayerOf[HTTPLog](&s, "http_log")
	if err != nil || h == nil {
		t.Fatalf("%v %v", h, err)
	}
	if h.Window != "interval" || h.Requests != 10 || h.Timed != 10 || h.Skipped != 0 || !strings.HasPrefix(h.Format, "nginx") {
		t.Errorf("window %s, %d requests (%d timed, %d skipped), format %s; want the 10 of the interval", h.Window, h.Requests, h.Timed, h.Skipped, h.Format)
	}
	paths := map[string]int64{}
	for _, e := range h.Endpoints {
		paths[e.Path] = e.Count
	}
	if paths["/healthcheck"] != 6 || paths["/"] != 4 || paths["/before"] != 0 {
		t.Errorf("endpoints %+v", h.Endpoints)
	}
}

func waitLines(t *testing.T, path string, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(path); strings.Count(string(b), "\n") >= n {
			return
		}
	}
	t.Fatalf("%s has not %d lines", path, n)
}

// TestHTTPLogPollers: a log that did not grow is read from its tail; a
// client asking one URL every 10 s (a load balancer's health check) is a
// poller, visitors and a client at an irregular pace are not.
func TestHTTPLogPollers(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	line := func(at time.Time, client, path, agent string, rt float64) {
		fmt.Fprintf(&b, "%s - - [%s] \"GET %s HTTP/1.1\" 200 12 \"-\" \"%s\" %.3f %.3f\n", client, at.Format("02/Jan/2006:15:04:05 -0700"), path, agent, rt, rt-0.001)
	}
	for i := 0; i < 30; i++ {
		line(t0.Add(time.Duration(i)*10*time.Second), "10.0.0.2", "/", "ELB-HealthChecker/2.0", 0.250)
		line(t0.Add(time.Duration(i)*10*time.Second+time.Second), "10.0.0.3", "/health?full=1", "kube-probe/1.29", 0.002)
		line(t0.Add(time.Duration(i*i)*time.Second), "198.51.100.9", "/", "Mozilla/5.0", 0.300)
	}
	log := filepath.Join(dir, "access.log")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Run(context.Background(), []Collector{NewHTTPLog([]string{log}, 0)})
	h, err := LayerOf[HTTPLog](s, "http_log")
	if err != nil || h == nil || len(s.Errors) > 0 {
		t.Fatalf("%v %v %+v", h, err, s.Errors)
	}
	if h.Window != "tail" || h.Requests != 90 || h.Upstream != 90 {
		t.Errorf("window %s, %d requests, %d with upstream", h.Window, h.Requests, h.Upstream)
	}
	if len(h.Pollers) != 2 {
		t.Fatalf("pollers %+v", h.Pollers)
	}
	p := h.Pollers[0] // the most time first
	if p.Path != "/" || p.Client != "10.0.0.2" || p.UserAgent != "ELB-HealthChecker/2.0" || p.Count != 30 || p.Every != 10 || p.Spread != 0 {
		t.Errorf("poller %+v", p)
	}
	if q := h.Pollers[1]; q.Path != "/health" || q.UserAgent != "kube-probe/1.29" {
		t.Errorf("second poller %+v", q)
	}
}

// TestHTTPLogLongLines: lines longer than the collector reads (a line of
// junk longer than 1 MiB, and one longer than a read chunk) are skipped
// and counted, and the format is detected from the lines after them: the
// reader stopped at the first one ("token too long") and profiled
// nothing. --http-log-format names a format detection cannot tell, and a
// log with no line to detect from says so and names the flag.
func TestHTTPLogLongLines(t *testing.T) {
	var valid, plain strings.Builder
	for i := 0; i < 30; i++ {
		l := fmt.Sprintf("10.0.0.%d - - [22/Nov/2026:10:00:%02d +0000] \"GET /item/%d HTTP/1.1\" 200 12 \"-\" \"bench\"", i%9, i, i)
		valid.WriteString(l + " 0.010 0.009\n")
		plain.WriteString(l + "\n")
	}
	half := strings.Index(valid.String()[500:], "\n") + 501
	junk := func(n int) string { return strings.Repeat("\x16\x03junk ", n/7) + "\n" }
	cases := []struct {
		name     string
		format   string // --http-log-format
		text     string
		requests int64
		skipped  int64
		wantErr  []string
	}{
		{name: "a 3 MiB first line", text: junk(3<<20) + valid.String(), requests: 30, skipped: 1},
		{name: "a 9 MiB first line", text: junk(9<<20) + valid.String(), requests: 30, skipped: 1},
		{name: "long lines among the first", text: junk(2<<20) + valid.String()[:half] + junk(9<<20) + valid.String()[half:], requests: 30, skipped: 2},
		{name: "junk only", text: junk(9<<20) + "<html>502</html>\n",
			wantErr: []string{"no known format reads these lines: 1 line (1 line longer than 1 MiB skipped)", "name its format with --http-log-format (combined, common, ltsv"}},
		{name: "named format", format: "combined", text: strings.Repeat("junk\n", 15) + plain.String(), requests: 30, skipped: 15},
		{name: "unknown format name", format: "nginx", text: valid.String(), wantErr: []string{`--http-log-format "nginx": use auto, combined, common`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "access.log")
			if err := os.WriteFile(log, []byte(valid.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			format, err := HTTPLogFormat(Config{Values: map[string]string{"http-log-format": tc.format}})
			if err != nil {
				if len(tc.wantErr) == 0 || !strings.Contains(err.Error(), tc.wantErr[0]) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			c := NewHTTPLogFormat([]string{log}, 0, format)
			if err := c.(Starter).Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(tc.text)
			f.Close()
			var s Snapshot
			err = c.Collect(context.Background(), &s)
			if len(tc.wantErr) > 0 {
				for _, w := range tc.wantErr {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("error %v, want %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			h, err := LayerOf[HTTPLog](&s, "http_log")
			if err != nil || h == nil {
				t.Fatalf("%v %v", h, err)
			}
			if h.Window != "interval" || h.Requests != tc.requests || h.Skipped != tc.skipped || h.Bytes != int64(len(tc.text)) || len(h.Notes) != 0 {
				t.Errorf("window %s, %d requests, %d skipped, %d bytes, notes %q; want %d requests, %d skipped, %d bytes",
					h.Window, h.Requests, h.Skipped, h.Bytes, h.Notes, tc.requests, tc.skipped, len(tc.text))
			}
		})
	}
}

// TestHTTPLogRequestLengths: a real nginx logs $request_length in a format
// of its own, which only its configuration describes; with the nginx layer
// collected first, the access log is read with that format, and the
// lengths of the requests with a body (POSTs of tens of bytes and of
// 64 KiB, past the 16k client_body_buffer_size) are counted by size, the
// GETs not at all.
func TestHTTPLogRequestLengths(t *testing.T) {
	ng := sandboxtest.NewNginx(t, sandbox.NginxOptions{HTTPConfig: `    log_format sized '$remote_addr [$time_local] "$request" $status $body_bytes_sent $request_time $request_length';
    server {
        listen 127.0.0.1:{{PORT}};
        access_log {{DIR}}/sized.log sized;
        root {{DIR}}/html;
        location = /form { client_body_buffer_size 16k; proxy_pass http://unix:{{DIR}}/app.sock:/; }
        location = /ok { return 200 "ok"; }
    }
    server {
        listen unix:{{DIR}}/app.sock;
        access_log off;
        location / { return 200 "ok"; }
    }
`})
	log := filepath.Join(ng.Dir(), "sized.log")
	do := func(method, path string, body int) {
		req, _ := http.NewRequest(method, strings.TrimSuffix(ng.URL(), "/")+path, strings.NewReader(strings.Repeat("x", body)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	do("GET", "/ok", 0)
	waitLines(t, log, 1)
	c := []Collector{NewNginx(ng.ConfigPath()), NewHTTPLog([]string{log}, 0)}
	for _, x := range c {
		if st, ok := x.(Starter); ok {
			if err := st.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < 20; i++ {
		do("POST", "/form", 40)
	}
	for i := 0; i < 3; i++ {
		do("POST", "/form", 64<<10)
	}
	for i := 0; i < 5; i++ {
		do("GET", "/ok", 0)
	}
	waitLines(t, log, 1+23+5)
	var s Snapshot
	for _, x := range c {
		if err := x.Collect(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
	}
	h, err := LayerOf[HTTPLog](&s, "http_log")
	if err != nil || h == nil {
		t.Fatalf("%v %v", h, err)
	}
	if h.Format != "nginx sized" || h.Skipped != 0 {
		t.Errorf("format %q, %d skipped; want nginx.conf's sized", h.Format, h.Skipped)
	}
	l := h.RequestLengths
	if l == nil {
		t.Fatalf("no request lengths: %+v", h)
	}
	if l.Requests != 23 || l.Over(16<<10) != 3 || l.Over(1<<10) != 3 || l.Max < 64<<10 {
		t.Errorf("lengths %+v: want 23 POSTs, 3 of them over 16 KiB", l)
	}
	// nginx's own view: it buffered those 3 bodies to disk.
	errs, err := os.ReadFile(filepath.Join(ng.Dir(), "error.log"))
	if n := strings.Count(string(errs), "a client request body is buffered to a temporary file"); err != nil || n != 3 {
		t.Errorf("nginx buffered %d bodies to disk (%v), want 3", n, err)
	}
}

func TestHTTPLengthsOver(t *testing.T) {
	var l HTTPLengths
	for _, n := range []int64{0, 1, 2, 3, 100, 16 << 10, 16<<10 + 1, 32 << 10, 1 << 40} {
		l.Add(n)
	}
	for _, tc := range []struct {
		n, want int64
	}{{-1, 9}, {0, 8}, {1, 7}, {16<<10 - 1, 4}, {16 << 10, 2}, {32<<10 - 1, 2}, {1 << 40, 0}, {1<<63 - 1, 0}} {
		if got := l.Over(tc.n); got != tc.want {
			t.Errorf("Over(%d) = %d, want %d (buckets %v)", tc.n, got, tc.want, l.Buckets)
		}
	}
	if l.Requests != 9 || l.Max != 1<<40 || len(l.Buckets) != 42 {
		t.Errorf("%+v", l)
	}
}
