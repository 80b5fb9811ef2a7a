package sqltag

import (
	"bytes"
	"net/url"
	"sort"
	"strings"
)

// Bounds of what Parse keeps.
const (
	// MaxTags is the most tags kept from one statement.
	MaxTags = 32
	// MaxKey and MaxValue bound a key and a value, in bytes, as written
	// (before decoding).
	MaxKey   = 64
	MaxValue = 1024
)

// Format is how a comment writes its tags.
type Format uint8

// Formats of Tags.Format.
const (
	None         Format = iota // no tags
	SQLCommenter               // key='value' (URL-encoded)
	Marginalia                 // key:value
	Plain                      // key=value
)

func (f Format) String() string {
	switch f {
	case SQLCommenter:
		return "sqlcommenter"
	case Marginalia:
		return "marginalia"
	case Plain:
		return "key=value"
	}
	return "none"
}

// Tag is one key and its decoded value.
type Tag struct {
	Key, Value string
}

// Tags are the tags of one statement.
type Tags struct {
	// List is sorted by key, one entry per key.
	List []Tag
	// Format is the format of the last comment that held tags.
	Format Format
	// Cut is true when a key, a value or the number of tags was over its
	// bound and cut.
	Cut bool
}

// Len is the number of tags.
func (t Tags) Len() int { return len(t.List) }

// Get returns the value of key ("" when absent). Keys compare as written,
// case-insensitively.
func (t Tags) Get(key string) string {
	for _, tg := range t.List {
		if strings.EqualFold(tg.Key, key) {
			return tg.Value
		}
	}
	return ""
}

// first returns the first present value of keys.
func (t Tags) first(keys ...string) string {
	for _, k := range keys {
		if v := t.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// Request names the request the statement ran for, "" when the tags do
// not say: "trace:" and the trace ID of a valid W3C traceparent tag, else
// "request:" and a request_id (requestid, request-id, trace_id) tag.
func (t Tags) Request() string {
	if id, ok := TraceID(t.Get("traceparent")); ok {
		return "trace:" + id
	}
	if v := t.first("request_id", "requestid", "request-id", "request.id", "trace_id"); v != "" {
		return "request:" + v
	}
	return ""
}

// Endpoint names the endpoint the statement ran for, "" when the tags do
// not say: the route (route, http.route) with the method in front when a
// method tag (method, http_method, http.method, http.request.method) gives
// it and the route does not start with one ("GET /books/{id}"); else
// controller#action (marginalia, Rails), or whichever of the two is there.
func (t Tags) Endpoint() string {
	if r := t.first("route", "http.route"); r != "" {
		m := strings.ToUpper(t.first("method", "http_method", "http.method", "http.request.method"))
		if rm, _ := SplitRoute(r); m != "" && rm == "" {
			return m + " " + r
		}
		return r
	}
	c, a := t.Get("controller"), t.Get("action")
	switch {
	case c != "" && a != "":
		return c + "#" + a
	case c != "":
		return c
	}
	return a
}

// SplitRoute splits a route that starts with an HTTP method and a space,
// as Go's ServeMux patterns do ("GET /items/{id}"), into the two; a
// route without one comes back whole with method "".
func SplitRoute(route string) (method, path string) {
	m, rest, ok := strings.Cut(route, " ")
	if !ok || m == "" {
		return "", route
	}
	for i := 0; i < len(m); i++ {
		if m[i] < 'A' || m[i] > 'Z' {
			return "", route
		}
	}
	return m, rest
}

// TraceID returns the trace ID of a W3C traceparent value
// ("00-<32 hex>-<16 hex>-<2 hex>"), false when the value is not one or its
// trace or parent ID is all zeros (invalid by the specification).
func TraceID(traceparent string) (string, bool) {
	p := strings.TrimSpace(traceparent)
	if len(p) < 55 || p[2] != '-' || p[35] != '-' || p[52] != '-' || (len(p) > 55 && p[55] != '-') {
		return "", false
	}
	version, trace, parent, flags := p[0:2], p[3:35], p[36:52], p[53:55]
	if !isLowerHex(version) || version == "ff" || !isLowerHex(trace) || !isLowerHex(parent) || !isLowerHex(flags) {
		return "", false
	}
	if version == "00" && len(p) != 55 {
		return "", false
	}
	if strings.Trim(trace, "0") == "" || strings.Trim(parent, "0") == "" {
		return "", false
	}
	return trace, true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return len(s) > 0
}

// Parse returns the tags of a statement (see the package documentation).
func Parse(q []byte) Tags {
	var t Tags
	if bytes.Index(q, []byte("/*")) < 0 {
		return t
	}
	n := len(q)
	for i := 0; i < n; {
		switch c := q[i]; {
		case c == '\'' || c == '"':
			i = skipString(q, i)
		case c == '`':
			if j := bytes.IndexByte(q[i+1:], '`'); j >= 0 {
				i += j + 2
			} else {
				i = n
			}
		case c == '#':
			i = skipLine(q, i)
		case c == '-' && i+1 < n && q[i+1] == '-' && (i+2 == n || q[i+2] <= ' '):
			i = skipLine(q, i)
		case c == '/' && i+1 < n && q[i+1] == '*':
			j := bytes.Index(q[i+2:], []byte("*/"))
			if j < 0 {
				return t.done()
			}
			body := q[i+2 : i+2+j]
			if len(body) == 0 || (body[0] != '!' && body[0] != '+') {
				t.comment(body)
			}
			i += j + 4
		default:
			i++
		}
	}
	return t.done()
}

// skipString returns the index after the string literal starting at i
// (quote q[i]); a backslash escapes the next byte, a doubled quote is two
// strings side by side, which is the same thing for skipping.
func skipString(q []byte, i int) int {
	quote := q[i]
	for j := i + 1; j < len(q); j++ {
		switch q[j] {
		case '\\':
			j++
		case quote:
			return j + 1
		}
	}
	return len(q)
}

func skipLine(q []byte, i int) int {
	if j := bytes.IndexByte(q[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(q)
}

// done sorts the tags by key.
func (t Tags) done() Tags {
	sort.SliceStable(t.List, func(i, j int) bool { return t.List[i].Key < t.List[j].Key })
	return t
}

// comment reads one comment's tags into t when the whole comment is tags.
func (t *Tags) comment(body []byte) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return
	}
	type kv struct {
		k, v string
		cut  bool
	}
	var pairs []kv
	format := None
	for i := 0; i < len(body); {
		// The key: up to '=' or ':'.
		j := i
		for j < len(body) && isKeyByte(body[j]) {
			j++
		}
		if j == i || j == len(body) || j-i > 4*MaxKey {
			return
		}
		key := string(bytes.TrimSpace(body[i:j]))
		sep := body[j]
		j++
		for j < len(body) && body[j] == ' ' {
			j++
		}
		var f Format
		var raw []byte
		switch {
		case sep == '=' && j < len(body) && body[j] == '\'':
			f = SQLCommenter
			end := -1
			for k := j + 1; k < len(body); k++ {
				if body[k] == '\\' {
					k++
					continue
				}
				if body[k] == '\'' {
					end = k
					break
				}
			}
			if end < 0 {
				return
			}
			raw = body[j+1 : end]
			j = end + 1
		case sep == '=' || sep == ':':
			f = Plain
			if sep == ':' {
				f = Marginalia
			}
			end := bytes.IndexByte(body[j:], ',')
			if end < 0 {
				end = len(body) - j
			}
			raw = bytes.TrimSpace(body[j : j+end])
			j += end
		default:
			return
		}
		if format == None {
			format = f
		} else if (format == SQLCommenter) != (f == SQLCommenter) {
			return // mixed forms: not tags
		}
		for j < len(body) && body[j] == ' ' {
			j++
		}
		if j < len(body) {
			if body[j] != ',' {
				return
			}
			j++
			for j < len(body) && body[j] == ' ' {
				j++
			}
			if j == len(body) {
				return // a trailing comma
			}
		}
		p := kv{k: key}
		if len(p.k) > MaxKey {
			p.k, p.cut = p.k[:MaxKey], true
		}
		if len(raw) > MaxValue {
			raw, p.cut = raw[:MaxValue], true
		}
		if f == SQLCommenter {
			p.k, p.v = decode(p.k), decode(unescape(raw))
		} else {
			p.v = string(raw)
		}
		if p.k == "" {
			return
		}
		pairs = append(pairs, p)
		i = j
	}
	if len(pairs) == 0 {
		return
	}
	t.Format = format
	for _, p := range pairs {
		t.Cut = t.Cut || p.cut
		replaced := false
		for k := range t.List {
			if t.List[k].Key == p.k {
				t.List[k].Value, replaced = p.v, true
			}
		}
		if replaced {
			continue
		}
		if len(t.List) >= MaxTags {
			t.Cut = true
			continue
		}
		t.List = append(t.List, Tag{Key: p.k, Value: p.v})
	}
}

// isKeyByte: what a key may hold (letters, digits, _ - . and the % of URL
// encoding, and spaces around it).
func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '%' || c == ' '
}

// unescape removes sqlcommenter's backslashes (\' is ').
func unescape(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+1 < len(b) {
			i++
		}
		out = append(out, b[i])
	}
	return string(out)
}

