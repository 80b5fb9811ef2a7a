package nginxconf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSize reads a size as nginx's size directives take it
// (client_body_buffer_size, proxy_buffer_size, ...; ngx_parse_size): a
// decimal number of bytes, or of kilobytes or megabytes with the suffix
// k or m (either case), 1k being 1024 bytes. A value nginx would refuse
// (empty, a sign, other suffixes, past what 64 bits hold) is an error
// that quotes it.
func ParseSize(s string) (int64, error) {
	n, unit := s, int64(1)
	if len(s) > 0 {
		switch s[len(s)-1] {
		case 'k', 'K':
			n, unit = s[:len(s)-1], 1<<10
		case 'm', 'M':
			n, unit = s[:len(s)-1], 1<<20
		}
	}
	if n == "" || len(n) > 19 {
		return 0, fmt.Errorf("nginx size %q: want a number of bytes, or of k or m", s)
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return 0, fmt.Errorf("nginx size %q: want a number of bytes, or of k or m", s)
		}
	}
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil || v > math.MaxInt64/unit {
		return 0, fmt.Errorf("nginx size %q: too large", s)
	}
	return v * unit, nil
}

// ParseSeconds reads an nginx time as its time directives take it
// (keepalive_timeout, open_file_cache_valid, ...; ngx_parse_time) in
// seconds: "65", "75s", "1m", "500ms", "1h30m"; the units ms, s, m, h, d,
// w, M (30 days) and y (365 days), seconds without one. ok is false for
// anything else.
func ParseSeconds(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	units := map[string]float64{"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "M": 2592000, "y": 31536000}
	total := 0.0
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, false
		}
		v, _ := strconv.Atoi(s[:i])
		s = s[i:]
		j := 0
		for j < len(s) && (s[j] < '0' || s[j] > '9') && s[j] != ' ' {
			j++
		}
		unit := s[:j]
		s = strings.TrimLeft(s[j:], " ")
		if unit == "" {
			unit = "s"
		}
		m, ok := units[unit]
		if !ok {
			return 0, false
		}
		total += float64(v) * m
	}
	return total, true
}
