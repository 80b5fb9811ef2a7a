package mysqlproxy

import "bytes"

// splitStatements cuts a multi-statement query at its semicolons, outside
// string literals, quoted identifiers and comments, and returns the
// statements (trimmed, empty ones left out). The pieces alias q.
func splitStatements(q []byte) [][]byte {
	var out [][]byte
	start := 0
	add := func(end int) {
		if s := bytes.TrimSpace(q[start:end]); len(s) > 0 {
			out = append(out, s)
		}
	}
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '\'' || c == '"' || c == '`':
			for i++; i < len(q) && q[i] != c; i++ {
				if q[i] == '\\' && c != '`' {
					i++
				}
			}
		case c == '#' || (c == '-' && i+2 < len(q) && q[i+1] == '-' && q[i+2] <= ' '):
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			if j := bytes.Index(q[i+2:], []byte("*/")); j >= 0 {
				i += j + 3
			} else {
				i = len(q)
			}
		case c == ';':
			add(i)
			start = i + 1
		}
	}
	if start < len(q) {
		add(len(q))
	}
	return out
}
