package digest

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/internal/skip"
)

// Report is a finished digest: the shape of `stacktune digest --format json`.
type Report struct {
	// Source says where the events came from: "slowlog" or
	// "performance_schema".
	Source  string   `json:"source"`
	Overall Overall  `json:"overall"`
	Classes []Class  `json:"classes"`
	Skipped Skipped  `json:"skipped"`
	Notes   []string `json:"notes,omitempty"`
}

// Overall summarises every event that was kept.
type Overall struct {
	Inputs          []string   `json:"inputs"`
	Bytes           int64      `json:"bytes"`
	Events          int64      `json:"events"`
	Filtered        int64      `json:"filtered"`
	Classes         int        `json:"classes"`
	ClassesShown    int        `json:"classes_shown"`
	TimeTotal       float64    `json:"time_total_s"`
	LockTotal       float64    `json:"lock_total_s"`
	RowsSent        int64      `json:"rows_sent_total"`
	RowsExamined    int64      `json:"rows_examined_total"`
	FirstSeen       *time.Time `json:"first_seen,omitempty"`
	LastSeen        *time.Time `json:"last_seen,omitempty"`
	QPS             float64    `json:"qps,omitempty"`
	Concurrency     float64    `json:"concurrency,omitempty"`
	IntervalSeconds float64    `json:"interval_s,omitempty"`
}

// Skipped counts what could not be used. Count is skipped events and Reasons
// says why, by skip code. UnknownFields and BadValues count header fields that were
// ignored, by name, while their events were kept.
type Skipped struct {
	Count         int64            `json:"count"`
	Reasons       skip.Counts      `json:"reasons"`
	UnknownFields map[string]int64 `json:"unknown_fields,omitempty"`
	BadValues     map[string]int64 `json:"bad_values,omitempty"`
}

// Class is one query class of a Report.
type Class struct {
	Rank          int     `json:"rank"`
	ID            string  `json:"id"`
	Fingerprint   string  `json:"fingerprint"`
	StatementType string  `json:"statement_type"`
	Sample        string  `json:"sample"`
	SampleDB      string  `json:"sample_db,omitempty"`
	Count         int64   `json:"count"`
	Share         float64 `json:"time_share"`
	TimeTotal     float64 `json:"time_total_s"`
	TimeAvg       float64 `json:"time_avg_s"`
	TimeMin       float64 `json:"time_min_s"`
	// TimeMedian and TimeP95 are nil when the source has no distribution
	// (performance_schema without quantiles).
	TimeMedian *float64 `json:"time_median_s"`
	TimeP95    *float64 `json:"time_p95_s"`
	TimeMax    float64  `json:"time_max_s"`
	// VM is the variance-to-mean ratio of query time (pt-query-digest's
	// V/M): near 0 for steady queries, large for erratic ones.
	VM        float64 `json:"v_m"`
	LockTotal float64 `json:"lock_total_s"`
	LockMax   float64 `json:"lock_max_s"`

	RowsSentTotal     int64 `json:"rows_sent_total"`
	RowsExaminedTotal int64 `json:"rows_examined_total"`
	RowsExaminedMax   int64 `json:"rows_examined_max"`
	RowsAffectedTotal int64 `json:"rows_affected_total"`
	// RowsExaminedPerSent is the first hint of a missing index: a query that
	// reads thousands of rows to return one. 0 when nothing was sent.
	RowsExaminedPerSent float64 `json:"rows_examined_per_sent"`

	// Plan counts are present only when the log records them (Percona
	// Server, MariaDB log_slow_verbosity=query_plan, performance_schema):
	// how many calls used a temporary table, one on disk, a full scan, a
	// full join, a filesort.
	Plan *PlanCounts `json:"plan,omitempty"`

	Databases map[string]int64 `json:"databases"`
	Users     map[string]int64 `json:"users"`
	FirstSeen *time.Time       `json:"first_seen,omitempty"`
	LastSeen  *time.Time       `json:"last_seen,omitempty"`
}

// PlanCounts are per-class counts of calls with a given execution trait.
// Known is the number of calls for which the source recorded them.
type PlanCounts struct {
	Known          int64 `json:"known"`
	TmpTables      int64 `json:"tmp_tables"`
	TmpDiskTables  int64 `json:"tmp_disk_tables"`
	FullScans      int64 `json:"full_scans"`
	FullJoins      int64 `json:"full_joins"`
	Filesorts      int64 `json:"filesorts"`
	FilesortOnDisk int64 `json:"filesorts_on_disk"`
}

// Sort keys for ReportOptions.Sort.
const (
	SortTotal        = "total"
	SortCount        = "count"
	SortAvg          = "avg"
	SortP95          = "p95"
	SortRowsExamined = "rows-examined"
)

// SortKeys lists the accepted sort keys.
var SortKeys = []string{SortTotal, SortCount, SortAvg, SortP95, SortRowsExamined}

// ReportOptions selects and orders classes.
type ReportOptions struct {
	Sort  string // one of SortKeys; "" means SortTotal
	Limit int    // 0 means all classes
}

