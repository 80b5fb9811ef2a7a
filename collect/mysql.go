package collect

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/mysqlvar"
)

// MySQL is the database layer: what the server is, how it is configured
// (the running values, not a file), and what it did over the sampling
// interval.
type MySQL struct {
	// Flavor is "mysql", "mariadb" or "percona".
	Flavor string `json:"flavor"`
	// Version is VERSION() as the server gives it
	// ("10.11.19-MariaDB-0+deb12u1", "8.0.36"); VersionNumber its parsed
	// leading major.minor.patch; VersionComment is @@version_comment.
	Version        string           `json:"version"`
	VersionNumber  mysqlvar.Version `json:"version_number"`
	VersionComment string           `json:"version_comment"`
	// Variables is SHOW GLOBAL VARIABLES, every one, as strings. Values of
	// variables that hold credentials (see secretVariable) are "***".
	Variables map[string]string `json:"variables"`
	// Status is SHOW GLOBAL STATUS read twice, with rates.
	Status Status `json:"status"`
	// InnoDB are the buffer pool and redo figures derived from Variables
	// and Status.
	InnoDB InnoDB `json:"innodb"`
	// Connections compares the peak of connections with the limit.
	Connections Connections `json:"connections"`
	// Data is the size of the tables, from information_schema.TABLES.
	Data DataSizes `json:"data"`
	// PerformanceSchema says whether statement digests can be read.
	PerformanceSchema PerformanceSchema `json:"performance_schema"`
	// BlobColumns are the user tables' TEXT, BLOB and JSON columns (at
	// most maxBlobColumns): an implicit temporary table holding one goes
	// to disk on MariaDB and MySQL before 8.0.13 whatever tmp_table_size
	// says.
	BlobColumns []BlobColumn `json:"blob_columns,omitempty"`
	// VariableRules say what the server does to a value of a numeric
	// variable it rounds or bounds (MariaDB publishes its block sizes and
	// ranges in information_schema.SYSTEM_VARIABLES; MySQL its ranges in
	// performance_schema.variables_info), so a value can be compared with
	// the running one after the server's own rounding. Nil when the server
	// publishes none.
	VariableRules map[string]VariableRule `json:"variable_rules,omitempty"`
	// Missing names what could not be read (a missing privilege, a
	// failed query); the collector's error says why. The matching fields
	// are zero or nil.
	Missing []string `json:"missing,omitempty"`
}

// BlobColumn is one TEXT, BLOB or JSON column.
type BlobColumn struct {
	Schema string `json:"schema"`
	Table  string `json:"table"`
	Column string `json:"column"`
	Type   string `json:"type"`
}

// maxBlobColumns bounds BlobColumns.
const maxBlobColumns = 10000

// readBlobColumns reads the user tables' TEXT, BLOB and JSON columns.
func (c *mysqlCollector) readBlobColumns(ctx context.Context, m *MySQL) error {
	rows, err := c.db.QueryContext(ctx, qMySQLBlobColumns, maxBlobColumns)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var b BlobColumn
		if err := rows.Scan(&b.Schema, &b.Table, &b.Column, &b.Type); err != nil {
			return err
		}
		m.BlobColumns = append(m.BlobColumns, b)
	}
	return rows.Err()
}

// VariableRule is what a server publishes about a numeric variable: its
// type, its bounds and the block its values are rounded down to.
type VariableRule struct {
	Type  string `json:"type,omitempty"`
	Min   string `json:"min,omitempty"`
	Max   string `json:"max,omitempty"`
	Block int64  `json:"block,omitempty"`
	// Exact: the server published all of it (MariaDB), so the value it
	// will hold is known exactly; else only the bounds are.
	Exact bool `json:"exact,omitempty"`
}

// Meta is the rule as mysqlvar's Meta, whose Expect gives the value the
// server holds after name is set to a value.
func (r VariableRule) Meta(name string) mysqlvar.Meta {
	m := mysqlvar.Meta{Name: name, Exists: true, Type: r.Type, Block: r.Block, Exact: r.Exact}
	if v, ok := new(big.Rat).SetString(r.Min); ok && r.Min != "" {
		m.Min = v
	}
	if v, ok := new(big.Rat).SetString(r.Max); ok && r.Max != "" {
		m.Max = v
	}
	return m
}

