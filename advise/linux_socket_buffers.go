package advise

import (
	"fmt"
	"strings"
)

// linux-socket-buffers: the kernel pruned or dropped data of TCP receive
// queues over the interval (TcpExt PruneCalled, RcvPruned, TCPRcvQDrop):
// sockets ran out of buffer. net.core.rmem_max and wmem_max cap what an
// application may ask for (SO_RCVBUF, SO_SNDBUF); the smartphone game backend raised them.
var linuxSocketBuffers = ruleFunc{"linux-socket-buffers", LayerLinux, checkLinuxSocketBuffers}

// socketBufferMax is the cap proposed: 16 MiB.
const socketBufferMax = 16 << 20

func checkLinuxSocketBuffers(c *Context) []Finding {
	l := c.Linux
	if l == nil || l.NetDeltas == nil {
		return nil
	}
	c.usesRates(LayerLinux)
	var ev1 []Evidence
	var drops float64
	src := fmt.Sprintf("/proc/net/netstat, delta over %s s", num(l.IntervalSeconds))
	for _, k := range []string{"TcpExt.PruneCalled", "TcpExt.RcvPruned", "TcpExt.TCPRcvQDrop"} {
		if d := l.NetDeltas[k]; d > 0 {
			drops += d
			ev1 = append(ev1, ev(strings.TrimPrefix(k, "TcpExt."), num(d), "", src))
		}
	}
	if drops == 0 {
		return nil
	}
	f := Finding{
		ID:       "linux-socket-buffers",
		Title:    fmt.Sprintf("TCP receive queues were pruned or dropped %s times over the interval", num(drops)),
		Severity: Warning,
		Evidence: ev1,
		Effect:   "sockets may take larger buffers, so bursts are not pruned and retransmitted",
		Source:   "the smartphone game backend's write-up (net.core.rmem_max and wmem_max raised); Linux ip-sysctl.txt",
	}
	for _, name := range []string{"net.core.rmem_max", "net.core.wmem_max"} {
		cur, ok := c.SysctlInt(name)
		if !ok || cur >= socketBufferMax {
			continue
		}
		f.Evidence = append(f.Evidence, ev(name, fmt.Sprint(cur), "bytes", sysctlSource(name)))
		ch := c.SysctlChange(name, fmt.Sprint(socketBufferMax), Increase)
		if f.Change == nil {
			f.Change = ch
		} else {
			f.Also = append(f.Also, *ch)
		}
	}
	if f.Change == nil {
		f.Effect = "the caps are 16 MiB already: the applications' own buffers (or net.ipv4.tcp_rmem's maximum for autotuned sockets) are what is short"
	}
	f.Risk.Memory = "only sockets that ask for large buffers use them: up to 16 MiB each"
	return []Finding{f}
}
