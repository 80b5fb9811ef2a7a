package mysqlvar

import (
	"fmt"
	"strings"
)

// The version table is stacktune's knowledge of which MySQL and MariaDB versions
// have which variables, which of them SET GLOBAL can change, and what
// my.cnf calls them. Rules read the running server's SHOW GLOBAL
// VARIABLES first (advise's Context.Has): the table decides what to propose where
// the server's list does not say it (which redo variable to size, whether
// a restart is needed, the my.cnf spelling), and builds the test fixtures
// for the versions the tests cannot run.
//
// Sources, per row: the MySQL 5.7/8.0/8.4 Reference Manuals (server
// system variables, InnoDB system variables, "Changes in MySQL 8.0",
// "What Is New in MySQL 8.4"), the MariaDB Knowledge Base (system
// variables pages with their "Introduced/Removed" lines, "System
// Variables Added in MariaDB 11.0/11.1", "InnoDB Flush Method"), and for
// MariaDB 10.11 the server installed here: `mariadbd --verbose --help` of
// 10.11.19-MariaDB-0+deb12u1 and SHOW GLOBAL VARIABLES of a throwaway
// server, which TestTableMatchesMariaDB compares with this table on every run
// (every row must agree on presence, and on dynamic where it says
// "verified").

// span is a range of versions [from, until); a zero until is open.
type span struct{ from, until Version }

// since is every version from major.minor.patch on.
func since(major, minor, patch int) []span { return []span{{from: V(major, minor, patch)}} }

// before is every supported version (MySQL 5.7, MariaDB 10.0 on) up to,
// not including, major.minor.patch.
func before(major, minor, patch int) []span {
	return []span{{from: V(0, 0, 0), until: V(major, minor, patch)}}
}

// always is every version.
var always = since(0, 0, 0)

func (s span) has(v Version) bool {
	if !v.AtLeast(s.from.Major, s.from.Minor, s.from.Patch) {
		return false
	}
	return s.until == (Version{}) || !v.AtLeast(s.until.Major, s.until.Minor, s.until.Patch)
}

func inSpans(ss []span, v Version) bool {
	for _, s := range ss {
		if s.has(v) {
			return true
		}
	}
	return false
}

// varFact is what stacktune knows about one system variable.
type varFact struct {
	name string
	// mysql and mariadb are the versions that have the variable; nil:
	// none.
	mysql, mariadb []span
	// dynMySQL and dynMariaDB are the versions where SET GLOBAL changes
	// it; nil: read-only everywhere (restart needed).
	dynMySQL, dynMariaDB []span
	// option is its my.cnf name when that differs from the variable.
	option string
	source string
}

