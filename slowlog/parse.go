package slowlog

import (
	"bytes"
	"time"

	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/internal/bytesconv"
	"github.com/stacktune/stacktune/internal/skip"
)

// MaxLineBytes is the longest line the parser accepts; an event with a longer
// line is skipped with ReasonLineTooLong.
const MaxLineBytes = 1 << 20

// Reasons an event or line is skipped. Their codes are the keys of
// Stats.Skipped.
var (
	ReasonTruncated     = skip.Define("truncated_event", "truncated event (header without query)")
	ReasonMissingHeader = skip.Define("query_without_header", "query text without a header")
	ReasonLineTooLong   = skip.Define("event_with_long_line", "line longer than 1 MiB")
	ReasonBinaryJunk    = skip.Define("binary_junk", "binary junk (NUL bytes)")
	ReasonNoQueryTime   = skip.Define("no_query_time", "missing Query_time")
	ReasonBadQueryTime  = skip.Define("bad_query_time", "unparseable Query_time")
	ReasonEventTooLarge = skip.Define("event_too_large", "event larger than 64 MiB")
	// ReasonUnread is the event a read error cut off (the input's error
	// says where).
	ReasonUnread = skip.Define("event_unread", "event cut off by a read error")
)

// Reasons lists every reason the parser counts.
var Reasons = []skip.Reason{
	ReasonTruncated, ReasonMissingHeader, ReasonLineTooLong, ReasonBinaryJunk,
	ReasonNoQueryTime, ReasonBadQueryTime, ReasonEventTooLarge, ReasonUnread,
}

// Stats counts what a parser saw. Skipped maps a Reason's code to how many
// events were skipped. The other two maps count header fields that were ignored
// while their events were kept: UnknownFields by names the parser does not
// know, BadValues by name when the value did not parse (`Rows_sent: many`).
type Stats struct {
	Events        int64            `json:"events"`
	Bytes         int64            `json:"bytes"` // read: parsed, or dropped by Split (AddSplit)
	Skipped       skip.Counts      `json:"skipped,omitempty"`
	UnknownFields map[string]int64 `json:"unknown_fields,omitempty"`
	BadValues     map[string]int64 `json:"bad_values,omitempty"`
}

// SkippedTotal is the number of events skipped for any reason.
func (s *Stats) SkippedTotal() int64 { return s.Skipped.Total() }

// Merge adds o's counts to s.
func (s *Stats) Merge(o *Stats) {
	s.Events += o.Events
	s.Bytes += o.Bytes
	s.Skipped.Merge(o.Skipped)
	s.UnknownFields = addCounts(s.UnknownFields, o.UnknownFields)
	s.BadValues = addCounts(s.BadValues, o.BadValues)
}

// AddSplit adds what Split read and dropped: the bytes it dropped (so Bytes
// is every byte read), the events too large to keep and the one a read
// error cut off.
func (s *Stats) AddSplit(cs chunk.Stats) {
	s.Bytes += cs.TooLargeBytes + cs.JunkBytes + cs.UnreadBytes
	if cs.TooLarge > 0 {
		s.skip(ReasonEventTooLarge, cs.TooLarge)
	}
	if cs.UnreadBytes > 0 {
		s.skip(ReasonUnread, 1)
	}
}

func addCounts(dst, src map[string]int64) map[string]int64 {
	for k, v := range src {
		if dst == nil {
			dst = map[string]int64{}
		}
		dst[k] += v
	}
	return dst
}

func (s *Stats) skip(reason skip.Reason, n int64) { s.Skipped.Add(reason, n) }

// maxUnknownFieldNames bounds the distinct unknown field names remembered, so
// a junk file cannot grow the map without limit.
const maxUnknownFieldNames = 64

// countName counts name in *m, bounding the distinct names.
func countName(m *map[string]int64, name []byte) {
	if *m == nil {
		*m = map[string]int64{}
	}
	if _, ok := (*m)[string(name)]; !ok && len(*m) >= maxUnknownFieldNames {
		(*m)["(other)"]++
		return
	}
	(*m)[string(name)]++
}

type state uint8

const (
	stNone   state = iota // between events
	stHeader              // reading # lines
	stQuery               // reading query lines
)

