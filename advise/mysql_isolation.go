package advise

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-isolation: REPEATABLE-READ (InnoDB's default) locks the gaps
// between rows a statement reads for writing, so concurrent writers wait
// for each other and deadlock more than they must. The smartphone game backend ran
// READ-COMMITTED. It is a trade-off, stated and never hidden: a
// transaction then sees rows other transactions committed meanwhile, and
// statement-based binary logging cannot replicate it (binlog_format goes
// to ROW with it). Proposed only on evidence: row lock waits or deadlocks
// over the interval.
var mysqlIsolation = ruleFunc{"mysql-isolation", LayerMySQL, checkMySQLIsolation}

// mysql-binlog-format: a binary log in STATEMENT or MIXED format replays
// statements whose result can differ on a replica, and rules out
// READ-COMMITTED and interleaved auto-increment; the smartphone game backend ran ROW.
var mysqlBinlogFormat = ruleFunc{"mysql-binlog-format", LayerMySQL, checkMySQLBinlogFormat}

// lockWaitsPerSecond are the row lock waits per second that make the
// trade-off worth stating.
const lockWaitsPerSecond = 1

func checkMySQLIsolation(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	name := c.VarName("transaction_isolation")
	if name == "" {
		return nil
	}
	level, _ := c.Var(name)
	if !strings.EqualFold(level, "REPEATABLE-READ") {
		return nil
	}
	waits, _ := c.Rate("Innodb_row_lock_waits")
	deadlocks, hasDeadlocks := c.Delta("Innodb_deadlocks")
	if waits < lockWaitsPerSecond && (!hasDeadlocks || deadlocks <= 0) {
		return nil
	}
	f := Finding{
		ID:       "mysql-isolation",
		Title:    fmt.Sprintf("Transactions waited for row locks %s times a second under REPEATABLE-READ", num(waits)),
		Severity: Info,
		Evidence: []Evidence{c.varEv(name, "")},
		Change:   c.MySQLChange(name, "READ-COMMITTED", Set),
		Effect:   "no gap locks: writers that touch neighbouring rows stop waiting for each other, and fewer deadlocks (the smartphone game backend ran READ-COMMITTED)",
		Risk: changeset.Risk{Restart: c.Restart(name),
			Note: "a trade-off in what transactions see: under READ-COMMITTED a transaction reading a row twice can get another transaction's newer commit (non-repeatable reads, phantoms); code that reads then writes on that assumption must lock (SELECT ... FOR UPDATE). New sessions get it; pooled connections keep their level until they reconnect"},
		Source: "the smartphone game backend's write-up (transaction_isolation=READ-COMMITTED); MySQL manual 'Transaction Isolation Levels'",
	}
	if _, ok := c.Delta("Innodb_row_lock_waits"); ok {
		f.Evidence = append(f.Evidence, c.deltaEv("Innodb_row_lock_waits"))
	}
	if hasDeadlocks {
		f.Evidence = append(f.Evidence, c.deltaEv("Innodb_deadlocks"))
	}
	if binlogStatement(c) {
		f.Evidence = append(f.Evidence, c.varEv("binlog_format", ""))
		f.Also = append(f.Also, *c.MySQLChange("binlog_format", "ROW", Set))
		f.Risk.Note += "; with a binary log in STATEMENT or MIXED format READ-COMMITTED fails on writes, so binlog_format goes to ROW with it"
	}
	return []Finding{f}
}

func checkMySQLBinlogFormat(c *Context) []Finding {
	if !c.mysqlReady() || !binlogStatement(c) {
		return nil
	}
	format, _ := c.Var("binlog_format")
	return []Finding{{
		ID:       "mysql-binlog-format",
		Title:    fmt.Sprintf("The binary log is written in %s format", strings.ToUpper(format)),
		Severity: Info,
		Evidence: []Evidence{c.varEv("log_bin", ""), c.varEv("binlog_format", "")},
		Change:   c.MySQLChange("binlog_format", "ROW", Set),
		Effect:   "replicas apply the rows that changed, not statements that can give another result there; READ-COMMITTED and innodb_autoinc_lock_mode=2 become safe",
		Risk:     changeset.Risk{Restart: c.Restart("binlog_format"), Note: "a statement that changes many rows logs every row: a larger binary log; sessions open now keep their format until they reconnect"},
		Source:   "the smartphone game backend's write-up (binlog_format=ROW); MySQL manual 'Setting The Binary Log Format'",
	}}
}
