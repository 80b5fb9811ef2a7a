package loadgen

import (
	"bytes"
	"github.com/stacktune/stacktune/internal/bytesconv"
	"io"
	"strconv"
)

// maxHeaderBytes bounds a response's status line and headers.
const maxHeaderBytes = 1 << 20

// Parser states.
const (
	stStatus     = iota // status line
	stHeaders           // header lines, up to the empty line
	stBody              // Content-Length body: remaining bytes
	stChunkSize         // chunk-size line
	stChunkData         // chunk data: remaining bytes
	stChunkCRLF         // the CRLF after chunk data
	stTrailers          // trailer lines, up to the empty line
	stUntilClose        // body delimited by the connection's close
	stDone
)

// respParser reads one HTTP/1.x response incrementally from whatever
// bytes are available, without allocating: the caller feeds it the
// unparsed bytes of its buffer and keeps whatever it did not consume
// (an incomplete line) for the next feed. Bodies are skipped, never
// copied. It is used both by the goroutine users and by the event loops.
type respParser struct {
	head bool // the request was HEAD: no body whatever the headers say

	state         int
	status        int
	n             int64 // bytes consumed for this response
	headerBytes   int64
	remaining     int64
	contentLength int64
	http10        bool
	chunked       bool
	otherCoding   bool
	connClose     bool
	connKeep      bool
	skipping      bool // inside an overlong line, dropping bytes up to its end
	keep          bool // the connection may carry another request (once done)
}

// reset prepares the parser for the next response.
func (p *respParser) reset(head bool) {
	*p = respParser{head: head, contentLength: -1}
}

// done reports whether the response is complete.
func (p *respParser) done() bool { return p.state == stDone }

// feed consumes bytes of b and returns how many. full says that b fills
// the caller's whole buffer, so an incomplete line can never complete: its
// start is then taken as the line and the rest of it skipped. feed stops
// at the end of the response (p.done()).
func (p *respParser) feed(b []byte, full bool) (int, error) {
	used := 0
	for used < len(b) && p.state != stDone {
		rest := b[used:]
		switch p.state {
		case stBody, stChunkData:
			k := int(min(int64(len(rest)), p.remaining))
			used += k
			p.n += int64(k)
			p.remaining -= int64(k)
			if p.remaining == 0 {
				if p.state == stBody {
					p.state = stDone
				} else {
					p.state = stChunkCRLF
				}
			}
			continue
		case stUntilClose:
			used += len(rest)
			p.n += int64(len(rest))
			continue
		}
		// Line states.
		i := bytes.IndexByte(rest, '\n')
		if p.skipping {
			if i < 0 {
				used += len(rest)
				p.n += int64(len(rest))
				if err := p.countHeader(len(rest)); err != nil {
					return used, err
				}
				continue
			}
			used += i + 1
			p.n += int64(i + 1)
			p.skipping = false
			if err := p.countHeader(i + 1); err != nil {
				return used, err
			}
			continue
		}
		var line []byte
		if i < 0 {
			if !full || used > 0 {
				// Wait for the rest of the line (after a compaction,
				// when used > 0, it may fit).
				return used, nil
			}
			line = rest // an overlong line: take its start, skip the rest
			p.skipping = true
			used += len(rest)
			p.n += int64(len(rest))
			if err := p.countHeader(len(rest)); err != nil {
				return used, err
			}
		} else {
			line = rest[:i+1]
			used += i + 1
			p.n += int64(i + 1)
			if err := p.countHeader(i + 1); err != nil {
				return used, err
			}
		}
		if err := p.line(trimEOL(line)); err != nil {
			return used, err
		}
	}
	return used, nil
}

// countHeader bounds the bytes of status and header lines.
func (p *respParser) countHeader(k int) error {
	if p.state != stStatus && p.state != stHeaders {
		return nil
	}
	p.headerBytes += int64(k)
	if p.headerBytes > maxHeaderBytes {
		return protoErrorf("response headers longer than %d bytes", maxHeaderBytes)
	}
	return nil
}

