package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// MaxCapture bounds a captured value: a longer one fails the step's check,
// so a capture that matched too much cannot swell every later request.
const MaxCapture = 64 << 10

// pathElem is one step of a JSON path: a key, or an array index when key
// is not set.
type pathElem struct {
	key    string
	isKey  bool
	index  int
	source string // as written, for messages
}

// parseJSONPath parses "a.b[0].c", "$.a", `["a.b"].c` or "[2]".
func parseJSONPath(src string) ([]pathElem, error) {
	bad := func(format string, args ...any) ([]pathElem, error) {
		return nil, fmt.Errorf("JSON path %q: %s", src, fmt.Sprintf(format, args...))
	}
	s := src
	needKey := false // after a '.'
	if rest, ok := strings.CutPrefix(s, "$"); ok {
		switch {
		case rest == "":
			return bad("names the whole document; want a key or an index after $")
		case rest[0] == '.':
			rest, needKey = rest[1:], true
		case rest[0] != '[':
			return bad("want . or [ after $")
		}
		s = rest
	}
	var out []pathElem
	for s != "" || needKey {
		switch {
		case needKey || (len(out) == 0 && s[0] != '['):
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			if end == 0 {
				return bad("empty key")
			}
			out = append(out, pathElem{key: s[:end], isKey: true, source: s[:end]})
			s, needKey = s[end:], false
		case s[0] == '.':
			s, needKey = s[1:], true
		case s[0] == '[' && len(s) > 1 && s[1] == '"':
			// A quoted key: a JSON string, then ']'.
			dec := json.NewDecoder(strings.NewReader(s[1:]))
			var key string
			if err := dec.Decode(&key); err != nil {
				return bad("invalid quoted key")
			}
			n := 1 + int(dec.InputOffset())
			if n >= len(s) || s[n] != ']' {
				return bad("want ] after the quoted key")
			}
			out = append(out, pathElem{key: key, isKey: true, source: s[:n+1]})
			s = s[n+1:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return bad("unclosed [")
			}
			digits := s[1:end]
			i, err := strconv.Atoi(digits)
			if err != nil || digits == "" || digits[0] < '0' || digits[0] > '9' {
				return bad("want [N] with N ≥ 0, or [\"key\"], got %s", s[:end+1])
			}
			out = append(out, pathElem{index: i, source: s[:end+1]})
			s = s[end+1:]
		default:
			return bad("want . or [ after %s", out[len(out)-1].source)
		}
	}
	if len(out) == 0 {
		return bad("empty path")
	}
	return out, nil
}

// pathString writes path as far as element n (exclusive), for messages.
func pathString(path []pathElem, n int) string {
	var b strings.Builder
	for i, e := range path[:n] {
		if e.isKey && i > 0 && e.source[0] != '[' {
			b.WriteByte('.')
		}
		b.WriteString(e.source)
	}
	return b.String()
}

// response is what checks and captures read of a response; the HTML and
// JSON documents are parsed once, when first needed.
type response struct {
	status int
	header http.Header
	body   []byte
	of     string // "body", or "first 4 MiB of the body"

	doc     *html.Node
	docErr  error
	parsed  bool
	json    any
	jsonErr error
	decoded bool
}

func (r *response) html() (*html.Node, error) {
	if !r.parsed {
		r.parsed = true
		r.doc, r.docErr = html.Parse(bytes.NewReader(r.body))
	}
	return r.doc, r.docErr
}

func (r *response) jsonDoc() (any, error) {
	if !r.decoded {
		r.decoded = true
		dec := json.NewDecoder(bytes.NewReader(r.body))
		dec.UseNumber()
		r.jsonErr = dec.Decode(&r.json)
		if r.jsonErr == nil {
			if _, err := dec.Token(); !errors.Is(err, io.EOF) {
				r.jsonErr = errors.New("data after the JSON value")
			}
		}
	}
	return r.json, r.jsonErr
}

// take extracts c's value from r; the error is the check's detail.
func (c *Capture) take(r *response) (string, error) {
	v, err := c.value(r)
	if err != nil {
		return "", fmt.Errorf("capture %s: %v", c.Name, err)
	}
	if len(v) > MaxCapture {
		return "", fmt.Errorf("capture %s: value of %d bytes, over the %d KiB bound", c.Name, len(v), MaxCapture>>10)
	}
	return v, nil
}

func (c *Capture) value(r *response) (string, error) {
	switch {
	case c.re != nil:
		m := c.re.FindSubmatchIndex(r.body)
		if m == nil {
			return "", fmt.Errorf("regexp %q matched nothing in the %s", shortString(c.Regexp, 40), r.of)
		}
		if m[2*c.Group] < 0 {
			return "", fmt.Errorf("regexp %q matched, but not its group %d", shortString(c.Regexp, 40), c.Group)
		}
		return string(r.body[m[2*c.Group]:m[2*c.Group+1]]), nil
	case c.sel != nil:
		doc, err := r.html()
		if err != nil {
			return "", fmt.Errorf("%s is not HTML: %v", r.of, err)
		}
		n := c.sel.MatchFirst(doc)
		if n == nil {
			return "", fmt.Errorf("selector %q matched no element", shortString(c.Selector, 40))
		}
		if c.Attr == "" {
			return strings.TrimSpace(textOf(n)), nil
		}
		for _, a := range n.Attr {
			if a.Namespace == "" && strings.EqualFold(a.Key, c.Attr) {
				return a.Val, nil
			}
		}
		return "", fmt.Errorf("the element selector %q matched has no attribute %q", shortString(c.Selector, 40), c.Attr)
	case c.path != nil:
		doc, err := r.jsonDoc()
		if err != nil {
			return "", fmt.Errorf("%s is not JSON: %v", r.of, err)
		}
		return jsonAt(doc, c.path)
	case c.Header != "":
		vs := r.header.Values(c.Header)
		if len(vs) == 0 {
			return "", fmt.Errorf("no %s header in the response", http.CanonicalHeaderKey(c.Header))
		}
		return vs[0], nil
	}
	return "", errors.New("no source")
}

// jsonAt walks path in v (decoded with UseNumber) to a scalar.
func jsonAt(v any, path []pathElem) (string, error) {
	for i, e := range path {
		switch x := v.(type) {
		case map[string]any:
			if !e.isKey {
				return "", fmt.Errorf("%s is an object, not an array: no %s", where(path, i), e.source)
			}
			next, ok := x[e.key]
			if !ok {
				return "", fmt.Errorf("no key %q in %s", e.key, where(path, i))
			}
			v = next
		case []any:
			if e.isKey {
				return "", fmt.Errorf("%s is an array, not an object: no key %q", where(path, i), e.key)
			}
			if e.index >= len(x) {
				return "", fmt.Errorf("%s has %d elements: no %s", where(path, i), len(x), e.source)
			}
			v = x[e.index]
		default:
			return "", fmt.Errorf("%s is a %s: no %s", where(path, i), jsonKind(v), e.source)
		}
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("%s is %s, want a string, a number or a boolean", where(path, len(path)), withArticle(jsonKind(v)))
}

func where(path []pathElem, n int) string {
	if n == 0 {
		return "the document"
	}
	return pathString(path, n)
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

func withArticle(kind string) string {
	switch kind {
	case "null":
		return "null"
	case "object", "array":
		return "an " + kind
	}
	return "a " + kind
}

// textOf is the text of n and its descendants.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
