package digest

import (
	"github.com/stacktune/stacktune/histogram"
	"math"
	"strings"
	"time"

	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/slowlog"
)

// MaxDistinct bounds the distinct databases and users remembered per class;
// further names are counted under "(other)".
const MaxDistinct = 64

// MaxSampleBytes bounds the stored sample query; a longer one is cut and
// marked, so one huge INSERT cannot hold megabytes per class.
const MaxSampleBytes = 64 << 10

// Filter keeps only matching events. Empty lists match everything; matching
// is case-insensitive. Types are statement types: the first word of the
// fingerprint (select, insert, update, delete, replace, call, set, ...).
type Filter struct {
	Databases []string
	Users     []string
	Types     []string
}

func (f *Filter) empty() bool {
	return len(f.Databases) == 0 && len(f.Users) == 0 && len(f.Types) == 0
}

// Match reports whether an event of database db, user user and statement
// type typ passes the filter. An empty field of the filter matches anything.
func (f *Filter) Match(db, user, typ string) bool {
	return matchAny(f.Databases, db) && matchAny(f.Users, user) && matchAny(f.Types, typ)
}

func matchAny(list []string, v string) bool {
	if len(list) == 0 {
		return true
	}
	for _, s := range list {
		if strings.EqualFold(s, v) {
			return true
		}
	}
	return false
}

// class accumulates one fingerprint's events.
type class struct {
	fingerprint string
	count       int64

	qt histogram.Histogram
	// Sums are in integer microseconds (the logs' resolution) so that they
	// do not depend on the order events are added in: parallel runs give
	// identical reports.
	qtSumUs, lockSumUs int64
	qtSumSq            float64
	qtMin, qtMax       float64
	lockMax            float64

	rowsSent, rowsExamined, rowsAffected int64
	rowsExaminedMax                      int64
	has                                  slowlog.Field

	// Events whose plan flags were logged, and how many said Yes.
	planKnown                             int64
	tmpTable, tmpDisk, fullScan, fullJoin int64
	filesort, filesortDisk                int64

	dbs, users map[string]*int64

	first, last time.Time

	sample      string
	sampleQT    float64
	sampleInput int
	sampleOff   int64
	sampleDB    string
}

// Aggregator groups events by fingerprint. The zero value is not usable;
// call NewAggregator.
type Aggregator struct {
	filter  Filter
	classes map[string]*class
	scratch []byte
	// Filtered counts events dropped by the filter.
	Filtered int64
}

// NewAggregator returns an empty aggregator that keeps events matching f.
func NewAggregator(f Filter) *Aggregator {
	return &Aggregator{filter: f, classes: make(map[string]*class), scratch: make([]byte, 0, 4096)}
}

// Add aggregates one event from input number input (used to break ties
// between equally slow samples deterministically).
func (a *Aggregator) Add(ev *slowlog.Event, input int) {
	a.scratch = fingerprint.Append(a.scratch[:0], ev.Query)
	fp := a.scratch
	if !a.filter.empty() {
		if !a.filter.Match(string(ev.DB), string(ev.User), StatementType(string(fp))) {
			a.Filtered++
			return
		}
	}
	c := a.classes[string(fp)]
	if c == nil {
		c = &class{fingerprint: string(fp), qtMin: math.Inf(1)}
		a.classes[c.fingerprint] = c
	}
	c.count++
	qt := ev.QueryTime
	c.qt.Add(qt)
	c.qtSumUs += micros(qt)
	c.qtSumSq += qt * qt
	c.qtMin = math.Min(c.qtMin, qt)
	c.qtMax = math.Max(c.qtMax, qt)
	c.lockSumUs += micros(ev.LockTime)
	c.lockMax = math.Max(c.lockMax, ev.LockTime)
	c.rowsSent += ev.RowsSent
	c.rowsExamined += ev.RowsExamined
	c.rowsExaminedMax = max(c.rowsExaminedMax, ev.RowsExamined)
	c.rowsAffected += ev.RowsAffected
	c.has |= ev.Has
	if ev.Known != 0 {
		c.planKnown++
		c.tmpTable += flag(ev, slowlog.TmpTable)
		c.tmpDisk += flag(ev, slowlog.TmpTableOnDisk)
		c.fullScan += flag(ev, slowlog.FullScan)
		c.fullJoin += flag(ev, slowlog.FullJoin)
		c.filesort += flag(ev, slowlog.Filesort)
		c.filesortDisk += flag(ev, slowlog.FilesortOnDisk)
	} else if ev.Has&slowlog.HasTmpTables != 0 {
		// Percona's counts without the Yes/No flags.
		c.planKnown++
		if ev.TmpTables > 0 {
			c.tmpTable++
		}
		if ev.TmpDiskTables > 0 {
			c.tmpDisk++
		}
	}
	c.dbs = bump(c.dbs, ev.DB, 1)
	c.users = bump(c.users, userHost(ev), 1)
	if !ev.Time.IsZero() {
		if c.first.IsZero() || ev.Time.Before(c.first) {
			c.first = ev.Time
		}
		if ev.Time.After(c.last) {
			c.last = ev.Time
		}
	}
	// The slowest call is the sample; of equally slow ones the last, as
	// pt-query-digest chooses (">=").
	if c.sample == "" || qt > c.sampleQT || (qt == c.sampleQT && before(c.sampleInput, c.sampleOff, input, ev.Offset)) {
		c.sample = sampleText(ev.Query)
		c.sampleQT, c.sampleInput, c.sampleOff = qt, input, ev.Offset
		c.sampleDB = string(ev.DB)
	}
}

