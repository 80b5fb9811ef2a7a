package advise

import "fmt"

// linux-swappiness: on a database host the kernel should keep the buffer
// pool in RAM rather than swap it out to keep page cache (the 2015 tpcc-mysql contest entry:
// vm.swappiness=1 was effective; the smartphone game backend: 0-1). 1 rather than 0: with 0
// recent kernels do not swap at all until memory runs out, and the OOM
// killer comes sooner.
var linuxSwappiness = ruleFunc{"linux-swappiness", LayerLinux, checkLinuxSwappiness}

// swappinessDB is the highest swappiness left alone on a database host.
const swappinessDB = 10

func checkLinuxSwappiness(c *Context) []Finding {
	if c.Linux == nil || len(c.Processes(mysqlPatterns...)) == 0 {
		return nil
	}
	v, ok := c.SysctlInt("vm.swappiness")
	mem := c.Linux.Memory
	if !ok || v <= swappinessDB || mem.SwapTotalBytes <= 0 {
		return nil
	}
	used := mem.SwapTotalBytes - mem.SwapFreeBytes
	f := Finding{
		ID:       "linux-swappiness",
		Title:    fmt.Sprintf("vm.swappiness = %d on a database host with swap", v),
		Severity: Info,
		Evidence: []Evidence{ev("vm.swappiness", fmt.Sprint(v), "", sysctlSource("vm.swappiness")),
			ev("swap in use", fmt.Sprint(used), "bytes ("+fmtBytes(used)+" of "+fmtBytes(mem.SwapTotalBytes)+")", srcMeminfo),
			ev("MySQL server processes", fmt.Sprint(len(c.Processes(mysqlPatterns...))), "processes", "/proc/PID/comm")},
		Change: c.SysctlChange("vm.swappiness", "1", Decrease),
		Effect: "the kernel drops page cache before it swaps out mysqld's buffer pool, whose pages would otherwise be read back from swap on the next query",
		Source: "the 2015 tpcc-mysql contest write-up (vm.swappiness=1 effective); the smartphone game backend's write-up (0-1); Linux Documentation/admin-guide/sysctl/vm.rst",
	}
	if used > 0 {
		f.Severity = Warning
	}
	return []Finding{f}
}