// Parser parses chunks of one slow log. The zero value is ready to use. It is
// not safe for concurrent use.
type Parser struct {
	Stats Stats

	ev    Event
	st    state
	bad   skip.Reason // reason the current event will be skipped, if any
	hasQT bool
	// query bounds within the current chunk
	qStart, qEnd int
	useDB        []byte // a leading `use db;` line, kept in case it is the whole query
	useLine      []byte
	setTS        int64 // SET timestamp value, 0 if none
	timeLine     []byte
	// lastTime is the most recent `# Time:` value, inherited by later events.
	lastTime     time.Time
	lastTimeText []byte
	orphan       bool // inside a run of query lines without header (counted once)
	junk         bool // inside a run of binary junk, up to the next event start
	onlyTime     bool // the previous line began the event with `# Time:`
	timeOK       bool // the header line being read starts with `# Time:`
}

// Parse parses a whole input that is already in memory: a convenience over
// ParseChunk for tests and small files.
func (p *Parser) Parse(data []byte, visit func(*Event)) {
	p.ParseChunk(data, 0, nil, visit)
}

// ParseChunk parses data, whose first byte is at offset base of the input,
// calling visit for every event. The end of data ends the last event (chunks
// from Split end on event boundaries). prevTime is the last `# Time:` line
// before data (Chunk.PrevTime), so events before the chunk's own first Time
// line get the right time; nil if none.
func (p *Parser) ParseChunk(data []byte, base int64, prevTime []byte, visit func(*Event)) {
	p.parse(data, base, prevTime, false, visit)
}

// ParseSplit parses a chunk from Split: ParseChunk, and when Split dropped
// binary junk right after the chunk (JunkAfter), the last event ends as
// junk, as it would had the junk been parsed.
func (p *Parser) ParseSplit(c Chunk, visit func(*Event)) {
	p.parse(c.Data, c.Base, c.PrevTime, c.JunkAfter, visit)
}

// ParseJob is ParseSplit for a chunk.Job made from a Chunk (Extra is its
// PrevTime).
func (p *Parser) ParseJob(j chunk.Job, visit func(*Event)) {
	p.parse(j.Chunk.Data, j.Chunk.Base, j.Extra, j.Chunk.JunkAfter, visit)
}

func (p *Parser) parse(data []byte, base int64, prevTime []byte, junkAfter bool, visit func(*Event)) {
	p.Stats.Bytes += int64(len(data))
	p.reset(base)
	p.lastTime, p.lastTimeText = time.Time{}, p.lastTimeText[:0]
	if v, ok := headerValue(prevTime, "Time:"); ok {
		p.noteTime(v)
	}
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end < 0 {
			end = len(data)
		} else {
			end += pos
			next = end + 1
		}
		line := data[pos:end]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		p.line(data, pos, end, line, base, visit)
		pos = next
	}
	if junkAfter && !p.junk {
		p.startJunk(data, visit)
	}
	p.flush(data, visit)
	p.junk = false
}

func (p *Parser) reset(base int64) {
	p.ev = Event{Offset: base}
	p.st = stNone
	p.bad = skip.Reason{}
	p.hasQT = false
	p.qStart, p.qEnd = -1, -1
	p.useDB, p.useLine = nil, nil
	p.setTS = 0
	p.timeLine = nil
	p.orphan = false
	p.onlyTime = false
	p.junk = false
}