// line handles one complete line (without its line end) in a line state.
func (p *respParser) line(line []byte) error {
	switch p.state {
	case stStatus:
		// HTTP/1.x SP 3DIGIT [SP reason]
		if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
			!isDigit(line[7]) || !isDigit(line[9]) || !isDigit(line[10]) || !isDigit(line[11]) ||
			(len(line) > 12 && line[12] != ' ') {
			return protoErrorf("malformed status line %s", quote(line))
		}
		p.status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
		p.http10 = line[7] == '0'
		p.contentLength, p.chunked, p.otherCoding, p.connClose, p.connKeep = -1, false, false, false, false
		p.state = stHeaders
	case stHeaders:
		if len(line) == 0 {
			return p.endHeaders()
		}
		return p.header(line)
	case stChunkSize:
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, ok := parseHex(bytesconv.TrimBlanks(line))
		if !ok {
			return protoErrorf("bad chunk size %s", quote(line))
		}
		if size == 0 {
			p.state = stTrailers
		} else {
			p.remaining, p.state = size, stChunkData
		}
	case stChunkCRLF:
		if len(line) != 0 {
			return protoErrorf("chunk not followed by CRLF")
		}
		p.state = stChunkSize
	case stTrailers:
		if len(line) == 0 {
			p.state = stDone
		}
	}
	return nil
}

// header handles one header line.
func (p *respParser) header(line []byte) error {
	if line[0] == ' ' || line[0] == '\t' {
		return nil // obsolete line folding: a continuation of a header we skip
	}
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return protoErrorf("malformed header line %s", quote(line))
	}
	name, value := line[:colon], bytesconv.TrimBlanks(line[colon+1:])
	switch len(name) {
	case len("content-length"):
		if !equalFold(name, "content-length") {
			return nil
		}
		v, ok := bytesconv.ParseUint(value)
		if !ok || (p.contentLength >= 0 && v != p.contentLength) {
			return protoErrorf("bad Content-Length %s", quote(value))
		}
		p.contentLength = v
	case len("transfer-encoding"):
		if !equalFold(name, "transfer-encoding") {
			return nil
		}
		// chunked must be the last coding; anything else is delimited by
		// the connection's close.
		last := value
		if i := bytes.LastIndexByte(value, ','); i >= 0 {
			last = bytesconv.TrimBlanks(value[i+1:])
		}
		if equalFold(last, "chunked") {
			p.chunked = true
		} else {
			p.otherCoding = true
		}
	case len("connection"):
		if !equalFold(name, "connection") {
			return nil
		}
		for v := value; len(v) > 0; {
			tok := v
			if i := bytes.IndexByte(v, ','); i >= 0 {
				tok, v = v[:i], v[i+1:]
			} else {
				v = nil
			}
			tok = bytesconv.TrimBlanks(tok)
			switch {
			case equalFold(tok, "close"):
				p.connClose = true
			case equalFold(tok, "keep-alive"):
				p.connKeep = true
			}
		}
	}
	return nil
}

// endHeaders decides how the body is delimited.
func (p *respParser) endHeaders() error {
	if p.status == 101 {
		return protoErrorf("unexpected 101 Switching Protocols")
	}
	if p.status >= 100 && p.status < 200 {
		p.state = stStatus // interim response: the final one follows
		return nil
	}
	p.keep = !p.connClose && (!p.http10 || p.connKeep)
	switch {
	case p.head || p.status == 204 || p.status == 304:
		p.state = stDone // no body whatever the headers say
	case p.chunked && !p.otherCoding:
		p.state = stChunkSize
	case p.contentLength >= 0 && !p.chunked && !p.otherCoding:
		p.remaining = p.contentLength
		p.state = stBody
		if p.remaining == 0 {
			p.state = stDone
		}
	default:
		p.state = stUntilClose
		p.keep = false
	}
	return nil
}

// eof is called when the connection ended (rest holds the bytes not
// consumed): a body delimited by the close is then complete; otherwise
// the response was cut (io.EOF when nothing of it arrived, which is what a
// stale keep-alive connection looks like; io.ErrUnexpectedEOF after), or
// was not HTTP.
func (p *respParser) eof(rest []byte) error {
	switch {
	case p.state == stUntilClose:
		p.state = stDone
		return nil
	case p.state == stDone:
		return nil
	case p.state == stStatus && p.n == 0 && len(rest) == 0:
		return io.EOF
	case p.state == stStatus && p.n == 0 && !isHTTPPrefix(rest):
		return protoErrorf("malformed status line %s", quote(rest))
	}
	return io.ErrUnexpectedEOF
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
