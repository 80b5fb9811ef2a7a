package pfs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/internal/skip"
)

// ErrDisabled means performance_schema cannot give statement digests on this
// server; the error text says what to change.
var ErrDisabled = errors.New("performance_schema statement digests are not available")

// ReasonDigestTableFull counts the statements of the NULL digest row: the
// digest table was full, so the server summed them without a class.
var ReasonDigestTableFull = skip.Define("digest_table_full", "digest table full (NULL digest row); raise performance_schema_digests_size")

// Options configures Digest.
type Options struct {
	Interval time.Duration // time between the two samples; 0 means 10 s
	Filter   digest.Filter // Users must be empty: digests are not kept per user
	Report   digest.ReportOptions
}

// SQL text, beside the code that runs it.
const (
	qEnabled   = `SELECT @@performance_schema, VERSION()`
	qConsumers = `SELECT NAME, ENABLED FROM performance_schema.setup_consumers
WHERE NAME IN ('global_instrumentation', 'thread_instrumentation', 'statements_digest')`
	qColumns = `SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = 'performance_schema'
  AND TABLE_NAME IN ('events_statements_summary_by_digest', 'events_statements_histogram_by_digest')`
	qHistogram = `SELECT SCHEMA_NAME, DIGEST, BUCKET_NUMBER, BUCKET_TIMER_LOW, BUCKET_TIMER_HIGH, COUNT_BUCKET
FROM performance_schema.events_statements_histogram_by_digest WHERE COUNT_BUCKET > 0`
)

// summaryColumns are read when the server has them, in this order; the
// first ones exist in every version that has the table (MySQL 5.6+,
// MariaDB 10.0+).
var summaryColumns = []string{
	"SCHEMA_NAME", "DIGEST", "DIGEST_TEXT", "COUNT_STAR", "SUM_TIMER_WAIT", "MIN_TIMER_WAIT", "MAX_TIMER_WAIT",
	"SUM_LOCK_TIME", "SUM_ROWS_SENT", "SUM_ROWS_EXAMINED", "SUM_ROWS_AFFECTED", "SUM_CREATED_TMP_TABLES",
	"SUM_CREATED_TMP_DISK_TABLES", "SUM_SELECT_SCAN", "SUM_SELECT_FULL_JOIN", "SUM_SORT_SCAN", "SUM_SORT_RANGE",
	"SUM_NO_INDEX_USED", "FIRST_SEEN", "LAST_SEEN",
	// MySQL 8.0+
	"QUERY_SAMPLE_TEXT", "QUANTILE_95",
}

const picosecond = 1e-12

type key struct{ schema, digest string }

// row is one digest's counters; times are picoseconds as the server keeps
// them.
type row struct {
	text, sample                           string
	count, sumWait, minWait, maxWait, lock uint64
	rowsSent, rowsExamined, rowsAffected   uint64
	tmp, tmpDisk, scan, fullJoin, sortScan uint64
	sortRange, noIndex, q95                uint64
	first, last                            time.Time
}

type bucket struct {
	low, high uint64 // picoseconds
	count     uint64
}

// Snapshot is one reading of the digest summary.
type Snapshot struct {
	At      time.Time
	Version string
	Rows    map[key]row
	Hist    map[key]map[int]bucket // nil when the server has no histogram table
	has     map[string]bool        // summary columns present
}

// Check returns ErrDisabled, with the fix, when the server cannot give
// digests, and the server version otherwise.
func Check(ctx context.Context, db *sql.DB) (string, error) {
	var on, version string
	if err := db.QueryRowContext(ctx, qEnabled).Scan(&on, &version); err != nil {
		return "", fmt.Errorf("reading @@performance_schema: %w", err)
	}
	if on != "1" && !strings.EqualFold(on, "ON") {
		return version, fmt.Errorf("%w: performance_schema is OFF on %s (MariaDB's default). "+
			"Turn it on with performance_schema=ON under [mysqld] in my.cnf and restart the server "+
			"(it cannot be switched on at run time); or digest the slow log instead "+
			"(SET GLOBAL slow_query_log=ON, long_query_time=0)", ErrDisabled, version)
	}
	rows, err := db.QueryContext(ctx, qConsumers)
	if err != nil {
		return version, fmt.Errorf("reading performance_schema.setup_consumers: %w", err)
	}
	defer rows.Close()
	var off []string
	for rows.Next() {
		var name, enabled string
		if err := rows.Scan(&name, &enabled); err != nil {
			return version, fmt.Errorf("reading performance_schema.setup_consumers: %w", err)
		}
		if !strings.EqualFold(enabled, "YES") {
			off = append(off, name)
		}
	}
	if err := rows.Err(); err != nil {
		return version, fmt.Errorf("reading performance_schema.setup_consumers: %w", err)
	}
	if len(off) > 0 {
		return version, fmt.Errorf("%w: consumers %s are disabled on %s. Enable them with "+
			"UPDATE performance_schema.setup_consumers SET ENABLED='YES' WHERE NAME IN ('%s') "+
			"(stacktune only reads and will not do it for you)", ErrDisabled, strings.Join(off, ", "), version, strings.Join(off, "', '"))
	}
	return version, nil
}

