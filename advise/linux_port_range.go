package advise

import (
	"fmt"
	"math"
	"sort"

	"github.com/stacktune/stacktune/capacity"
)

// linux-port-range: every outgoing connection takes a local port from
// net.ipv4.ip_local_port_range for as long as it is open and then for the
// 60 s of TIME_WAIT if this side closed first (the PHP + MySQL TIME_WAIT write-up: non-persistent
// PHP → MySQL leaves one per request). The rule counts, per remote port,
// the connections open and in TIME_WAIT (ss -tan state time-wait
// '( dport = :3306 )' | wc -l, read from /proc/net/tcp) against the
// range, using plan's port arithmetic (both ends included, an even count).
var linuxPortRange = ruleFunc{"linux-port-range", LayerLinux, checkLinuxPortRange}

const (
	// portsWarn and portsCrit are the shares of the range in use toward
	// one destination port.
	portsWarn = 0.5
	portsCrit = 0.8
	// portHeadroom covers peaks above the moment of the snapshot.
	portHeadroom = 2.0
	// timeWaitSeconds is TCP_TIMEWAIT_LEN, compiled into Linux.
	timeWaitSeconds = 60
)

func checkLinuxPortRange(c *Context) []Finding {
	if c.Linux == nil {
		return nil
	}
	r, ok := c.portRange()
	if !ok {
		return nil
	}
	tcp := c.Linux.TCP
	ports := map[int]bool{}
	for p := range tcp.TimeWait.ByRemotePort {
		ports[p] = true
	}
	for p := range tcp.Established.ByRemotePort {
		ports[p] = true
	}
	best, used := 0, 0
	keys := make([]int, 0, len(ports))
	for p := range ports {
		keys = append(keys, p)
	}
	sort.Ints(keys)
	for _, p := range keys {
		if n := tcp.TimeWait.ByRemotePort[p] + tcp.Established.ByRemotePort[p]; n > used {
			best, used = p, n
		}
	}
	usable := r.Usable()
	if usable <= 0 || float64(used) < portsWarn*float64(usable) {
		return nil
	}
	tw, est := tcp.TimeWait.ByRemotePort[best], tcp.Established.ByRemotePort[best]
	need := int(math.Ceil(float64(used) * portHeadroom))
	if need%2 == 1 {
		need++
	}
	f := Finding{
		ID:       "linux-port-range",
		Title:    fmt.Sprintf("Connections to port %d use %d of %d local ports", best, used, usable),
		Severity: Warning,
		Evidence: []Evidence{
			ev(fmt.Sprintf("TIME_WAIT sockets to port %d", best), fmt.Sprint(tw), "sockets", srcTCP),
			ev(fmt.Sprintf("ESTABLISHED sockets to port %d", best), fmt.Sprint(est), "sockets", srcTCP),
			ev("net.ipv4.ip_local_port_range", r.String(), fmt.Sprintf("%d usable ports (%d..%d, both ends, even count)", usable, r.Low, r.High), sysctlSource("net.ipv4.ip_local_port_range")),
			ev("new connections per second (TIME_WAIT / 60 s)", num(float64(tw)/timeWaitSeconds), "connections/s", "TIME_WAIT lasts 60 s (TCP_TIMEWAIT_LEN)"),
		},
		Source: "the PHP + MySQL TIME_WAIT write-up (900 req/s × 60 s + 1024 = 55024 ports → 10511-65535); Linux ip-sysctl.txt (ip_local_port_range); stacktune plan port-range",
	}
	if float64(used) >= portsCrit*float64(usable) {
		f.Severity = Critical
	}
	lo := capacity.MaxPort + 1 - need
	if need > capacity.MaxEphemeralPorts {
		lo = capacity.MinEphemeralPort
	}
	if lo < r.Low {
		f.Change = c.SysctlChange("net.ipv4.ip_local_port_range", fmt.Sprintf("%d %d", lo, capacity.MaxPort), Increase)
		f.Effect = fmt.Sprintf("%d ports (%d..%d): twice the connections seen, so a peak does not end in connect() failing with EADDRNOTAVAIL (\"Cannot assign requested address\")",
			capacity.MaxPort-lo+1, lo, capacity.MaxPort)
	} else {
		f.Effect = "the range is as wide as it should be"
	}
	if need > capacity.MaxEphemeralPorts {
		f.Effect += fmt.Sprintf("; %d ports are more than any range holds: ", need)
	} else {
		f.Effect += "; better still, "
	}
	f.Effect += "keep connections open (persistent connections or a pool) so a request does not leave a TIME_WAIT behind; tcp_fin_timeout does not shorten TIME_WAIT and tcp_tw_reuse only masks the shortage"
	f.Risk.Note = "a stateless packet filter must let replies in to the new range (the PHP + MySQL TIME_WAIT write-up); a service listening inside it (memcached 11211, Redis 6379) can find its port taken when it restarts: list such ports in net.ipv4.ip_local_reserved_ports"
	return []Finding{f}
}

// portRange is the host's ip_local_port_range.
func (c *Context) portRange() (capacity.PortRange, bool) {
	v, ok := c.Sysctl("net.ipv4.ip_local_port_range")
	if !ok {
		return capacity.PortRange{}, false
	}
	r, err := capacity.ParsePortRange(v)
	return r, err == nil
}
