package accesslog

import (
	"bytes"
	"github.com/stacktune/stacktune/internal/bytesconv"
	"github.com/stacktune/stacktune/internal/skip"
	"time"
)

// role is what a compiled variable does with its value.
type role uint8

const (
	rLit         role = iota // a literal to match, not a variable
	rSkip                    // consumed and ignored
	rRequest                 // "GET /path HTTP/1.1"
	rMethod                  // $request_method, %m
	rURI                     // $request_uri, $uri, %U
	rPathArgs                // $uri?$args, $uri$is_args$args, %U%q
	rStatus                  // $status, %>s
	rBytes                   // $body_bytes_sent, %B: "-" is absent
	rBytesCLF                // Apache %b: "-" is 0
	rSeconds                 // $request_time: "0.123"
	rMillis                  // %{ms}T
	rMicros                  // %D, %{us}T
	rSecondsInt              // %T
	rUpstream                // $upstream_response_time list, summed
	rTimeLocal               // "10/Oct/2000:13:55:36 -0700"
	rTimeBracket             // Apache %t: "[10/Oct/2000:13:55:36 -0700]"
	rTimeISO                 // $time_iso8601
	rEpoch                   // $msec, %{sec}t
	rEpochMs                 // %{msec}t
	rEpochUs                 // %{usec}t
	rClient                  // $remote_addr, %h, %a
	rAgent                   // $http_user_agent, %{User-Agent}i
	rReqLength               // $request_length, %I
)

// shape says how a value's end is found when its own form matters more than
// the next delimiter: a $time_local holds a space, an upstream list holds
// ", " and " : ".
type shape uint8

const (
	sPlain   shape = iota
	sLocal         // exactly 26 bytes when followed by a space
	sBracket       // "[" ... "]"
	sList          // "a, b : c"
)

// Flags of a variable item.
const (
	fSetMethod uint8 = 1 << iota // rRequest: set Method
	fSetURI                      // rRequest: set URI
	fArgsQ                       // rPathArgs: "$uri?$args" (drop "?-" and "?")
	fIsArgs                      // rPathArgs: "$uri$is_args$args" (drop a lone "-")
	fMillis                      // rSeconds: only nginx's own form, "0.123" (for Detect)
)

// item is one step of a compiled format: a literal or a variable.
type item struct {
	role   role
	shape  shape
	flags  uint8
	lit    []byte // the literal (role rLit)
	next   []byte // variables: the literal after it; nil when a variable or the end follows
	last   bool   // variables: nothing follows, or only the format's final literal
	quoted bool   // variables: enclosed in '"': it ends at the first unescaped quote
	weak   bool   // a lesser source of its field ($uri, $bytes_sent, %O)
}

// seqParser matches a line against a compiled sequence of literals and
// variables: each variable takes the bytes up to the literal after it. It
// is the engine of the nginx and Apache formats.
type seqParser struct {
	name  string
	items []item // shared between clones, never modified after compile
	has   Field
	json  bool // values are JSON-escaped (nginx escape=json)
	tc    timeCache
	buf   []byte // decoded values
}

func (s *seqParser) Format() string { return s.name }

func (s *seqParser) fields() Field { return s.has }

func (s *seqParser) Clone() Parser {
	return &seqParser{name: s.name, items: s.items, has: s.has, json: s.json}
}

// Parse implements Parser.
func (s *seqParser) Parse(line []byte, r *Record) (bool, skip.Reason) {
	*r = Record{Offset: r.Offset}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) == 0 {
		return false, ReasonEmpty
	}
	if bytes.IndexByte(line, 0) >= 0 {
		return false, ReasonBinary
	}
	s.buf = s.buf[:0]
	p := 0
	matched := false // a literal has matched: later failures mean a truncated line
	for i := range s.items {
		it := &s.items[i]
		if it.role == rLit {
			if !bytes.HasPrefix(line[p:], it.lit) {
				return false, litFailure(line[p:], it.lit, matched)
			}
			p += len(it.lit)
			matched = true
			continue
		}
		end, reason := scanValue(line, p, it, matched)
		if !reason.IsZero() {
			return false, reason
		}
		if reason := s.set(it, line[p:end], r); !reason.IsZero() {
			return false, reason
		}
		p = end
	}
	if p != len(line) {
		return false, ReasonMismatch
	}
	return true, skip.Reason{}
}