// variableRules reads the rules of the numeric variables the server rounds
// or bounds (mysqlvar.ReadMeta).
func (c *mysqlCollector) variableRules(ctx context.Context, m *MySQL) error {
	var names []string
	for k, v := range m.Variables {
		if _, ok := mysqlvar.ParseInt(v); ok {
			names = append(names, k)
		}
	}
	meta, err := mysqlvar.ReadMeta(ctx, c.db, mysqlvar.Server{Flavor: m.Flavor, Version: m.VersionNumber, Raw: m.Version}, names)
	if err != nil {
		return err
	}
	for k, mt := range meta {
		if !mt.Exists || (mt.Block <= 1 && mt.Min == nil && mt.Max == nil) {
			continue
		}
		r := VariableRule{Type: mt.Type, Block: mt.Block, Exact: mt.Exact}
		if mt.Min != nil {
			r.Min = mt.Min.RatString()
		}
		if mt.Max != nil {
			r.Max = mt.Max.RatString()
		}
		if m.VariableRules == nil {
			m.VariableRules = map[string]VariableRule{}
		}
		m.VariableRules[k] = r
	}
	return nil
}

// Status is SHOW GLOBAL STATUS read twice, IntervalSeconds apart.
//
// A numeric status is either a gauge (a current value, such as
// Threads_connected, or a high-water mark, such as Max_used_connections:
// see StatusIsGauge) or a counter (a total since start or FLUSH STATUS,
// such as Com_select). Every numeric counter, including names this
// version of stacktune does not know, gets a delta and a per-second rate;
// gauges and text values (Innodb_buffer_pool_load_status) only have their
// readings. A counter that went down between the readings (FLUSH STATUS)
// gets no delta or rate.
type Status struct {
	First  map[string]string `json:"first"`
	Second map[string]string `json:"second"`
	// FirstAt and SecondAt are when the readings were taken (the middle of
	// each query); IntervalSeconds is the time between them.
	FirstAt         time.Time `json:"first_at"`
	SecondAt        time.Time `json:"second_at"`
	IntervalSeconds float64   `json:"interval_seconds"`
	// Deltas and Rates (per second) are for counters only.
	Deltas map[string]float64 `json:"deltas"`
	Rates  map[string]float64 `json:"rates"`
}

