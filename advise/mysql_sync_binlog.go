package advise

import "fmt"

// mysql-sync-binlog: with log_bin, sync_binlog=1 flushes the binary log at
// every commit group; 0 leaves it to the OS (the ISUCON5 qualifier write-up). Only with
// --allow-durability-loss, cost stated; silent without a binary log.
var mysqlSyncBinlog = ruleFunc{"mysql-sync-binlog", LayerMySQL, checkMySQLSyncBinlog}

const lossBinlog0 = "with 0 the OS writes the binary log to disk when it likes: an OS crash or power loss can lose binlog events of transactions InnoDB committed, so replicas and point-in-time recovery miss them (and a crashed primary may be ahead of its replicas)"

func checkMySQLSyncBinlog(c *Context) []Finding {
	const name = "sync_binlog"
	if !c.mysqlReady() || !c.Has(name) {
		return nil
	}
	if on, ok := c.On("log_bin"); !ok || !on {
		return nil
	}
	v, _ := c.Int(name)
	_, isFixed := c.Fixed(name)
	f := Finding{
		ID:       "mysql-sync-binlog",
		Layer:    LayerMySQL,
		Evidence: []Evidence{c.varEv(name, ""), c.varEv("log_bin", "")},
		Source:   "the ISUCON5 qualifier write-up (sync_binlog=0); MySQL manual (sync_binlog, default 1 since 5.7.7); MariaDB KB (default 0)",
	}
	if v != 1 {
		if isFixed {
			return nil
		}
		f.Title = fmt.Sprintf("The binary log is not flushed at commit: sync_binlog = %d", v)
		f.Severity = Info
		f.Risk.Durability = lossBinlog0
		if v > 1 {
			f.Risk.Durability = fmt.Sprintf("with %d the binary log is flushed every %d commit groups: an OS crash or power loss can lose that many groups' binlog events", v, v)
		}
		f.Effect = "stated so the trade-off is known: set it to 1 if replicas and point-in-time recovery must have every committed transaction"
		return []Finding{f}
	}
	r, ok := c.Rate("Handler_commit")
	if !ok || r < durabilityMinRate {
		return nil
	}
	f.Evidence = append(f.Evidence, commitEvidence(c)...)
	f.Title = fmt.Sprintf("The binary log is flushed at every commit (%s commits/s)", num(r))
	f.Effect = "commits stop waiting for the binary log's fsync"
	f.Risk.Durability = lossBinlog0
	proposeRelaxed(c, &f, name, "0", Warning)
	return []Finding{f}
}
