package accesslog

import (
	"time"
)

// timeCache parses the time formats of access logs by hand and remembers the
// last second it parsed: consecutive lines nearly always share it, so most
// lines cost one 26-byte comparison. Locations for numeric zone offsets are
// created once and kept.
type timeCache struct {
	key  [32]byte
	klen int
	kind byte
	t    time.Time
	locs [4]zoneLoc
	nloc int
}

type zoneLoc struct {
	off int
	loc *time.Location
}

const (
	kindLocal = 1 + iota
	kindISO
)

var monthNames = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

func (c *timeCache) hit(kind byte, key []byte) bool {
	return c.kind == kind && c.klen == len(key) && string(c.key[:c.klen]) == string(key)
}

func (c *timeCache) store(kind byte, key []byte, t time.Time) {
	if len(key) <= len(c.key) {
		c.kind, c.klen, c.t = kind, copy(c.key[:], key), t
	}
}

// location returns a fixed zone for an offset in seconds east of UTC.
func (c *timeCache) location(off int) *time.Location {
	if off == 0 {
		return time.UTC
	}
	for i := 0; i < c.nloc; i++ {
		if c.locs[i].off == off {
			return c.locs[i].loc
		}
	}
	loc := time.FixedZone("", off)
	if c.nloc < len(c.locs) {
		c.locs[c.nloc] = zoneLoc{off, loc}
		c.nloc++
	} else {
		copy(c.locs[:], c.locs[1:])
		c.locs[len(c.locs)-1] = zoneLoc{off, loc}
	}
	return loc
}

// local parses nginx's $time_local and Apache's %t without the brackets:
// "10/Oct/2000:13:55:36 -0700".
func (c *timeCache) local(v []byte) (time.Time, bool) {
	if len(v) != 26 {
		return time.Time{}, false
	}
	if c.hit(kindLocal, v) {
		return c.t, true
	}
	if v[2] != '/' || v[6] != '/' || v[11] != ':' || v[14] != ':' || v[17] != ':' || v[20] != ' ' {
		return time.Time{}, false
	}
	day, ok1 := num2(v[0:2])
	year, ok2 := num4(v[7:11])
	hh, ok3 := num2(v[12:14])
	mm, ok4 := num2(v[15:17])
	ss, ok5 := num2(v[18:20])
	month := 0
	for i, name := range monthNames {
		if string(v[3:6]) == name {
			month = i + 1
			break
		}
	}
	off, ok6 := zoneOffset(v[21:])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month == 0 {
		return time.Time{}, false
	}
	t, ok := c.build(year, month, day, hh, mm, ss, 0, off)
	if ok {
		c.store(kindLocal, v, t)
	}
	return t, ok
}

// iso parses $time_iso8601 ("2000-10-10T13:55:36-07:00") and the RFC 3339
// times other loggers write: "Z" or "+0700" zones, a space for the "T", and
// fractions of a second. A time without a zone is read as UTC.
func (c *timeCache) iso(v []byte) (time.Time, bool) {
	if len(v) < 19 || v[4] != '-' || v[7] != '-' || (v[10] != 'T' && v[10] != ' ') || v[13] != ':' || v[16] != ':' {
		return time.Time{}, false
	}
	rest := v[19:]
	nsec := 0
	if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
		i := 1
		scale := 100000000
		for ; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
			nsec += int(rest[i]-'0') * scale
			scale /= 10
		}
		if i == 1 {
			return time.Time{}, false
		}
		rest = rest[i:]
	}
	// The cache key is the text without its fraction: date, time and zone.
	var key [32]byte
	n := copy(key[:], v[:19])
	if len(rest) > len(key)-n {
		return time.Time{}, false
	}
	n += copy(key[n:], rest)
	if c.hit(kindISO, key[:n]) {
		if nsec == 0 {
			return c.t, true
		}
		return c.t.Add(time.Duration(nsec)), true
	}
	year, ok1 := num4(v[0:4])
	month, ok2 := num2(v[5:7])
	day, ok3 := num2(v[8:10])
	hh, ok4 := num2(v[11:13])
	mm, ok5 := num2(v[14:16])
	ss, ok6 := num2(v[17:19])
	var off int
	ok7 := true
	switch {
	case len(rest) == 0: // no zone: UTC
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	case len(rest) == 6 && rest[3] == ':':
		var z [5]byte
		z[0], z[1], z[2], z[3], z[4] = rest[0], rest[1], rest[2], rest[4], rest[5]
		off, ok7 = zoneOffset(z[:])
	default:
		off, ok7 = zoneOffset(rest)
	}
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		return time.Time{}, false
	}
	t, ok := c.build(year, month, day, hh, mm, ss, 0, off)
	if !ok {
		return time.Time{}, false
	}
	c.store(kindISO, key[:n], t)
	if nsec != 0 {
		t = t.Add(time.Duration(nsec))
	}
	return t, true
}