// Value returns a status as a number from the latest reading.
func (s *Status) Value(name string) (float64, bool) {
	r := s.Second
	if r == nil {
		r = s.First
	}
	v, ok := r[name]
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// InnoDB are figures the buffer pool and redo rules need. Page counts are
// from the second status reading; deltas are over the interval.
type InnoDB struct {
	BufferPoolBytes     int64 `json:"buffer_pool_bytes"` // innodb_buffer_pool_size
	BufferPoolInstances int64 `json:"buffer_pool_instances,omitempty"`
	PageSize            int64 `json:"page_size"`
	PagesTotal          int64 `json:"pages_total"`
	PagesData           int64 `json:"pages_data"`
	PagesFree           int64 `json:"pages_free"`
	PagesDirty          int64 `json:"pages_dirty"`
	// ReadRequests (Innodb_buffer_pool_read_requests) and DiskReads
	// (Innodb_buffer_pool_reads, the requests the pool could not serve)
	// over the interval. HitRatio is 1 - DiskReads/ReadRequests, nil when
	// there was no read request in the interval; HitRatioSinceStart is the
	// same since the server started.
	ReadRequests       float64  `json:"read_requests"`
	DiskReads          float64  `json:"disk_reads"`
	HitRatio           *float64 `json:"hit_ratio"`
	HitRatioSinceStart *float64 `json:"hit_ratio_since_start"`
	// WaitFree is Innodb_buffer_pool_wait_free over the interval: waits
	// for a clean page.
	WaitFree float64 `json:"wait_free"`
	// RedoCapacityBytes is innodb_redo_log_capacity (MySQL 8.0.30+) or
	// innodb_log_file_size × innodb_log_files_in_group (one file when
	// that variable is gone, as in MariaDB 10.5+); RedoCapacitySource
	// says which.
	RedoCapacityBytes  int64  `json:"redo_capacity_bytes"`
	RedoCapacitySource string `json:"redo_capacity_source"`
	// RedoBytesPerSecond is Innodb_os_log_written per second over the
	// interval (how fast the redo log fills), nil when the server has no
	// such status.
	RedoBytesPerSecond *float64 `json:"redo_bytes_per_second"`
	// LogWaits is Innodb_log_waits since start and LogWaitsDelta over the
	// interval: waits because the log buffer was full.
	LogWaits      int64   `json:"log_waits"`
	LogWaitsDelta float64 `json:"log_waits_delta"`
}

// Connections compares the peak number of connections with the limit.
type Connections struct {
	MaxConnections     int64 `json:"max_connections"`
	MaxUsedConnections int64 `json:"max_used_connections"` // since start
	ThreadsConnected   int64 `json:"threads_connected"`
	// UsedRatio is MaxUsedConnections / MaxConnections.
	UsedRatio float64 `json:"used_ratio"`
}

// DataSizes is the size of the tables (views excluded), from
// information_schema.TABLES: estimates for InnoDB, and on MySQL 8 cached
// for information_schema_stats_expiry (a day by default).
type DataSizes struct {
	// Schemas are the user schemas, largest (data + index) first; the
	// system schemas (systemSchemas) are left out of this list.
	Schemas []SchemaSize `json:"schemas"`
	// The totals count every schema, system ones included.
	TotalDataBytes   int64 `json:"total_data_bytes"`
	TotalIndexBytes  int64 `json:"total_index_bytes"`
	InnoDBDataBytes  int64 `json:"innodb_data_bytes"`
	InnoDBIndexBytes int64 `json:"innodb_index_bytes"`
	// Complete is false when the user lacks the global SELECT privilege:
	// information_schema.TABLES then silently shows only the tables it has
	// a privilege on.
	Complete bool `json:"complete"`
}

// SchemaSize is one schema's tables.
type SchemaSize struct {
	Name       string `json:"name"`
	Tables     int64  `json:"tables"`
	DataBytes  int64  `json:"data_bytes"`
	IndexBytes int64  `json:"index_bytes"`
	// InnoDBBytes is the data and index bytes of its InnoDB tables.
	InnoDBBytes int64 `json:"innodb_bytes"`
}

// PerformanceSchema says whether performance_schema can give statement
// digests (what `stacktune digest --pfs` needs).
type PerformanceSchema struct {
	Enabled bool `json:"enabled"` // @@performance_schema
	// Consumers is performance_schema.setup_consumers, name → enabled;
	// nil when performance_schema is off or the table is unreadable.
	Consumers map[string]bool `json:"consumers"`
	// StatementsDigest is the statements_digest consumer, nil when unknown.
	StatementsDigest *bool `json:"statements_digest"`
}

// SQL text, beside the code that runs it.
const (
	qMySQLVersion    = `SELECT VERSION(), @@version_comment`
	qMySQLVariables  = `SHOW GLOBAL VARIABLES`
	qMySQLStatus     = `SHOW GLOBAL STATUS`
	qMySQLConsumers  = `SELECT NAME, ENABLED FROM performance_schema.setup_consumers`
	qMySQLGlobalPriv = `SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES
WHERE PRIVILEGE_TYPE = 'SELECT'
  AND GRANTEE = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')`
	qMySQLBlobColumns = `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS
WHERE DATA_TYPE IN ('tinytext', 'text', 'mediumtext', 'longtext', 'tinyblob', 'blob', 'mediumblob', 'longblob', 'json')
  AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')
ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION LIMIT ?`
	qMySQLSizes = `SELECT TABLE_SCHEMA, COALESCE(ENGINE, ''), COUNT(*),
  COALESCE(SUM(DATA_LENGTH), 0), COALESCE(SUM(INDEX_LENGTH), 0)
FROM information_schema.TABLES
WHERE TABLE_TYPE NOT IN ('VIEW', 'SYSTEM VIEW')
GROUP BY TABLE_SCHEMA, ENGINE`
)

// systemSchemas are left out of DataSizes.Schemas (but counted in totals).
var systemSchemas = map[string]bool{
	"mysql": true, "information_schema": true, "performance_schema": true, "sys": true,
}

// gaugeStatus are the numeric status variables that are current values or
// high-water marks, not counters (MySQL 5.7-8.4, MariaDB 10.x-11.x). Names
// with a prefix in gaugeStatusPrefixes, or containing "_pending", are
// gauges too. Every other numeric status is taken for a counter.
var gaugeStatus = setOf(`
	// connections and threads
	Threads_connected Threads_running Threads_cached
	Max_used_connections Max_used_connections_time
	Threadpool_idle_threads Threadpool_threads
	Delayed_insert_threads Not_flushed_delayed_rows
	Slave_open_temp_tables Replica_open_temp_tables
	Slaves_connected Slaves_running Slave_heartbeat_period
	// tables and files
	Open_files Open_streams Open_tables Open_table_definitions
	Table_open_cache_active_instances
	// memory and statements
	Memory_used Memory_used_initial Max_memory_used
	Global_connection_memory Prepared_stmt_count
	Last_query_cost Last_query_partial_plans
	// time
	Uptime Uptime_since_flush_status Error_log_latest_write
	Error_log_buffered_bytes Error_log_buffered_events
	// caches
	Key_blocks_not_flushed Key_blocks_unused Key_blocks_used Key_blocks_warm
	Aria_pagecache_blocks_not_flushed Aria_pagecache_blocks_unused Aria_pagecache_blocks_used
	Qcache_free_blocks Qcache_free_memory Qcache_queries_in_cache Qcache_total_blocks
	Ssl_session_cache_size Ssl_used_session_cache_entries
	Ssl_ctx_verify_depth Ssl_ctx_verify_mode Ssl_default_timeout
	Ssl_verify_depth Ssl_verify_mode
	Tc_log_max_pages_used Tc_log_page_size
	Binlog_snapshot_position
	// InnoDB
	Innodb_buffer_pool_pages_data Innodb_buffer_pool_pages_dirty
	Innodb_buffer_pool_pages_free Innodb_buffer_pool_pages_misc
	Innodb_buffer_pool_pages_total Innodb_buffer_pool_pages_old
	Innodb_buffer_pool_pages_latched
	Innodb_buffer_pool_bytes_data Innodb_buffer_pool_bytes_dirty
	Innodb_buffer_pool_resize_status_code Innodb_buffer_pool_resize_status_progress
	Innodb_page_size Innodb_checkpoint_age Innodb_checkpoint_max_age
	Innodb_history_list_length Innodb_num_open_files Innodb_available_undo_logs
	Innodb_row_lock_current_waits Innodb_row_lock_time_avg Innodb_row_lock_time_max
	Innodb_mem_adaptive_hash Innodb_mem_dictionary Innodb_mem_total
	Innodb_ibuf_free_list Innodb_ibuf_segment_size Innodb_ibuf_size
	Innodb_onlineddl_rowlog_rows Innodb_onlineddl_rowlog_pct_used Innodb_onlineddl_pct_progress
	Innodb_encryption_rotation_estimated_iops
	Innodb_redo_log_capacity_resized Innodb_redo_log_logical_size
	Innodb_redo_log_physical_size
	Innodb_undo_tablespaces_total Innodb_undo_tablespaces_implicit
	Innodb_undo_tablespaces_explicit Innodb_undo_tablespaces_active
	// semi-synchronous replication
	Rpl_semi_sync_master_clients Rpl_semi_sync_source_clients
	Rpl_semi_sync_master_net_avg_wait_time Rpl_semi_sync_source_net_avg_wait_time
	Rpl_semi_sync_master_tx_avg_wait_time Rpl_semi_sync_source_tx_avg_wait_time
	Rpl_semi_sync_master_wait_sessions Rpl_semi_sync_source_wait_sessions
`)

// gaugeStatusPrefixes: Acl_* count grants, Innodb_have_* are features,
// wsrep_* (Galera) mixes gauges and counters and is left without rates.
var gaugeStatusPrefixes = []string{"Acl_", "Innodb_have_", "wsrep"}

// StatusIsGauge reports whether a numeric status variable is a gauge (see
// gaugeStatus); counters are all the others.
func StatusIsGauge(name string) bool {
	if gaugeStatus[name] || strings.Contains(name, "_pending") {
		return true
	}
	for _, p := range gaugeStatusPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// setOf makes a set of the words of s, skipping "//" comment lines.
func setOf(s string) map[string]bool {
	set := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "//") {
			continue
		}
		for _, w := range strings.Fields(line) {
			set[w] = true
		}
	}
	return set
}

