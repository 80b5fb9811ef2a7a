// Package bytesconv parses the numbers logs are made of straight from byte
// slices, without allocating on the common forms: the parsers of slow logs
// and access logs call it for every field of every line.
package bytesconv

import "strconv"

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// ParseSeconds reads a non-negative decimal ("0.123", "12", ".5") without
// allocating. The common form is converted with one correctly rounded
// division, so it equals strconv.ParseFloat; anything else (exponents, very
// long digit runs) goes through strconv.
func ParseSeconds(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var m uint64
	digits, frac := 0, 0
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		m = m*10 + uint64(b[i]-'0')
		digits++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			m = m*10 + uint64(b[i]-'0')
			digits++
			frac++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i != len(b) || digits > 15 {
		return slowSeconds(b)
	}
	return float64(m) / pow10[frac], true
}

// slowSeconds handles what ParseSeconds does not (1e-3, 000000000000000001.5);
// it allocates, but only for such rare values.
func slowSeconds(b []byte) (float64, bool) {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || v < 0 || v != v || v > 1e15 {
		return 0, false
	}
	return v, true
}

// ParseUint reads a non-negative decimal integer of at most 18 digits.
func ParseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// TrimBlanks drops spaces and tabs at both ends (HTTP header values,
// log fields), without allocating.
func TrimBlanks(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// IsDigits reports whether s is a non-empty run of ASCII digits (a port,
// a count) with no sign or space.
func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