func micros(sec float64) int64 { return int64(math.Round(sec * 1e6)) }

func flag(ev *slowlog.Event, f slowlog.Flag) int64 {
	if ev.Flags&f != 0 {
		return 1
	}
	return 0
}

func before(in1 int, off1 int64, in2 int, off2 int64) bool {
	return in1 < in2 || (in1 == in2 && off1 < off2)
}

// sampleCutMark ends a sample that was cut at MaxSampleBytes.
const sampleCutMark = " /* ... cut by stacktune */"

func sampleText(q []byte) string {
	if len(q) > MaxSampleBytes {
		return string(q[:MaxSampleBytes]) + sampleCutMark
	}
	return string(q)
}

// userHost renders "user@host" (or just the user when the log has no
// host) in a stack buffer; bump's map lookup does not allocate when the key
// is already there.
func userHost(ev *slowlog.Event) []byte {
	if len(ev.Host) == 0 {
		return ev.User
	}
	var buf [128]byte
	b := append(buf[:0], ev.User...)
	b = append(b, '@')
	return append(b, ev.Host...)
}

// bump counts name in m (nil-safe; empty names are not counted), bounding the
// distinct names to MaxDistinct. Values are pointers so that counting a name
// already there is a lookup, which does not allocate, not an assignment.
func bump(m map[string]*int64, name []byte, n int64) map[string]*int64 {
	if len(name) == 0 {
		return m
	}
	if p, ok := m[string(name)]; ok {
		*p += n
		return m
	}
	if m == nil {
		m = make(map[string]*int64, 1)
	}
	key := string(name)
	if len(m) >= MaxDistinct {
		key = "(other)"
		if p, ok := m[key]; ok {
			*p += n
			return m
		}
	}
	v := n
	m[key] = &v
	return m
}

// Merge adds o's classes into a. o must not be used afterwards.
func (a *Aggregator) Merge(o *Aggregator) {
	a.Filtered += o.Filtered
	for fp, oc := range o.classes {
		c := a.classes[fp]
		if c == nil {
			a.classes[fp] = oc
			continue
		}
		c.merge(oc)
	}
}

func (c *class) merge(o *class) {
	c.count += o.count
	c.qt.Merge(&o.qt)
	c.qtSumUs += o.qtSumUs
	c.qtSumSq += o.qtSumSq
	c.qtMin = math.Min(c.qtMin, o.qtMin)
	c.qtMax = math.Max(c.qtMax, o.qtMax)
	c.lockSumUs += o.lockSumUs
	c.lockMax = math.Max(c.lockMax, o.lockMax)
	c.rowsSent += o.rowsSent
	c.rowsExamined += o.rowsExamined
	c.rowsExaminedMax = max(c.rowsExaminedMax, o.rowsExaminedMax)
	c.rowsAffected += o.rowsAffected
	c.has |= o.has
	c.planKnown += o.planKnown
	c.tmpTable += o.tmpTable
	c.tmpDisk += o.tmpDisk
	c.fullScan += o.fullScan
	c.fullJoin += o.fullJoin
	c.filesort += o.filesort
	c.filesortDisk += o.filesortDisk
	for k, v := range o.dbs {
		c.dbs = bump(c.dbs, []byte(k), *v)
	}
	for k, v := range o.users {
		c.users = bump(c.users, []byte(k), *v)
	}
	if !o.first.IsZero() && (c.first.IsZero() || o.first.Before(c.first)) {
		c.first = o.first
	}
	if o.last.After(c.last) {
		c.last = o.last
	}
	if o.sampleQT > c.sampleQT || (o.sampleQT == c.sampleQT && before(c.sampleInput, c.sampleOff, o.sampleInput, o.sampleOff)) {
		c.sample, c.sampleQT, c.sampleInput, c.sampleOff, c.sampleDB = o.sample, o.sampleQT, o.sampleInput, o.sampleOff, o.sampleDB
	}
}

// StatementType is the first word of a fingerprint: select, insert, update,
// delete, replace, call, set, begin, commit, administrator, ...
func StatementType(fp string) string {
	if i := strings.IndexAny(fp, " \t\n("); i > 0 {
		return fp[:i]
	}
	return fp
}
