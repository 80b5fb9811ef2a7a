package mysqlvar

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ValueType is the kind of value a variable holds, as its option file
// line writes it. It is what CheckValue checks before a value is written
// into a my.cnf file or a SET GLOBAL statement, whatever server it is
// for; the running server's own rules (Meta: ranges, block sizes) are
// checked again at plan time.
type ValueType int

// Value types.
const (
	// Token is any one word an option file reads as one value: letters,
	// digits and _ . , : + / - (a path, a list), no blanks, quotes,
	// comments or escapes. Variables the table does not know, and
	// startup options, are Tokens.
	Token ValueType = iota
	// Integer is a whole number, optionally negative, or a size with a
	// suffix (option files take K, M, G... on every numeric option).
	Integer
	// Size is a byte size: digits with an optional suffix (64M, 1G).
	Size
	// Decimal is a number that may have a fraction (long_query_time 0.5).
	Decimal
	// Bool is ON, OFF, TRUE, FALSE, YES, NO, 1 or 0.
	Bool
	// Enum is one of the variable's words (Values), any case.
	Enum
)

// typeFact is a variable's value type; enumerations list their words,
// and a boolean enumeration (innodb_doublewrite) takes the boolean
// words too.
type typeFact struct {
	t      ValueType
	words  []string
	orBool bool
}

var (
	sizeT    = typeFact{t: Size}
	intT     = typeFact{t: Integer}
	decimalT = typeFact{t: Decimal}
	boolT    = typeFact{t: Bool}
)

func enumT(words ...string) typeFact { return typeFact{t: Enum, words: words} }

// valueTypes: the value type of every variable of the version table (a
// test checks that none is missing).
var valueTypes = map[string]typeFact{
	"innodb_buffer_pool_size":             sizeT,
	"innodb_buffer_pool_instances":        intT,
	"innodb_buffer_pool_chunk_size":       sizeT,
	"innodb_buffer_pool_load_at_startup":  boolT,
	"innodb_buffer_pool_dump_at_shutdown": boolT,
	"innodb_dedicated_server":             boolT,
	"innodb_log_file_size":                sizeT,
	"innodb_log_files_in_group":           intT,
	"innodb_redo_log_capacity":            sizeT,
	"innodb_log_buffer_size":              sizeT,
	"innodb_log_file_buffering":           boolT,
	"innodb_flush_log_at_trx_commit":      intT,
	"sync_binlog":                         intT,
	"innodb_doublewrite": {t: Enum, orBool: true,
		words: []string{"DETECT_ONLY", "DETECT_AND_RECOVER", "FAST"}},
	// log_bin is a switch or the binary log's base name.
	"log_bin": {t: Token},
	"innodb_flush_method": enumT("fsync", "O_DSYNC", "littlesync", "nosync", "O_DIRECT",
		"O_DIRECT_NO_FSYNC", "ALL_O_DIRECT", "0", "1", "2", "3", "4", "5", "6"),
	"innodb_data_file_buffering":      boolT,
	"innodb_io_capacity":              intT,
	"innodb_io_capacity_max":          intT,
	"innodb_flush_neighbors":          intT,
	"innodb_support_xa":               boolT,
	"query_cache_type":                {t: Enum, orBool: true, words: []string{"DEMAND", "2"}},
	"query_cache_size":                sizeT,
	"tx_isolation":                    enumT("READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ", "SERIALIZABLE"),
	"transaction_isolation":           enumT("READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ", "SERIALIZABLE"),
	"max_connections":                 intT,
	"thread_cache_size":               intT,
	"thread_handling":                 enumT("one-thread-per-connection", "no-threads", "pool-of-threads"),
	"thread_stack":                    sizeT,
	"wait_timeout":                    intT,
	"back_log":                        intT,
	"table_open_cache":                intT,
	"table_definition_cache":          intT,
	"table_open_cache_instances":      intT,
	"open_files_limit":                intT,
	"tmp_table_size":                  sizeT,
	"max_heap_table_size":             sizeT,
	"temptable_max_ram":               sizeT,
	"internal_tmp_mem_storage_engine": enumT("TempTable", "MEMORY"),
	"binlog_cache_size":               sizeT,
	"binlog_stmt_cache_size":          sizeT,
	"sort_buffer_size":                sizeT,
	"join_buffer_size":                sizeT,
	"read_buffer_size":                sizeT,
	"read_rnd_buffer_size":            sizeT,
	"net_buffer_length":               sizeT,
	"max_allowed_packet":              sizeT,
	"key_buffer_size":                 sizeT,
	"aria_pagecache_buffer_size":      sizeT,
	"innodb_max_dirty_pages_pct":      decimalT,
	"innodb_lru_scan_depth":           intT,
	"innodb_autoinc_lock_mode":        intT,
	"binlog_format":                   enumT("ROW", "STATEMENT", "MIXED"),
	"innodb_numa_interleave":          boolT,
	"performance_schema":              boolT,
	"slow_query_log":                  boolT,
	"long_query_time":                 decimalT,
	"innodb_max_dirty_pages_pct_lwm":  decimalT,
	"innodb_adaptive_flushing_lwm":    decimalT,
	"innodb_adaptive_hash_index":      boolT,
	"innodb_change_buffering":         enumT("none", "inserts", "deletes", "changes", "purges", "all"),
	"innodb_thread_concurrency":       intT,
	"innodb_purge_threads":            intT,
	"innodb_read_io_threads":          intT,
	"innodb_write_io_threads":         intT,
	"innodb_spin_wait_delay":          intT,
}

