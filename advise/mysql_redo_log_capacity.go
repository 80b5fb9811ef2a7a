package advise

import (
	"fmt"
	"math"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/mysqlvar"
)

// mysql-redo-log-capacity: the redo log should hold about an hour of
// writes at the measured rate, so checkpoints do not force flushing
// (the 2015 tpcc-mysql contest entry and the smartphone game backend ran 4 GB logs). The variable depends on the version:
// innodb_redo_log_capacity on MySQL 8.0.30 and later,
// innodb_log_file_size elsewhere (times innodb_log_files_in_group where it
// exists: MySQL before 8.0.30, MariaDB before 10.6).
var mysqlRedoLogCapacity = ruleFunc{"mysql-redo-log-capacity", LayerMySQL, checkMySQLRedoLogCapacity}

// Redo sizing.
const (
	// redoHoldSeconds is how long the redo log should last at the
	// measured write rate: an hour is the usual rule of thumb (Percona,
	// "How to calculate a good InnoDB log file size").
	redoHoldSeconds = 3600
	// redoWarnSeconds: below this the log fills in minutes and
	// checkpoints flush pages in bursts.
	redoWarnSeconds = 900
	// redoMax caps the proposal (MySQL allows 128 GiB of redo, MariaDB
	// 512 GiB; crash recovery reads what is in it).
	redoMax = 32 * gib
	// redoFloor is the cap's least: the buffer pool's size caps the
	// proposal, but never below this.
	redoFloor = gib
	// redoMinRate ignores intervals with almost no writes.
	redoMinRate = 1024.0
)

func checkMySQLRedoLogCapacity(c *Context) []Finding {
	if !c.mysqlReady() || c.Interval() <= 0 {
		return nil
	}
	in := c.My.InnoDB
	if in.RedoBytesPerSecond == nil || *in.RedoBytesPerSecond < redoMinRate || in.RedoCapacityBytes <= 0 {
		return nil
	}
	rate := *in.RedoBytesPerSecond
	lasts := float64(in.RedoCapacityBytes) / rate
	if lasts >= redoHoldSeconds {
		return nil
	}
	name := mysqlvar.RedoCapacityVariable(c.Flavor(), c.Version())
	if !c.Has(name) {
		return nil
	}
	hour := roundUp(int64(math.Ceil(rate*redoHoldSeconds)), 64*mib)
	// A redo log larger than the buffer pool (or redoFloor on a small
	// one) buys little: the pages it lets stay dirty must fit in the
	// pool, and crash recovery reads all of it. A short window of heavy
	// writes (a bulk load) would otherwise ask for tens of GiB.
	limit := redoMax
	if bp, ok := c.Int("innodb_buffer_pool_size"); ok && bp > 0 {
		limit = min(limit, max(roundUp(bp, 64*mib), redoFloor))
	}
	total := min(limit, hour)
	if total <= in.RedoCapacityBytes {
		return nil
	}
	files := int64(1)
	if name == "innodb_log_file_size" {
		if n, ok := c.Int("innodb_log_files_in_group"); ok && n > 1 {
			files = n
		}
	}
	value := roundUp(total/files, mib)
	f := Finding{
		ID:       "mysql-redo-log-capacity",
		Title:    fmt.Sprintf("The redo log holds %s of writes at the measured rate", fmtSeconds(lasts)),
		Severity: Info,
		Evidence: []Evidence{
			ev("redo log capacity", fmt.Sprint(in.RedoCapacityBytes), "bytes ("+fmtBytes(in.RedoCapacityBytes)+")", srcVariables+": "+in.RedoCapacitySource),
			ev("redo written (Innodb_os_log_written)", num(rate), "bytes/s", c.StatusSource()),
			ev("time to fill it", num(lasts), "s", "capacity / write rate"),
		},
		Change: c.MySQLChange(name, fmt.Sprint(value), Increase),
		Effect: fmt.Sprintf("about an hour of writes at %s/s fits in %s of redo, so checkpoints flush pages steadily instead of in bursts that stall writes",
			fmtBytes(int64(rate)), fmtBytes(value*files)),
		Risk: changeset.Risk{
			Restart: c.Restart(name),
			Note:    fmt.Sprintf("uses %s of disk next to the data; crash recovery may have to read all of it (longer recovery)", fmtBytes(value*files)),
		},
		Source: "the 2015 tpcc-mysql contest write-up and the smartphone game backend's write-up (innodb_log_file_size 4 GB); MySQL manual 'Redo Log' (innodb_redo_log_capacity since 8.0.30); MariaDB KB innodb_log_file_size",
	}
	if lasts < redoWarnSeconds {
		f.Severity = Warning
	}
	if total < hour {
		f.Effect = fmt.Sprintf("an hour of writes at %s/s would be %s of redo; %s (the buffer pool's size, at least %s) holds %s of them, so checkpoints flush pages steadily instead of in bursts that stall writes, and crash recovery stays short",
			fmtBytes(int64(rate)), fmtBytes(hour), fmtBytes(value*files), fmtBytes(redoFloor), fmtSeconds(float64(value*files)/rate))
	}
	if files > 1 {
		f.Effect += fmt.Sprintf(" (%d files of %s)", files, fmtBytes(value))
	}
	if a, ok := c.Gauge("Innodb_checkpoint_age"); ok {
		f.Evidence = append(f.Evidence, ev("Innodb_checkpoint_age", num(a), "bytes", srcGauge))
	}
	if f.Risk.Restart && name == "innodb_log_file_size" && !c.MariaDB() {
		f.Risk.Note += "; MySQL before 8.0.30 recreates the log files at start after a clean shutdown"
	}
	return []Finding{f}
}

// fmtSeconds formats a duration in seconds: 45 s, 12 min, 2.5 h.
func fmtSeconds(s float64) string {
	switch {
	case s < 120:
		return num(math.Round(s)) + " s"
	case s < 7200:
		return num(math.Round(s/60)) + " min"
	}
	return num(math.Round(s/360)/10) + " h"
}
