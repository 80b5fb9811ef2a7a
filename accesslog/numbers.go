package accesslog

import "github.com/stacktune/stacktune/internal/bytesconv"

// absent reports whether a logged value means "no value": nginx writes "-"
// for a variable it does not have, and escape=json writes "".
func absent(v []byte) bool {
	return len(v) == 0 || len(v) == 1 && v[0] == '-'
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
		e := bytesconv.TrimBlanks(v[:end])
		if end < len(v) {
			end++
		}
		v = v[end:]
		if len(e) == 1 && e[0] == '-' {
			continue
		}
		f, good := bytesconv.ParseSeconds(e)
		if !good {
			return 0, 0, false
		}
		sum += f
		n++
	}
	return sum, n, true
}
