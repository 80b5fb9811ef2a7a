package advise

import (
	"fmt"
	"strings"
)

// mysql-tmp-table-size: implicit temporary tables (GROUP BY, DISTINCT,
// UNION, derived tables) start in memory and move to disk past the
// smaller of tmp_table_size and max_heap_table_size. Created_tmp_disk_tables
// growing over the interval means they do (seed 004 set both to 256 MB).
// Both are set equal: the smaller one is the limit.
var mysqlTmpTableSize = ruleFunc{"mysql-tmp-table-size", LayerMySQL, checkMySQLTmpTableSize}

const (
	// tmpDiskMin is the disk temporary tables an interval needs.
	tmpDiskMin = 5
	// tmpDiskShare is the share of temporary tables on disk that is
	// worth a change.
	tmpDiskShare = 0.1
	// tmpTableMin and tmpTableMax bound the proposal: 64 MiB at least,
	// at most seed 004's 256 MB (each session may hold one this large per
	// temporary table).
	tmpTableMin = 64 * mib
	tmpTableMax = 256 * mib
)

func checkMySQLTmpTableSize(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	disk, ok := c.Delta("Created_tmp_disk_tables")
	if !ok || disk < tmpDiskMin {
		return nil
	}
	all, _ := c.Delta("Created_tmp_tables")
	rate, _ := c.Rate("Created_tmp_disk_tables")
	share := 1.0
	if all > 0 {
		share = disk / all
	}
	if share < tmpDiskShare && rate < 1 {
		return nil
	}
	tmp, ok1 := c.Int("tmp_table_size")
	heap, ok2 := c.Int("max_heap_table_size")
	if !ok1 || !ok2 {
		return nil
	}
	tempTable := false
	if e, ok := c.Var("internal_tmp_mem_storage_engine"); ok && strings.EqualFold(e, "TempTable") {
		tempTable = true
	}
	eff := min(tmp, heap)
	if tempTable {
		eff = tmp // MySQL 8's TempTable engine ignores max_heap_table_size
	}
	f := Finding{
		ID:       "mysql-tmp-table-size",
		Severity: Info,
		Evidence: []Evidence{c.deltaEv("Created_tmp_disk_tables"), c.deltaEv("Created_tmp_tables"),
			ev("share on disk", pct(share), "", "Created_tmp_disk_tables / Created_tmp_tables, "+c.StatusSource()),
			c.varEv("tmp_table_size", "bytes"), c.varEv("max_heap_table_size", "bytes")},
		Source: "seed 004 (Created_tmp_disk_tables rising → tmp_table_size = max_heap_table_size = 256 MB); MySQL manual 'Internal Temporary Table Use in MySQL'",
	}
	if rate >= 1 {
		f.Severity = Warning
	}
	f.Title = fmt.Sprintf("%s of temporary tables went to disk (%s/s) at a %s in-memory limit", pct(share), num(rate), fmtBytes(eff))
	if tempTable {
		f.Evidence = append(f.Evidence, c.varEv("internal_tmp_mem_storage_engine", ""))
		if c.Has("temptable_max_ram") {
			f.Evidence = append(f.Evidence, c.varEv("temptable_max_ram", "bytes"))
		}
	}
	value := min(tmpTableMax, max(tmpTableMin, eff*4))
	causes := "temporary tables also go to disk for reasons no size fixes: BLOB/TEXT columns in the result (MySQL before 8.0.13), or results larger than any sane limit; " +
		"find the queries in the slow log (stacktune digest; MariaDB logs Tmp_disk_tables per query with log_slow_verbosity=query_plan) and add the index that avoids the temporary table"
	if value <= eff {
		f.Effect = fmt.Sprintf("the in-memory limit is already %s: %s", fmtBytes(eff), causes)
		return []Finding{f}
	}
	f.Change = c.MySQLChange("tmp_table_size", fmt.Sprint(value), Increase)
	if !tempTable || heap < value {
		f.Also = append(f.Also, *c.MySQLChange("max_heap_table_size", fmt.Sprint(value), Increase))
	}
	f.Effect = fmt.Sprintf("temporary tables up to %s stay in memory instead of being written to and read from disk; %s", fmtBytes(value), causes)
	f.Risk.Memory = fmt.Sprintf("up to %s per in-memory temporary table, per session: N queries building one at once can use N × %s", fmtBytes(value), fmtBytes(value))
	if tempTable {
		f.Risk.Memory += "; MySQL's TempTable engine caps them all together at temptable_max_ram"
	}
	f.Risk.Restart = c.Restart("tmp_table_size")
	f.Risk.Note = "max_heap_table_size also caps user-created MEMORY tables"
	return []Finding{f}
}
