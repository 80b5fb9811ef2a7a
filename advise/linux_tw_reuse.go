package advise

import "fmt"

// linux-tw-reuse: tcp_tw_reuse=1 lets connect() take over a TIME_WAIT
// port when TCP timestamps show it is safe. It masks a port shortage and
// does not remove it: with the range cut to 1000 ports the TIME_WAIT write-up's ab run
// still failed 71193 of 100000 requests. Information only: the fix is
// fewer connections (persistent ones) and a wide enough range.
var linuxTWReuse = ruleFunc{"linux-tw-reuse", LayerLinux, checkLinuxTWReuse}

// twReuseMin is the outbound TIME_WAIT sockets from which the note is
// worth making.
const twReuseMin = 1000

func checkLinuxTWReuse(c *Context) []Finding {
	if c.Linux == nil {
		return nil
	}
	reuse, ok := c.SysctlInt("net.ipv4.tcp_tw_reuse")
	out := c.Linux.TCP.TimeWait.Outbound
	if !ok || reuse != 1 || out < twReuseMin {
		return nil
	}
	f := Finding{
		ID:       "linux-tw-reuse",
		Title:    fmt.Sprintf("tcp_tw_reuse masks %d outgoing TIME_WAIT sockets", out),
		Severity: Info,
		Evidence: []Evidence{ev("net.ipv4.tcp_tw_reuse", "1", "", sysctlSource("net.ipv4.tcp_tw_reuse")),
			ev("outgoing TIME_WAIT sockets", fmt.Sprint(out), "sockets", srcTCP)},
		Effect: "nothing to change here: connect() reuses TIME_WAIT ports, but every request still opens and closes a connection; keep connections open (persistent connections, a pool, a unix socket on the same host) and size the port range (linux-port-range)",
		Source: "the PHP + MySQL TIME_WAIT write-up (ab with 1000 ports and tcp_tw_reuse=1: 71193 of 100000 failed); Linux ip-sysctl.txt (tcp_tw_reuse)",
	}
	if ts, ok := c.SysctlInt("net.ipv4.tcp_timestamps"); ok {
		f.Evidence = append(f.Evidence, ev("net.ipv4.tcp_timestamps", fmt.Sprint(ts), "", sysctlSource("net.ipv4.tcp_timestamps")))
		if ts == 0 {
			f.Effect = "tcp_tw_reuse does nothing with tcp_timestamps=0 (it needs them to tell old segments apart); " + f.Effect
		}
	}
	return []Finding{f}
}
