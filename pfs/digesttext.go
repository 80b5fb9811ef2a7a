package pfs

import "strings"

// digestTextToSQL turns performance_schema's normalised DIGEST_TEXT
// (`SELECT * FROM `t` WHERE `a` IN (...) `) back into SQL that fingerprints
// like the statements it stands for, so a class from performance_schema has
// the same fingerprint and query ID as the same class from a slow log:
// back-quotes are dropped around plain identifiers, list placeholders
// `(...)` become `(?)`, MySQL 8's `/* , ... */` multi-row marker goes, and
// trailing blanks are trimmed. A quoted identifier that needs its quotes
// (one with a space or a dash) keeps them.
func digestTextToSQL(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		switch {
		case s[i] == '`':
			end := strings.IndexByte(s[i+1:], '`')
			if end < 0 {
				b.WriteString(s[i:])
				i = len(s)
				continue
			}
			id := s[i+1 : i+1+end]
			if plainIdent(id) {
				b.WriteString(id)
			} else {
				b.WriteString(s[i : i+end+2])
			}
			i += end + 2
		case strings.HasPrefix(s[i:], "(...)"):
			b.WriteString("(?)")
			i += len("(...)")
		case strings.HasPrefix(s[i:], "/* , ... */"):
			i += len("/* , ... */")
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return tightenSpaces(strings.TrimSpace(b.String()))
}

// spacedKeywords keep their space before '(' (`IN (`, `VALUES (`); any other
// word directly before '(' is a function name, written `COUNT(*)` by people
// and `COUNT ( * )` by the digest.
var spacedKeywords = map[string]bool{
	"in": true, "values": true, "value": true, "and": true, "or": true, "not": true, "on": true,
	"using": true, "exists": true, "as": true, "from": true, "join": true, "where": true,
	"select": true, "set": true, "into": true, "when": true, "then": true, "else": true,
	"by": true, "union": true, "all": true, "any": true, "some": true, "table": true, "key": true,
	"index": true, "having": true, "limit": true, "is": true, "like": true, "case": true,
}

// tightenSpaces removes the digest's blanks before ',' and ')', after '(',
// and between a function name and its '('.
func tightenSpaces(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' && i+1 < len(s) {
			next := s[i+1]
			if next == ',' || next == ')' {
				continue
			}
			if next == '(' && isFunctionName(b.String()) {
				continue
			}
		}
		b.WriteByte(c)
		if c == '(' {
			for i+1 < len(s) && s[i+1] == ' ' {
				i++
			}
		}
	}
	return b.String()
}

// isFunctionName reports whether the word ending s is called, not a keyword
// or the table of `INSERT INTO t (`.
func isFunctionName(s string) bool {
	w := lastWord(s)
	if w == "" || spacedKeywords[strings.ToLower(w)] {
		return false
	}
	before := strings.TrimRight(s[:len(s)-len(w)], " ")
	return !strings.EqualFold(lastWord(before), "into")
}

// lastWord returns the identifier-like word at the end of s.
func lastWord(s string) string {
	i := len(s)
	for i > 0 {
		c := s[i-1]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$') {
			break
		}
		i--
	}
	return s[i:]
}

func plainIdent(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$') {
			return false
		}
	}
	return true
}
