package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// URLOptions describes the one request of a URL plan.
type URLOptions struct {
	// Method defaults to GET. HEAD responses are read without a body.
	Method string
	// Headers are sent as given (one value each); Host and User-Agent
	// here replace the defaults.
	Headers map[string]string
	// Body is sent with a Content-Length.
	Body []byte
	// KeepAlive reuses each user's connection; false dials per request
	// and sends "Connection: close". Run refuses a plan whose KeepAlive
	// differs from Options.KeepAlive.
	KeepAlive bool
	// Timeout bounds each request; 0 means Options.Timeout. When both
	// are set the smaller applies.
	Timeout time.Duration
}

// userAgent is the default User-Agent header.
const userAgent = "stacktune-bench"

// readBufferSize is each connection's response buffer. Header lines
// longer than it are skipped, not parsed; bodies pass through it.
const readBufferSize = 16 << 10

// URLWorkload returns a one-step plan that requests rawURL over plain HTTP/1.1
// with the package's own client: one connection per user, the request
// serialised once, responses parsed without allocating. Only http:// is
// supported. Status codes of 400 and above count as ErrStatus.
func URLWorkload(rawURL string, opt URLOptions) (Workload, error) {
	p, err := newURLWorkload(rawURL, opt)
	if err != nil {
		return Workload{}, err
	}
	return Workload{
		// The step's name is in every report and error sample: its query
		// values masked, as any URL the user gave (MaskURL).
		Steps: []string{p.method + " " + MaskURL(p.target)},
		NewUser: func(int) (User, error) {
			return &urlUser{p: p, buf: make([]byte, readBufferSize)}, nil
		},
		Check: func(o Options) error {
			if o.KeepAlive != opt.KeepAlive {
				return fmt.Errorf("loadgen: Options.KeepAlive is %v but the URL plan was built with URLOptions.KeepAlive %v: set both the same", o.KeepAlive, opt.KeepAlive)
			}
			return nil
		},
		url: p,
	}, nil
}

// urlWorkload is what every user of a URL plan shares (read-only after
// construction, except the resolved address).
type urlWorkload struct {
	method    string
	target    string
	host      string // host:port to dial
	req       []byte // the serialised request
	head      bool
	keepAlive bool
	timeout   time.Duration
	dialer    net.Dialer

	mu       sync.Mutex
	resolved string // ip:port, once resolved
}

func newURLWorkload(rawURL string, opt URLOptions) (*urlWorkload, error) {
	// Messages show the URL with its password masked (MaskURL).
	shown := MaskURL(rawURL)
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error quotes the whole URL, password included: keep only
		// what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("loadgen: URL %q: %s", shown, MaskCredentials(err.Error()))
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
	case "https":
		return nil, fmt.Errorf("loadgen: URL %q: https is not supported: the load generator speaks plain HTTP/1.1 (benchmark the backend over http://, e.g. on loopback, or put TLS aside)", shown)
	default:
		return nil, fmt.Errorf("loadgen: URL %q: want an http:// URL", shown)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("loadgen: URL %q: no host", shown)
	}
	if u.User != nil {
		return nil, fmt.Errorf("loadgen: URL %q: user info in URLs is not supported: send an Authorization header (a scenario file's headers)", shown)
	}
	port := u.Port()
	if port == "" {
		port = "80"
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("loadgen: URL %q: bad port %q", shown, port)
	}
	method := opt.Method
	if method == "" {
		method = "GET"
	}
	if !validToken(method) {
		return nil, fmt.Errorf("loadgen: method %q is not an HTTP token", method)
	}
	if opt.Timeout < 0 {
		return nil, fmt.Errorf("loadgen: negative Timeout %v", opt.Timeout)
	}
	target := u.RequestURI()
	if target == "" {
		target = "/"
	}
	p := &urlWorkload{
		method:    method,
		target:    target,
		host:      net.JoinHostPort(u.Hostname(), port),
		head:      method == "HEAD",
		keepAlive: opt.KeepAlive,
		timeout:   opt.Timeout,
		dialer:    net.Dialer{KeepAlive: -1},
	}
	hostHeader := u.Host
	if u.Port() == "80" {
		hostHeader = strings.TrimSuffix(u.Host, ":80")
	}
	var b strings.Builder
	b.WriteString(method + " " + target + " HTTP/1.1\r\n")
	names := make([]string, 0, len(opt.Headers))
	seen := map[string]bool{}
	for name, v := range opt.Headers {
		if !validToken(name) {
			return nil, fmt.Errorf("loadgen: header name %q is not an HTTP token", name)
		}
		if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("loadgen: header %s: the value contains a line break", name)
		}
		lower := strings.ToLower(name)
		switch lower {
		case "content-length", "transfer-encoding", "connection":
			return nil, fmt.Errorf("loadgen: header %s is set by the client (Body, KeepAlive)", name)
		}
		seen[lower] = true
		names = append(names, name)
	}
	sort.Strings(names)
	if !seen["host"] {
		b.WriteString("Host: " + hostHeader + "\r\n")
	}
	if !seen["user-agent"] {
		b.WriteString("User-Agent: " + userAgent + "\r\n")
	}
	for _, name := range names {
		b.WriteString(name + ": " + opt.Headers[name] + "\r\n")
	}
	if len(opt.Body) > 0 || method == "POST" || method == "PUT" || method == "PATCH" {
		b.WriteString("Content-Length: " + strconv.Itoa(len(opt.Body)) + "\r\n")
	}
	if !opt.KeepAlive {
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("\r\n")
	b.Write(opt.Body)
	p.req = []byte(b.String())
	return p, nil
}

