package nginxconf

import "fmt"

// Token kinds besides the punctuation bytes ';', '{' and '}'.
const (
	tokEOF  = 0
	tokWord = 'w'
)

// token is one token of a configuration with where it is: a word (its
// value unquoted and unescaped as nginx does), or ';', '{', '}'.
type token struct {
	kind       byte
	text       string // words only
	start, end int    // byte offsets in the file, end exclusive
	line       int    // line of start, from 1
}

// lexer splits nginx configuration text into tokens the way nginx's
// ngx_conf_read_token does, keeping byte offsets so the text can be
// edited in place. '#' starts a comment only where a token could start;
// quoted strings take \" \' \\ \t \r \n escapes and must be followed by
// white space, ';', '{' or ')'; in a bare word "${" stays in the word.
type lexer struct {
	data []byte
	pos  int
	file string
	line int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (lx *lexer) next() (token, error) {
	for lx.pos < len(lx.data) {
		c := lx.data[lx.pos]
		if c == '\n' {
			lx.line++
		} else if c == '#' {
			for lx.pos < len(lx.data) && lx.data[lx.pos] != '\n' {
				lx.pos++
			}
			continue
		} else if !isSpace(c) {
			break
		}
		lx.pos++
	}
	start, line := lx.pos, lx.line
	if lx.pos >= len(lx.data) {
		return token{kind: tokEOF, start: start, end: start, line: line}, nil
	}
	switch c := lx.data[lx.pos]; c {
	case ';', '{', '}':
		lx.pos++
		return token{kind: c, start: start, end: lx.pos, line: line}, nil
	case '"', '\'':
		lx.pos++
		if text, ok := lx.plainQuoted(c); ok {
			return token{kind: tokWord, text: text, start: start, end: lx.pos, line: line}, nil
		}
		var b []byte
		for {
			if lx.pos >= len(lx.data) {
				return token{}, fmt.Errorf("%s:%d: unexpected end of file in a string that starts here", lx.file, line)
			}
			ch := lx.data[lx.pos]
			lx.pos++
			switch {
			case ch == c:
				if lx.pos < len(lx.data) {
					if n := lx.data[lx.pos]; !isSpace(n) && n != ';' && n != '{' && n != ')' {
						return token{}, fmt.Errorf("%s:%d: unexpected %q after a quoted string", lx.file, lx.line, n)
					}
				}
				return token{kind: tokWord, text: string(b), start: start, end: lx.pos, line: line}, nil
			case ch == '\\' && lx.pos < len(lx.data):
				if lx.data[lx.pos] == '\n' {
					lx.line++
				}
				b = appendEscape(b, lx.data[lx.pos])
				lx.pos++
			default:
				if ch == '\n' {
					lx.line++
				}
				b = append(b, ch)
			}
		}
	}
	if text, ok := lx.plainWord(); ok {
		return token{kind: tokWord, text: text, start: start, end: lx.pos, line: line}, nil
	}
	var b []byte
	variable := false
	for lx.pos < len(lx.data) {
		ch := lx.data[lx.pos]
		if ch == '{' && variable {
			b = append(b, ch)
			lx.pos++
			variable = false
			continue
		}
		variable = false
		if isSpace(ch) || ch == ';' || ch == '{' {
			break
		}
		lx.pos++
		switch ch {
		case '\\':
			if lx.pos < len(lx.data) {
				if lx.data[lx.pos] == '\n' {
					lx.line++
				}
				b = appendEscape(b, lx.data[lx.pos])
				lx.pos++
			}
			continue
		case '$':
			variable = true
		}
		b = append(b, ch)
	}
	return token{kind: tokWord, text: string(b), start: start, end: lx.pos, line: line}, nil
}

// plainWord reads a bare word without a backslash, the usual case, as
// one string of its text (no byte by byte copy); ok is false, and
// nothing read, for one with a backslash.
func (lx *lexer) plainWord() (string, bool) {
	i := lx.pos
	variable := false
	for ; i < len(lx.data); i++ {
		ch := lx.data[i]
		if ch == '{' && variable {
			variable = false
			continue
		}
		variable = false
		if isSpace(ch) || ch == ';' || ch == '{' {
			break
		}
		switch ch {
		case '\\':
			return "", false
		case '$':
			variable = true
		}
	}
	text := string(lx.data[lx.pos:i])
	lx.pos = i
	return text, true
}

// plainQuoted reads the rest of a string quoted with q that has no
// backslash and no line end and is closed before the end of the file, as
// one string; ok is false, and nothing read, otherwise (and for a
// closing quote followed by what may not follow it, to report there).
func (lx *lexer) plainQuoted(q byte) (string, bool) {
	for i := lx.pos; i < len(lx.data); i++ {
		switch lx.data[i] {
		case q:
			if i+1 < len(lx.data) {
				if n := lx.data[i+1]; !isSpace(n) && n != ';' && n != '{' && n != ')' {
					return "", false
				}
			}
			text := string(lx.data[lx.pos:i])
			lx.pos = i + 1
			return text, true
		case '\\', '\n':
			return "", false
		}
	}
	return "", false
}

// appendEscape appends what nginx makes of a backslash followed by c.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\'', '\\':
		return append(b, c)
	case 't':
		return append(b, '\t')
	case 'r':
		return append(b, '\r')
	case 'n':
		return append(b, '\n')
	}
	return append(b, '\\', c)
}

// words tokenizes s, which must hold only words (an edit's arguments),
// and returns their values.
func words(s string) ([]string, error) {
	lx := &lexer{data: []byte(s), file: "arguments", line: 1}
	var out []string
	prev := 0
	for {
		t, err := lx.next()
		if err != nil {
			return nil, err
		}
		for _, c := range lx.data[prev:t.start] {
			if !isSpace(c) {
				return nil, fmt.Errorf("unexpected comment %q", s[prev:])
			}
		}
		prev = t.end
		switch t.kind {
		case tokEOF:
			return out, nil
		case tokWord:
			out = append(out, t.text)
		default:
			return nil, fmt.Errorf("unexpected %q", t.kind)
		}
	}
}
