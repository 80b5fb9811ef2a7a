package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-log-buffer: Innodb_log_waits counts commits that waited because
// the log buffer was full; any over the interval means it is too small
// for the transactions (seeds 002 and 004: innodb_log_buffer_size=64M).
var mysqlLogBuffer = ruleFunc{"mysql-log-buffer", LayerMySQL, checkMySQLLogBuffer}

func checkMySQLLogBuffer(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	waits, ok := c.Delta("Innodb_log_waits")
	if !ok || waits <= 0 {
		return nil
	}
	cur, ok := c.Int("innodb_log_buffer_size")
	if !ok {
		return nil
	}
	value := max(64*mib, nextPow2(cur*2))
	f := Finding{
		ID:       "mysql-log-buffer",
		Title:    fmt.Sprintf("Transactions waited for the log buffer %s times over the interval", num(waits)),
		Severity: Warning,
		Evidence: []Evidence{c.deltaEv("Innodb_log_waits"), c.varEv("innodb_log_buffer_size", "bytes")},
		Change:   c.MySQLChange("innodb_log_buffer_size", fmt.Sprint(value), Increase),
		Effect:   "large transactions fit in the log buffer and no longer wait for it to be written out",
		Risk:     changeset.Risk{Memory: fmt.Sprintf("+%s of RAM (one global buffer)", fmtBytes(value-cur)), Restart: c.Restart("innodb_log_buffer_size")},
		Source:   "seeds 002 and 004 (innodb_log_buffer_size=64M); MySQL manual (Innodb_log_waits)",
	}
	if _, ok := c.Delta("Innodb_log_write_requests"); ok {
		f.Evidence = append(f.Evidence, c.deltaEv("Innodb_log_write_requests"))
	}
	return []Finding{f}
}
