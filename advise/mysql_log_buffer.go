package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-log-buffer: Innodb_log_waits counts commits that waited because
// the log buffer was full; any over the interval means it is too small
// for the transactions (the 2015 tpcc-mysql contest entry and the smartphone game backend: innodb_log_buffer_size=64M).
// Waits since start with none over the interval (issue 17: 300 waits and
// no finding) are still reported, as such: the large transactions ran
// outside the interval.
var mysqlLogBuffer = ruleFunc{"mysql-log-buffer", LayerMySQL, checkMySQLLogBuffer}

// logWaitsSinceStart are the waits since start that are worth saying
// when the interval saw none.
const logWaitsSinceStart = 100

func checkMySQLLogBuffer(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	waits, ok := c.Delta("Innodb_log_waits")
	total, _ := c.Gauge("Innodb_log_waits")
	sinceStart := false
	if !ok || waits <= 0 {
		if total < logWaitsSinceStart {
			return nil
		}
		sinceStart = true
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
		Source:   "the 2015 tpcc-mysql contest write-up and the smartphone game backend's write-up (innodb_log_buffer_size=64M); MySQL manual (Innodb_log_waits)",
	}
	if sinceStart {
		uptime, _ := c.Gauge("Uptime")
		f.Severity = Info
		f.Title = fmt.Sprintf("Transactions waited for the log buffer %s times since the server started, none over the interval", num(total))
		f.Evidence = append(f.Evidence, ev("Innodb_log_waits since start", num(total), "waits", sinceStart2(uptime)))
		f.Effect += "; the waits happened outside the interval (a batch job, an import): collect while it runs to see their rate"
	}
	if _, ok := c.Delta("Innodb_log_write_requests"); ok {
		f.Evidence = append(f.Evidence, c.deltaEv("Innodb_log_write_requests"))
	}
	return []Finding{f}
}

// sinceStart2 is the source of a MySQL counter read as a total since
// start.
func sinceStart2(uptime float64) string {
	return fmt.Sprintf("SHOW GLOBAL STATUS, total since start (%s ago)", fmtSeconds(uptime))
}
