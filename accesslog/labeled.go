package accesslog

import (
	"bytes"
	"github.com/stacktune/stacktune/internal/bytesconv"
	"github.com/stacktune/stacktune/internal/skip"
	"unicode/utf8"
)

// Value kinds of a labeled field. LTSV values are all strings; JSON values
// keep their JSON type.
const (
	vString uint8 = 1 + iota
	vNumber
	vNull
	vOther // true, false, an object or an array
)

// slot is the value chosen for one Record field from a labeled line. When
// several labels feed the same field, the one with the highest prio wins.
type slot struct {
	v    []byte
	prio int8
	kind uint8
	esc  bool // a JSON string with escapes still in v
	form byte // how to read it (time: 'l', 'i', 'e', 'a'; request time: 's', 'u')
}

func (s *slot) put(v []byte, kind uint8, esc bool, prio int8, form byte) {
	if prio > s.prio {
		*s = slot{v: v, prio: prio, kind: kind, esc: esc, form: form}
	}
}

// fieldSet gathers the fields of one LTSV or JSON line by label.
type fieldSet struct {
	time, request, method, uri, args, status, bytes, reqtime, upstream slot
	client, agent, reqlength                                           slot
}

// put files value v under label. The labels are the union of those of
// ltsv.org, alp, and the nginx escape=json formats in common use; see the
// package documentation.
func (f *fieldSet) put(label, v []byte, kind uint8, esc bool) {
	switch string(label) {
	case "msec":
		f.time.put(v, kind, esc, 6, 'e')
	case "time_iso8601":
		f.time.put(v, kind, esc, 5, 'i')
	case "time_local":
		f.time.put(v, kind, esc, 4, 'l')
	case "time":
		f.time.put(v, kind, esc, 3, 'a')
	case "@timestamp":
		f.time.put(v, kind, esc, 2, 'a')
	case "timestamp":
		f.time.put(v, kind, esc, 1, 'a')
	case "request", "req":
		f.request.put(v, kind, esc, 1, 0)
	case "method", "request_method":
		f.method.put(v, kind, esc, 1, 0)
	case "request_uri":
		f.uri.put(v, kind, esc, 3, 0)
	case "uri":
		f.uri.put(v, kind, esc, 2, 'p')
	case "path":
		f.uri.put(v, kind, esc, 1, 'p')
	case "args", "query_string":
		f.args.put(v, kind, esc, 1, 0)
	case "status":
		f.status.put(v, kind, esc, 1, 0)
	case "body_bytes_sent", "body_bytes":
		f.bytes.put(v, kind, esc, 3, 0)
	case "size", "bytes":
		f.bytes.put(v, kind, esc, 2, 0)
	case "bytes_sent":
		f.bytes.put(v, kind, esc, 1, 0)
	case "request_time", "reqtime":
		f.reqtime.put(v, kind, esc, 2, 's')
	case "reqtime_microsec":
		f.reqtime.put(v, kind, esc, 1, 'u')
	case "upstream_response_time", "apptime", "upstream_time":
		f.upstream.put(v, kind, esc, 1, 0)
	case "remote_addr", "host", "client", "remote_ip":
		f.client.put(v, kind, esc, 1, 0)
	case "http_user_agent", "ua", "user_agent", "useragent":
		f.agent.put(v, kind, esc, 1, 0)
	case "request_length", "reqsize":
		f.reqlength.put(v, kind, esc, 1, 0)
	}
}

// labeledParser holds what the LTSV and JSON parsers share.
type labeledParser struct {
	tc  timeCache
	buf []byte
}

// text returns a string slot's text, JSON escapes decoded into p.buf.
func (p *labeledParser) text(s *slot) ([]byte, bool) {
	if !s.esc {
		return s.v, true
	}
	start := len(p.buf)
	var ok bool
	p.buf, ok = appendUnescaped(p.buf, s.v)
	if !ok {
		p.buf = p.buf[:start]
		return nil, false
	}
	return p.buf[start:len(p.buf):len(p.buf)], true
}

// scalar returns the text of a number or string slot, and false when it is
// absent (missing, null, "" or "-"). bad is set for a value of the wrong
// type.
func (p *labeledParser) scalar(s *slot) (v []byte, ok, bad bool) {
	switch s.kind {
	case 0, vNull:
		return nil, false, false
	case vOther:
		return nil, false, true
	}
	v, good := p.text(s)
	if !good {
		return nil, false, true
	}
	if absent(v) {
		return nil, false, false
	}
	return v, true, false
}

