package reqtrace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"github.com/stacktune/stacktune/sqltag"
)

// MaxTraceRequests bounds the requests a trace run keeps.
const MaxTraceRequests = 200000

// Request is one HTTP request of a trace run.
type Request struct {
	Method string `json:"method"`
	// Path is the request's path without its query string; Endpoint its
	// group ("GET /profile/:name").
	Path     string `json:"path"`
	Endpoint string `json:"endpoint"`
	// Trace is the trace ID of the W3C traceparent header the request
	// went to the app with (the client's, or one the front gave it).
	Trace string `json:"trace"`
	// Start is when the front received it, End when it had sent the
	// whole response back.
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Status int       `json:"status"`
	// Cut is true when the client went away before the response was
	// complete (the bench's end cuts its last requests): the app may have
	// stopped half-way, so the request is not counted.
	Cut bool `json:"cut,omitempty"`
}

// front is the trace run's HTTP front: a reverse proxy in front of the
// stack that the bench's requests go through, which records each
// request's method, path, status and times, and sends each with a W3C
// traceparent header (the client's own, or a new one), so that an app
// that propagates it into its SQL tags ties its statements to the
// request.
type front struct {
	ln      net.Listener
	srv     *http.Server
	mu      sync.Mutex
	reqs    []Request
	dropped int64
}

// startFront proxies to target (scheme://host[:port]).
func startFront(target string) (*front, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("the trace run's target %q: want http://host[:port]", target)
	}
	base := &url.URL{Scheme: u.Scheme, Host: u.Host}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the trace run's HTTP front: %w", err)
	}
	f := &front{ln: ln}
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second,
		DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(base)
		},
		Transport: tr,
		ErrorLog:  log.New(io.Discard, "", 0), // a request cut at the end of the run is counted by the bench
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "stacktune trace front: "+err.Error(), http.StatusBadGateway)
		},
	}
	f.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		tp := r.Header.Get("traceparent")
		trace, ok := sqltag.TraceID(tp)
		if !ok {
			tp, trace = newTraceparent()
			r.Header.Set("traceparent", tp)
			r.Header.Del("tracestate")
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		rp.ServeHTTP(sw, r)
		f.record(Request{Method: r.Method, Path: r.URL.Path, Trace: trace, Start: start, End: time.Now(), Status: sw.status, Cut: r.Context().Err() != nil})
	}), ReadHeaderTimeout: 30 * time.Second}
	go f.srv.Serve(ln)
	return f, nil
}

// URL is the front's base URL.
func (f *front) URL() string { return "http://" + f.ln.Addr().String() }

func (f *front) record(r Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) >= MaxTraceRequests {
		f.dropped++
		return
	}
	f.reqs = append(f.reqs, r)
}

// requests returns the requests recorded so far.
func (f *front) requests() ([]Request, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...), f.dropped
}

func (f *front) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := f.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = f.srv.Close()
	}
	return err
}

// newTraceparent returns a traceparent header value and its trace ID.
func newTraceparent() (string, string) {
	var b [24]byte
	rand.Read(b[:])
	b[0] |= 1 // never all zeros
	b[16] |= 1
	trace, span := hex.EncodeToString(b[:16]), hex.EncodeToString(b[16:])
	return "00-" + trace + "-" + span + "-01", trace
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Flush lets the reverse proxy flush streamed responses.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