// secretVariable reports whether a variable may hold a credential
// (wsrep_sst_auth is "user:password"); its value is not stored.
func secretVariable(name string) bool {
	n := strings.ToLower(name)
	return n == "wsrep_sst_auth" || strings.HasSuffix(n, "password")
}

// DefaultMySQLInterval is the time between the two status readings when
// NewMySQL is given 0.
const DefaultMySQLInterval = 10 * time.Second

type mysqlCollector struct {
	db       *sql.DB
	interval time.Duration
	// betweenSamples, when set (by tests), runs right after the first
	// status reading; the second reading waits for it and for interval.
	betweenSamples func()
}

// NewMySQL returns the "mysql" collector. It reads through db, which the
// caller opened (with dbconn.Open, so the collector never sees a
// password), and takes the two status readings interval apart (0 means
// DefaultMySQLInterval). It only reads: SHOW, SELECT.
func NewMySQL(db *sql.DB, interval time.Duration) Collector {
	if interval <= 0 {
		interval = DefaultMySQLInterval
	}
	return &mysqlCollector{db: db, interval: interval}
}

func (c *mysqlCollector) Name() string { return "mysql" }

// The server is opened by the caller (NeedMySQL: the CLI's --dsn flags).
func init() {
	register(Registration{
		Name:  "mysql",
		Layer: "mysql",
		Order: 10,
		Needs: NeedMySQL,
		Flags: []Flag{
			{Name: "interval", Kind: FlagDuration, Default: DefaultMySQLInterval.String(), Usage: "time between the two readings of counters (SHOW GLOBAL STATUS, per-process CPU, memcached stats): rates, not totals since boot"},
		},
		New: func(cfg Config) (Collector, error) { return NewMySQL(cfg.DB, cfg.Duration("interval")), nil },
	})
}

