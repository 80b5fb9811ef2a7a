package collect

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/pfs"
)

// Queries is the layer of the queries run during the collection interval
// (--queries): a digest of the slow log's events written during it (the
// log's size noted at the run's start; a log that did not grow is read
// from its last 64 MiB and said so), or of performance_schema's statement
// digests read at the run's start and end. The classes with the most time
// are kept with what the rules need: the statement and a sample, calls,
// rows, and the temporary tables on disk where the source records them.
type Queries struct {
	// Source is "slowlog" or "performance_schema"; Files the slow logs.
	Source string   `json:"source"`
	Files  []string `json:"files,omitempty"`
	// Window is "interval" or "tail" (see HTTPLog.Window).
	Window  string  `json:"window"`
	Bytes   int64   `json:"bytes,omitempty"`
	Seconds float64 `json:"seconds"`
	Events  int64   `json:"events"`
	// TimeTotal is the query time of every event read.
	TimeTotal float64 `json:"time_total_s"`
	// PlanKnown says the source records temporary tables per query
	// (performance_schema, MariaDB with log_slow_verbosity=query_plan,
	// Percona Server): without it TmpDiskTables are unknown.
	PlanKnown bool         `json:"plan_known"`
	Classes   []QueryClass `json:"classes"`
	Skipped   int64        `json:"skipped"`
	Notes     []string     `json:"notes,omitempty"`
}

// QueryClass is one class of the digest.
type QueryClass struct {
	ID          string `json:"id"`
	Fingerprint string `json:"fingerprint"`
	// Sample is the slowest call's text, cut at 2 KiB.
	Sample       string  `json:"sample"`
	Database     string  `json:"database,omitempty"`
	Count        int64   `json:"count"`
	TimeTotal    float64 `json:"time_total_s"`
	RowsSent     int64   `json:"rows_sent"`
	RowsExamined int64   `json:"rows_examined"`
	RowsAffected int64   `json:"rows_affected"`
	// TmpTables and TmpDiskTables count calls that made a temporary table
	// and one on disk; -1 when the source does not record them.
	TmpTables     int64 `json:"tmp_tables"`
	TmpDiskTables int64 `json:"tmp_disk_tables"`
}

// Bounds of the queries collector.
const (
	queriesMaxBytes = 256 << 20
	queriesTail     = 64 << 20
	queriesClasses  = 50
	querySampleMax  = 2 << 10
)

type queriesCollector struct {
	source   string // a slow log path, or "pfs"
	db       *sql.DB
	interval time.Duration
	mark     fileMark
	marked   bool
	first    *pfs.Snapshot
	startAt  time.Time
}

// NewQueries returns the collector of the queries: source is a slow log's
// path, or "pfs" for performance_schema (db is then the server).
func NewQueries(source string, db *sql.DB, interval time.Duration) Collector {
	return &queriesCollector{source: source, db: db, interval: interval}
}

var _ Starter = (*queriesCollector)(nil)

func (c *queriesCollector) Name() string { return "queries" }

func init() {
	register(Registration{
		Name:  "queries",
		Layer: "queries",
		Order: 80,
		Flags: []Flag{
			{Name: "queries", Kind: FlagString, Usage: `the queries of the interval: a slow log's path (its lines written during the interval), or "pfs" for performance_schema's digests (needs --dsn)`},
		},
		AskedBy: "queries",
		New: func(cfg Config) (Collector, error) {
			src := cfg.Value("queries")
			if src == "pfs" && cfg.DB == nil {
				if cfg.DBError != nil {
					return nil, cfg.DBError
				}
				return nil, fmt.Errorf(`--queries pfs reads performance_schema: give the server with --dsn`)
			}
			return NewQueries(src, cfg.DB, cfg.Duration("interval")), nil
		},
	})
}

func (c *queriesCollector) pfs() bool { return c.source == "pfs" }

// Start notes the slow log's size, or reads performance_schema's digests.
func (c *queriesCollector) Start(ctx context.Context) error {
	c.startAt = time.Now()
	if c.pfs() {
		s, err := pfs.Take(ctx, c.db)
		c.first = s
		return err
	}
	m, err := markOf(c.source)
	if err == nil {
		c.mark, c.marked = m, true
	}
	return err
}

