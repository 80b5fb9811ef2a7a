package advise

import (
	"fmt"
	"strings"
)

// mysql-flush-method: without O_DIRECT InnoDB's data pages are cached
// twice, in the buffer pool and in the OS page cache, and the page cache
// competes with the pool for RAM (the 2015 tpcc-mysql contest entry and the smartphone game backend set O_DIRECT). MariaDB
// 11.0 deprecated innodb_flush_method for innodb_data_file_buffering
// (dynamic), so the rule proposes that variable where it exists.
var mysqlFlushMethod = ruleFunc{"mysql-flush-method", LayerMySQL, checkMySQLFlushMethod}

// directShare is the share of RAM the buffer pool must hold before
// double caching matters.
const directShare = 0.25

func checkMySQLFlushMethod(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	bp, _ := c.Int("innodb_buffer_pool_size")
	ram := c.MySQLRAM()
	big := bp >= gib || ram > 0 && float64(bp) >= directShare*float64(ram)
	if !big {
		return nil
	}
	f := Finding{
		ID:       "mysql-flush-method",
		Severity: Info,
		Source:   "the 2015 tpcc-mysql contest write-up and the smartphone game backend's write-up (innodb_flush_method=O_DIRECT); MySQL manual 'Optimizing InnoDB Disk I/O'; MariaDB KB 'InnoDB Flush Method'",
		Effect:   "data pages are cached once, in the buffer pool, and the RAM the OS page cache used for them is left to the pool and the other services",
	}
	f.Evidence = append(f.Evidence, c.varEv("innodb_buffer_pool_size", "bytes"))
	if ram > 0 {
		f.Evidence = append(f.Evidence, ev("RAM", fmt.Sprint(ram), "bytes ("+fmtBytes(ram)+")", srcMeminfo))
	}
	if c.Has("innodb_data_file_buffering") {
		if on, _ := c.On("innodb_data_file_buffering"); !on {
			return nil
		}
		f.Title = "InnoDB data files go through the OS page cache (innodb_data_file_buffering = ON)"
		f.Evidence = append(f.Evidence, c.varEv("innodb_data_file_buffering", ""))
		f.Change = c.MySQLChange("innodb_data_file_buffering", "OFF", Set)
		f.Risk.Restart = c.Restart("innodb_data_file_buffering")
		return []Finding{f}
	}
	m, ok := c.Var("innodb_flush_method")
	if !ok {
		return nil
	}
	switch strings.ToUpper(m) {
	case "O_DIRECT", "O_DIRECT_NO_FSYNC", "ALL_O_DIRECT":
		return nil
	}
	shown := m
	if m == "" {
		shown = "fsync (the default)"
	}
	f.Title = "InnoDB data files go through the OS page cache (innodb_flush_method = " + shown + ")"
	f.Evidence = append(f.Evidence, c.varEv("innodb_flush_method", ""))
	f.Change = c.MySQLChange("innodb_flush_method", "O_DIRECT", Set)
	f.Risk.Restart = c.Restart("innodb_flush_method")
	f.Risk.Note = "O_DIRECT bypasses the page cache for data files only; a file system without O_DIRECT support (tmpfs) refuses it and InnoDB falls back or fails to start"
	if bp >= ram/2 && ram > 0 {
		f.Severity = Warning
	}
	return []Finding{f}
}