// litFailure names why literal lit does not match at the start of rest.
func litFailure(rest, lit []byte, matched bool) skip.Reason {
	if matched && len(rest) < len(lit) && bytes.HasPrefix(lit, rest) {
		return ReasonTruncated
	}
	return ReasonMismatch
}

// scanValue finds the end of the variable it starting at line[p].
func scanValue(line []byte, p int, it *item, matched bool) (int, skip.Reason) {
	notFound := ReasonMismatch
	if matched {
		notFound = ReasonTruncated
	}
	if it.next == nil {
		if it.last {
			return len(line), skip.Reason{}
		}
		// Another variable follows directly: split at the next space.
		if i := bytes.IndexByte(line[p:], ' '); i >= 0 {
			return p + i, skip.Reason{}
		}
		return len(line), skip.Reason{}
	}
	switch it.shape {
	case sLocal:
		if e := p + 26; e <= len(line) && line[p+20] == ' ' && hasPrefixAt(line, e, it.next) {
			return e, skip.Reason{}
		}
	case sBracket:
		if p < len(line) && line[p] == '[' {
			if i := bytes.IndexByte(line[p:], ']'); i >= 0 && hasPrefixAt(line, p+i+1, it.next) {
				return p + i + 1, skip.Reason{}
			}
		}
	}
	if it.last {
		// The format's final literal: the value runs to it at the line's end.
		e := len(line) - len(it.next)
		if e < p || !bytes.Equal(line[e:], it.next) {
			if it.quoted && unescapedQuote(line[p:]) >= 0 {
				return 0, ReasonMismatch // the quotes close early: more fields follow
			}
			return 0, notFound
		}
		if it.quoted && unescapedQuote(line[p:e]) >= 0 {
			return 0, ReasonMismatch
		}
		return e, skip.Reason{}
	}
	if it.quoted {
		q := unescapedQuote(line[p:])
		if q < 0 {
			return 0, notFound
		}
		return p + q, skip.Reason{}
	}
	from := p
	for {
		i := bytes.Index(line[from:], it.next)
		if i < 0 {
			return 0, notFound
		}
		e := from + i
		if it.shape == sList && it.next[0] == ' ' {
			// "0.010, 0.020" and "0.010 : 0.020" go on past the space.
			if e > p && line[e-1] == ',' {
				from = e + 1
				continue
			}
			if hasPrefixAt(line, e, listColon) {
				from = e + len(listColon)
				continue
			}
		}
		return e, skip.Reason{}
	}
}

var listColon = []byte(" : ")

func hasPrefixAt(line []byte, at int, prefix []byte) bool {
	return at <= len(line) && bytes.HasPrefix(line[at:], prefix)
}

// unescapedQuote returns the index of the first '"' in b not escaped by a
// backslash (Apache writes \" and \\, escape=json writes \" and \\; nginx's
// default escaping writes \x22 and \x5C, so it has neither), or -1.
func unescapedQuote(b []byte) int {
	off := 0
	for {
		i := bytes.IndexByte(b[off:], '"')
		if i < 0 {
			return -1
		}
		q := off + i
		n := 0
		for j := q - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		off = q + 1
	}
}