// Collect fills s.MySQL. When even VERSION() cannot be read, it returns
// the error and leaves the layer nil. Otherwise it collects everything it
// can and returns an error naming what it could not read (a missing
// privilege wraps dbconn.ErrAccessDenied).
//
// Order matters: the status readings come right after the variables, and
// the heavier queries (information_schema.TABLES opens tables) come after
// them, so the collector's own work does not show in the rates or gauges.
func (c *mysqlCollector) Collect(ctx context.Context, s *Snapshot) error {
	if c.db == nil {
		return errors.New("mysql: no database connection")
	}
	m := &MySQL{Variables: map[string]string{}}
	if err := c.db.QueryRowContext(ctx, qMySQLVersion).Scan(&m.Version, &m.VersionComment); err != nil {
		return fmt.Errorf("mysql: reading the server version: %w", classify(err))
	}
	m.Flavor, m.VersionNumber = mysqlvar.ParseVersion(m.Version, m.VersionComment)
	s.MySQL = m

	var errs []error
	miss := func(what string, err error) {
		m.Missing = append(m.Missing, what)
		errs = append(errs, fmt.Errorf("%s: %w", what, classify(err)))
	}
	done := func() error {
		if len(errs) == 0 {
			return nil
		}
		return fmt.Errorf("mysql: partial: %w", joinErrors(errs))
	}

	if err := c.readPairs(ctx, qMySQLVariables, func(k, v string) {
		if secretVariable(k) && v != "" {
			v = "***"
		}
		m.Variables[k] = v
	}); err != nil {
		miss("variables (SHOW GLOBAL VARIABLES)", err)
	}

	if err := c.sampleStatus(ctx, &m.Status); err != nil {
		miss("status (SHOW GLOBAL STATUS)", err)
		if ctx.Err() != nil {
			return done()
		}
	}
	m.deriveInnoDB()
	m.deriveConnections()

	m.PerformanceSchema.Enabled = isOn(m.Variables["performance_schema"])
	if m.PerformanceSchema.Enabled {
		cons := map[string]bool{}
		if err := c.readPairs(ctx, qMySQLConsumers, func(k, v string) { cons[k] = strings.EqualFold(v, "YES") }); err != nil {
			miss("performance_schema consumers (SELECT on performance_schema.setup_consumers)", err)
		} else {
			m.PerformanceSchema.Consumers = cons
			if on, ok := cons["statements_digest"]; ok {
				m.PerformanceSchema.StatementsDigest = &on
			}
		}
	}

	if err := c.readSizes(ctx, &m.Data); err != nil {
		miss("data sizes (information_schema.TABLES)", err)
	}
	// Best effort: without them a value is compared as it is written.
	_ = c.variableRules(ctx, m)
	if err := c.readBlobColumns(ctx, m); err != nil {
		miss("TEXT and BLOB columns (information_schema.COLUMNS)", err)
	}
	var n int
	switch err := c.db.QueryRowContext(ctx, qMySQLGlobalPriv).Scan(&n); {
	case err != nil:
		miss("privileges (information_schema.USER_PRIVILEGES)", err)
	case n > 0:
		m.Data.Complete = true
	default:
		m.Missing = append(m.Missing, "complete data sizes")
		errs = append(errs, fmt.Errorf("complete data sizes: %w: without the global SELECT privilege information_schema.TABLES shows only the tables this user has a privilege on (GRANT SELECT ON *.* for complete sizes)", dbconn.ErrAccessDenied))
	}
	return done()
}

