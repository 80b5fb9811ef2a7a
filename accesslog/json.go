package accesslog

import (
	"bytes"

	"github.com/stacktune/stacktune/internal/skip"
)

// NewJSON returns a Parser for JSON lines: one object per line, such as an
// nginx log_format with escape=json writes. The keys it reads are listed in
// the package documentation; other keys, and nested objects and arrays, are
// skipped. Numbers may be JSON numbers or strings ("0.012"); "", "-" and
// null mean absent.
func NewJSON() Parser { return &jsonParser{} }

type jsonParser struct {
	labeledParser
}

func (p *jsonParser) Format() string { return "json" }

func (p *jsonParser) Clone() Parser { return &jsonParser{} }

// Parse implements Parser.
func (p *jsonParser) Parse(line []byte, r *Record) (bool, skip.Reason) {
	*r = Record{Offset: r.Offset}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	i := skipWS(line, 0)
	if i == len(line) {
		return false, ReasonEmpty
	}
	if bytes.IndexByte(line, 0) >= 0 {
		return false, ReasonBinary
	}
	if line[i] != '{' {
		return false, ReasonNotJSON
	}
	var f fieldSet
	i = skipWS(line, i+1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if i >= len(line) {
				return false, ReasonTruncated
			}
			if line[i] != '"' {
				return false, ReasonNotJSON
			}
			ke, kesc, reason := scanJSONString(line, i)
			if !reason.IsZero() {
				return false, reason
			}
			key := line[i+1 : ke-1]
			var kbuf [32]byte
			if kesc {
				k, ok := appendUnescaped(kbuf[:0], key)
				if !ok {
					return false, ReasonNotJSON
				}
				key = k
			}
			i = skipWS(line, ke)
			if i >= len(line) {
				return false, ReasonTruncated
			}
			if line[i] != ':' {
				return false, ReasonNotJSON
			}
			i = skipWS(line, i+1)
			ve, kind, vesc, reason := scanJSONValue(line, i)
			if !reason.IsZero() {
				return false, reason
			}
			v := line[i:ve]
			if kind == vString {
				v = v[1 : len(v)-1]
			}
			f.put(key, v, kind, vesc)
			i = skipWS(line, ve)
			if i >= len(line) {
				return false, ReasonTruncated
			}
			if line[i] == '}' {
				i++
				break
			}
			if line[i] != ',' {
				return false, ReasonNotJSON
			}
			i = skipWS(line, i+1)
		}
	}
	if skipWS(line, i) != len(line) {
		return false, ReasonNotJSON
	}
	p.buf = p.buf[:0]
	if reason := p.record(&f, r); !reason.IsZero() {
		return false, reason
	}
	return true, skip.Reason{}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanJSONString scans the string starting with the quote at b[i]. It
// returns the index after the closing quote and whether the string has
// escapes; an invalid escape is "not JSON", a missing closing quote a
// truncated line. Raw control characters are tolerated.
func scanJSONString(b []byte, i int) (end int, esc bool, reason skip.Reason) {
	j := i + 1
	for {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			if bs := bytes.IndexByte(b[j:], '\\'); bs >= 0 && !validEscapes(b[j:]) {
				return 0, false, ReasonNotJSON
			}
			return 0, false, ReasonTruncated
		}
		seg := b[j : j+q]
		bs := bytes.IndexByte(seg, '\\')
		if bs < 0 {
			return j + q + 1, esc, skip.Reason{}
		}
		// Walk the escapes of this segment; the quote may be escaped.
		esc = true
		k := j + bs
		for k < j+q {
			if b[k] != '\\' {
				k++
				continue
			}
			if k+1 >= len(b) {
				return 0, false, ReasonTruncated
			}
			switch b[k+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				k += 2
			case 'u':
				if k+6 > len(b) {
					return 0, false, ReasonTruncated
				}
				if _, ok := hex4(b[k+2:]); !ok {
					return 0, false, ReasonNotJSON
				}
				k += 6
			default:
				return 0, false, ReasonNotJSON
			}
		}
		if k == j+q {
			return k + 1, esc, skip.Reason{} // the quote at j+q is not escaped
		}
		// The quote was escaped: continue after the escape.
		j = k
	}
}

// validEscapes reports whether every backslash in b starts a valid JSON
// escape, counting one cut off by the end of b as valid.
func validEscapes(b []byte) bool {
	for k := 0; k < len(b); k++ {
		if b[k] != '\\' {
			continue
		}
		if k+1 >= len(b) {
			return true
		}
		switch b[k+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			k++
		case 'u':
			n := min(len(b), k+6)
			for _, c := range b[k+2 : n] {
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
					return false
				}
			}
			k = n - 1
		default:
			return false
		}
	}
	return true
}

// scanJSONValue scans the value starting at b[i] and returns the index after
// it and its kind. Objects and arrays are skipped with a depth counter, so
// deep nesting costs no stack.
func scanJSONValue(b []byte, i int) (end int, kind uint8, esc bool, reason skip.Reason) {
	if i >= len(b) {
		return 0, 0, false, ReasonTruncated
	}
	switch c := b[i]; {
	case c == '"':
		end, esc, reason = scanJSONString(b, i)
		return end, vString, esc, reason
	case c == '-' || c >= '0' && c <= '9':
		end, reason = scanJSONNumber(b, i)
		return end, vNumber, false, reason
	case c == 't':
		return scanJSONWord(b, i, "true", vOther)
	case c == 'f':
		return scanJSONWord(b, i, "false", vOther)
	case c == 'n':
		return scanJSONWord(b, i, "null", vNull)
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(b); {
			switch b[j] {
			case '"':
				e, _, reason := scanJSONString(b, j)
				if !reason.IsZero() {
					return 0, 0, false, reason
				}
				j = e
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, vOther, false, skip.Reason{}
				}
			}
			j++
		}
		return 0, 0, false, ReasonTruncated
	}
	return 0, 0, false, ReasonNotJSON
}

func scanJSONWord(b []byte, i int, word string, kind uint8) (int, uint8, bool, skip.Reason) {
	rest := b[i:]
	if len(rest) < len(word) {
		if string(rest) == word[:len(rest)] {
			return 0, 0, false, ReasonTruncated
		}
		return 0, 0, false, ReasonNotJSON
	}
	if string(rest[:len(word)]) != word {
		return 0, 0, false, ReasonNotJSON
	}
	return i + len(word), kind, false, skip.Reason{}
}

// scanJSONNumber checks the JSON number grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanJSONNumber(b []byte, i int) (int, skip.Reason) {
	j := i
	if b[j] == '-' {
		j++
	}
	digits := func() int {
		n := 0
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
			n++
		}
		return n
	}
	bad := func() (int, skip.Reason) {
		if j >= len(b) {
			return 0, ReasonTruncated
		}
		return 0, ReasonNotJSON
	}
	start := j
	n := digits()
	if n == 0 || n > 1 && b[start] == '0' {
		return bad()
	}
	if j < len(b) && b[j] == '.' {
		j++
		if digits() == 0 {
			return bad()
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return bad()
		}
	}
	return j, skip.Reason{}
}