// versionTable: one row per variable a rule reads or proposes.
var versionTable = []varFact{
	// InnoDB buffer pool
	{name: "innodb_buffer_pool_size", mysql: always, mariadb: always, dynMySQL: since(5, 7, 5), dynMariaDB: since(10, 2, 2),
		source: "MySQL manual 'Configuring InnoDB Buffer Pool Size' (online resize since 5.7.5); MariaDB KB (dynamic since 10.2.2); verified dynamic on 10.11.19"},
	{name: "innodb_buffer_pool_instances", mysql: always, mariadb: before(10, 6, 0),
		source: "MySQL manual; MariaDB KB (deprecated 10.5.1, removed 10.6.0: one instance); verified absent on 10.11.19"},
	{name: "innodb_buffer_pool_chunk_size", mysql: since(5, 7, 5), mariadb: since(10, 2, 2),
		source: "MySQL manual; MariaDB KB; 10.11.19 reports 0 (sized automatically)"},
	{name: "innodb_buffer_pool_load_at_startup", mysql: always, mariadb: always, source: "MySQL manual; MariaDB KB"},
	{name: "innodb_buffer_pool_dump_at_shutdown", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "innodb_dedicated_server", mysql: since(8, 0, 3), source: "MySQL manual 'Enabling Automatic InnoDB Configuration for a Dedicated MySQL Server'"},
	// Redo log
	{name: "innodb_log_file_size", mysql: always, mariadb: always, dynMariaDB: since(10, 9, 1),
		source: "MySQL manual (deprecated 8.0.30 for innodb_redo_log_capacity); MariaDB KB (resizable online since 10.9, MDEV-27812); verified dynamic on 10.11.19"},
	{name: "innodb_log_files_in_group", mysql: always, mariadb: before(10, 6, 0),
		source: "MySQL manual (deprecated 8.0.30); MariaDB KB (deprecated 10.5.2, removed 10.6.0: one log file); verified absent on 10.11.19"},
	{name: "innodb_redo_log_capacity", mysql: since(8, 0, 30), dynMySQL: since(8, 0, 30),
		source: "MySQL manual 'Redo Log' (8.0.30: replaces innodb_log_file_size x innodb_log_files_in_group, resizable online)"},
	{name: "innodb_log_buffer_size", mysql: always, mariadb: always, dynMySQL: since(8, 0, 11),
		source: "MySQL manual (dynamic since 8.0.11); MariaDB KB; verified read-only on 10.11.19"},
	{name: "innodb_log_file_buffering", mariadb: since(10, 8, 4), dynMariaDB: since(10, 8, 4),
		source: "MariaDB KB 'System Variables Added in MariaDB 10.8' (10.8.4: the redo log through the file system cache, off where the log can be written with O_DIRECT); verified dynamic on 10.11.19"},
	// Durability
	{name: "innodb_flush_log_at_trx_commit", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "sync_binlog", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual (default 1 since 5.7.7); MariaDB KB (default 0)"},
	{name: "innodb_doublewrite", mysql: always, mariadb: always,
		source: "MySQL manual (8.0.30: ON, OFF, DETECT_ONLY, DETECT_AND_RECOVER); MariaDB KB; verified read-only on 10.11.19"},
	{name: "log_bin", mysql: always, mariadb: always, source: "MySQL manual (on by default since 8.0); MariaDB KB (off by default)"},
	// I/O
	{name: "innodb_flush_method", mysql: always, mariadb: always,
		source: "MySQL manual (default fsync, O_DIRECT in 8.4); MariaDB KB 'InnoDB Flush Method' (default O_DIRECT since 10.6, deprecated in 11.0); verified read-only on 10.11.19"},
	{name: "innodb_data_file_buffering", mariadb: since(11, 0, 1), dynMariaDB: since(11, 0, 1),
		source: "MariaDB KB 'System Variables Added in MariaDB 11.0' (11.0.1, replaces innodb_flush_method=O_DIRECT)"},
	{name: "innodb_io_capacity", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always,
		source: "MySQL manual 'Configuring InnoDB I/O Capacity' (default 200, 10000 in 8.4); MariaDB KB (default 200)"},
	{name: "innodb_io_capacity_max", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "innodb_flush_neighbors", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always,
		source: "MySQL manual (default 1, 0 since 8.0.3); MariaDB KB (default 1)"},
	{name: "innodb_support_xa", mysql: before(8, 0, 0), mariadb: before(10, 3, 0),
		source: "MySQL manual (deprecated 5.7.10, removed 8.0); MariaDB KB (removed 10.3.0)"},
	// Query cache
	{name: "query_cache_type", mysql: before(8, 0, 3), mariadb: always, dynMySQL: before(8, 0, 3), dynMariaDB: always,
		source: "MySQL manual (query cache removed in 8.0.3); MariaDB KB (off by default since 10.1.7); verified dynamic on 10.11.19"},
	{name: "query_cache_size", mysql: before(8, 0, 3), mariadb: always, dynMySQL: before(8, 0, 3), dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	// Renamed variables
	{name: "tx_isolation", mysql: before(8, 0, 3), mariadb: always, dynMySQL: before(8, 0, 3), dynMariaDB: always, option: "transaction_isolation",
		source: "MySQL manual (deprecated 5.7.20, removed 8.0.3); MariaDB KB (deprecated 11.1.1); the my.cnf option is transaction-isolation on every version; verified on 10.11.19"},
	{name: "transaction_isolation", mysql: since(5, 7, 20), mariadb: since(11, 1, 1), dynMySQL: since(5, 7, 20), dynMariaDB: since(11, 1, 1),
		source: "MySQL manual (5.7.20); MariaDB KB 'System Variables Added in MariaDB 11.1'; verified absent as a variable on 10.11.19"},
	// Connections and threads
	{name: "max_connections", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "thread_cache_size", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "thread_handling", mysql: always, mariadb: always, source: "MySQL manual; MariaDB KB (pool-of-threads)"},
	{name: "thread_stack", mysql: always, mariadb: always, source: "MySQL manual; MariaDB KB"},
	{name: "wait_timeout", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "back_log", mysql: always, mariadb: always, source: "MySQL manual; MariaDB KB"},
	// Tables
	{name: "table_open_cache", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "table_definition_cache", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "table_open_cache_instances", mysql: always, mariadb: since(10, 2, 2), source: "MySQL manual; MariaDB KB (10.2.2)"},
	{name: "open_files_limit", mysql: always, mariadb: always, source: "MySQL manual; MariaDB KB"},
	// Temporary tables
	{name: "tmp_table_size", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual 'Internal Temporary Table Use'; MariaDB KB"},
	{name: "max_heap_table_size", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "temptable_max_ram", mysql: since(8, 0, 2), dynMySQL: since(8, 0, 2), source: "MySQL manual 'Internal Temporary Table Use' (TempTable engine, 8.0)"},
	{name: "internal_tmp_mem_storage_engine", mysql: since(8, 0, 2), dynMySQL: since(8, 0, 2), source: "MySQL manual"},
	// Binary log caches
	{name: "binlog_cache_size", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "binlog_stmt_cache_size", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	// Per-session buffers
	{name: "sort_buffer_size", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "join_buffer_size", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "read_buffer_size", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "read_rnd_buffer_size", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "net_buffer_length", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "max_allowed_packet", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	// Other global buffers
	{name: "key_buffer_size", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "aria_pagecache_buffer_size", mariadb: always, source: "MariaDB KB (Aria, MariaDB only)"},
	// InnoDB flushing, locking, memory (the ISUCON5 qualifier write-up, the 2015 tpcc-mysql contest entry and the smartphone game backend)
	{name: "innodb_max_dirty_pages_pct", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always,
		source: "MySQL manual (default 75, 90 since 8.0.3); MariaDB KB (default 90 since 10.5.7); the 2015 tpcc-mysql contest write-up set 90; verified dynamic on 10.11.19"},
	{name: "innodb_lru_scan_depth", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always,
		source: "MySQL manual (default 1024); MariaDB KB (default 1536 since 10.5.7); the 2015 tpcc-mysql contest write-up set 2000; verified dynamic on 10.11.19"},
	{name: "innodb_autoinc_lock_mode", mysql: always, mariadb: always,
		source: "MySQL manual (default 2, interleaved, since 8.0.3; 1 before); MariaDB KB (default 1); read-only; verified on 10.11.19"},
	{name: "binlog_format", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always,
		source: "MySQL manual (default ROW since 5.7.7; deprecated 8.0.34); MariaDB KB (default MIXED since 10.2.4); verified dynamic on 10.11.19"},
	{name: "innodb_numa_interleave", mysql: always, mariadb: always,
		source: "MySQL manual (5.6.27, builds with NUMA support); MariaDB KB (10.2.4, builds with NUMA support); present and read-only on Debian's 10.11.19"},
	// Diagnostics
	{name: "performance_schema", mysql: always, mariadb: always, source: "MySQL manual (on by default); MariaDB KB (off by default); read-only"},
	{name: "slow_query_log", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	{name: "long_query_time", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always, source: "MySQL manual; MariaDB KB"},
	// Knobs of the search (package knobsearch): the 2015 tpcc-mysql contest's and the InnoDB
	// manual's flushing and concurrency settings.
	{name: "innodb_max_dirty_pages_pct_lwm", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always,
		source: "MySQL manual (5.6.6); MariaDB KB; verified dynamic on 10.11.19"},
	{name: "innodb_adaptive_flushing_lwm", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always,
		source: "MySQL manual; MariaDB KB; verified dynamic on 10.11.19"},
	{name: "innodb_adaptive_hash_index", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always,
		source: "MySQL manual (OFF by default in 8.4); MariaDB KB (OFF by default since 10.5); verified dynamic on 10.11.19"},
	{name: "innodb_change_buffering", mysql: always, mariadb: before(11, 0, 0), dynMySQL: always, dynMariaDB: before(11, 0, 0),
		source: "MySQL manual (default none in 8.4); MariaDB KB (deprecated 10.9, removed 11.0; default none since 10.5.15); verified dynamic on 10.11.19"},
	{name: "innodb_thread_concurrency", mysql: always, mariadb: before(10, 6, 0), dynMySQL: always, dynMariaDB: before(10, 6, 0),
		source: "MySQL manual; MariaDB KB (deprecated 10.5.5, removed 10.6.0); the 2015 tpcc-mysql contest write-up found it weak; verified absent on 10.11.19"},
	{name: "innodb_purge_threads", mysql: always, mariadb: always, dynMariaDB: since(10, 5, 2),
		source: "MySQL manual (read-only); MariaDB KB (dynamic since 10.5.2); verified dynamic on 10.11.19"},
	{name: "innodb_read_io_threads", mysql: always, mariadb: always, dynMariaDB: since(10, 11, 0),
		source: "MySQL manual (read-only); MariaDB KB (dynamic since 10.11, MDEV-11026); verified dynamic on 10.11.19"},
	{name: "innodb_write_io_threads", mysql: always, mariadb: always, dynMariaDB: since(10, 11, 0),
		source: "MySQL manual (read-only); MariaDB KB (dynamic since 10.11, MDEV-11026); verified dynamic on 10.11.19"},
	{name: "innodb_spin_wait_delay", mysql: always, mariadb: always, dynMySQL: always, dynMariaDB: always,
		source: "MySQL manual; MariaDB KB (default 4 since 10.3.5); verified dynamic on 10.11.19"},
}

var versionIndex = func() map[string]*varFact {
	m := make(map[string]*varFact, len(versionTable))
	for i := range versionTable {
		m[versionTable[i].name] = &versionTable[i]
	}
	return m
}()

// renames are variables that were renamed: the names of one variable, in
// the order stacktune prefers them.
var renames = [][]string{
	{"transaction_isolation", "tx_isolation"},
}

// Aliases are the names of the variable name is one of, in the order
// stacktune prefers them (transaction_isolation, tx_isolation); just name
// when it was never renamed.
func Aliases(name string) []string {
	for _, group := range renames {
		for _, n := range group {
			if n == name {
				return group
			}
		}
	}
	return []string{name}
}

// Names are the variables the table lists, in its order.
func Names() []string {
	out := make([]string, len(versionTable))
	for i, f := range versionTable {
		out[i] = f.name
	}
	return out
}

// Available reports whether the flavour's version has the variable;
// known is false when the table does not list it.
func Available(flavor string, v Version, name string) (present, known bool) {
	f, ok := versionIndex[name]
	if !ok {
		return false, false
	}
	return inSpans(f.spans(flavor), v), true
}

// Dynamic reports whether SET GLOBAL changes the variable on that
// version; known is false when the table does not list it.
func Dynamic(flavor string, v Version, name string) (dynamic, known bool) {
	f, ok := versionIndex[name]
	if !ok {
		return false, false
	}
	if tableFlavor(flavor) == MariaDB {
		return inSpans(f.dynMariaDB, v), true
	}
	return inSpans(f.dynMySQL, v), true
}

// OptionName is the my.cnf spelling of a variable.
func OptionName(name string) string {
	if f, ok := versionIndex[name]; ok && f.option != "" {
		return f.option
	}
	return name
}

func (f *varFact) spans(flavor string) []span {
	if tableFlavor(flavor) == MariaDB {
		return f.mariadb
	}
	return f.mysql
}

// tableFlavor maps a flavour to the table's: Percona Server has
// MySQL's variables.
func tableFlavor(flavor string) string {
	if strings.EqualFold(flavor, MariaDB) {
		return MariaDB
	}
	return MySQL
}

// RedoCapacityVariable is the variable that sizes the redo log on a
// version: innodb_redo_log_capacity on MySQL 8.0.30 and later, else
// innodb_log_file_size (times innodb_log_files_in_group where that
// exists).
func RedoCapacityVariable(flavor string, v Version) string {
	if ok, _ := Available(flavor, v, "innodb_redo_log_capacity"); ok {
		return "innodb_redo_log_capacity"
	}
	return "innodb_log_file_size"
}

// bound is a rule between two variables that a server enforces when one
// of them is set at run time.
type bound struct {
	name, atLeast  string
	mysql, mariadb []span
	source         string
}

var bounds = []bound{
	{name: "innodb_log_file_size", atLeast: "innodb_log_buffer_size", mariadb: since(10, 9, 1),
		source: "MariaDB 10.11.19: SET GLOBAL innodb_log_file_size fails with error 1210 'must be at least innodb_log_buffer_size'"},
}

// Conflicts checks the values a server will run with (by name, running
// values with the planned ones over them) against the rules between
// variables that the server enforces when one is set; each conflict is a
// sentence saying what to do.
func Conflicts(srv Server, values map[string]string) []string {
	var out []string
	for _, b := range bounds {
		spans := b.mysql
		if srv.IsMariaDB() {
			spans = b.mariadb
		}
		if !inSpans(spans, srv.Version) {
			continue
		}
		v, ok1 := values[b.name]
		min, ok2 := values[b.atLeast]
		if !ok1 || !ok2 {
			continue
		}
		n, okn := ParseInt(v)
		m, okm := ParseInt(min)
		if okn && okm && n < m {
			out = append(out, fmt.Sprintf("%s = %s is below %s = %s, and %s refuses that at run time (%s)", b.name, v, b.atLeast, min, srv, b.source))
		}
	}
	return out
}
