package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/ledger"
)

func TestCheckListen(t *testing.T) {
	tests := []struct {
		addr, token string
		refused     bool
	}{
		{"127.0.0.1:8737", "", false},
		{"127.0.0.2:80", "", false},
		{"[::1]:8737", "", false},
		{"localhost:8737", "", false},
		{"0.0.0.0:8737", "", true},
		{":8737", "", true},
		{"[::]:8737", "", true},
		{"192.168.1.10:8737", "", true},
		{"example.com:8737", "", true},
		{"0.0.0.0:8737", "s3cret", false},
	}
	for _, tc := range tests {
		t.Run(tc.addr+"/"+tc.token, func(t *testing.T) {
			err := CheckListen(tc.addr, tc.token)
			if refused := errors.Is(err, ErrTokenRequired); refused != tc.refused {
				t.Errorf("CheckListen = %v, refused want %v", err, tc.refused)
			}
		})
	}
	if err := CheckListen("nonsense", ""); err == nil {
		t.Error("an address without a port accepted")
	}
	if err := Serve(context.Background(), nil, Options{Listen: "0.0.0.0:0"}, nil); !errors.Is(err, ErrTokenRequired) {
		t.Errorf("Serve on every interface without a token: %v", err)
	}
}

func newStore(t *testing.T) *history.Store {
	t.Helper()
	s, err := history.Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func get(t *testing.T, h http.Handler, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func TestToken(t *testing.T) {
	h := New(newStore(t), Options{Token: "s3cret"})
	tests := []struct {
		name string
		path string
		hdr  []string
		code int
	}{
		{name: "none", path: "/", code: http.StatusUnauthorized},
		{name: "wrong bearer", path: "/api/runs", hdr: []string{"Authorization", "Bearer nope"}, code: http.StatusUnauthorized},
		{name: "bearer", path: "/api/runs", hdr: []string{"Authorization", "Bearer s3cret"}, code: http.StatusOK},
		{name: "cookie", path: "/", hdr: []string{"Cookie", cookieName + "=s3cret"}, code: http.StatusOK},
		{name: "wrong query", path: "/?token=nope", code: http.StatusUnauthorized},
		{name: "query: cookie and redirect", path: "/?token=s3cret&label=x", code: http.StatusSeeOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, h, tc.path, tc.hdr...)
			if w.Code != tc.code {
				t.Errorf("status %d, want %d: %s", w.Code, tc.code, w.Body)
			}
			if tc.code == http.StatusSeeOther {
				if loc := w.Header().Get("Location"); loc != "/?label=x" {
					t.Errorf("redirect to %q", loc)
				}
				if c := w.Header().Get("Set-Cookie"); !strings.Contains(c, "HttpOnly") {
					t.Errorf("cookie %q", c)
				}
			}
		})
	}
}

func TestPagesAndAPI(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	for i, l := range []string{"before", "after"} {
		r := history.Run{Label: l, Score: float64(1000 * (i + 1)), Passed: true, Command: history.CommandBench, ScenarioHash: "h", Duration: time.Second,
			Details: json.RawMessage(`{"steps":[{"name":"home","requests":10,"latency_ms":{"mean":` + []string{"50", "5"}[i] + `,"p50":1,"p99":2}}]}`)}
		if _, err := s.Add(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	h := New(s, Options{})
	tests := []struct {
		name, path string
		code       int
		has        string
	}{
		{"list", "/", 200, `href="/runs/2"`},
		{"list filtered", "/?label=before", 200, `href="/runs/1"`},
		{"run", "/runs/1", 200, "home"},
		{"missing run", "/runs/9", 404, ""},
		{"bad run", "/runs/x", 400, ""},
		{"diff", "/diff?a=1&b=2", 200, "endpoint-diff"},
		{"diff from the list", "/diff?run=2&run=1", 303, ""},
		{"one run checked", "/diff?run=2", 400, "check two runs"},
		{"sessions", "/sessions", 200, "No tune or ab"},
		{"script", "/static/live.js", 200, "EventSource"},
		{"api index", "/api/", 200, "/api/diff"},
		{"api runs", "/api/runs?limit=1", 200, `"label": "after"`},
		{"api run", "/api/runs/2", 200, `"endpoints"`},
		{"api diff", "/api/diff?a=1&b=2", 200, `"verdict"`},
		{"api artefact missing", "/api/runs/1/artefacts/digest", 404, ""},
		{"api sessions", "/api/sessions", 200, "[]"},
		{"unknown", "/nothing", 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, h, tc.path)
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.has) {
				t.Errorf("status %d, want %d; body has %q: %.300s", w.Code, tc.code, tc.has, w.Body)
			}
			if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("CSP %q", csp)
			}
		})
	}
	var c ledger.Comparison
	if err := json.Unmarshal(get(t, h, "/api/diff?a=1&b=2").Body.Bytes(), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Endpoints) != 1 || c.Endpoints[0].Delta >= 0 || !c.Verdict.Comparable {
		t.Errorf("comparison %+v", c)
	}
}

// TestEvents follows a session's events while a writer adds its runs and
// ends it: every run arrives once, in order, then the end.
func TestEvents(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	id, err := s.StartSession(ctx, history.CommandTune, "live")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(s, Options{Poll: 20 * time.Millisecond}))
	defer srv.Close()
	go func() {
		for i := range 5 {
			time.Sleep(30 * time.Millisecond)
			r := history.Run{Label: "step", Score: float64(i), Command: history.CommandTune, Session: id}
			s.Add(ctx, &r)
		}
		s.EndSession(ctx, id, history.SessionDone)
	}()
	resp, err := http.Get(srv.URL + "/api/sessions/" + itoa(id) + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, e)
		}
	}
	if got := strings.Join(events, ","); got != "run,run,run,run,run,end" {
		t.Errorf("events %s", got)
	}
	resp, err = http.Get(srv.URL + "/api/sessions/99/events")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("a missing session's events: %d", resp.StatusCode)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
