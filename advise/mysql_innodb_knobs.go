package advise

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// InnoDB settings the field write-ups raised, each on the evidence that makes it
// matter over the interval:
//
//   - mysql-max-dirty-pages: innodb_max_dirty_pages_pct below 90 on a
//     write-heavy server flushes pages early and often (the ISUCON5 qualifier write-up and the 2015 tpcc-mysql contest entry and
//     004 ran 90-95).
//   - mysql-lru-scan-depth: queries waited for a free page
//     (Innodb_buffer_pool_wait_free): the page cleaner frees too few per
//     pass (the 2015 tpcc-mysql contest entry).
//   - mysql-autoinc-lock-mode: concurrent INSERTs serialise on the table's
//     AUTO-INC lock in modes 0 and 1; mode 2 (interleaved) is safe with
//     row-based binary logging or none (the 2015 tpcc-mysql contest entry; MySQL 8's default).
var (
	mysqlMaxDirtyPages   = ruleFunc{"mysql-max-dirty-pages", LayerMySQL, checkMySQLMaxDirtyPages}
	mysqlLRUScanDepth    = ruleFunc{"mysql-lru-scan-depth", LayerMySQL, checkMySQLLRUScanDepth}
	mysqlAutoincLockMode = ruleFunc{"mysql-autoinc-lock-mode", LayerMySQL, checkMySQLAutoincLockMode}
)

const (
	// flushedHigh is the pages flushed per second that make a server
	// write-heavy.
	flushedHigh = 100
	// insertsConcurrent is the INSERTs per second at which the AUTO-INC
	// lock is contended.
	insertsConcurrent = 50
)

func checkMySQLMaxDirtyPages(c *Context) []Finding {
	if !c.mysqlReady() || !c.Has("innodb_max_dirty_pages_pct") {
		return nil
	}
	pct, ok := c.Float("innodb_max_dirty_pages_pct")
	flushed, ok2 := c.Rate("Innodb_buffer_pool_pages_flushed")
	if !ok || !ok2 || pct >= 90 || flushed < flushedHigh {
		return nil
	}
	return []Finding{{
		ID:       "mysql-max-dirty-pages",
		Title:    fmt.Sprintf("InnoDB flushes %s pages a second while keeping at most %s%% of the buffer pool dirty", num(flushed), num(pct)),
		Severity: Info,
		Evidence: []Evidence{c.varEv("innodb_max_dirty_pages_pct", "%"), c.deltaEv("Innodb_buffer_pool_pages_flushed")},
		Change:   c.MySQLChange("innodb_max_dirty_pages_pct", "90", Increase),
		Effect:   "pages written several times in a row are flushed once: fewer writes for the same work (MySQL 8.0 and MariaDB 10.5+ default to 90)",
		Risk:     changeset.Risk{Restart: c.Restart("innodb_max_dirty_pages_pct"), Note: "more dirty pages means a longer recovery after a crash and a longer shutdown; nothing committed is lost"},
		Source:   "the ISUCON5 qualifier write-up, the 2015 tpcc-mysql contest write-up and the smartphone game backend's write-up (innodb_max_dirty_pages_pct 90-95); MySQL manual 'Configuring Buffer Pool Flushing'",
	}}
}

func checkMySQLLRUScanDepth(c *Context) []Finding {
	if !c.mysqlReady() || !c.Has("innodb_lru_scan_depth") {
		return nil
	}
	waits, ok := c.Delta("Innodb_buffer_pool_wait_free")
	depth, ok2 := c.Int("innodb_lru_scan_depth")
	if !ok || !ok2 || waits <= 0 {
		return nil
	}
	value := max(2048, depth*2)
	f := Finding{
		ID:       "mysql-lru-scan-depth",
		Title:    fmt.Sprintf("Queries waited %s times for a free page in the buffer pool over the interval", num(waits)),
		Severity: Warning,
		Evidence: []Evidence{c.deltaEv("Innodb_buffer_pool_wait_free"), c.varEv("innodb_lru_scan_depth", "pages"), c.varEv("innodb_io_capacity", "IOPS")},
		Change:   c.MySQLChange("innodb_lru_scan_depth", fmt.Sprint(value), Increase),
		Effect:   "the page cleaner keeps more free pages ready per pass, so a read does not wait for a dirty page to be written first",
		Risk:     changeset.Risk{Restart: c.Restart("innodb_lru_scan_depth"), Note: "more background writes: the storage must take them (innodb_io_capacity); a buffer pool too small for the data waits anyway (mysql-buffer-pool-size)"},
		Source:   "the 2015 tpcc-mysql contest write-up (innodb_lru_scan_depth); MySQL manual (Innodb_buffer_pool_wait_free: raise innodb_lru_scan_depth)",
	}
	return []Finding{f}
}

func checkMySQLAutoincLockMode(c *Context) []Finding {
	if !c.mysqlReady() || !c.Has("innodb_autoinc_lock_mode") {
		return nil
	}
	mode, _ := c.Int("innodb_autoinc_lock_mode")
	inserts, ok := c.Rate("Com_insert")
	if !ok || mode == 2 || inserts < insertsConcurrent {
		return nil
	}
	f := Finding{
		ID:       "mysql-autoinc-lock-mode",
		Title:    fmt.Sprintf("%s INSERTs a second take the table's AUTO-INC lock in mode %d", num(inserts), mode),
		Severity: Info,
		Evidence: []Evidence{c.deltaEv("Com_insert"), c.varEv("innodb_autoinc_lock_mode", "")},
		Change:   c.MySQLChange("innodb_autoinc_lock_mode", "2", Set),
		Effect:   "concurrent INSERTs into one table stop waiting on its AUTO-INC lock: mode 2 hands out values without it (MySQL 8's default)",
		Risk:     changeset.Risk{Restart: true, Note: "the values of one multi-row INSERT may interleave with another's: ids stay unique and increasing but not consecutive per statement"},
		Source:   "the 2015 tpcc-mysql contest write-up (innodb_autoinc_lock_mode=2); MySQL manual 'AUTO_INCREMENT Handling in InnoDB'",
	}
	if binlogStatement(c) {
		f.Evidence = append(f.Evidence, c.varEv("log_bin", ""), c.varEv("binlog_format", ""))
		f.Also = append(f.Also, *c.MySQLChange("binlog_format", "ROW", Set))
		f.Risk.Note += "; statement-based binary logging replays interleaved values differently on a replica, so binlog_format goes to ROW with it"
	}
	return []Finding{f}
}

// binlogStatement reports whether the server writes a binary log in a
// format other than ROW.
func binlogStatement(c *Context) bool {
	on, _ := c.On("log_bin")
	format, ok := c.Var("binlog_format")
	return on && ok && !strings.EqualFold(format, "ROW")
}
