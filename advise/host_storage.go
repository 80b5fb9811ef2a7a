package advise

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
)

// What the 2015 tpcc-mysql contest entry found effective around the database process and its
// storage, each where the snapshot shows it matters:
//
//   - mysql-numa-interleave: on a host with several NUMA nodes, a buffer
//     pool larger than one node's memory allocated from one node makes
//     that node swap while others are free; interleaving spreads it.
//   - mysql-jemalloc: mysqld on the C library's allocator under a busy
//     interval (a core or more); jemalloc scales better with threads.
//   - linux-noatime: the datadir's file system updates access times
//     (relatime once a day per file, strictatime on every read).
//   - mysql-log-device: the redo log on the same device as the data files
//     while the redo log is written fast: its sequential writes compete
//     with the data's random ones.
var (
	mysqlNUMAInterleave = ruleFunc{"mysql-numa-interleave", LayerMySQL, checkMySQLNUMAInterleave}
	mysqlJemalloc       = ruleFunc{"mysql-jemalloc", LayerMySQL, checkMySQLJemalloc}
	linuxNoatime        = ruleFunc{"linux-noatime", LayerLinux, checkLinuxNoatime}
	mysqlLogDevice      = ruleFunc{"mysql-log-device", LayerMySQL, checkMySQLLogDevice}
)

const (
	// jemallocCores is mysqld's CPU over the interval that makes its
	// allocator matter.
	jemallocCores = 1.0
	// jemallocPath is Debian's and Ubuntu's libjemalloc2 on x86_64.
	jemallocPath = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
	// logDeviceRate is the redo write rate (bytes per second) from which
	// a separate device is worth it.
	logDeviceRate = 1 << 20
)

// mysqldHere returns the MySQL server processes on the collected host.
func (c *Context) mysqldHere() []collect.Process { return c.Processes(mysqlPatterns...) }

func checkMySQLNUMAInterleave(c *Context) []Finding {
	if !c.mysqlReady() || c.Linux == nil || c.Linux.NUMANodes < 2 || len(c.mysqldHere()) == 0 {
		return nil
	}
	pool, ok := c.Int("innodb_buffer_pool_size")
	ram := c.RAM()
	if !ok || ram <= 0 {
		return nil
	}
	node := ram / int64(c.Linux.NUMANodes)
	if pool < node/2 {
		return nil
	}
	f := Finding{
		ID:       "mysql-numa-interleave",
		Title:    fmt.Sprintf("The buffer pool (%s) is more than half of one of the %d NUMA nodes (%s each)", fmtBytes(pool), c.Linux.NUMANodes, fmtBytes(node)),
		Severity: Info,
		Evidence: []Evidence{ev("NUMA nodes", fmt.Sprint(c.Linux.NUMANodes), "", "/sys/devices/system/node"), ev("RAM", fmtBytes(ram), "", srcMeminfo),
			c.varEv("innodb_buffer_pool_size", "bytes")},
		Effect: "the buffer pool's pages are spread over every node, so one node does not run out of memory (and swap) while the others have it free",
		Risk:   changeset.Risk{Restart: true},
		Source: "the 2015 tpcc-mysql contest write-up (NUMA interleave was effective); MySQL manual (innodb_numa_interleave)",
	}
	if c.Has("innodb_numa_interleave") {
		if on, _ := c.On("innodb_numa_interleave"); on {
			return nil
		}
		f.Evidence = append(f.Evidence, c.varEv("innodb_numa_interleave", ""))
		f.Change = c.MySQLChange("innodb_numa_interleave", "ON", Set)
	} else {
		f.Change = &changeset.Change{Kind: changeset.Systemd, Target: mysqlUnit(c), Name: "NUMAPolicy", From: "", To: "interleave", Direction: Set}
		f.Risk.Note = "this server has no innodb_numa_interleave (built without NUMA support): systemd's NUMAPolicy=interleave (systemd 243 and later) interleaves the whole process"
	}
	return []Finding{f}
}

