package apply

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHTTPProbe: the probe waits through 5xx answers for one below 500,
// and a cancelled context ends it with the last error.
func TestHTTPProbe(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusNotFound) // below 500: nginx answers
	}))
	defer srv.Close()
	if err := HTTPProbe(srv.URL)(context.Background()); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := HTTPProbe(down.URL)(ctx)
	if err == nil || !strings.Contains(err.Error(), "probe:") {
		t.Errorf("probe of a failing server: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("probe took %s after its context ended", d)
	}
}

// TestHTTPProbeMasksTheURL: the probe's errors name the URL without its
// password or query values, whether the server answers 5xx or nothing.
func TestHTTPProbeMasksTheURL(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for name, base := range map[string]string{"5xx": down.URL, "refused": closed.URL} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			u := strings.Replace(base, "http://", "http://probe:pw-S3CRET@", 1) + "/health?key=S3CRET"
			err := HTTPProbe(u)(ctx)
			want := strings.Replace(base, "http://", "http://probe:***@", 1) + "/health?key=***"
			if err == nil || strings.Contains(err.Error(), "S3CRET") || !strings.Contains(err.Error(), "GET "+want) {
				t.Errorf("probe error %v, want one naming %s", err, want)
			}
		})
	}
}
