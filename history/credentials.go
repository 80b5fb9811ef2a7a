package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
)

// userinfo matches the user information of a URL with a scheme: the
// "user:password@" in "https://user:password@host/". The authority ends at
// the first '/', '?' or '#', and the greedy match takes the last '@' before
// it, as net/url does, so a password with an unescaped '@' goes entirely.
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s]*@`)

// StripCredentials removes the user information (user:password@ or
// token@) from every URL with a scheme in s, leaving the rest untouched:
// "https://u:p@example.com/x" becomes "https://example.com/x". Strings
// without such a URL come back unchanged.
func StripCredentials(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userinfo.ReplaceAllString(s, "$1")
}

// scrubJSON validates raw and strips URL credentials from every string in
// it (keys included). When nothing needs stripping it returns raw as it was,
// formatting and key order intact; otherwise it re-encodes the document
// (object keys then come out sorted).
func scrubJSON(raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		return nil, errors.New("invalid JSON")
	}
	if !bytes.Contains(raw, []byte("@")) && !bytes.Contains(raw, []byte(`\u0040`)) {
		return raw, nil // no '@', escaped or not: no user information anywhere
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers keep their exact text
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	v, changed := scrubValue(v)
	if !changed {
		return raw, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func scrubValue(v any) (any, bool) {
	switch t := v.(type) {
	case string:
		s := StripCredentials(t)
		return s, s != t
	case []any:
		changed := false
		for i, e := range t {
			var c bool
			t[i], c = scrubValue(e)
			changed = changed || c
		}
		return t, changed
	case map[string]any:
		changed := false
		out := make(map[string]any, len(t))
		for k, e := range t {
			k2 := StripCredentials(k)
			e2, c := scrubValue(e)
			changed = changed || c || k2 != k
			out[k2] = e2
		}
		return out, changed
	}
	return v, false
}
