package indexadv

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Where the evidence of an index's use comes from (Usage.Source): stable
// codes.
const (
	// UsagePerfSchema: performance_schema.table_io_waits_summary_by_index_usage
	// (MySQL, and MariaDB with performance_schema on), counted since the
	// server started.
	UsagePerfSchema = "performance_schema"
	// UsageUserstat: MariaDB's information_schema.INDEX_STATISTICS with
	// userstat on, counted since it was turned on or flushed.
	UsageUserstat = "index_statistics"
	// UsageExplain: the plans (EXPLAIN on the server) of the digest's
	// classes over its window.
	UsageExplain = "explain"
	// UsageNone: no evidence: unused indexes are not advised.
	UsageNone = "none"
)

// Defaults of the evidence an unused index needs.
const (
	// DefaultMinUsageWindow is the shortest window an index may be called
	// unused from: a day, so that the daily jobs (reports, backups,
	// batch imports) that may be an index's only users are in it.
	DefaultMinUsageWindow = 24 * time.Hour
	// MinExplainCoverage is the share of the window's reading statements
	// (by count) whose class must have been explained for EXPLAIN to be
	// evidence of no use.
	MinExplainCoverage = 0.95
)

// Usage is the evidence of which indexes were used over a window.
type Usage struct {
	Source string `json:"source"`
	// WindowSeconds is the window's length; MinWindowSeconds the
	// shortest one that is trusted.
	WindowSeconds    float64 `json:"window_seconds"`
	MinWindowSeconds float64 `json:"min_window_seconds"`
	// Coverage is the share of the window's reading statements the
	// evidence sees (1 for the servers' counters; the explained classes'
	// share of the statements for EXPLAIN), MinCoverage the share needed.
	Coverage    float64 `json:"coverage"`
	MinCoverage float64 `json:"min_coverage"`
	// Enough is set when the window and the coverage are both enough: only
	// then is an index advised as unused.
	Enough bool `json:"enough"`
	// Caveat is a stable code for what the source cannot see:
	// "truncate_unseen" (performance_schema's counters restart at a
	// TRUNCATE), "enabled_unseen" (userstat's since it was turned on or
	// flushed: the window is the uptime at most), "" for none.
	Caveat string `json:"caveat,omitempty"`
	// Unavailable says, as codes, why sources before this one could not
	// be used ("performance_schema_off", "userstat_off", ...).
	Unavailable []string `json:"unavailable,omitempty"`

	// reads are the reads per index ("schema.table.index", lower case);
	// tableReads per table ("schema.table"): what the evidence saw of the
	// table at all (an index of a table nobody read is not called unused
	// from a source that may not have counted it).
	reads      map[string]int64
	tableReads map[string]int64
}

// IndexReads is what the evidence says of one index (in a drop's
// evidence).
type IndexReads struct {
	Reads      int64 `json:"reads"`
	TableReads int64 `json:"table_reads"`
}

func usageKey(schema, table, index string) string {
	return strings.ToLower(schema + "." + table + "." + index)
}

// SQL of the usage sources.
const (
	sqlPFSOn        = `SELECT @@performance_schema`
	sqlPFSInstr     = `SELECT COUNT(*) FROM performance_schema.setup_instruments WHERE NAME = 'wait/io/table/sql/handler' AND ENABLED = 'YES'`
	sqlPFSConsumer  = `SELECT COUNT(*) FROM performance_schema.setup_consumers WHERE NAME = 'global_instrumentation' AND ENABLED = 'YES'`
	sqlPFSIndexRead = `SELECT OBJECT_SCHEMA, OBJECT_NAME, COALESCE(INDEX_NAME, ''), COUNT_STAR FROM performance_schema.table_io_waits_summary_by_index_usage WHERE OBJECT_TYPE = 'TABLE' AND OBJECT_SCHEMA = ?`
	sqlUptime       = `SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'`
	sqlUserstat     = `SELECT @@userstat`
	sqlIndexStats   = `SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, ROWS_READ FROM information_schema.INDEX_STATISTICS WHERE TABLE_SCHEMA = ?`
	sqlTableStats   = `SELECT TABLE_SCHEMA, TABLE_NAME, ROWS_READ + ROWS_CHANGED FROM information_schema.TABLE_STATISTICS WHERE TABLE_SCHEMA = ?`
)