// Collect digests what ran during the interval.
func (c *queriesCollector) Collect(ctx context.Context, s *Snapshot) error {
	if !c.startAt.IsZero() {
		if err := waitSince(ctx, c.startAt, c.interval); err != nil {
			return fmt.Errorf("queries: %w", err)
		}
	}
	ropt := digest.ReportOptions{Sort: digest.SortTotal, Limit: queriesClasses}
	q := &Queries{Classes: []QueryClass{}}
	var rep *digest.Report
	var readErr error
	if c.pfs() {
		q.Source, q.Window = "performance_schema", "interval"
		if c.first == nil {
			return fmt.Errorf("queries: performance_schema was not read at the run's start")
		}
		b, err := pfs.Take(ctx, c.db)
		if err != nil {
			return fmt.Errorf("queries: %w", err)
		}
		if rep, err = pfs.Diff(c.first, b, pfs.Options{Report: ropt}); err != nil {
			return fmt.Errorf("queries: %w", err)
		}
		q.Seconds = rep.Overall.IntervalSeconds
	} else {
		q.Source, q.Files, q.Window = "slowlog", []string{c.source}, "interval"
		now, err := markOf(c.source)
		if err != nil {
			return fmt.Errorf("queries: %w", err)
		}
		off, end := c.mark.size, now.size
		if !c.marked || c.mark.dev != now.dev || c.mark.ino != now.ino || now.size <= c.mark.size {
			q.Window, off = "tail", max(0, now.size-queriesTail)
			q.Notes = append(q.Notes, fmt.Sprintf("the slow log did not grow during the interval (or was rotated): its last %d MiB were read, not the interval (set long_query_time low while collecting, as stacktune diagnose does)", queriesTail>>20))
		} else if end-off > queriesMaxBytes {
			off = end - queriesMaxBytes
			q.Notes = append(q.Notes, fmt.Sprintf("more than %d MiB of slow log during the interval: its last %d MiB were read", queriesMaxBytes>>20, queriesMaxBytes>>20))
		}
		f, _, err := input.OpenFile(c.source)
		if err != nil {
			return fmt.Errorf("queries: %w", err)
		}
		defer f.Close()
		q.Bytes = end - off
		in := input.Input{Name: c.source, R: io.NewSectionReader(f, off, end-off)}
		rep, readErr = digest.ReportOf(ctx, []input.Input{in}, []string{c.source}, digest.Options{}, ropt)
		if rep == nil {
			return fmt.Errorf("queries: %w", readErr)
		}
		if rep.Overall.FirstSeen != nil && rep.Overall.LastSeen != nil {
			q.Seconds = rep.Overall.LastSeen.Sub(*rep.Overall.FirstSeen).Seconds()
		}
	}
	q.Events, q.TimeTotal, q.Skipped = rep.Overall.Events, rep.Overall.TimeTotal, rep.Skipped.Count
	q.Notes = append(q.Notes, rep.Notes...)
	for _, cl := range rep.Classes {
		qc := QueryClass{ID: cl.ID, Fingerprint: cl.Fingerprint, Sample: cutString(cl.Sample, querySampleMax), Database: cl.SampleDB,
			Count: cl.Count, TimeTotal: cl.TimeTotal, RowsSent: cl.RowsSentTotal, RowsExamined: cl.RowsExaminedTotal, RowsAffected: cl.RowsAffectedTotal,
			TmpTables: -1, TmpDiskTables: -1}
		if cl.Plan != nil && cl.Plan.Known > 0 {
			qc.TmpTables, qc.TmpDiskTables = cl.Plan.TmpTables, cl.Plan.TmpDiskTables
			q.PlanKnown = true
		}
		q.Classes = append(q.Classes, qc)
	}
	if err := s.SetLayer("queries", q); err != nil {
		return err
	}
	if readErr != nil {
		return fmt.Errorf("queries: %w", readErr)
	}
	return nil
}

// cutString cuts s at n bytes (on a rune boundary) with "...".
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	return strings.TrimSpace(s[:i]) + "..."
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