// set stores value v of variable it in r.
func (s *seqParser) set(it *item, v []byte, r *Record) skip.Reason {
	switch it.role {
	case rSkip:
	case rRequest:
		m, u, ok := splitRequest(v)
		if !ok {
			return ReasonRequest
		}
		if it.flags&fSetMethod != 0 {
			r.Method = m
		}
		if it.flags&fSetURI != 0 {
			r.URI = s.text(u)
		}
	case rMethod:
		if !absent(v) {
			r.Method = s.text(v)
		}
	case rClient:
		if !absent(v) {
			r.Client = s.text(v)
		}
	case rAgent:
		if !absent(v) {
			r.UserAgent = s.text(v)
		}
	case rURI:
		if !absent(v) {
			r.URI = s.text(v)
		}
	case rPathArgs:
		if v = s.pathArgs(v, it.flags); !absent(v) {
			r.URI = s.text(v)
		}
	case rStatus:
		if absent(v) {
			break
		}
		st, ok := parseStatus(v)
		if !ok {
			return ReasonStatus
		}
		r.Status, r.Has = st, r.Has|HasStatus
	case rBytes, rBytesCLF:
		if absent(v) {
			if it.role == rBytesCLF && len(v) == 1 {
				r.BodyBytes, r.Has = 0, r.Has|HasBytes
			}
			break
		}
		n, ok := bytesconv.ParseUint(v)
		if !ok {
			return ReasonBytes
		}
		r.BodyBytes, r.Has = n, r.Has|HasBytes
	case rSeconds:
		if absent(v) {
			break
		}
		f, ok := bytesconv.ParseSeconds(v)
		if !ok || it.flags&fMillis != 0 && (len(v) < 5 || v[len(v)-4] != '.') {
			return ReasonRequestTime
		}
		r.RequestTime, r.Has = f, r.Has|HasRequestTime
	case rMillis, rMicros, rSecondsInt:
		if absent(v) {
			break
		}
		n, ok := bytesconv.ParseUint(v)
		if !ok {
			return ReasonRequestTime
		}
		f := float64(n)
		switch it.role {
		case rMillis:
			f /= 1e3
		case rMicros:
			f /= 1e6
		}
		r.RequestTime, r.Has = f, r.Has|HasRequestTime
	case rUpstream:
		if absent(v) {
			break
		}
		sum, n, ok := sumUpstream(v)
		if !ok {
			return ReasonUpstreamTime
		}
		if n > 0 {
			r.UpstreamTime, r.Has = sum, r.Has|HasUpstreamTime
		}
	case rReqLength:
		if absent(v) {
			break
		}
		n, ok := bytesconv.ParseUint(v)
		if !ok {
			return ReasonReqLength
		}
		r.RequestLength, r.Has = n, r.Has|HasRequestLength
	case rTimeLocal, rTimeBracket, rTimeISO, rEpoch, rEpochMs, rEpochUs:
		if absent(v) {
			break
		}
		t, ok := s.time(it.role, v)
		if !ok {
			return ReasonTime
		}
		r.Time, r.Has = t, r.Has|HasTime
	}
	return skip.Reason{}
}

func (s *seqParser) time(ro role, v []byte) (t time.Time, ok bool) {
	switch ro {
	case rTimeLocal:
		return s.tc.local(v)
	case rTimeBracket:
		if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
			return t, false
		}
		return s.tc.local(v[1 : len(v)-1])
	case rTimeISO:
		return s.tc.iso(v)
	case rEpoch:
		return epoch(v, 1)
	case rEpochMs:
		return epoch(v, 1e3)
	default:
		return epoch(v, 1e6)
	}
}

// pathArgs removes what nginx adds to "$uri?$args" and "$uri$is_args$args"
// when a request has no query string: it logs a missing $args as "-" (and
// as "" with escape=json) and an empty $is_args as "".
func (s *seqParser) pathArgs(v []byte, flags uint8) []byte {
	switch {
	case flags&fArgsQ != 0:
		if bytes.HasSuffix(v, []byte("?-")) {
			return v[:len(v)-2]
		}
		if len(v) > 1 && v[len(v)-1] == '?' {
			return v[:len(v)-1]
		}
	case flags&fIsArgs != 0 && !s.json:
		if len(v) > 1 && v[len(v)-1] == '-' && bytes.IndexByte(v, '?') < 0 {
			return v[:len(v)-1]
		}
	}
	return v
}

// text returns a value as a Record holds it: JSON escapes decoded for
// escape=json formats, as logged otherwise.
func (s *seqParser) text(v []byte) []byte {
	if !s.json || bytes.IndexByte(v, '\\') < 0 {
		return v
	}
	start := len(s.buf)
	var ok bool
	s.buf, ok = appendUnescaped(s.buf, v)
	if !ok {
		s.buf = s.buf[:start]
		return v
	}
	return s.buf[start:len(s.buf):len(s.buf)]
}

