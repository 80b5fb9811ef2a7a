package loadgen

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"strconv"
)

// maxHeaderBytes bounds a response's status line and headers.
const maxHeaderBytes = 1 << 20

// readResponse reads one response from u.br (after any interim 1xx
// responses) and discards its body, without allocating. n counts every
// byte read for it; keep says whether the connection may carry another
// request. Protocol errors are *protoError; a connection closed before the
// first byte is io.EOF, later io.ErrUnexpectedEOF.
func (u *urlUser) readResponse() (status int, n int64, keep bool, err error) {
	for {
		line, ln, err := u.readLine()
		n += ln
		if err != nil {
			if ln > 0 && err == io.EOF {
				if !isHTTPPrefix(line) {
					return 0, n, false, protoErrorf("malformed status line %s", quote(line))
				}
				err = io.ErrUnexpectedEOF
			}
			return 0, n, false, err
		}
		line = trimEOL(line)
		// HTTP/1.x SP 3DIGIT [SP reason]
		if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
			!isDigit(line[7]) || !isDigit(line[9]) || !isDigit(line[10]) || !isDigit(line[11]) ||
			(len(line) > 12 && line[12] != ' ') {
			return 0, n, false, protoErrorf("malformed status line %s", quote(line))
		}
		status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
		http10 := line[7] == '0'

		contentLength := int64(-1)
		chunked, otherCoding, connClose, connKeep := false, false, false, false
		for {
			line, ln, err := u.readLine()
			n += ln
			if err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return status, n, false, err
			}
			if n > maxHeaderBytes {
				return status, n, false, protoErrorf("response headers longer than %d bytes", maxHeaderBytes)
			}
			line = trimEOL(line)
			if len(line) == 0 {
				break
			}
			if line[0] == ' ' || line[0] == '\t' {
				continue // obsolete line folding: a continuation of a header we skip
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 {
				return status, n, false, protoErrorf("malformed header line %s", quote(line))
			}
			name, value := line[:colon], trimSpace(line[colon+1:])
			switch len(name) {
			case len("content-length"):
				if !equalFold(name, "content-length") {
					continue
				}
				v, ok := parseDecimal(value)
				if !ok || (contentLength >= 0 && v != contentLength) {
					return status, n, false, protoErrorf("bad Content-Length %s", quote(value))
				}
				contentLength = v
			case len("transfer-encoding"):
				if !equalFold(name, "transfer-encoding") {
					continue
				}
				// chunked must be the last coding; anything else is
				// delimited by the connection's close.
				last := value
				if i := bytes.LastIndexByte(value, ','); i >= 0 {
					last = trimSpace(value[i+1:])
				}
				if equalFold(last, "chunked") {
					chunked = true
				} else {
					otherCoding = true
				}
			case len("connection"):
				if !equalFold(name, "connection") {
					continue
				}
				forEachToken(value, func(tok []byte) {
					switch {
					case equalFold(tok, "close"):
						connClose = true
					case equalFold(tok, "keep-alive"):
						connKeep = true
					}
				})
			}
		}
		if status == 101 {
			return status, n, false, protoErrorf("unexpected 101 Switching Protocols")
		}
		if status >= 100 && status < 200 {
			continue // interim response: the final one follows
		}
		keep = !connClose && (!http10 || connKeep)
		switch {
		case u.p.head || status == 204 || status == 304:
			// no body whatever the headers say
		case chunked && !otherCoding:
			m, err := u.discardChunked()
			n += m
			if err != nil {
				return status, n, false, err
			}
		case contentLength >= 0 && !chunked && !otherCoding:
			m, err := u.br.Discard(int(contentLength))
			n += int64(m)
			if err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return status, n, false, err
			}
		default: // delimited by the server closing the connection
			m, err := u.br.Discard(math.MaxInt)
			n += int64(m)
			if err != io.EOF {
				return status, n, false, err
			}
			keep = false
		}
		return status, n, keep, nil
	}
}

// discardChunked discards a chunked body and its trailers.
func (u *urlUser) discardChunked() (n int64, err error) {
	eof := func(err error) error {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	for {
		line, ln, err := u.readLine()
		n += ln
		if err != nil {
			return n, eof(err)
		}
		line = trimEOL(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, ok := parseHex(trimSpace(line))
		if !ok {
			return n, protoErrorf("bad chunk size %s", quote(line))
		}
		if size == 0 {
			for { // trailers, up to the empty line
				line, ln, err := u.readLine()
				n += ln
				if err != nil {
					return n, eof(err)
				}
				if len(trimEOL(line)) == 0 {
					return n, nil
				}
			}
		}
		m, err := u.br.Discard(int(size))
		n += int64(m)
		if err != nil {
			return n, eof(err)
		}
		line, ln, err = u.readLine()
		n += ln
		if err != nil {
			return n, eof(err)
		}
		if len(trimEOL(line)) != 0 {
			return n, protoErrorf("chunk not followed by CRLF")
		}
	}
}

// readLine returns the next line (with its line end) and the bytes it
// took. A line longer than the buffer is consumed whole; only its start
// (up to len(u.scratch) bytes) is returned.
func (u *urlUser) readLine() ([]byte, int64, error) {
	line, err := u.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, int64(len(line)), err
	}
	k := copy(u.scratch[:], line)
	total := int64(len(line))
	for err == bufio.ErrBufferFull && total <= maxHeaderBytes {
		line, err = u.br.ReadSlice('\n')
		total += int64(len(line))
	}
	if err == bufio.ErrBufferFull {
		return u.scratch[:k], total, protoErrorf("response line longer than %d bytes", maxHeaderBytes)
	}
	return u.scratch[:k], total, err
}

func trimEOL(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
		if len(b) > 0 && b[len(b)-1] == '\r' {
			b = b[:len(b)-1]
		}
	}
	return b
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// equalFold compares b with the lower-case ASCII s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// forEachToken calls f with each comma-separated, trimmed token of v.
func forEachToken(v []byte, f func([]byte)) {
	for len(v) > 0 {
		i := bytes.IndexByte(v, ',')
		if i < 0 {
			f(trimSpace(v))
			return
		}
		f(trimSpace(v[:i]))
		v = v[i+1:]
	}
}

// parseDecimal parses a non-negative decimal of at most 18 digits.
func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// parseHex parses a chunk size of at most 15 hex digits.
func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | int64(c)
	}
	return v, true
}

// isHTTPPrefix reports whether b could be the start of a status line.
func isHTTPPrefix(b []byte) bool {
	const p = "HTTP/1."
	if len(b) < len(p) {
		return string(b) == p[:len(b)]
	}
	return string(b[:len(p)]) == p
}

// quote renders the start of b for an error detail.
func quote(b []byte) string {
	const max = 40
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}