// TypeOf is the value type of a variable (Token when the table does not
// know it) and, for an enumeration, its words.
func TypeOf(name string) (ValueType, []string) {
	f, ok := valueTypes[canonical(Norm(name))]
	if !ok {
		return Token, nil
	}
	return f.t, f.words
}

// canonical is the name the tables use for a variable or its option.
func canonical(n string) string {
	for i := range versionTable {
		if versionTable[i].option != "" && versionTable[i].option == n {
			return versionTable[i].name
		}
	}
	return n
}

// maxValueLen bounds one value.
const maxValueLen = 512

// CheckValue reports whether v is one value of the variable's type, one
// that an option file line holds as one word and a SET GLOBAL statement
// takes as a literal: the grammar a change's value must match before
// anything is written. The error says what the variable takes.
func CheckValue(name, v string) error {
	if len(v) > maxValueLen {
		return fmt.Errorf("%s: a value of %d bytes (at most %d)", Norm(name), len(v), maxValueLen)
	}
	if v == "" || v != strings.TrimSpace(v) {
		return fmt.Errorf("%s: %q is not one value", Norm(name), v)
	}
	f, ok := valueTypes[canonical(Norm(name))]
	if !ok {
		f = typeFact{t: Token}
	}
	var bad string
	switch f.t {
	case Token:
		if !isToken(v) {
			bad = "one word of letters, digits and _ . , : + / -"
		}
	case Integer:
		if !wholeNumber(v) {
			bad = "a whole number"
		}
	case Size:
		if _, err := ParseSize(v); err != nil {
			bad = "a size in bytes (67108864, 64M, 1G)"
		}
	case Decimal:
		if _, ok := number(v); !ok || !isToken(v) {
			bad = "a number"
		}
	case Bool:
		if _, ok := boolish(strings.ToLower(v)); !ok {
			bad = "ON or OFF"
		}
	case Enum:
		_, isBool := boolish(strings.ToLower(v))
		if !slices.ContainsFunc(f.words, func(w string) bool { return strings.EqualFold(w, v) }) && !(f.orBool && isBool) {
			words := f.words
			if f.orBool {
				words = append([]string{"ON", "OFF"}, words...)
			}
			bad = "one of " + strings.Join(words, ", ")
		}
	}
	if bad != "" {
		return fmt.Errorf("%s takes %s, not %q", Norm(name), bad, v)
	}
	return nil
}

// wholeNumber: an integer (unsigned ones beyond int64 too) or a size.
func wholeNumber(v string) bool {
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(v, 10, 64); err == nil {
		return true
	}
	_, err := ParseSize(v)
	return err == nil
}

// isToken: letters, digits and _ . , : + / -, not starting with '-'
// (which an option line or a command line could read as an option).
func isToken(v string) bool {
	if v == "" || v[0] == '-' && (len(v) == 1 || v[1] < '0' || v[1] > '9') {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.,:+/-", c) >= 0) {
			return false
		}
	}
	return true
}
