package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/capacity"
	"github.com/stacktune/stacktune/changeset"
)

// mysql-open-files-limit: mysqld needs a descriptor per connection and
// two per table of its table cache (a MyISAM table opens two files)
// besides its logs. The rule compares open_files_limit with what the
// server's settings need, derived as `stacktune plan` does
// (capacity.MySQLOpenFiles: max(5000 - 151, 10 + 2 × table_open_cache) +
// max_connections; the PHP + MySQL TIME_WAIT write-up: 4849 + 25500 = 30349), and with the files
// open now. mysqld also asks the kernel for up to 5 × max_connections,
// but that is a request it scales down, not a need: the rule does not
// demand it (127,500 for 25,500 connections would be wrong).
var mysqlOpenFilesLimit = ruleFunc{"mysql-open-files-limit", LayerMySQL, checkMySQLOpenFilesLimit}

// openFilesHigh is the share of the limit in use that counts as near it.
const openFilesHigh = 0.8

// mysqldFileNeed is the open_files_limit the settings need, as plan
// derives it (capacity.MySQLOpenFiles).
func mysqldFileNeed(c *Context) (int64, string, bool) {
	conns, ok1 := c.Int("max_connections")
	toc, ok2 := c.Int("table_open_cache")
	if !ok1 || !ok2 {
		return 0, "", false
	}
	n, formula := capacity.MySQLOpenFiles(toc, conns)
	return n, formula, true
}

// openFilesWanted is the open_files_limit stacktune wants: the current
// one, or more when the settings need more (exactly what they need) or
// the files open now are near it (twice those, rounded up to 1000).
// linux-mysqld-nofile sizes LimitNOFILE to it.
func openFilesWanted(c *Context) int64 {
	limit, _ := c.Int("open_files_limit")
	need, _, ok := mysqldFileNeed(c)
	if !ok {
		return limit
	}
	open, _ := c.Gauge("Open_files")
	busy := open >= openFilesHigh*float64(limit)
	if limit >= need && !busy {
		return limit
	}
	if busy {
		return max(need, roundUp(int64(open*2), 1000))
	}
	return need
}

func checkMySQLOpenFilesLimit(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	limit, ok := c.Int("open_files_limit")
	if !ok || limit <= 0 {
		return nil
	}
	need, formula, ok := mysqldFileNeed(c)
	if !ok {
		return nil
	}
	open, hasOpen := c.Gauge("Open_files")
	short := limit < need
	busy := hasOpen && open >= openFilesHigh*float64(limit)
	if !short && !busy {
		return nil
	}
	value := openFilesWanted(c)
	f := Finding{
		ID:       "mysql-open-files-limit",
		Severity: Warning,
		Evidence: []Evidence{c.varEv("open_files_limit", "files"), c.varEv("max_connections", "connections"), c.varEv("table_open_cache", "tables"),
			ev("files the settings need", fmt.Sprint(need), "files", formula)},
		Change: c.MySQLChange("open_files_limit", fmt.Sprint(value), Increase),
		Risk: changeset.Risk{Restart: true,
			Note: "mysqld cannot open more files than its process limit: raise LimitNOFILE in its systemd unit to at least this (linux-mysqld-nofile); ulimit in a shell does not reach a service"},
		Source: "the PHP + MySQL TIME_WAIT write-up ((5000 - 151) + 25500 = 30349; LimitNOFILE via systemctl edit); MySQL manual (open_files_limit); stacktune plan open-files-limit (the same derivation)",
	}
	if hasOpen {
		f.Evidence = append(f.Evidence, ev("Open_files", num(open), "files", srcGauge))
	}
	if short {
		f.Title = fmt.Sprintf("open_files_limit %d is below the %d files max_connections and table_open_cache need", limit, need)
		f.Effect = "mysqld no longer shrinks table_open_cache or max_connections at start for lack of descriptors (\"Changed limits\" in the error log)"
	} else {
		f.Title = fmt.Sprintf("%s of open_files_limit %d files are open", num(open), limit)
		f.Effect = "mysqld does not run out of descriptors (\"Too many open files\", errno 24) at the next peak"
	}
	if busy && open >= 0.95*float64(limit) {
		f.Severity = Critical
	}
	return []Finding{f}
}