func checkMySQLJemalloc(c *Context) []Finding {
	if !c.mysqlReady() || c.Linux == nil {
		return nil
	}
	procs := c.mysqldHere()
	if len(procs) == 0 {
		return nil
	}
	lib, ok := c.Var("version_malloc_library")
	if ok && !strings.EqualFold(lib, "system") {
		return nil
	}
	if procs[0].Allocator != "" {
		return nil
	}
	c.usesRates(LayerLinux)
	var cores *float64
	for _, s := range c.Linux.Services {
		if (s.Name == "mysqld" || s.Name == "mariadbd") && s.CPUCores != nil {
			cores = s.CPUCores
		}
	}
	if cores == nil || *cores < jemallocCores {
		return nil
	}
	f := Finding{
		ID:       "mysql-jemalloc",
		Title:    fmt.Sprintf("mysqld used %.1f cores over the interval on the C library's malloc", *cores),
		Severity: Info,
		Evidence: []Evidence{ev("mysqld CPU", fmt.Sprintf("%.2f cores", *cores), "", fmt.Sprintf("/proc/PID/stat, delta over %s s", num(c.Linux.IntervalSeconds))),
			ev("allocator mapped", "the C library's", "", "/proc/PID/maps (no jemalloc or tcmalloc)")},
		Change: &changeset.Change{Kind: changeset.Systemd, Target: mysqlUnit(c), Name: "Environment", From: "", To: "LD_PRELOAD=" + jemallocPath, Direction: Set},
		Effect: "many threads allocate without contending on one allocator lock: the 2015 tpcc-mysql contest entry found jemalloc effective under TPC-C's concurrency",
		Risk:   changeset.Risk{Restart: true, Note: "install it first (Debian: apt-get install libjemalloc2; the path differs on other architectures); MariaDB also takes malloc-lib in [mysqld_safe] when started by mysqld_safe; measure it (stacktune tune)"},
		Source: "the 2015 tpcc-mysql contest write-up (jemalloc was effective)",
	}
	if ok {
		f.Evidence = append(f.Evidence, c.varEv("version_malloc_library", ""))
	}
	return []Finding{f}
}

// datadirMount is the mount that holds the MySQL datadir.
func (c *Context) datadirMount() (string, *collect.Mount) {
	dir, ok := c.Var("datadir")
	if !ok || c.Linux == nil || len(c.Linux.Mounts) == 0 || len(c.mysqldHere()) == 0 {
		return "", nil
	}
	return dir, c.Linux.MountOf(filepath.Clean(dir))
}

func checkLinuxNoatime(c *Context) []Finding {
	dir, m := c.datadirMount()
	if m == nil {
		return nil
	}
	opts := "," + m.Options + ","
	if strings.Contains(opts, ",noatime,") || m.FSType == "tmpfs" {
		return nil
	}
	f := Finding{
		ID:       "linux-noatime",
		Title:    fmt.Sprintf("The file system of the datadir (%s on %s) records access times", dir, m.Point),
		Severity: Info,
		Evidence: []Evidence{ev("mount of "+dir, fmt.Sprintf("%s %s (%s)", m.Point, m.FSType, m.Options), "", "/proc/self/mountinfo")},
		Change:   &changeset.Change{Kind: changeset.Mount, Target: m.Point, Name: "options", From: m.Options, To: "noatime", Direction: Set},
		Effect:   "reads of the data files cause no inode writes",
		Risk:     changeset.Risk{Note: "relatime (the default) already writes an access time at most once a day per file: the gain is small unless the file system is mounted strictatime; nothing a database relies on reads atime"},
		Source:   "the 2015 tpcc-mysql contest write-up (noatime was effective)",
	}
	if strings.Contains(opts, ",strictatime,") {
		f.Severity = Warning
	}
	return []Finding{f}
}

func checkMySQLLogDevice(c *Context) []Finding {
	dir, data := c.datadirMount()
	if data == nil {
		return nil
	}
	logDir, _ := c.Var("innodb_log_group_home_dir")
	if logDir == "" || logDir == "./" || logDir == "." {
		logDir = dir
	}
	lm := c.Linux.MountOf(filepath.Clean(logDir))
	if lm == nil || lm.Device != data.Device {
		return nil
	}
	rate, ok := c.Rate("Innodb_os_log_written")
	if !ok || rate < logDeviceRate {
		return nil
	}
	return []Finding{{
		ID:       "mysql-log-device",
		Title:    fmt.Sprintf("The redo log is written at %s/s to the device that holds the data files (%s)", fmtBytes(int64(rate)), data.Source),
		Severity: Info,
		Evidence: []Evidence{c.deltaEv("Innodb_os_log_written"), ev("datadir", dir+" on "+data.Point+" ("+data.Source+", "+data.Device+")", "", "/proc/self/mountinfo"),
			ev("redo log directory", logDir+" on "+lm.Point+" ("+lm.Source+", "+lm.Device+")", "", "/proc/self/mountinfo")},
		Effect: "a separate device takes the redo log's sequential writes (and their fsyncs) off the data files' random reads and writes (the 2015 tpcc-mysql contest entry measured it)",
		Risk:   changeset.Risk{Note: "a hardware and layout change: innodb_log_group_home_dir to a directory on the other device, with the server stopped and the log files moved; not made by stacktune"},
		Source: "the 2015 tpcc-mysql contest write-up (log files on another device were effective)",
	}}
}