// Take reads the digest summary (and histogram, where the server has one).
func Take(ctx context.Context, db *sql.DB) (*Snapshot, error) {
	version, err := Check(ctx, db)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Version: version, Rows: map[key]row{}, has: map[string]bool{}}
	hasHist, err := s.columns(ctx, db)
	if err != nil {
		return nil, err
	}
	s.At = time.Now()
	if err := s.readSummary(ctx, db); err != nil {
		return nil, err
	}
	if hasHist {
		if err := s.readHistogram(ctx, db); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Snapshot) columns(ctx context.Context, db *sql.DB) (hist bool, err error) {
	rows, err := db.QueryContext(ctx, qColumns)
	if err != nil {
		return false, fmt.Errorf("reading performance_schema columns: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			return false, fmt.Errorf("reading performance_schema columns: %w", err)
		}
		if table == "events_statements_histogram_by_digest" {
			hist = true
			continue
		}
		s.has[strings.ToUpper(col)] = true
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("reading performance_schema columns: %w", err)
	}
	for _, c := range summaryColumns[:4] {
		if !s.has[c] {
			return false, fmt.Errorf("%w: performance_schema.events_statements_summary_by_digest lacks %s on %s", ErrDisabled, c, s.Version)
		}
	}
	return hist, nil
}

func (s *Snapshot) readSummary(ctx context.Context, db *sql.DB) error {
	var cols []string
	for _, c := range summaryColumns {
		if s.has[c] {
			cols = append(cols, c)
		}
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM performance_schema.events_statements_summary_by_digest"
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("reading events_statements_summary_by_digest: %w", err)
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	for rows.Next() {
		var (
			schema, dig, text, sample sql.NullString
			first, last               dbTime
			r                         row
			q95                       sql.NullInt64
		)
		for i, c := range cols {
			switch c {
			case "SCHEMA_NAME":
				vals[i] = &schema
			case "DIGEST":
				vals[i] = &dig
			case "DIGEST_TEXT":
				vals[i] = &text
			case "QUERY_SAMPLE_TEXT":
				vals[i] = &sample
			case "FIRST_SEEN":
				vals[i] = &first
			case "LAST_SEEN":
				vals[i] = &last
			case "QUANTILE_95":
				vals[i] = &q95
			default:
				vals[i] = r.counter(c)
			}
		}
		if err := rows.Scan(vals...); err != nil {
			return fmt.Errorf("reading events_statements_summary_by_digest: %w", err)
		}
		r.text, r.sample = text.String, sample.String
		r.first, r.last = first.t, last.t
		if q95.Valid && q95.Int64 > 0 {
			r.q95 = uint64(q95.Int64)
		}
		s.Rows[key{schema.String, dig.String}] = r
	}
	return rows.Err()
}

// dbTime scans a TIMESTAMP whether or not the connection has parseTime
// (the caller's DSN decides); the server writes it in its own time zone.
type dbTime struct{ t time.Time }

func (d *dbTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		d.t = time.Time{}
	case time.Time:
		d.t = x
	case []byte:
		return d.parse(string(x))
	case string:
		return d.parse(x)
	default:
		return fmt.Errorf("unexpected %T for a timestamp", v)
	}
	return nil
}

func (d *dbTime) parse(s string) error {
	t, err := time.ParseInLocation("2006-01-02 15:04:05.999999", s, time.Local)
	if err != nil {
		return fmt.Errorf("parsing timestamp %q: %w", s, err)
	}
	d.t = t
	return nil
}

// counter maps a numeric column to its field.
func (r *row) counter(col string) *uint64 {
	switch col {
	case "COUNT_STAR":
		return &r.count
	case "SUM_TIMER_WAIT":
		return &r.sumWait
	case "MIN_TIMER_WAIT":
		return &r.minWait
	case "MAX_TIMER_WAIT":
		return &r.maxWait
	case "SUM_LOCK_TIME":
		return &r.lock
	case "SUM_ROWS_SENT":
		return &r.rowsSent
	case "SUM_ROWS_EXAMINED":
		return &r.rowsExamined
	case "SUM_ROWS_AFFECTED":
		return &r.rowsAffected
	case "SUM_CREATED_TMP_TABLES":
		return &r.tmp
	case "SUM_CREATED_TMP_DISK_TABLES":
		return &r.tmpDisk
	case "SUM_SELECT_SCAN":
		return &r.scan
	case "SUM_SELECT_FULL_JOIN":
		return &r.fullJoin
	case "SUM_SORT_SCAN":
		return &r.sortScan
	case "SUM_SORT_RANGE":
		return &r.sortRange
	case "SUM_NO_INDEX_USED":
		return &r.noIndex
	}
	return new(uint64)
}