// Validate checks the options.
func (o ReportOptions) Validate() error {
	if o.Sort != "" && !contains(SortKeys, o.Sort) {
		return fmt.Errorf("unknown sort key %q: use one of %s", o.Sort, strings.Join(SortKeys, ", "))
	}
	if o.Limit < 0 {
		return fmt.Errorf("limit %d is negative: use 0 for all classes", o.Limit)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Report builds the report of everything aggregated so far.
func (a *Aggregator) Report(opt ReportOptions) (*Report, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	r := &Report{Source: "slowlog", Skipped: Skipped{Reasons: skip.Counts{}}}
	r.Overall.Filtered = a.Filtered
	classes := make([]Class, 0, len(a.classes))
	for _, c := range a.classes {
		classes = append(classes, c.report())
	}
	r.Classes = classes
	r.Finish(opt)
	return r, nil
}

// Finish computes the overall figures and shares from r.Classes, then sorts,
// ranks and limits the classes. Sources that build Classes themselves (pfs)
// call it too.
func (r *Report) Finish(opt ReportOptions) {
	// Sort first, then sum in that order: float sums then do not depend on
	// map iteration order.
	sortClasses(r.Classes, opt.Sort)
	o := &r.Overall
	o.Classes = len(r.Classes)
	o.Events, o.TimeTotal, o.LockTotal, o.RowsSent, o.RowsExamined = 0, 0, 0, 0, 0
	for i := range r.Classes {
		c := &r.Classes[i]
		c.Rank = i + 1
		o.Events += c.Count
		o.TimeTotal += c.TimeTotal
		o.LockTotal += c.LockTotal
		o.RowsSent += c.RowsSentTotal
		o.RowsExamined += c.RowsExaminedTotal
		if c.FirstSeen != nil && (o.FirstSeen == nil || c.FirstSeen.Before(*o.FirstSeen)) {
			t := *c.FirstSeen
			o.FirstSeen = &t
		}
		if c.LastSeen != nil && (o.LastSeen == nil || c.LastSeen.After(*o.LastSeen)) {
			t := *c.LastSeen
			o.LastSeen = &t
		}
	}
	for i := range r.Classes {
		if o.TimeTotal > 0 {
			r.Classes[i].Share = r.Classes[i].TimeTotal / o.TimeTotal
		}
	}
	if o.IntervalSeconds == 0 && o.FirstSeen != nil && o.LastSeen != nil {
		o.IntervalSeconds = o.LastSeen.Sub(*o.FirstSeen).Seconds()
	}
	if o.IntervalSeconds > 0 {
		o.QPS = float64(o.Events) / o.IntervalSeconds
		o.Concurrency = o.TimeTotal / o.IntervalSeconds
	}
	if opt.Limit > 0 && len(r.Classes) > opt.Limit {
		r.Classes = r.Classes[:opt.Limit]
	}
	o.ClassesShown = len(r.Classes)
}

func sortKey(c *Class, key string) float64 {
	switch key {
	case SortCount:
		return float64(c.Count)
	case SortAvg:
		return c.TimeAvg
	case SortP95:
		if c.TimeP95 != nil {
			return *c.TimeP95
		}
		return c.TimeMax
	case SortRowsExamined:
		return float64(c.RowsExaminedTotal)
	default:
		return c.TimeTotal
	}
}

// sortClasses orders by key, descending; ties by total time, then ID, so the
// order is stable across runs.
func sortClasses(cs []Class, key string) {
	sort.Slice(cs, func(i, j int) bool {
		a, b := &cs[i], &cs[j]
		if ka, kb := sortKey(a, key), sortKey(b, key); ka != kb {
			return ka > kb
		}
		if a.TimeTotal != b.TimeTotal {
			return a.TimeTotal > b.TimeTotal
		}
		return a.ID < b.ID
	})
}

func (c *class) report() Class {
	n := float64(c.count)
	out := Class{
		ID:                fingerprint.ID(c.fingerprint),
		Fingerprint:       c.fingerprint,
		StatementType:     StatementType(c.fingerprint),
		Sample:            c.sample,
		SampleDB:          c.sampleDB,
		Count:             c.count,
		TimeTotal:         float64(c.qtSumUs) / 1e6,
		TimeAvg:           float64(c.qtSumUs) / 1e6 / n,
		TimeMin:           c.qtMin,
		TimeMax:           c.qtMax,
		LockTotal:         float64(c.lockSumUs) / 1e6,
		LockMax:           c.lockMax,
		RowsSentTotal:     c.rowsSent,
		RowsExaminedTotal: c.rowsExamined,
		RowsExaminedMax:   c.rowsExaminedMax,
		RowsAffectedTotal: c.rowsAffected,
		Databases:         counts(c.dbs),
		Users:             counts(c.users),
	}
	med := c.qt.Quantile(0.5, c.qtMin, c.qtMax)
	p95 := c.qt.Quantile(0.95, c.qtMin, c.qtMax)
	out.TimeMedian, out.TimeP95 = &med, &p95
	if mean := out.TimeAvg; mean > 0 && c.count > 1 {
		variance := math.Max(0, c.qtSumSq/n-mean*mean)
		// Rounded: the float sum of squares depends on the order of
		// addition in its last bits.
		out.VM = math.Round(variance/mean*1e6) / 1e6
	}
	if c.rowsSent > 0 {
		out.RowsExaminedPerSent = float64(c.rowsExamined) / float64(c.rowsSent)
	}
	if c.planKnown > 0 {
		out.Plan = &PlanCounts{Known: c.planKnown, TmpTables: c.tmpTable, TmpDiskTables: c.tmpDisk,
			FullScans: c.fullScan, FullJoins: c.fullJoin, Filesorts: c.filesort, FilesortOnDisk: c.filesortDisk}
	}
	if !c.first.IsZero() {
		f, l := c.first, c.last
		out.FirstSeen, out.LastSeen = &f, &l
	}
	return out
}

// counts copies a name → count map for the report (never nil).
func counts(m map[string]*int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = *v
	}
	return out
}