func (p *Parser) line(data []byte, start, end int, line []byte, base int64, visit func(*Event)) {
	// Only the line right after an event's `# Time:` line may be its
	// `# User@Host:` line.
	afterTime := p.onlyTime
	p.onlyTime = false
	if p.junk {
		if !isEventStart(line) {
			return
		}
		p.junk = false // the junk ends where the next event starts
	}
	if bytes.IndexByte(line, 0) >= 0 {
		if isEventStart(line) && !(afterTime && bytes.HasPrefix(line, userHostPrefix)) {
			// The line would start a new event: what came before it is
			// whole, and the junk is a run of its own.
			p.flush(data, visit)
			p.orphan = false
		}
		p.startJunk(data, visit)
		return
	}
	if len(line) > MaxLineBytes {
		if p.st == stNone {
			p.Stats.skip(ReasonLineTooLong, 1)
			return
		}
		p.markBad(ReasonLineTooLong)
		if p.st == stHeader {
			p.st = stQuery // the long line is (part of) the query
			p.qStart, p.qEnd = start, end
		}
		return
	}
	if len(line) > 0 && line[0] == '#' {
		if isAdminLine(line) {
			if p.st == stNone {
				p.begin(start, base)
			}
			if p.st == stQuery && p.qStart >= 0 {
				p.flush(data, visit)
				p.begin(start, base)
			}
			// The query is "administrator command: X" without the "# ".
			p.ev.Admin = true
			p.st = stQuery
			p.qStart, p.qEnd = start+2, end
			return
		}
		if p.st == stQuery {
			if !startsEvent(line) {
				// A comment line inside a multi-line query.
				p.qEnd = end
				return
			}
			p.flush(data, visit)
		}
		if p.st == stHeader && isEventStart(line) && !(afterTime && bytes.HasPrefix(line, userHostPrefix)) {
			// A new event begins (the rule Split cuts by): the previous
			// header never got its query, so it is a truncated event.
			p.flush(data, visit)
		}
		if p.st == stNone {
			p.begin(start, base)
		}
		p.onlyTime = p.st == stNone && bytes.HasPrefix(line, timePrefix)
		p.st = stHeader
		p.header(line)
		return
	}
	switch p.st {
	case stNone:
		if len(bytes.TrimSpace(line)) == 0 || isBanner(line) {
			p.orphan = false
			return
		}
		if !p.orphan {
			p.orphan = true
			p.Stats.skip(ReasonMissingHeader, 1)
		}
		return
	case stHeader:
		if isBanner(line) {
			return
		}
		// Leading `use db;` and `SET timestamp=N;` lines belong to the
		// event, not to its query.
		if db, ok := useStatement(line); ok {
			p.useDB, p.useLine = db, line
			return
		}
		if ts, ok := setTimestamp(line); ok {
			if ts > 0 {
				p.setTS = ts
			}
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		p.st = stQuery
		p.qStart, p.qEnd = start, end
	case stQuery:
		if isBanner(line) {
			// A server restart in the middle of the log ends the event.
			p.flush(data, visit)
			return
		}
		p.qEnd = end
	}
}

// startJunk begins a run of binary junk at a line with a NUL byte: the open
// event is skipped as junk (or, between events, the run is counted once,
// unless it continues a run of headerless text already counted), and every
// line up to the next `# Time:` or `# User@Host:` line is ignored. Split
// drops the same run (Boundaries), so it never has to hold it.
func (p *Parser) startJunk(data []byte, visit func(*Event)) {
	if p.st != stNone {
		p.markBad(ReasonBinaryJunk)
		p.flush(data, visit)
	} else if !p.orphan {
		p.Stats.skip(ReasonBinaryJunk, 1)
	}
	p.orphan = false
	p.junk = true
}

func (p *Parser) begin(start int, base int64) {
	p.ev = Event{Offset: base + int64(start)}
	p.bad = skip.Reason{}
	p.hasQT = false
	p.qStart, p.qEnd = -1, -1
	p.useDB, p.useLine = nil, nil
	p.setTS = 0
	p.timeLine = nil
	p.orphan = false
}

func (p *Parser) markBad(reason skip.Reason) {
	if p.bad == (skip.Reason{}) {
		p.bad = reason
	}
}

// flush emits or counts the open event. data is the chunk the query bounds
// refer to.
func (p *Parser) flush(data []byte, visit func(*Event)) {
	if p.st == stNone {
		return
	}
	defer func() { p.st = stNone }()
	ev := &p.ev
	switch {
	case p.qStart >= 0:
		ev.Query = trimQuery(data[p.qStart:p.qEnd])
	case p.useLine != nil:
		ev.Query = trimQuery(p.useLine)
	default:
		ev.Query = nil
	}
	if p.useDB != nil {
		ev.DB = p.useDB
	}
	switch {
	case p.bad == ReasonBinaryJunk: // whatever the junk cut off
		p.Stats.skip(p.bad, 1)
		return
	case len(ev.Query) == 0:
		p.Stats.skip(ReasonTruncated, 1)
		return
	case p.bad != (skip.Reason{}):
		p.Stats.skip(p.bad, 1)
		return
	case !p.hasQT:
		p.Stats.skip(ReasonNoQueryTime, 1)
		return
	}
	// An RFC 3339 Time line (MySQL 5.7+) is exact; old `071015 21:43:52`
	// lines are in an unknown local zone, so SET timestamp (epoch seconds)
	// is preferred over them.
	switch {
	case p.timeLine != nil && len(p.timeLine) >= 19 && p.timeLine[10] == 'T':
		ev.Time = p.lastTime
	case p.setTS > 0:
		ev.Time = time.Unix(p.setTS, 0).UTC()
	default:
		ev.Time = p.lastTime
	}
	p.Stats.Events++
	visit(ev)
}

// header parses one `# Name: value  Name: value` line into the event.
func (p *Parser) header(line []byte) {
	// Servers write Time only at the start of a line; elsewhere it is not
	// the event time (and Split, which carries times across chunks, would
	// not see it).
	p.timeOK = bytes.HasPrefix(line, timePrefix)
	f := fieldScanner{line: line}
	for {
		name, value, ok := f.next()
		if !ok {
			return
		}
		p.field(name, value)
	}
}

func (p *Parser) field(name, value []byte) {
	ev := &p.ev
	switch string(name) {
	case "Query_time":
		v, ok := bytesconv.ParseSeconds(value)
		if !ok {
			p.markBad(ReasonBadQueryTime)
			return
		}
		ev.QueryTime, p.hasQT = v, true
	case "Lock_time":
		if p.float(name, value, &ev.LockTime) {
			ev.Has |= HasLockTime
		}
	case "Rows_sent":
		p.intField(name, value, &ev.RowsSent, HasRowsSent)
	case "Rows_examined":
		p.intField(name, value, &ev.RowsExamined, HasRowsExamined)
	case "Rows_affected":
		p.intField(name, value, &ev.RowsAffected, HasRowsAffected)
	case "Tmp_tables":
		p.intField(name, value, &ev.TmpTables, HasTmpTables)
	case "Tmp_disk_tables":
		p.intField(name, value, &ev.TmpDiskTables, 0)
	case "Time":
		if !p.timeOK {
			return
		}
		p.timeLine = value
		p.noteTime(value)
	case "User@Host":
		ev.User, ev.Host = parseUserHost(value)
	case "Schema":
		ev.DB = value
	case "Full_scan":
		p.flag(name, value, FullScan)
	case "Full_join":
		p.flag(name, value, FullJoin)
	case "Tmp_table":
		p.flag(name, value, TmpTable)
	case "Tmp_table_on_disk":
		p.flag(name, value, TmpTableOnDisk)
	case "Filesort":
		p.flag(name, value, Filesort)
	case "Filesort_on_disk":
		p.flag(name, value, FilesortOnDisk)
	case "QC_Hit", "QC_hit":
		p.flag(name, value, QCHit)
	default:
		if !knownFields[string(name)] {
			countName(&p.Stats.UnknownFields, name)
		}
	}
}

func (p *Parser) float(name, value []byte, dst *float64) bool {
	v, ok := bytesconv.ParseSeconds(value)
	if !ok {
		countName(&p.Stats.BadValues, name)
		return false
	}
	*dst = v
	return true
}

func (p *Parser) int(name, value []byte, dst *int64) bool {
	v, ok := bytesconv.ParseUint(value)
	if !ok {
		countName(&p.Stats.BadValues, name)
		return false
	}
	*dst = v
	return true
}

// intField reads an integer field and marks it present.
func (p *Parser) intField(name, value []byte, dst *int64, has Field) {
	if p.int(name, value, dst) {
		p.ev.Has |= has
	}
}

func (p *Parser) flag(name, value []byte, f Flag) {
	switch string(value) {
	case "Yes", "yes", "YES":
		p.ev.Flags |= f
		p.ev.Known |= f
	case "No", "no", "NO":
		p.ev.Known |= f
	default:
		countName(&p.Stats.BadValues, name)
	}
}

// noteTime parses a `# Time:` value, reusing the last result when the text is
// unchanged (MySQL 5.x repeats it for every event in the same second).
func (p *Parser) noteTime(v []byte) {
	if bytes.Equal(v, p.lastTimeText) {
		return
	}
	t, ok := parseLogTime(v)
	if !ok {
		countName(&p.Stats.BadValues, []byte("Time"))
		return
	}
	p.lastTime = t
	p.lastTimeText = append(p.lastTimeText[:0], v...)
}

// knownFields are header fields the servers write that the digest does not
// use; they are not reported as unknown.
var knownFields = map[string]bool{
	"Id": true, "Thread_id": true, "Last_errno": true, "Killed": true, "Errno": true,
	"Bytes_sent": true, "Bytes_received": true, "Rows_read": true, "Tmp_table_sizes": true,
	"Merge_passes": true, "Priority_queue": true, "explain": true,
	"InnoDB_IO_r_ops": true, "InnoDB_IO_r_bytes": true, "InnoDB_IO_r_wait": true,
	"InnoDB_rec_lock_wait": true, "InnoDB_queue_wait": true, "InnoDB_pages_distinct": true,
	"InnoDB_trx_id": true, "Log_slow_rate_type": true, "Log_slow_rate_limit": true,
	"Read_first": true, "Read_last": true, "Read_key": true, "Read_next": true, "Read_prev": true,
	"Read_rnd": true, "Read_rnd_next": true, "Sort_merge_passes": true, "Sort_range_count": true,
	"Sort_rows": true, "Sort_scan_count": true, "Created_tmp_disk_tables": true,
	"Created_tmp_tables": true, "Select_full_join": true, "Select_full_range_join": true,
	"Select_range": true, "Select_range_check": true, "Select_scan": true, "Start": true, "End": true,
	"Pages_accessed": true, "Pages_read": true, "Pages_prefetched": true, "Pages_updated": true,
	"Old_rows_read": true, "Pages_read_time": true, "Engine_time": true, "Cost": true,
	"Rows_sent_affected": true, "Tmp_tables_sizes": true, "Pages_read_time_ms": true,
}

// fieldScanner walks the `Name: value` pairs of a header line. A name is a
// token that starts with a letter and ends with ':'; a value is every token up
// to the next name (it may be empty, as in MariaDB's `Schema:   QC_hit: No`).
// A lone `#` token ends a value (`# Time: ... # User@Host: ...`).
type fieldScanner struct {
	line []byte
	pos  int
}

func (f *fieldScanner) token() (start, end int) {
	l := f.line
	i := f.pos
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	start = i
	for i < len(l) && l[i] != ' ' && l[i] != '\t' {
		i++
	}
	f.pos = i
	return start, i
}

func isName(tok []byte) bool {
	if len(tok) < 2 || tok[len(tok)-1] != ':' {
		return false
	}
	c := tok[0]
	if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
		return false
	}
	for _, c := range tok[1 : len(tok)-1] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '@') {
			return false
		}
	}
	return true
}

