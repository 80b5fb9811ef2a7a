package accesslog

import (
	"strconv"
)

// absent reports whether a logged value means "no value": nginx writes "-"
// for a variable it does not have, and escape=json writes "".
func absent(v []byte) bool {
	return len(v) == 0 || len(v) == 1 && v[0] == '-'
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseSeconds reads a non-negative decimal ("0.123", "12", ".5") without
// allocating. The common form is converted with one correctly rounded
// division, so it equals strconv.ParseFloat; anything else (exponents, very
// long digit runs) goes through strconv.
func parseSeconds(b []byte) (float64, bool) {
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

// slowSeconds handles what parseSeconds does not (1e-3, 000000000000000001.5);
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

// parseUint reads a non-negative decimal integer of at most 18 digits.
func parseUint(b []byte) (int64, bool) {
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

// parseStatus reads a three-digit HTTP status.
func parseStatus(b []byte) (int, bool) {
	if len(b) != 3 || b[0] < '0' || b[0] > '9' || b[1] < '0' || b[1] > '9' || b[2] < '0' || b[2] > '9' {
		return 0, false
	}
	return int(b[0]-'0')*100 + int(b[1]-'0')*10 + int(b[2]-'0'), true
}

// sumUpstream adds up an $upstream_response_time list: nginx separates the
// upstreams tried with ", " and internal redirects with " : ", and writes
// "-" for an upstream that gave no response. It returns false when an
// element is not a number; n is the number of elements that were.
func sumUpstream(v []byte) (sum float64, n int, ok bool) {
	for len(v) > 0 {
		end := 0
		for end < len(v) && v[end] != ',' && v[end] != ':' {
			end++
		}
		e := trimSpace(v[:end])
		if end < len(v) {
			end++
		}
		v = v[end:]
		if len(e) == 1 && e[0] == '-' {
			continue
		}
		f, good := parseSeconds(e)
		if !good {
			return 0, 0, false
		}
		sum += f
		n++
	}
	return sum, n, true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