// record fills r from f.
func (p *labeledParser) record(f *fieldSet, r *Record) skip.Reason {
	if v, ok, bad := p.scalar(&f.time); bad {
		return ReasonTime
	} else if ok {
		var good bool
		switch {
		case f.time.kind == vNumber || f.time.form == 'e':
			r.Time, good = epoch(v, 1)
		case f.time.form == 'l':
			if len(v) == 28 && v[0] == '[' && v[27] == ']' {
				v = v[1:27]
			}
			r.Time, good = p.tc.local(v)
		case f.time.form == 'i':
			r.Time, good = p.tc.iso(v)
		default:
			r.Time, good = p.tc.anyTime(v)
		}
		if !good {
			return ReasonTime
		}
		r.Has |= HasTime
	}
	if v, ok, bad := p.scalar(&f.request); bad {
		return ReasonRequest
	} else if ok {
		m, u, good := splitRequest(v)
		if !good {
			return ReasonRequest
		}
		r.Method, r.URI = m, u
	} else if f.request.kind == vString && f.method.kind == 0 && f.uri.kind == 0 {
		return ReasonRequest // "req":"-" and nothing else says what was asked
	}
	if v, ok, bad := p.scalar(&f.method); bad || ok && !isToken(v) {
		return ReasonRequest
	} else if ok {
		r.Method = v
	}
	if v, ok, bad := p.scalar(&f.uri); bad {
		return ReasonRequest
	} else if ok {
		if f.uri.form == 'p' {
			if a, ok, _ := p.scalar(&f.args); ok {
				start := len(p.buf)
				p.buf = append(append(append(p.buf, v...), '?'), a...)
				v = p.buf[start:len(p.buf):len(p.buf)]
			}
		}
		r.URI = v
	}
	if len(r.URI) == 0 {
		return ReasonMissingField
	}
	if v, ok, bad := p.scalar(&f.status); bad {
		return ReasonStatus
	} else if ok {
		st, good := parseStatus(v)
		if !good {
			return ReasonStatus
		}
		r.Status, r.Has = st, r.Has|HasStatus
	}
	if v, ok, bad := p.scalar(&f.bytes); bad {
		return ReasonBytes
	} else if ok {
		n, good := bytesconv.ParseUint(v)
		if !good {
			return ReasonBytes
		}
		r.BodyBytes, r.Has = n, r.Has|HasBytes
	}
	if v, ok, bad := p.scalar(&f.reqtime); bad {
		return ReasonRequestTime
	} else if ok {
		t, good := bytesconv.ParseSeconds(v)
		if !good {
			return ReasonRequestTime
		}
		if f.reqtime.form == 'u' {
			t /= 1e6
		}
		r.RequestTime, r.Has = t, r.Has|HasRequestTime
	}
	if v, ok, bad := p.scalar(&f.reqlength); bad {
		return ReasonReqLength
	} else if ok {
		n, good := bytesconv.ParseUint(v)
		if !good {
			return ReasonReqLength
		}
		r.RequestLength, r.Has = n, r.Has|HasRequestLength
	}
	if v, ok := p.text(&f.client); ok && f.client.kind == vString && !absent(v) {
		r.Client = v
	}
	if v, ok := p.text(&f.agent); ok && f.agent.kind == vString && !absent(v) {
		r.UserAgent = v
	}
	if v, ok, bad := p.scalar(&f.upstream); bad {
		return ReasonUpstreamTime
	} else if ok {
		sum, n, good := sumUpstream(v)
		if !good {
			return ReasonUpstreamTime
		}
		if n > 0 {
			r.UpstreamTime, r.Has = sum, r.Has|HasUpstreamTime
		}
	}
	return skip.Reason{}
}

// appendUnescaped appends the JSON string body src (without its quotes)
// to dst with its escapes decoded. It returns false for an invalid escape.
// A \u escape of a lone surrogate becomes U+FFFD, as encoding/json does.
func appendUnescaped(dst, src []byte) ([]byte, bool) {
	for len(src) > 0 {
		i := bytes.IndexByte(src, '\\')
		if i < 0 {
			return append(dst, src...), true
		}
		dst = append(dst, src[:i]...)
		src = src[i:]
		if len(src) < 2 {
			return dst, false
		}
		switch c := src[1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(src[2:])
			if !ok {
				return dst, false
			}
			src = src[6:]
			if r >= 0xD800 && r < 0xDC00 {
				if len(src) >= 6 && src[0] == '\\' && src[1] == 'u' {
					if r2, ok := hex4(src[2:]); ok && r2 >= 0xDC00 && r2 < 0xE000 {
						r = (r-0xD800)<<10 + (r2 - 0xDC00) + 0x10000
						src = src[6:]
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			} else if r >= 0xDC00 && r < 0xE000 {
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return dst, false
		}
		src = src[2:]
	}
	return dst, true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
