package slowlog

import (
	"time"
)

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