// decode URL-decodes s (encodeURIComponent's encoding: '+' is a plus),
// keeping s as written when it is not valid.
func decode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

// MatchRoute reports whether an endpoint named by tags (a route such as
// "GET /profile/{account_name}" or "/books/:id") is the access log's
// endpoint method and path ("GET", "/profile/:name"): the methods agree
// when both are known, and the paths have the same segments, where a
// route's parameter ({x}, :x, <x>, *) stands for any segment (and Go's
// {$} for the empty last segment of "/").
func MatchRoute(route, method, path string) bool {
	rm, rp := SplitRoute(route)
	if !strings.HasPrefix(rp, "/") || !strings.HasPrefix(path, "/") {
		return false
	}
	if rm != "" && method != "" && !strings.EqualFold(rm, method) {
		return false
	}
	rp, _, _ = strings.Cut(rp, "?")
	path, _, _ = strings.Cut(path, "?")
	rs, ps := strings.Split(rp, "/"), strings.Split(path, "/")
	if len(rs) != len(ps) {
		return false
	}
	for i := range rs {
		if rs[i] == "{$}" { // Go's end-of-path marker: only "/" itself
			if ps[i] != "" {
				return false
			}
			continue
		}
		if rs[i] == ps[i] || isParam(rs[i]) {
			continue
		}
		return false
	}
	return true
}

// isParam reports whether a route segment is a parameter.
func isParam(seg string) bool {
	switch {
	case seg == "*":
		return true
	case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
		return true
	case strings.HasPrefix(seg, "<") && strings.HasSuffix(seg, ">"):
		return true
	case strings.HasPrefix(seg, ":") && len(seg) > 1:
		return true
	}
	return false
}
