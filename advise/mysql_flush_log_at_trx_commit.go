package advise

import "fmt"

// mysql-flush-log-at-trx-commit: with 1 InnoDB writes and flushes the
// redo log at every commit; 2 writes at commit and flushes about once a
// second; 0 does both about once a second. The ISUCON5 qualifier write-up, the 2015 tpcc-mysql contest entry and the smartphone game backend used 2
// or 0; the 2015 tpcc-mysql contest forbade it. The cost is stated either way.
var mysqlFlushLogAtTrxCommit = ruleFunc{"mysql-flush-log-at-trx-commit", LayerMySQL, checkMySQLFlushLogAtTrxCommit}

const (
	lossWith2 = "with 2 a commit is written to the OS at once and flushed to disk about once a second (innodb_flush_log_at_timeout): an OS crash or power loss loses up to ~1 s of commits; a crash of mysqld alone loses none"
	lossWith0 = "with 0 the log is written and flushed about once a second: a crash of mysqld, of the OS or of the power loses up to ~1 s of commits"
)

func checkMySQLFlushLogAtTrxCommit(c *Context) []Finding {
	const name = "innodb_flush_log_at_trx_commit"
	if !c.mysqlReady() || !c.Has(name) {
		return nil
	}
	v, _ := c.Int(name)
	_, isFixed := c.Fixed(name)
	f := Finding{
		ID:     "mysql-flush-log-at-trx-commit",
		Layer:  LayerMySQL,
		Source: "the ISUCON5 qualifier write-up, the 2015 tpcc-mysql contest write-up and the smartphone game backend's write-up (2 or 0 for speed; the contest fixed it at 1); MySQL manual (innodb_flush_log_at_trx_commit)",
	}
	f.Evidence = append(f.Evidence, c.varEv(name, ""))
	switch v {
	case 0, 2:
		if isFixed {
			return nil // fixed-settings reports a fixed value not in force
		}
		f.Title = fmt.Sprintf("Durability is relaxed: %s = %d", name, v)
		f.Severity = Info
		f.Risk.Durability = lossWith2
		if v == 0 {
			f.Risk.Durability = lossWith0
		}
		f.Effect = "stated so the trade-off is known: set it to 1 if those commits must survive a crash"
		return []Finding{f}
	}
	// 1 (or MariaDB's 3, also a flush per commit).
	name2, rate, ok := fsyncRate(c)
	if !ok || rate < durabilityMinRate {
		return nil
	}
	f.Evidence = append(f.Evidence, commitEvidence(c)...)
	f.Title = fmt.Sprintf("Every commit waits for a flush: %s redo fsyncs per second", num(rate))
	f.Effect = fmt.Sprintf("commits stop waiting for the disk: about one flush per second instead of %s (%s)", num(rate), name2)
	f.Risk.Durability = lossWith2
	proposeRelaxed(c, &f, name, "2", Warning)
	return []Finding{f}
}