// readUsage gathers the evidence of use for the schemas: the first
// source that the server offers of performance_schema, INDEX_STATISTICS
// and the plans of the workload's classes.
func readUsage(ctx context.Context, db *sql.DB, schemas []string, opt Options, plans map[string]bool, coverage float64) *Usage {
	u := &Usage{MinWindowSeconds: opt.MinUsageWindow.Seconds(), MinCoverage: 1, reads: map[string]int64{}, tableReads: map[string]int64{}}
	var uptime float64
	_ = db.QueryRowContext(ctx, sqlUptime).Scan(&uptime)
	if why := pfsUsable(ctx, db); why == "" {
		if u.read(ctx, db, schemas, sqlPFSIndexRead, true) == nil {
			u.Source, u.WindowSeconds, u.Coverage, u.Caveat = UsagePerfSchema, uptime, 1, "truncate_unseen"
			return u.judge()
		}
		u.Unavailable = append(u.Unavailable, "performance_schema_unreadable")
	} else {
		u.Unavailable = append(u.Unavailable, why)
	}
	var on sql.NullString
	if err := db.QueryRowContext(ctx, sqlUserstat).Scan(&on); err != nil || !truthy(on.String) {
		u.Unavailable = append(u.Unavailable, "userstat_off")
	} else if u.read(ctx, db, schemas, sqlIndexStats, false) == nil && u.readTables(ctx, db, schemas) == nil {
		u.Source, u.WindowSeconds, u.Coverage, u.Caveat = UsageUserstat, uptime, 1, "enabled_unseen"
		return u.judge()
	} else {
		u.Unavailable = append(u.Unavailable, "index_statistics_unreadable")
	}
	if plans == nil {
		u.Source = UsageNone
		return u
	}
	u.Source, u.WindowSeconds, u.Coverage, u.MinCoverage = UsageExplain, opt.WindowSeconds, coverage, MinExplainCoverage
	for k := range plans {
		schema, table, index := splitUsageKey(k)
		if index != "" {
			u.reads[k]++
		}
		u.tableReads[schema+"."+table]++
	}
	return u.judge()
}

func splitUsageKey(k string) (schema, table, index string) {
	p := strings.SplitN(k, ".", 3)
	if len(p) != 3 {
		return "", "", ""
	}
	return p[0], p[1], p[2]
}

func truthy(s string) bool {
	return strings.EqualFold(s, "ON") || s == "1" || strings.EqualFold(s, "YES")
}

// pfsUsable says why performance_schema's index counters cannot be used
// ("" when they can).
func pfsUsable(ctx context.Context, db *sql.DB) string {
	var on sql.NullString
	if err := db.QueryRowContext(ctx, sqlPFSOn).Scan(&on); err != nil || !truthy(on.String) {
		return "performance_schema_off"
	}
	var n int
	if err := db.QueryRowContext(ctx, sqlPFSInstr).Scan(&n); err != nil || n == 0 {
		return "table_io_instrument_off"
	}
	if err := db.QueryRowContext(ctx, sqlPFSConsumer).Scan(&n); err != nil || n == 0 {
		return "global_instrumentation_off"
	}
	return ""
}

// read adds the counters of a source, per index and, when the source
// counts table access without an index (performance_schema's rows with
// no index name), per table.
func (u *Usage) read(ctx context.Context, db *sql.DB, schemas []string, q string, tableToo bool) error {
	for _, s := range schemas {
		rows, err := db.QueryContext(ctx, q, s)
		if err != nil {
			return err
		}
		for rows.Next() {
			var schema, table, index string
			var n int64
			if err := rows.Scan(&schema, &table, &index, &n); err != nil {
				rows.Close()
				return err
			}
			if index != "" {
				u.reads[usageKey(schema, table, index)] += n
			}
			if tableToo {
				u.tableReads[strings.ToLower(schema+"."+table)] += n
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// readTables adds INDEX_STATISTICS's companion, TABLE_STATISTICS: the
// rows read and changed per table while userstat counted.
func (u *Usage) readTables(ctx context.Context, db *sql.DB, schemas []string) error {
	for _, s := range schemas {
		rows, err := db.QueryContext(ctx, sqlTableStats, s)
		if err != nil {
			return err
		}
		for rows.Next() {
			var schema, table string
			var n int64
			if err := rows.Scan(&schema, &table, &n); err != nil {
				rows.Close()
				return err
			}
			u.tableReads[strings.ToLower(schema+"."+table)] += n
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (u *Usage) judge() *Usage {
	u.Enough = u.WindowSeconds >= u.MinWindowSeconds && u.Coverage >= u.MinCoverage
	return u
}

// unused reports whether the evidence shows an index no statement read:
// enough evidence, the index counted at 0, and its table read at all in
// the window.
func (u *Usage) unused(schema, table, index string) (IndexReads, bool) {
	if u == nil || !u.Enough {
		return IndexReads{}, false
	}
	r := IndexReads{Reads: u.reads[usageKey(schema, table, index)], TableReads: u.tableReads[strings.ToLower(schema+"."+table)]}
	return r, r.Reads == 0 && r.TableReads > 0
}

// String is the evidence in one line, for a change's comments.
func (u *Usage) String() string {
	return fmt.Sprintf("usage from %s over %s (at least %s needed), coverage %.0f%%", u.Source,
		time.Duration(u.WindowSeconds*float64(time.Second)).Round(time.Second), time.Duration(u.MinWindowSeconds*float64(time.Second)).Round(time.Second), u.Coverage*100)
}
