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

	"github.com/stacktune/stacktune/internal/sandbox"
	"github.com/stacktune/stacktune/internal/sandbox/sandboxtest"
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
