package fastcgi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Record types and the responder role (FastCGI 1.0 specification).
const (
	version1     = 1
	typeBegin    = 1
	typeAbort    = 2
	typeEnd      = 3
	typeParams   = 4
	typeStdin    = 5
	typeStdout   = 6
	typeStderr   = 7
	roleResponer = 1
	requestID    = 1
	maxContent   = 65535
)

// Limits of a response.
const (
	// DefaultMaxBody bounds a response body (stdout) when Options.MaxBody
	// is 0.
	DefaultMaxBody = 16 << 20
	// maxStderr bounds what is kept of the application's stderr.
	maxStderr = 64 << 10
	// DefaultTimeout bounds an exchange whose context has no deadline.
	DefaultTimeout = 10 * time.Second
)

// Response is a CGI response.
type Response struct {
	// Status is the Status header's code (200 when the response has none).
	Status int
	Header textproto.MIMEHeader
	Body   []byte
	// Stderr is what the application wrote to its error stream (at most
	// 64 KiB).
	Stderr string
	// AppStatus is the application's exit status from END_REQUEST.
	AppStatus uint32
}

// Options of a request.
type Options struct {
	// MaxBody bounds the body; 0 means DefaultMaxBody.
	MaxBody int
}

// ErrTooLarge is returned for a response body over the limit.
var ErrTooLarge = errors.New("fastcgi: response body too large")

// Get sends one request with params (SCRIPT_FILENAME, QUERY_STRING, ...;
// REQUEST_METHOD defaults to GET) to the FastCGI server at network/addr
// and returns its response.
func Get(ctx context.Context, network, addr string, params map[string]string, opt Options) (*Response, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(DefaultTimeout)
	}
	d := net.Dialer{Deadline: dl}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(dl); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := writeRequest(conn, params); err != nil {
		return nil, fmt.Errorf("fastcgi: sending the request: %w", err)
	}
	return ReadResponse(bufio.NewReader(conn), opt)
}

// writeRequest writes BEGIN_REQUEST, the params and an empty stdin.
func writeRequest(w io.Writer, params map[string]string) error {
	var buf bytes.Buffer
	begin := []byte{0, roleResponer, 0, 0, 0, 0, 0, 0}
	writeRecord(&buf, typeBegin, begin)
	p := map[string]string{"REQUEST_METHOD": "GET", "GATEWAY_INTERFACE": "CGI/1.1", "SERVER_PROTOCOL": "HTTP/1.1"}
	for k, v := range params {
		p[k] = v
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var pb bytes.Buffer
	for _, k := range keys {
		writeLength(&pb, len(k))
		writeLength(&pb, len(p[k]))
		pb.WriteString(k)
		pb.WriteString(p[k])
	}
	for b := pb.Bytes(); len(b) > 0; {
		n := min(len(b), maxContent)
		writeRecord(&buf, typeParams, b[:n])
		b = b[n:]
	}
	writeRecord(&buf, typeParams, nil)
	writeRecord(&buf, typeStdin, nil)
	_, err := w.Write(buf.Bytes())
	return err
}

func writeRecord(b *bytes.Buffer, typ byte, content []byte) {
	pad := (8 - len(content)%8) % 8
	h := [8]byte{version1, typ, 0, requestID}
	binary.BigEndian.PutUint16(h[4:], uint16(len(content)))
	h[6] = byte(pad)
	b.Write(h[:])
	b.Write(content)
	b.Write(make([]byte, pad))
}

// writeLength writes a name-value pair length: one byte below 128, else
// four with the high bit set.
func writeLength(b *bytes.Buffer, n int) {
	if n < 128 {
		b.WriteByte(byte(n))
		return
	}
	var x [4]byte
	binary.BigEndian.PutUint32(x[:], uint32(n)|1<<31)
	b.Write(x[:])
}

// ReadResponse reads records up to END_REQUEST and parses the CGI
// response in the stdout stream.
func ReadResponse(r io.Reader, opt Options) (*Response, error) {
	maxBody := opt.MaxBody
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	var out, errs bytes.Buffer
	var h [8]byte
	content := make([]byte, maxContent+255)
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("fastcgi: reading a record: %w", err)
		}
		if h[0] != version1 {
			return nil, fmt.Errorf("fastcgi: record version %d, not 1", h[0])
		}
		n := int(binary.BigEndian.Uint16(h[4:])) + int(h[6])
		c := content[:n]
		if _, err := io.ReadFull(r, c); err != nil {
			return nil, fmt.Errorf("fastcgi: reading a record's content: %w", err)
		}
		c = c[:binary.BigEndian.Uint16(h[4:])]
		switch h[1] {
		case typeStdout:
			if out.Len()+len(c) > maxBody+64<<10 { // the headers come first
				return nil, ErrTooLarge
			}
			out.Write(c)
		case typeStderr:
			if errs.Len() < maxStderr {
				errs.Write(c[:min(len(c), maxStderr-errs.Len())])
			}
		case typeEnd:
			if len(c) < 8 {
				return nil, fmt.Errorf("fastcgi: END_REQUEST of %d bytes", len(c))
			}
			resp, err := parseCGI(out.Bytes(), maxBody)
			if err != nil {
				return nil, err
			}
			resp.Stderr = errs.String()
			resp.AppStatus = binary.BigEndian.Uint32(c[:4])
			if proto := c[4]; proto != 0 {
				return resp, fmt.Errorf("fastcgi: request not completed (protocol status %d)", proto)
			}
			return resp, nil
		default:
			// Unknown record types are skipped (the specification's
			// management records do not come to a responder request).
		}
	}
}

// parseCGI splits a CGI response into its headers and body.
func parseCGI(b []byte, maxBody int) (*Response, error) {
	head, body, ok := bytes.Cut(b, []byte("\r\n\r\n"))
	if !ok {
		head, body, ok = bytes.Cut(b, []byte("\n\n"))
	}
	if !ok {
		return nil, fmt.Errorf("fastcgi: a response without the end of its headers (%d bytes)", len(b))
	}
	if len(body) > maxBody {
		return nil, ErrTooLarge
	}
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(append([]byte{}, head...), "\r\n\r\n"...))))
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("fastcgi: response headers: %w", err)
	}
	resp := &Response{Status: 200, Header: hdr, Body: append([]byte{}, body...)}
	if s := hdr.Get("Status"); s != "" {
		code, _, _ := strings.Cut(strings.TrimSpace(s), " ")
		n, err := strconv.Atoi(code)
		if err != nil || n < 100 || n > 999 {
			return nil, fmt.Errorf("fastcgi: Status header %q", s)
		}
		resp.Status = n
	}
	return resp, nil
}