// readPairs runs a two-column query and calls f for every row.
func (c *mysqlCollector) readPairs(ctx context.Context, q string, f func(k, v string)) error {
	rows, err := c.db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		if v.Valid {
			f(k, v.String)
		} else {
			f(k, "")
		}
	}
	return rows.Err()
}

// readStatus reads SHOW GLOBAL STATUS and returns when it was taken (the
// middle of the query).
func (c *mysqlCollector) readStatus(ctx context.Context) (map[string]string, time.Time, error) {
	out := map[string]string{}
	start := time.Now()
	err := c.readPairs(ctx, qMySQLStatus, func(k, v string) { out[k] = v })
	end := time.Now()
	return out, start.Add(end.Sub(start) / 2), err
}

// sampleStatus reads the status twice, c.interval apart, and computes the
// counters' deltas and rates. A context cancelled during the wait keeps
// the first reading and returns the context's error.
func (c *mysqlCollector) sampleStatus(ctx context.Context, st *Status) error {
	first, at1, err := c.readStatus(ctx)
	if err != nil {
		return err
	}
	st.First, st.FirstAt = first, at1.UTC()
	timer := time.NewTimer(c.interval)
	defer timer.Stop()
	if c.betweenSamples != nil {
		c.betweenSamples()
	}
	select {
	case <-ctx.Done():
		return fmt.Errorf("interrupted before the second reading: %w", ctx.Err())
	case <-timer.C:
	}
	second, at2, err := c.readStatus(ctx)
	if err != nil {
		return err
	}
	st.Second, st.SecondAt = second, at2.UTC()
	st.IntervalSeconds = at2.Sub(at1).Seconds()
	st.Deltas, st.Rates = statusRates(first, second, st.IntervalSeconds)
	return nil
}

// statusRates returns the delta and per-second rate of every counter
// present and numeric in both readings that did not go down.
func statusRates(first, second map[string]string, seconds float64) (deltas, rates map[string]float64) {
	deltas, rates = map[string]float64{}, map[string]float64{}
	for k, v2 := range second {
		v1, ok := first[k]
		if !ok || StatusIsGauge(k) {
			continue
		}
		d, ok := counterDelta(v1, v2)
		if !ok {
			continue
		}
		deltas[k] = d
		if seconds > 0 {
			rates[k] = d / seconds
		}
	}
	return deltas, rates
}

// counterDelta is b-a for two numeric readings: exact for unsigned
// integers (counters can pass 2^63), else as floats (Busy_time). Not ok
// for text, or when the counter went down.
func counterDelta(a, b string) (float64, bool) {
	if ua, err := strconv.ParseUint(a, 10, 64); err == nil {
		if ub, err := strconv.ParseUint(b, 10, 64); err == nil {
			if ub < ua {
				return 0, false
			}
			return float64(ub - ua), true
		}
	}
	fa, err1 := strconv.ParseFloat(a, 64)
	fb, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil || fb < fa || math.IsNaN(fb-fa) || math.IsInf(fb-fa, 0) {
		return 0, false
	}
	return fb - fa, true
}