func (f *fieldScanner) next() (name, value []byte, ok bool) {
	// Find the next name.
	for {
		s, e := f.token()
		if s == e {
			return nil, nil, false
		}
		if tok := f.line[s:e]; isName(tok) {
			name = tok[:len(tok)-1]
			break
		}
	}
	// Collect value tokens up to the next name or a lone '#'.
	vs, ve := -1, -1
	for {
		save := f.pos
		s, e := f.token()
		if s == e {
			break
		}
		tok := f.line[s:e]
		if isName(tok) || (len(tok) == 1 && tok[0] == '#') {
			f.pos = save
			if tok[0] == '#' {
				f.pos = e
			}
			break
		}
		if vs < 0 {
			vs = s
		}
		ve = e
	}
	if vs >= 0 {
		value = f.line[vs:ve]
	}
	return name, value, true
}

// headerValue returns the value of field name (with its colon) in line.
func headerValue(line []byte, name string) ([]byte, bool) {
	f := fieldScanner{line: line}
	for {
		n, v, ok := f.next()
		if !ok {
			return nil, false
		}
		if string(n) == name[:len(name)-1] {
			return v, true
		}
	}
}

// startsEvent reports whether a # line seen after query text begins the next
// event: any header line with a field name we know.
func startsEvent(line []byte) bool {
	if isEventStart(line) {
		return true
	}
	f := fieldScanner{line: line}
	name, _, ok := f.next()
	if !ok {
		return bytes.HasPrefix(line, []byte("# No InnoDB statistics"))
	}
	switch string(name) {
	case "Time", "User@Host", "Query_time", "Thread_id", "Schema", "Id":
		return true
	}
	return false
}

