package loadgen

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// loggedRequests counts the requests of our client in nginx's access log
// (the sandbox's own readiness probe has another User-Agent).
func loggedRequests(t *testing.T, n *sandbox.Nginx) int64 {
	t.Helper()
	data, err := os.ReadFile(n.AccessLogPath())
	if err != nil {
		t.Fatal(err)
	}
	return int64(bytes.Count(data, []byte(`"`+userAgent+`"`)))
}

// settledCount waits until the access log holds at least want requests
// more than before (nginx logs a request after sending its response) and
// then a little longer, so surplus lines would show too.
func settledCount(t *testing.T, n *sandbox.Nginx, before, want int64) int64 {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for loggedRequests(t, n)-before < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	return loggedRequests(t, n) - before
}

// TestNginxAccessLogMatches checks that the requests counted are exactly
// the requests nginx served, in both models and both connection modes.
func TestNginxAccessLogMatches(t *testing.T) {
	n := sandboxtest.NewNginx(t, sandbox.NginxOptions{})
	engines(t, func(t *testing.T) { testNginxAccessLogMatches(t, n) })
}

func testNginxAccessLogMatches(t *testing.T, n *sandbox.Nginx) {
	tests := []struct {
		name string
		opt  Options
	}{
		// 1250 requests per connection: nginx closes keep-alive
		// connections after 1000 (keepalive_requests), and the client
		// reconnects without an error.
		{name: "closed keep-alive", opt: Options{Connections: 2, Requests: 2500, KeepAlive: true}},
		{name: "closed connection per request", opt: Options{Connections: 4, Requests: 300}},
		{name: "open keep-alive", opt: Options{Connections: 4, Requests: 300, Rate: 1500, KeepAlive: true}},
		{name: "open connection per request", opt: Options{Connections: 4, Requests: 300, Rate: 1500}},
		{name: "closed keep-alive after warm-up", opt: Options{Connections: 3, Requests: 400, WarmUp: 200 * time.Millisecond, KeepAlive: true}},
		{name: "open connection per request after warm-up", opt: Options{Connections: 3, Requests: 200, Rate: 1000, WarmUp: 200 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := URLWorkload(n.URL(), URLOptions{KeepAlive: tt.opt.KeepAlive})
			if err != nil {
				t.Fatal(err)
			}
			before := loggedRequests(t, n)
			start := time.Now()
			res, err := runEngine(context.Background(), plan, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("run took %v: %+v", time.Since(start), res.Latency)
			if res.Requests != tt.opt.Requests || res.Errors != 0 {
				t.Fatalf("%d requests, %d errors %v %q; want %d without errors", res.Requests, res.Errors, res.ErrorsByKind, res.Steps[0].Details, tt.opt.Requests)
			}
			want := res.Requests + res.WarmUpRequests
			if got := settledCount(t, n, before, want); got != want {
				t.Errorf("nginx logged %d requests, the client counted %d (+%d warm-up)", got, res.Requests, res.WarmUpRequests)
			}
			if res.Bytes <= res.Requests*int64(len(nginxIndexForTest)) {
				t.Errorf("%d bytes for %d responses of a %d-byte page", res.Bytes, res.Requests, len(nginxIndexForTest))
			}
		})
	}
}

// nginxIndexForTest is the length of sandbox nginx's index.html, to check
// that bodies are counted.
const nginxIndexForTest = "<!doctype html>\n<title>stacktune sandbox</title>\n<p>stacktune sandbox nginx</p>\n"

// TestNginxDurationBound: a duration-bounded run counts only the requests
// that completed in time; the ones aborted at the end reached nginx or
// not, so nginx logged at most one more per connection.
func TestNginxDurationBound(t *testing.T) {
	n := sandboxtest.NewNginx(t, sandbox.NginxOptions{})
	engines(t, func(t *testing.T) { testNginxDurationBound(t, n) })
}

func testNginxDurationBound(t *testing.T, n *sandbox.Nginx) {
	for _, ka := range []bool{true, false} {
		plan, err := URLWorkload(n.URL(), URLOptions{KeepAlive: ka})
		if err != nil {
			t.Fatal(err)
		}
		before := loggedRequests(t, n)
		const d = 500 * time.Millisecond
		opt := Options{Connections: 4, Duration: d, KeepAlive: ka}
		res, err := runEngine(context.Background(), plan, opt)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stopped != StopDuration || res.Elapsed < d || res.Elapsed > d+500*time.Millisecond {
			t.Errorf("keep-alive %v: stopped %q after %v, want %v", ka, res.Stopped, res.Elapsed, d)
		}
		got := settledCount(t, n, before, res.Requests)
		if res.Requests == 0 || res.Errors != 0 || got < res.Requests || got > res.Requests+int64(opt.Connections) {
			t.Errorf("keep-alive %v: client counted %d (%d errors), nginx logged %d, want %d..%d", ka, res.Requests, res.Errors, got, res.Requests, res.Requests+int64(opt.Connections))
		}
	}
}