// validToken reports whether s is a non-empty RFC 9110 token.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// addr returns the address to dial, resolving a host name once (a failed
// resolution is retried by the next dial).
func (p *urlWorkload) addr(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resolved != "" {
		return p.resolved, nil
	}
	host, port, _ := net.SplitHostPort(p.host)
	if net.ParseIP(host) != nil {
		p.resolved = p.host
		return p.resolved, nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return "", err
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("no address for %s", host)
	}
	// Prefer IPv4, as wrk and curl effectively do on loopback names.
	ip := ips[0]
	for _, x := range ips {
		if x.Is4() {
			ip = x
			break
		}
	}
	p.resolved = net.JoinHostPort(ip.String(), port)
	return p.resolved, nil
}

// urlUser is one connection's worth of client state. Its Do is used by
// one goroutine at a time; abort may run concurrently from the context's
// AfterFunc.
type urlUser struct {
	p      *urlWorkload
	rd     io.Reader // raw, or a test's reader
	buf    []byte    // read buffer: bytes [r, w) are not parsed yet
	r, w   int
	parser respParser

	mu       sync.Mutex // guards conn against abort
	conn     net.Conn
	raw      *rawConn  // conn's reader
	deadline time.Time // the deadline set on conn

	watched   context.Context
	timeout   time.Duration // for requests under watched
	stopWatch func() bool
	aborted   atomic.Bool
}

// errAborted reports that the run stopped while a request was in flight.
var errAborted = errors.New("request aborted: the run stopped")

// protoError is a malformed response.
type protoError struct{ msg string }

func (e *protoError) Error() string { return e.msg }

func protoErrorf(format string, args ...any) error {
	return &protoError{msg: fmt.Sprintf(format, args...)}
}

// Do performs the request once (retrying once on a fresh connection when
// a reused keep-alive connection turns out closed) and classifies the
// outcome. Latency counts from intended.
func (u *urlUser) Do(ctx context.Context, intended time.Time) Sample {
	if ctx != u.watched {
		u.watch(ctx)
	}
	timeout := u.timeout
	start := time.Now()
	status, n, err := u.roundTrip(ctx, start, timeout)
	end := time.Now()
	s := Sample{Latency: end.Sub(intended), Status: status, Bytes: n}
	switch {
	case err != nil:
		s.Err, s.Detail = classify(err)
	case end.Sub(start) > timeout:
		// The socket deadline carries some slack (see setDeadline): a
		// response later than the timeout is a timeout all the same.
		s.Err, s.Detail = ErrTimeout, "response took longer than the timeout "+timeout.String()
	case status >= 400:
		s.Err, s.Detail = ErrStatus, "HTTP status "+strconv.Itoa(status)
	}
	return s
}

// watch arranges for ctx's cancellation to abort the request in flight.
func (u *urlUser) watch(ctx context.Context) {
	if u.stopWatch != nil {
		u.stopWatch()
	}
	u.watched = ctx
	u.timeout = DefaultTimeout
	if set, ok := ctx.Value(optionsKey{}).(*runSettings); ok {
		u.timeout = set.timeout
		if u.p.timeout > 0 {
			u.timeout = min(u.timeout, u.p.timeout)
		}
	} else if u.p.timeout > 0 {
		u.timeout = u.p.timeout
	}
	u.aborted.Store(false)
	u.stopWatch = context.AfterFunc(ctx, u.abort)
}

// abort makes the blocked read or write of the request in flight fail
// now, and every later request fail at once.
func (u *urlUser) abort() {
	u.aborted.Store(true)
	u.mu.Lock()
	if u.conn != nil {
		_ = u.conn.SetDeadline(time.Unix(1, 0))
	}
	u.mu.Unlock()
}

// Close closes the connection.
func (u *urlUser) Close() error {
	if u.stopWatch != nil {
		u.stopWatch()
		u.stopWatch = nil
	}
	u.closeConn()
	return nil
}