var (
	timePrefix     = []byte("# Time:")
	userHostPrefix = []byte("# User@Host:")
)

// isEventStart matches the lines that open an event: a `# Time:` line, or a
// `# User@Host:` line unless it follows the event's `# Time:` line.
func isEventStart(line []byte) bool {
	return bytes.HasPrefix(line, timePrefix) || bytes.HasPrefix(line, userHostPrefix)
}

func isAdminLine(line []byte) bool {
	return bytes.HasPrefix(line, []byte("# administrator command:"))
}

// isBanner matches the lines a server writes when it (re)opens the log.
func isBanner(line []byte) bool {
	switch {
	case bytes.HasPrefix(line, []byte("Tcp port:")):
		return true
	case bytes.HasPrefix(line, []byte("Time")) && bytes.Contains(line, []byte("Command")) && bytes.Contains(line, []byte("Argument")):
		return true
	case bytes.Contains(line, []byte(", Version: ")) && bytes.Contains(line, []byte("started with")):
		return true
	}
	return false
}

// useStatement recognises a `use db;` line and returns db without quotes.
func useStatement(line []byte) ([]byte, bool) {
	l := bytes.TrimSpace(line)
	if len(l) < 5 || !bytes.EqualFold(l[:4], []byte("use ")) {
		return nil, false
	}
	db := bytes.TrimSpace(l[4:])
	if n := len(db); n > 0 && db[n-1] == ';' {
		db = bytes.TrimSpace(db[:n-1])
	}
	if len(db) >= 2 && db[0] == '`' && db[len(db)-1] == '`' {
		db = db[1 : len(db)-1]
	}
	if len(db) == 0 || bytes.ContainsAny(db, " \t;") {
		return nil, false
	}
	return db, true
}