// splitRequest splits a request line "GET /path?x=1 HTTP/1.1" into method
// and target; the protocol is optional ("GET /", HTTP/0.9).
func splitRequest(v []byte) (method, uri []byte, ok bool) {
	sp := bytes.IndexByte(v, ' ')
	if sp <= 0 || !isToken(v[:sp]) {
		return nil, nil, false
	}
	method, rest := v[:sp], v[sp+1:]
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	if e := bytes.LastIndexByte(rest, ' '); e >= 0 && bytes.HasPrefix(rest[e+1:], []byte("HTTP/")) {
		rest = rest[:e]
		for len(rest) > 0 && rest[len(rest)-1] == ' ' {
			rest = rest[:len(rest)-1]
		}
	}
	if len(rest) == 0 {
		return nil, nil, false
	}
	return method, rest, true
}

// isToken reports whether b is an HTTP token (RFC 9110 tchar), as methods
// are.
func isToken(b []byte) bool {
	for _, c := range b {
		if tchar[c] == 0 {
			return false
		}
	}
	return len(b) > 0
}

var tchar = func() (t [256]byte) {
	for c := '0'; c <= '9'; c++ {
		t[c] = 1
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = 1, 1
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = 1
	}
	return t
}()

// startsWithSlash reports whether values of role r start with '/'.
func startsWithSlash(r role) bool {
	return r == rURI || r == rPathArgs
}

// finish resolves the roles of a compiled item list: it links each variable
// to the literal after it, marks quoted values, keeps only the most precise
// source of each Record field (the others are consumed and ignored) and
// records which fields the format fills.
func finish(name string, items []item, json bool) *seqParser {
	rank := func(it *item) (string, int) {
		w := 0
		if it.weak {
			w = 1
		}
		switch it.role {
		case rURI:
			return "uri", 3 - 2*w
		case rPathArgs:
			return "uri", 2
		case rBytes, rBytesCLF:
			return "bytes", 2 - w
		case rTimeLocal, rTimeBracket:
			return "time", 1
		case rTimeISO:
			return "time", 2
		case rEpoch, rEpochMs, rEpochUs:
			return "time", 3
		case rSeconds, rMicros:
			return "reqtime", 3
		case rMillis:
			return "reqtime", 2
		case rSecondsInt:
			return "reqtime", 1
		case rMethod:
			return "method", 1
		case rStatus:
			return "status", 1
		case rUpstream:
			return "upstream", 1
		case rClient:
			return "client", 1
		case rAgent:
			return "agent", 1
		case rReqLength:
			return "reqlength", 1
		}
		return "", 0
	}
	best := map[string]int{}
	for i := range items {
		if k, r := rank(&items[i]); r > best[k] {
			best[k] = r
		}
		if items[i].role == rRequest && best["uri"] < 3 {
			// The request line's target, as sent, beats $uri and
			// $uri?$args, which nginx normalises and rewrites.
			best["uri"] = 3
		}
	}
	done := map[string]bool{}
	for i := range items {
		it := &items[i]
		if it.role == rRequest {
			continue
		}
		if k, r := rank(it); k != "" {
			if r < best[k] || done[k] {
				it.role = rSkip
			} else {
				done[k] = true
			}
		}
	}
	s := &seqParser{name: name, json: json}
	for i := range items {
		it := &items[i]
		if it.role == rLit {
			continue
		}
		switch {
		case i+1 == len(items):
			it.last = true
		case items[i+1].role == rLit:
			it.next = items[i+1].lit
			it.last = i+2 == len(items)
		case startsWithSlash(items[i+1].role):
			it.next = []byte{'/'} // $host$request_uri
		}
		it.quoted = i > 0 && items[i-1].role == rLit && bytes.HasSuffix(items[i-1].lit, []byte{'"'}) &&
			it.next != nil && it.next[0] == '"'
		switch it.role {
		case rRequest:
			if !done["method"] {
				it.flags |= fSetMethod
			}
			if !done["uri"] {
				it.flags |= fSetURI
			}
		case rStatus:
			s.has |= HasStatus
		case rBytes, rBytesCLF:
			s.has |= HasBytes
		case rSeconds, rMillis, rMicros, rSecondsInt:
			s.has |= HasRequestTime
		case rUpstream:
			s.has |= HasUpstreamTime
		case rReqLength:
			s.has |= HasRequestLength
		case rTimeLocal, rTimeBracket, rTimeISO, rEpoch, rEpochMs, rEpochUs:
			s.has |= HasTime
		}
	}
	s.items = items
	return s
}
