package advise

// linux-tw-recycle: tcp_tw_recycle dropped connections from clients
// behind NAT (their timestamps are not monotonic) and was removed in Linux
// 4.12. stacktune never proposes it; on an older kernel where it is on,
// it says to turn it off.
var linuxTWRecycle = ruleFunc{"linux-tw-recycle", LayerLinux, checkLinuxTWRecycle}

func checkLinuxTWRecycle(c *Context) []Finding {
	v, ok := c.SysctlInt("net.ipv4.tcp_tw_recycle")
	if !ok || v == 0 {
		return nil
	}
	return []Finding{{
		ID:       "linux-tw-recycle",
		Title:    "tcp_tw_recycle is on: clients behind NAT lose connections",
		Severity: Warning,
		Evidence: []Evidence{ev("net.ipv4.tcp_tw_recycle", "1", "", sysctlSource("net.ipv4.tcp_tw_recycle")),
			ev("kernel", c.Linux.KernelRelease, "", "/proc/sys/kernel/osrelease")},
		Change: c.SysctlChange("net.ipv4.tcp_tw_recycle", "0", Set),
		Effect: "SYNs from clients sharing a NAT address are no longer dropped for out-of-order timestamps; the setting was removed in Linux 4.12 for that reason",
		Source: "Linux ip-sysctl.txt; the removal commit in 4.12 (4396e46187ca); the PHP + MySQL TIME_WAIT write-up",
	}}
}
