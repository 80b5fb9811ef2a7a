package advise

import (
	"fmt"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// linux-mysqld-nofile: mysqld raises its own soft limit to
// open_files_limit, but never above the hard limit systemd gave it
// (LimitNOFILE). The PHP + MySQL TIME_WAIT write-up set LimitNOFILE with systemctl edit: ulimit in
// a shell does not reach a service.
var linuxMySQLdNofile = ruleFunc{"linux-mysqld-nofile", LayerLinux, checkLinuxMySQLdNofile}

// mysqlUnit is the systemd unit of the server: mariadb.service for
// MariaDB (Debian's unit, with mysql.service and mysqld.service as
// aliases), mysqld.service for MySQL (mysql.service on Debian and Ubuntu).
func mysqlUnit(c *Context) string {
	if c.MariaDB() {
		return "mariadb.service"
	}
	return "mysqld.service"
}

func checkLinuxMySQLdNofile(c *Context) []Finding {
	if c.Linux == nil || !c.mysqlReady() {
		return nil
	}
	procs := c.Processes(mysqlPatterns...)
	if len(procs) == 0 {
		return nil
	}
	need, formula, ok := mysqldFileNeed(c)
	if !ok {
		return nil
	}
	want := max(need, openFilesWanted(c))
	// The lowest hard limit among the MySQL server processes (the host
	// may run more than one).
	sort.Slice(procs, func(i, j int) bool { return procs[i].PID < procs[j].PID })
	var low *int64
	var pids []string
	for _, p := range procs {
		l, ok := p.Limits["nofile"]
		if !ok || l.Hard < 0 {
			continue
		}
		if low == nil || l.Hard < *low {
			h := l.Hard
			low = &h
		}
		pids = append(pids, fmt.Sprintf("%s[%d] soft %d hard %d", p.Name, p.PID, l.Soft, l.Hard))
	}
	if low == nil || *low >= want {
		return nil
	}
	unit := mysqlUnit(c)
	return []Finding{{
		ID:       "linux-mysqld-nofile",
		Title:    fmt.Sprintf("mysqld may open at most %d files; its settings want %d", *low, want),
		Severity: Warning,
		Evidence: []Evidence{ev("mysqld nofile limit", strings.Join(pids, "; "), "files", "/proc/PID/limits (Max open files)"),
			c.varEv("open_files_limit", "files"), ev("files the settings need", fmt.Sprint(need), "files", formula)},
		Change: &changeset.Change{Kind: changeset.Systemd, Target: unit, Name: "LimitNOFILE", From: fmt.Sprint(*low), To: fmt.Sprint(want), Direction: Increase},
		Effect: "mysqld gets the descriptors open_files_limit promises, instead of lowering it, table_open_cache and max_connections at start",
		Risk:   changeset.Risk{Restart: true, Note: "a drop-in (systemctl edit " + unit + ") survives package upgrades; on Debian and Ubuntu MySQL's unit is mysql.service"},
		Source: "the PHP + MySQL TIME_WAIT write-up (LimitNOFILE in the unit via systemctl edit, not ulimit); systemd.exec(5); stacktune plan mysqld-limitnofile",
	}}
}