// readSizes reads data and index bytes per schema and engine.
func (c *mysqlCollector) readSizes(ctx context.Context, d *DataSizes) error {
	rows, err := c.db.QueryContext(ctx, qMySQLSizes)
	if err != nil {
		return err
	}
	defer rows.Close()
	bySchema := map[string]*SchemaSize{}
	for rows.Next() {
		var schema, engine string
		var tables, data, index int64
		if err := rows.Scan(&schema, &engine, &tables, &data, &index); err != nil {
			return err
		}
		d.TotalDataBytes += data
		d.TotalIndexBytes += index
		innodb := strings.EqualFold(engine, "InnoDB")
		if innodb {
			d.InnoDBDataBytes += data
			d.InnoDBIndexBytes += index
		}
		if systemSchemas[strings.ToLower(schema)] {
			continue
		}
		ss := bySchema[schema]
		if ss == nil {
			ss = &SchemaSize{Name: schema}
			bySchema[schema] = ss
		}
		ss.Tables += tables
		ss.DataBytes += data
		ss.IndexBytes += index
		if innodb {
			ss.InnoDBBytes += data + index
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	d.Schemas = make([]SchemaSize, 0, len(bySchema))
	for _, ss := range bySchema {
		d.Schemas = append(d.Schemas, *ss)
	}
	sort.Slice(d.Schemas, func(i, j int) bool {
		a, b := d.Schemas[i], d.Schemas[j]
		if a.DataBytes+a.IndexBytes != b.DataBytes+b.IndexBytes {
			return a.DataBytes+a.IndexBytes > b.DataBytes+b.IndexBytes
		}
		return a.Name < b.Name
	})
	return nil
}

// deriveInnoDB fills m.InnoDB from the variables and status.
func (m *MySQL) deriveInnoDB() {
	in := &m.InnoDB
	v := func(name string) int64 { n, _ := strconv.ParseInt(m.Variables[name], 10, 64); return n }
	st := func(name string) int64 { f, _ := m.Status.Value(name); return int64(f) }
	in.BufferPoolBytes = v("innodb_buffer_pool_size")
	in.BufferPoolInstances = v("innodb_buffer_pool_instances")
	in.PageSize = v("innodb_page_size")
	if in.PageSize == 0 {
		in.PageSize = st("Innodb_page_size")
	}
	in.PagesTotal = st("Innodb_buffer_pool_pages_total")
	in.PagesData = st("Innodb_buffer_pool_pages_data")
	in.PagesFree = st("Innodb_buffer_pool_pages_free")
	in.PagesDirty = st("Innodb_buffer_pool_pages_dirty")
	in.ReadRequests = m.Status.Deltas["Innodb_buffer_pool_read_requests"]
	in.DiskReads = m.Status.Deltas["Innodb_buffer_pool_reads"]
	if in.ReadRequests > 0 {
		r := hitRatio(in.ReadRequests, in.DiskReads)
		in.HitRatio = &r
	}
	if req := st("Innodb_buffer_pool_read_requests"); req > 0 {
		r := hitRatio(float64(req), float64(st("Innodb_buffer_pool_reads")))
		in.HitRatioSinceStart = &r
	}
	in.WaitFree = m.Status.Deltas["Innodb_buffer_pool_wait_free"]
	if c, ok := m.Variables["innodb_redo_log_capacity"]; ok {
		in.RedoCapacityBytes, _ = strconv.ParseInt(c, 10, 64)
		in.RedoCapacitySource = "innodb_redo_log_capacity"
	} else if _, ok := m.Variables["innodb_log_file_size"]; ok {
		files := v("innodb_log_files_in_group")
		in.RedoCapacitySource = "innodb_log_file_size x innodb_log_files_in_group"
		if _, ok := m.Variables["innodb_log_files_in_group"]; !ok {
			files = 1
			in.RedoCapacitySource = "innodb_log_file_size (one file)"
		}
		in.RedoCapacityBytes = v("innodb_log_file_size") * files
	}
	if r, ok := m.Status.Rates["Innodb_os_log_written"]; ok {
		in.RedoBytesPerSecond = &r
	}
	in.LogWaits = st("Innodb_log_waits")
	in.LogWaitsDelta = m.Status.Deltas["Innodb_log_waits"]
}

func hitRatio(requests, misses float64) float64 {
	r := 1 - misses/requests
	return math.Max(0, math.Min(1, r))
}

// deriveConnections fills m.Connections.
func (m *MySQL) deriveConnections() {
	c := &m.Connections
	c.MaxConnections, _ = strconv.ParseInt(m.Variables["max_connections"], 10, 64)
	if f, ok := m.Status.Value("Max_used_connections"); ok {
		c.MaxUsedConnections = int64(f)
	}
	if f, ok := m.Status.Value("Threads_connected"); ok {
		c.ThreadsConnected = int64(f)
	}
	if c.MaxConnections > 0 {
		c.UsedRatio = float64(c.MaxUsedConnections) / float64(c.MaxConnections)
	}
}

func isOn(v string) bool {
	return v == "1" || strings.EqualFold(v, "ON") || strings.EqualFold(v, "YES")
}

// classify marks privilege errors with dbconn.ErrAccessDenied and says
// which privilege is missing.
func classify(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1044, 1142, 1143, 1227, 1045, 1698:
			return fmt.Errorf("%w: %v", dbconn.ErrAccessDenied, err)
		}
	}
	return err
}
