package advise

import "fmt"

// linux-fin-timeout: net.ipv4.tcp_fin_timeout is how long an orphaned
// connection stays in FIN-WAIT-2; TIME_WAIT lasts 60 s whatever it says
// (TCP_TIMEWAIT_LEN is compiled into the kernel). The smartphone game backend lowered it
// expecting shorter TIME_WAIT; the PHP + MySQL TIME_WAIT write-up shows why that does not work.
// When it was set below the default, the rule says so, and proposes
// nothing (a short FIN-WAIT-2 is harmless).
var linuxFinTimeout = ruleFunc{"linux-fin-timeout", LayerLinux, checkLinuxFinTimeout}

// finTimeoutDefault is the kernel's default tcp_fin_timeout.
const finTimeoutDefault = 60

func checkLinuxFinTimeout(c *Context) []Finding {
	if c.Linux == nil {
		return nil
	}
	v, ok := c.SysctlInt("net.ipv4.tcp_fin_timeout")
	if !ok || v >= finTimeoutDefault {
		return nil
	}
	tcp := c.Linux.TCP
	return []Finding{{
		ID:       "linux-fin-timeout",
		Title:    fmt.Sprintf("tcp_fin_timeout = %d does not shorten TIME_WAIT", v),
		Severity: Info,
		Evidence: []Evidence{ev("net.ipv4.tcp_fin_timeout", fmt.Sprint(v), "s", sysctlSource("net.ipv4.tcp_fin_timeout")),
			ev("TIME_WAIT sockets", fmt.Sprint(tcp.TimeWait.Count), "sockets", srcTCP),
			ev("FIN_WAIT2 sockets", fmt.Sprint(tcp.States["FIN_WAIT2"]), "sockets", srcTCP)},
		Effect: "nothing to change: tcp_fin_timeout limits FIN-WAIT-2 (the wait for the peer's FIN) and TIME_WAIT stays 60 s; if the aim was fewer TIME_WAIT sockets, keep connections open instead (linux-port-range)",
		Source: "the PHP + MySQL TIME_WAIT write-up (TIME_WAIT is 60 s, fixed in the kernel); the smartphone game backend's write-up (believed tcp_fin_timeout shortened it: corrected); Linux ip-sysctl.txt (tcp_fin_timeout)",
	}}
}
