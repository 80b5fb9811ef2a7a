package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-binlog-cache: a transaction's binary log events are buffered in
// binlog_cache_size per session, and in a temporary file past it;
// Binlog_cache_disk_use growing over the interval means transactions spill
// (the smartphone game backend raised it from 32 KB to 96 KB). The same for the statement
// cache (binlog_stmt_cache_size, Binlog_stmt_cache_disk_use).
var mysqlBinlogCache = ruleFunc{"mysql-binlog-cache", LayerMySQL, checkMySQLBinlogCache}

// binlogSpillShare is the share of transactions spilling that is worth a
// change.
const binlogSpillShare = 0.01

func checkMySQLBinlogCache(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	if on, ok := c.On("log_bin"); !ok || !on {
		return nil
	}
	type cache struct{ variable, disk, use string }
	var changes []changeset.Change
	var evs []Evidence
	for _, k := range []cache{
		{"binlog_cache_size", "Binlog_cache_disk_use", "Binlog_cache_use"},
		{"binlog_stmt_cache_size", "Binlog_stmt_cache_disk_use", "Binlog_stmt_cache_use"},
	} {
		disk, ok := c.Delta(k.disk)
		if !ok || disk <= 0 || !c.Has(k.variable) {
			continue
		}
		use, _ := c.Delta(k.use)
		if use > 0 && disk/use < binlogSpillShare {
			continue
		}
		cur, _ := c.Int(k.variable)
		value := roundUp(max(cur*4, 128*kib), 4*kib)
		changes = append(changes, *c.MySQLChange(k.variable, fmt.Sprint(value), Increase))
		evs = append(evs, c.deltaEv(k.disk), c.deltaEv(k.use), c.varEv(k.variable, "bytes"))
	}
	if len(changes) == 0 {
		return nil
	}
	f := Finding{
		ID:       "mysql-binlog-cache",
		Title:    "Transactions' binary log events spill to temporary files",
		Severity: Info,
		Evidence: evs,
		Change:   &changes[0],
		Also:     changes[1:],
		Effect:   "transactions' binlog events stay in memory until commit instead of going through a temporary file",
		Risk:     changeset.Risk{Memory: "per session that writes, for the transaction's duration", Restart: c.Restart(changes[0].Name)},
		Source:   "the smartphone game backend's write-up (Binlog_cache_disk_use rising: binlog_cache_size 32 KB → 96 KB); MySQL manual (binlog_cache_size)",
	}
	return []Finding{f}
}