// maxEpoch is 9999-12-31T23:59:59Z, the last second the other time formats
// can write.
const maxEpoch = 253402300799

// epoch parses seconds since 1970 with an optional fraction, as nginx's
// $msec writes them ("1700000000.123"). scale is 1 for seconds, 1e3 for
// milliseconds and 1e6 for microseconds (Apache's %{msec}t, %{usec}t).
func epoch(v []byte, scale int64) (time.Time, bool) {
	var sec int64
	i := 0
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		if i >= 17 {
			return time.Time{}, false
		}
		sec = sec*10 + int64(v[i]-'0')
	}
	if i == 0 {
		return time.Time{}, false
	}
	var nsec int64
	if i < len(v) && v[i] == '.' {
		i++
		s := int64(100000000)
		for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			nsec += int64(v[i]-'0') * s
			s /= 10
		}
	}
	if i != len(v) {
		return time.Time{}, false
	}
	unitNs := 1e9 / scale
	rem := sec % scale
	sec /= scale
	if sec > maxEpoch {
		return time.Time{}, false
	}
	nsec = rem*unitNs + nsec/scale
	return time.Unix(sec, nsec).UTC(), true
}

// anyTime parses the time formats LTSV and JSON logs use: $time_local, with
// or without brackets, ISO 8601, or epoch seconds.
func (c *timeCache) anyTime(v []byte) (time.Time, bool) {
	if len(v) == 28 && v[0] == '[' && v[27] == ']' {
		v = v[1:27]
	}
	switch {
	case len(v) == 26 && v[2] == '/':
		return c.local(v)
	case len(v) >= 19 && v[4] == '-':
		return c.iso(v)
	default:
		return epoch(v, 1)
	}
}

func (c *timeCache) build(year, month, day, hh, mm, ss, nsec, off int) (time.Time, bool) {
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hh > 23 || mm > 59 || ss > 60 {
		return time.Time{}, false
	}
	days := daysFromCivil(year, month, day)
	sec := days*86400 + int64(hh*3600+mm*60+ss) - int64(off)
	return time.Unix(sec, int64(nsec)).In(c.location(off)), true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to a proleptic
// Gregorian date (H. Hinnant's algorithm), for years 0 to 9999.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// zoneOffset reads "+hhmm" or "-hhmm" into seconds east of UTC.
func zoneOffset(z []byte) (int, bool) {
	if len(z) != 5 || z[0] != '+' && z[0] != '-' {
		return 0, false
	}
	h, ok1 := num2(z[1:3])
	m, ok2 := num2(z[3:5])
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if z[0] == '-' {
		off = -off
	}
	return off, true
}

func num2(b []byte) (int, bool) {
	if b[0] < '0' || b[0] > '9' || b[1] < '0' || b[1] > '9' {
		return 0, false
	}
	return int(b[0]-'0')*10 + int(b[1]-'0'), true
}

func num4(b []byte) (int, bool) {
	h, ok1 := num2(b[0:2])
	l, ok2 := num2(b[2:4])
	return h*100 + l, ok1 && ok2
}
