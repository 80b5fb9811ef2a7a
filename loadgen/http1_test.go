package loadgen

import (
	"bytes"
	"errors"
	"github.com/stacktune/stacktune/internal/bytesconv"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// parseOne runs readResponse on raw bytes.
// readers wrap the response's reader: whole, one byte per read, and
// half of what is asked, so lines and chunks split anywhere.
var readers = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"one byte", iotest.OneByteReader},
	{"halves", iotest.HalfReader},
}

func parseOne(raw string, head bool, wrap func(io.Reader) io.Reader) (status int, n int64, keep bool, rest int, err error) {
	rd := strings.NewReader(raw)
	u := &urlUser{p: &urlWorkload{head: head}, rd: wrap(rd), buf: make([]byte, 64)}
	status, n, keep, err = u.readResponse()
	return status, n, keep, u.w - u.r + rd.Len(), err
}

func TestReadResponse(t *testing.T) {
	long := strings.Repeat("v", 300) // longer than the 64-byte test buffer
	tests := []struct {
		name   string
		raw    string
		head   bool
		status int
		keep   bool
		rest   int    // bytes left unread after the response
		err    string // "" ok, "proto", "eof", "unexpected"
	}{
		{name: "content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", status: 200, keep: true},
		{name: "content-length zero", raw: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, keep: true},
		{name: "header case and spaces", raw: "HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh:   3  \r\n\r\nabc", status: 200, keep: true},
		{name: "bare LF line ends", raw: "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", status: 200, keep: true},
		{name: "no reason phrase", raw: "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", status: 200, keep: true},
		{name: "body left for the next response", raw: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", status: 200, keep: true, rest: 5},
		{name: "chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n", status: 200, keep: true},
		{name: "chunked with trailers", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n", status: 200, keep: true},
		{name: "chunked big chunk", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n12c\r\n" + long + "\r\n0\r\n\r\n", status: 200, keep: true},
		{name: "chunked wins over content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", status: 200, keep: true},
		{name: "connection close", raw: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", status: 200, keep: false},
		{name: "connection tokens", raw: "HTTP/1.1 200 OK\r\nConnection: Upgrade, Close\r\nContent-Length: 2\r\n\r\nok", status: 200, keep: false},
		{name: "http/1.0 closes", raw: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", status: 200, keep: false},
		{name: "http/1.0 keep-alive", raw: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", status: 200, keep: true},
		{name: "body until close", raw: "HTTP/1.1 200 OK\r\n\r\n" + long, status: 200, keep: false},
		{name: "unknown coding until close", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n" + long, status: 200, keep: false},
		{name: "head ignores content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", head: true, status: 200, keep: true},
		{name: "204 has no body", raw: "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", status: 204, keep: true},
		{name: "304 has no body", raw: "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", status: 304, keep: true},
		{name: "100 continue then final", raw: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", status: 201, keep: true},
		{name: "103 early hints then final", raw: "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, keep: true},
		{name: "error status is still a response", raw: "HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy", status: 503, keep: true},
		{name: "overlong header skipped", raw: "HTTP/1.1 200 OK\r\nX-Long: " + long + "\r\nContent-Length: 2\r\n\r\nok", status: 200, keep: true},
		{name: "folded header skipped", raw: "HTTP/1.1 200 OK\r\nX-A: 1\r\n  continued\r\nContent-Length: 2\r\n\r\nok", status: 200, keep: true},
		{name: "duplicate equal content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", status: 200, keep: true},

		{name: "closed before anything", raw: "", err: "eof"},
		{name: "closed in the status line", raw: "HTTP/1.1 20", err: "unexpected"},
		{name: "closed in the headers", raw: "HTTP/1.1 200 OK\r\nContent-Le", status: 200, err: "unexpected"},
		{name: "closed in the body", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", status: 200, err: "unexpected"},
		{name: "closed in a chunk", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort", status: 200, err: "unexpected"},
		{name: "garbage", raw: "garbage\r\n\r\n", err: "proto"},
		{name: "garbage without line end", raw: "<html>", err: "proto"},
		{name: "http/2 preface", raw: "HTTP/2 200\r\n\r\n", err: "proto"},
		{name: "bad status code", raw: "HTTP/1.1 2x0 OK\r\n\r\n", err: "proto"},
		{name: "status code too long", raw: "HTTP/1.1 2000 OK\r\n\r\n", err: "proto"},
		{name: "header without colon", raw: "HTTP/1.1 200 OK\r\nnocolon\r\n\r\n", status: 200, err: "proto"},
		{name: "bad content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", status: 200, err: "proto"},
		{name: "conflicting content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", status: 200, err: "proto"},
		{name: "bad chunk size", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", status: 200, err: "proto"},
		{name: "chunk without CRLF", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX\r\n0\r\n\r\n", status: 200, err: "proto"},
		{name: "switching protocols", raw: "HTTP/1.1 101 Switching Protocols\r\n\r\n", status: 101, err: "proto"},
	}
	for _, tt := range tests {
		for _, rd := range readers {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				status, n, keep, rest, err := parseOne(tt.raw, tt.head, rd.wrap)
				var pe *protoError
				switch tt.err {
				case "":
					if err != nil {
						t.Fatalf("error %v", err)
					}
					if keep != tt.keep {
						t.Errorf("keep = %v, want %v", keep, tt.keep)
					}
					if rest != tt.rest {
						t.Errorf("%d bytes left, want %d", rest, tt.rest)
					}
					if want := int64(len(tt.raw) - tt.rest); n != want {
						t.Errorf("n = %d, want %d", n, want)
					}
				case "proto":
					if !errors.As(err, &pe) {
						t.Fatalf("error %v, want a protocol error", err)
					}
				case "eof":
					if err != io.EOF {
						t.Fatalf("error %v, want io.EOF", err)
					}
				case "unexpected":
					if err != io.ErrUnexpectedEOF {
						t.Fatalf("error %v, want io.ErrUnexpectedEOF", err)
					}
				}
				if status != tt.status {
					t.Errorf("status = %d, want %d", status, tt.status)
				}
			})
		}
	}
}

// repeater yields the same bytes forever.
type repeater struct {
	b   []byte
	off int
}

func (r *repeater) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.b[r.off:])
		n += c
		r.off = (r.off + c) % len(r.b)
	}
	return n, nil
}

func TestReadResponseAllocatesNothing(t *testing.T) {
	for _, raw := range []string{
		"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html\r\nContent-Length: 1024\r\nConnection: keep-alive\r\nETag: \"x\"\r\n\r\n" + strings.Repeat("x", 1024),
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n400\r\n" + strings.Repeat("x", 1024) + "\r\n0\r\n\r\n",
	} {
		u := &urlUser{p: &urlWorkload{}, rd: &repeater{b: []byte(raw)}, buf: make([]byte, readBufferSize)}
		allocs := testing.AllocsPerRun(1000, func() {
			if _, _, _, err := u.readResponse(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%.1f allocations per response, want 0", allocs)
		}
	}
}

func TestParseHelpers(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{{"0", 0, true}, {"ff", 255, true}, {"FF", 255, true}, {"", 0, false}, {"1g", 0, false}, {"1000000000000000", 0, false}} {
		if got, ok := parseHex([]byte(tt.in)); got != tt.want || ok != tt.ok {
			t.Errorf("parseHex(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{{"0", 0, true}, {"1024", 1024, true}, {"", 0, false}, {"+1", 0, false}, {"1 2", 0, false}, {"9999999999999999999", 0, false}} {
		if got, ok := bytesconv.ParseUint([]byte(tt.in)); got != tt.want || ok != tt.ok {
			t.Errorf("bytesconv.ParseUint(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if !bytes.Equal(trimEOL([]byte("a\r\n")), []byte("a")) || !bytes.Equal(trimEOL([]byte("a\n")), []byte("a")) {
		t.Error("trimEOL")
	}
}
