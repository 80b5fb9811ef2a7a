package fastcgi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/fcgi"
	"strings"
	"testing"
)

// TestAgainstGoServer: the client against Go's own FastCGI server
// (net/http/fcgi), which checks the records the client writes.
func TestAgainstGoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go fcgi.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		env := fcgi.ProcessEnv(r)
		if r.URL.Query().Get("status") == "404" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Script", env["SCRIPT_FILENAME"])
		fmt.Fprintf(w, "method=%s query=%s long=%d", r.Method, r.URL.RawQuery, len(env["LONG"]))
	}))
	long := strings.Repeat("x", 70000) // more than one PARAMS record, 4-byte lengths
	cases := []struct {
		name   string
		params map[string]string
		status int
		body   string
	}{
		{"a GET", map[string]string{"SCRIPT_FILENAME": "/status", "SCRIPT_NAME": "/status", "REQUEST_URI": "/status?json", "QUERY_STRING": "json"}, 200, "method=GET query=json long=0"},
		{"long params", map[string]string{"SCRIPT_FILENAME": "/x", "REQUEST_URI": "/x", "LONG": long}, 200, "method=GET query= long=70000"},
		{"a 404", map[string]string{"SCRIPT_FILENAME": "/x", "REQUEST_URI": "/x?status=404", "QUERY_STRING": "status=404"}, 404, "404 page not found\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := Get(context.Background(), "tcp", ln.Addr().String(), tc.params, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != tc.status || string(resp.Body) != tc.body {
				t.Errorf("status %d body %q, want %d %q", resp.Status, resp.Body, tc.status, tc.body)
			}
		})
	}
	if _, err := Get(context.Background(), "tcp", ln.Addr().String(), map[string]string{"SCRIPT_FILENAME": "/x", "REQUEST_URI": "/x", "QUERY_STRING": "q"}, Options{MaxBody: 5}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a body over the limit: %v", err)
	}
}

func TestReadResponseBad(t *testing.T) {
	rec := func(typ byte, content string) string {
		var b bytes.Buffer
		writeRecord(&b, typ, []byte(content))
		return b.String()
	}
	end := rec(typeEnd, "\x00\x00\x00\x00\x00\x00\x00\x00")
	cases := []struct{ name, in, want string }{
		{"cut short", rec(typeStdout, "Status: 200\r\n\r\nok")[:10], "unexpected EOF"},
		{"no END_REQUEST", rec(typeStdout, "Status: 200\r\n\r\nok"), "unexpected EOF"},
		{"bad version", "\x02" + rec(typeStdout, "x")[1:], "version 2"},
		{"no end of headers", rec(typeStdout, "Status: 200") + end, "without the end of its headers"},
		{"bad status", rec(typeStdout, "Status: abc\r\n\r\n") + end, "Status header"},
		{"short END_REQUEST", rec(typeStdout, "\r\n\r\n") + rec(typeEnd, "\x00"), "END_REQUEST of 1 bytes"},
		{"overloaded", rec(typeStdout, "\r\n\r\n") + rec(typeEnd, "\x00\x00\x00\x00\x02\x00\x00\x00"), "protocol status 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadResponse(strings.NewReader(tc.in), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
	resp, err := ReadResponse(strings.NewReader(rec(typeStderr, "PHP Warning")+rec(typeStdout, "Content-Type: text/plain\r\n\r\npong")+end), Options{})
	if err != nil || string(resp.Body) != "pong" || resp.Stderr != "PHP Warning" || resp.Status != 200 {
		t.Errorf("%+v %v", resp, err)
	}
}

func FuzzReadResponse(f *testing.F) {
	var b bytes.Buffer
	writeRecord(&b, typeStdout, []byte("Status: 200 OK\r\nContent-Type: application/json\r\n\r\n{}"))
	writeRecord(&b, typeEnd, make([]byte, 8))
	f.Add(b.Bytes())
	f.Add([]byte("\x01\x06\x00\x01\xff\xff\x00\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		resp, err := ReadResponse(bytes.NewReader(in), Options{MaxBody: 1 << 10})
		if err == nil && (resp == nil || len(resp.Body) > 1<<10) {
			t.Fatalf("%+v", resp)
		}
	})
}