// setTimestamp recognises the context line the server writes before a
// statement, `SET timestamp=N;`, possibly with insert_id and last_insert_id
// (`SET last_insert_id=5,insert_id=6,timestamp=1197996507;`), and returns
// the timestamp (0 when the line has none).
func setTimestamp(line []byte) (int64, bool) {
	l := bytes.TrimSpace(line)
	if len(l) < 5 || !bytes.EqualFold(l[:4], []byte("SET ")) {
		return 0, false
	}
	l = bytes.TrimSuffix(l[4:], []byte(";"))
	var ts int64
	for more := true; more; {
		var assign []byte
		assign, l, more = bytes.Cut(l, []byte(","))
		name, v, ok := bytes.Cut(bytes.TrimSpace(assign), []byte("="))
		if !ok {
			return 0, false
		}
		switch name = bytes.TrimSpace(name); {
		case bytes.EqualFold(name, []byte("timestamp")):
			// MySQL 8 may add microseconds; the second is enough.
			v, _, _ = bytes.Cut(bytes.TrimSpace(v), []byte("."))
			n, ok := bytesconv.ParseUint(v)
			if !ok {
				return 0, false
			}
			ts = n
		case bytes.EqualFold(name, []byte("insert_id")), bytes.EqualFold(name, []byte("last_insert_id")):
			if _, ok := bytesconv.ParseUint(bytes.TrimSpace(v)); !ok {
				return 0, false
			}
		default:
			return 0, false
		}
	}
	return ts, true
}

// trimQuery drops surrounding white space and one trailing semicolon.
func trimQuery(q []byte) []byte {
	q = bytes.TrimSpace(q)
	if n := len(q); n > 0 && q[n-1] == ';' {
		q = bytes.TrimSpace(q[:n-1])
	}
	return q
}

// parseUserHost reads `user[priv] @ host [ip]  ...`.
func parseUserHost(v []byte) (user, host []byte) {
	at := bytes.Index(v, []byte(" @ "))
	if at < 0 {
		at = bytes.IndexByte(v, '@')
		if at < 0 {
			return bytes.TrimSpace(v), nil
		}
	}
	u := bytes.TrimSpace(v[:at])
	if i := bytes.IndexByte(u, '['); i > 0 {
		user = u[:i]
	} else if i == 0 {
		user = bytes.Trim(u, "[]")
	} else {
		user = u
	}
	rest := bytes.TrimSpace(v[at+1:])
	if len(rest) > 0 && rest[0] == '@' {
		rest = bytes.TrimSpace(rest[1:])
	}
	if i := bytes.IndexByte(rest, '['); i >= 0 {
		host = bytes.TrimSpace(rest[:i])
		if len(host) == 0 {
			ip := rest[i+1:]
			if j := bytes.IndexByte(ip, ']'); j >= 0 {
				host = ip[:j]
			}
		}
	} else {
		host = rest
	}
	return user, host
}