func (u *urlUser) closeConn() {
	u.mu.Lock()
	c := u.conn
	u.conn = nil
	u.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

func (u *urlUser) dial(ctx context.Context, timeout time.Duration) error {
	addr, err := u.p.addr(ctx)
	if err != nil {
		return &dialError{err}
	}
	d := u.p.dialer
	d.Timeout = timeout
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return &dialError{err}
	}
	raw, err := newRawConn(c)
	if err != nil {
		c.Close()
		return &dialError{err}
	}
	u.mu.Lock()
	u.conn = c
	u.mu.Unlock()
	u.raw, u.rd = raw, raw
	u.r, u.w = 0, 0
	u.deadline = time.Time{}
	return nil
}

type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// setDeadline makes sure the connection's deadline is at least timeout
// after now. Moving a deadline costs a timer update in the runtime, so it
// is set timeout+timeout/8 ahead and moved only once less than timeout
// remains: a request fails at the socket between timeout and 1.125×timeout
// after it started, and Do classifies any response later than timeout
// as a timeout too.
func (u *urlUser) setDeadline(now time.Time, timeout time.Duration) error {
	if u.deadline.Sub(now) >= timeout {
		return nil
	}
	u.deadline = now.Add(timeout + timeout/8)
	if err := u.conn.SetDeadline(u.deadline); err != nil {
		return err
	}
	if u.aborted.Load() {
		return errAborted
	}
	return nil
}

// roundTrip sends the request and reads the response, returning the
// status and the response's size in bytes.
func (u *urlUser) roundTrip(ctx context.Context, start time.Time, timeout time.Duration) (int, int64, error) {
	if u.aborted.Load() {
		return 0, 0, errAborted
	}
	for attempt := 0; ; attempt++ {
		fresh := u.conn == nil
		if fresh {
			if err := u.dial(ctx, timeout); err != nil {
				return 0, 0, err
			}
			if attempt > 0 {
				start = time.Now()
			}
		}
		if err := u.setDeadline(start, timeout); err != nil {
			u.closeConn()
			return 0, 0, err
		}
		u.raw.send(u.p.req) // written by the first read of the response
		status, n, keep, err := u.readResponse()
		if err != nil {
			u.closeConn()
			if !fresh && attempt == 0 && n == 0 && retryable(err) && !u.aborted.Load() {
				continue
			}
			if u.aborted.Load() {
				err = errAborted
			}
			return status, n, err
		}
		if !keep || !u.p.keepAlive {
			u.closeConn()
		} else if u.r < u.w {
			u.closeConn()
			return status, n, protoErrorf("%d unexpected bytes after the response", u.w-u.r)
		}
		return status, n, nil
	}
}

// readResponse reads one response (after any interim 1xx ones) and
// skips its body. n counts every byte read for it; keep says whether the
// connection may carry another request. Protocol errors are *protoError;
// a connection closed before the first byte is io.EOF, later
// io.ErrUnexpectedEOF.
func (u *urlUser) readResponse() (status int, n int64, keep bool, err error) {
	p := &u.parser
	p.reset(u.p.head)
	for {
		if u.r < u.w {
			used, err := p.feed(u.buf[u.r:u.w], u.r == 0 && u.w == len(u.buf))
			u.r += used
			if err != nil {
				return p.status, p.n, false, err
			}
			if p.done() {
				return p.status, p.n, p.keep, nil
			}
		}
		switch {
		case u.r == u.w:
			u.r, u.w = 0, 0
		case u.w == len(u.buf):
			u.w = copy(u.buf, u.buf[u.r:u.w]) // an incomplete line: make room
			u.r = 0
		}
		m, err := u.rd.Read(u.buf[u.w:])
		u.w += m
		switch {
		case m > 0:
		case err == io.EOF:
			if err := p.eof(u.buf[u.r:u.w]); err != nil {
				return p.status, p.n, false, err
			}
			return p.status, p.n, false, nil
		case err != nil:
			return p.status, p.n, false, err
		default:
			return p.status, p.n, false, io.ErrNoProgress
		}
	}
}

// retryable reports whether err means a reused keep-alive connection was
// closed by the server before it read the request.
func retryable(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// classify maps an error to its kind and a short detail.
func classify(err error) (ErrKind, string) {
	var de *dialError
	var pe *protoError
	var ne net.Error
	switch {
	case errors.Is(err, errAborted):
		return ErrOther, err.Error()
	case errors.As(err, &de):
		if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			return ErrConnect, "connect timed out: " + de.Error()
		}
		return ErrConnect, de.Error()
	case errors.As(err, &pe):
		return ErrProtocol, pe.msg
	case errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return ErrTimeout, "no complete response within the timeout"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return ErrReset, "connection closed by the server before the response ended"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED):
		return ErrReset, err.Error()
	}
	return ErrOther, err.Error()
}