func (s *Snapshot) readHistogram(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, qHistogram)
	if err != nil {
		return fmt.Errorf("reading events_statements_histogram_by_digest: %w", err)
	}
	defer rows.Close()
	s.Hist = map[key]map[int]bucket{}
	for rows.Next() {
		var (
			schema, dig sql.NullString
			n           int
			b           bucket
		)
		if err := rows.Scan(&schema, &dig, &n, &b.low, &b.high, &b.count); err != nil {
			return fmt.Errorf("reading events_statements_histogram_by_digest: %w", err)
		}
		k := key{schema.String, dig.String}
		if s.Hist[k] == nil {
			s.Hist[k] = map[int]bucket{}
		}
		s.Hist[k][n] = b
	}
	return rows.Err()
}

// Digest takes two snapshots opt.Interval apart and reports the difference.
func Digest(ctx context.Context, db *sql.DB, opt Options) (*digest.Report, error) {
	interval := opt.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	a, err := Take(ctx, db)
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	b, err := Take(ctx, db)
	if err != nil {
		return nil, err
	}
	return Diff(a, b, opt)
}

// Diff reports what ran between snapshots a and b.
func Diff(a, b *Snapshot, opt Options) (*digest.Report, error) {
	if err := opt.Report.Validate(); err != nil {
		return nil, err
	}
	if len(opt.Filter.Users) > 0 {
		return nil, errors.New("performance_schema keeps digests per schema, not per user: filter by user works only on slow logs")
	}
	rep := &digest.Report{Source: "performance_schema", Skipped: digest.Skipped{Reasons: skip.Counts{}}}
	rep.Overall.IntervalSeconds = b.At.Sub(a.At).Seconds()
	rep.Overall.Inputs = []string{"performance_schema.events_statements_summary_by_digest on " + b.Version}
	byFP := map[string]*digest.Class{}
	var reset, overflow int64
	for k, rb := range b.Rows {
		ra, seen := a.Rows[k]
		if seen && rb.count < ra.count {
			// The summary was truncated or the row evicted and reused
			// in between: count what the new row holds.
			ra, seen = row{}, false
			reset++
		}
		if !seen {
			ra = row{}
		}
		n := rb.count - ra.count
		if n == 0 {
			continue
		}
		if k.digest == "" {
			overflow += int64(n)
			continue
		}
		// A real sample (MySQL 8) fingerprints like a slow-log query;
		// DIGEST_TEXT needs turning back into plain SQL first.
		text, fpText := rb.sample, rb.sample
		if text == "" {
			text, fpText = rb.text, digestTextToSQL(rb.text)
		}
		fp := fingerprint.Fingerprint(fpText)
		if !opt.Filter.Match(k.schema, "", digest.StatementType(fp)) {
			rep.Overall.Filtered += int64(n)
			continue
		}
		c := deltaClass(k, ra, rb, a.Hist[k], b.Hist[k], seen)
		c.Fingerprint, c.ID, c.StatementType = fp, fingerprint.ID(fp), digest.StatementType(fp)
		c.Sample = text
		if prev := byFP[fp]; prev != nil {
			mergeClass(prev, &c)
			continue
		}
		cc := c
		byFP[fp] = &cc
	}
	for _, c := range byFP {
		rep.Classes = append(rep.Classes, *c)
	}
	if overflow > 0 {
		rep.Skipped.Reasons.Add(ReasonDigestTableFull, overflow)
		rep.Skipped.Count += overflow
	}
	for k := range a.Rows {
		if _, ok := b.Rows[k]; !ok {
			reset++ // truncated summary, or a digest evicted from a full table
		}
	}
	if reset > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d digests were reset during the interval (summary truncated or digests evicted); their counts start from the reset", reset))
	}
	rep.Notes = append(rep.Notes, "min and max are since the digest summary was last reset (the server keeps no per-interval extremes)")
	if b.Hist == nil && !b.has["QUANTILE_95"] {
		rep.Notes = append(rep.Notes, "this server keeps no latency distribution per digest: median and p95 are not available (use the slow log for them)")
	}
	rep.Finish(opt.Report)
	return rep, nil
}

