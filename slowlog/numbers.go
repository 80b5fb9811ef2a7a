package slowlog

import (
	"strconv"
	"time"
)

// parseFloat reads the plain decimals slow logs write (`0.000123`, `2`)
// without allocating, falling back to strconv for anything else.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var ip, fp uint64
	var fdigits int
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		ip = ip*10 + uint64(b[i]-'0')
		if ip > 1<<53 {
			return slowFloat(b)
		}
	}
	if i == 0 && (len(b) < 2 || b[0] != '.') {
		return slowFloat(b)
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if fdigits < 15 {
				fp = fp*10 + uint64(b[i]-'0')
				fdigits++
			}
		}
	}
	if i != len(b) {
		return slowFloat(b)
	}
	return float64(ip) + float64(fp)/pow10[fdigits], true
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

func slowFloat(b []byte) (float64, bool) {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || v < 0 || v != v {
		return 0, false
	}
	return v, true
}

// parseInt reads a non-negative decimal integer without allocating.
func parseInt(b []byte) (int64, bool) {
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

// parseLogTime reads the `# Time:` formats: `071015 21:43:52` and `071015
// 1:43:52` (MySQL 5.0-5.6 and MariaDB, server local time, read as UTC since the
// zone is not written) and RFC 3339 with fractions (`2017-12-13T02:41:18.673330Z`,
// MySQL 5.7+, with log_timestamps=SYSTEM an offset instead of Z).
func parseLogTime(v []byte) (time.Time, bool) {
	s := string(v)
	if len(s) >= 19 && s[4] == '-' && s[10] == 'T' {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t, true
		}
		if t, err := time.Parse("2006-01-02T15:04:05.999999", s); err == nil {
			return t, true
		}
		return time.Time{}, false
	}
	for _, layout := range []string{"060102 15:04:05", "060102  15:04:05", "060102 15:04:05.999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