func deltaClass(k key, a, b row, ha, hb map[int]bucket, seen bool) digest.Class {
	n := float64(b.count - a.count)
	c := digest.Class{
		Count:             int64(b.count - a.count),
		TimeTotal:         float64(b.sumWait-a.sumWait) * picosecond,
		TimeMin:           float64(b.minWait) * picosecond,
		TimeMax:           float64(b.maxWait) * picosecond,
		LockTotal:         float64(b.lock-a.lock) * picosecond,
		RowsSentTotal:     int64(b.rowsSent - a.rowsSent),
		RowsExaminedTotal: int64(b.rowsExamined - a.rowsExamined),
		RowsAffectedTotal: int64(b.rowsAffected - a.rowsAffected),
		Databases:         map[string]int64{},
		Users:             map[string]int64{},
	}
	c.TimeAvg = c.TimeTotal / n
	if c.RowsSentTotal > 0 {
		c.RowsExaminedPerSent = float64(c.RowsExaminedTotal) / float64(c.RowsSentTotal)
	}
	if k.schema != "" {
		c.Databases[k.schema] = c.Count
	}
	c.Plan = &digest.PlanCounts{
		Known:         c.Count,
		TmpTables:     int64(b.tmp - a.tmp),
		TmpDiskTables: int64(b.tmpDisk - a.tmpDisk),
		// SELECT_SCAN counts full scans of SELECTs only; NO_INDEX_USED
		// counts any statement that scanned without an index (UPDATE and
		// DELETE too).
		FullScans: int64(max(b.scan-a.scan, b.noIndex-a.noIndex)),
		FullJoins: int64(b.fullJoin - a.fullJoin),
		Filesorts: int64(b.sortScan - a.sortScan + b.sortRange - a.sortRange),
	}
	if !b.first.IsZero() {
		first, last := b.first, b.last
		if seen && !a.last.IsZero() {
			// Only the calls after the first snapshot count.
			first = a.last
		}
		c.FirstSeen, c.LastSeen = &first, &last
	}
	if hb != nil {
		if med, p95, ok := histQuantiles(ha, hb, c.TimeMin, c.TimeMax); ok {
			c.TimeMedian, c.TimeP95 = &med, &p95
		}
	} else if b.q95 > 0 {
		p95 := float64(b.q95) * picosecond
		c.TimeP95 = &p95
	}
	return c
}

// histQuantiles returns the median and p95 of the bucket deltas b - a: the
// upper bound of the bucket holding each rank, clamped to [min, max].
func histQuantiles(a, b map[int]bucket, min, max float64) (med, p95 float64, ok bool) {
	maxN := -1
	var total uint64
	for n, bb := range b {
		if n > maxN {
			maxN = n
		}
		total += bb.count - min64(a[n].count, bb.count)
	}
	if total == 0 {
		return 0, 0, false
	}
	at := func(q float64) float64 {
		rank := uint64(math.Ceil(q * float64(total)))
		var seen uint64
		for n := 0; n <= maxN; n++ {
			bb, ok := b[n]
			if !ok {
				continue
			}
			seen += bb.count - min64(a[n].count, bb.count)
			if seen >= rank && seen > 0 {
				return math.Min(math.Max(float64(bb.high)*picosecond, min), max)
			}
		}
		return max
	}
	return at(0.5), at(0.95), true
}

func min64(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

// mergeClass folds c into into (two digests, e.g. of two schemas, with one
// fingerprint).
func mergeClass(into, c *digest.Class) {
	into.TimeTotal += c.TimeTotal
	into.Count += c.Count
	into.TimeAvg = into.TimeTotal / float64(into.Count)
	into.TimeMin = math.Min(into.TimeMin, c.TimeMin)
	into.TimeMax = math.Max(into.TimeMax, c.TimeMax)
	into.LockTotal += c.LockTotal
	into.RowsSentTotal += c.RowsSentTotal
	into.RowsExaminedTotal += c.RowsExaminedTotal
	into.RowsAffectedTotal += c.RowsAffectedTotal
	into.RowsExaminedPerSent = 0
	if into.RowsSentTotal > 0 {
		into.RowsExaminedPerSent = float64(into.RowsExaminedTotal) / float64(into.RowsSentTotal)
	}
	for k, v := range c.Databases {
		into.Databases[k] += v
	}
	p, q := into.Plan, c.Plan
	p.Known += q.Known
	p.TmpTables += q.TmpTables
	p.TmpDiskTables += q.TmpDiskTables
	p.FullScans += q.FullScans
	p.FullJoins += q.FullJoins
	p.Filesorts += q.Filesorts
	// Percentiles of two distributions cannot be combined from the
	// percentiles alone, so they are dropped rather than guessed.
	into.TimeMedian, into.TimeP95 = nil, nil
	if c.FirstSeen != nil && (into.FirstSeen == nil || c.FirstSeen.Before(*into.FirstSeen)) {
		into.FirstSeen = c.FirstSeen
	}
	if c.LastSeen != nil && (into.LastSeen == nil || c.LastSeen.After(*into.LastSeen)) {
		into.LastSeen = c.LastSeen
	}
}
