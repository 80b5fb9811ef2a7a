package advise

import (
	"fmt"
	"strconv"

	"github.com/stacktune/stacktune/changeset"
)

// The memcached options the smartphone game backend ran with (memcached -m 1024 -c 65535
// -b 2048 -U 0 -C -s ...) and its finding on TTLs, each a rule on what
// the server reports:
//
//   - memcached-ttl: items that never expire (lru_crawler metadump):
//     permanent entries made the smartphone game backend's latency grow from 5-20 ms to
//     200-400 ms over hours; a TTL of at most an hour kept it at 40-50 ms.
//   - memcached-udp: UDP on (-U other than 0): no client of a web stack
//     uses it, and it answers spoofed requests (amplification).
//   - memcached-backlog: the listen queue (-b, capped by somaxconn)
//     overflowed during the interval while memcached took new
//     connections.
//   - memcached-cas: CAS on but no cas command over the interval: -C
//     saves 8 bytes per item.
var (
	memcachedTTL     = ruleFunc{"memcached-ttl", LayerMemcached, checkMemcachedTTL}
	memcachedUDP     = ruleFunc{"memcached-udp", LayerMemcached, checkMemcachedUDP}
	memcachedBacklog = ruleFunc{"memcached-backlog", LayerMemcached, checkMemcachedBacklog}
	memcachedCAS     = ruleFunc{"memcached-cas", LayerMemcached, checkMemcachedCAS}
)

const (
	// ttlMinItems and ttlShare: how many items, and what share without
	// expiry, make a finding.
	ttlMinItems = 100
	ttlShare    = 0.2
	// casMinCommands are the gets and sets over the interval that show
	// the cache in use.
	casMinCommands = 1000
	// memcachedBacklog2 is the smartphone game backend's -b.
	memcachedBacklog2 = 2048
)

func checkMemcachedTTL(c *Context) []Finding {
	m := c.Memcached
	if m == nil || m.TTL == nil || m.TTL.Items < ttlMinItems {
		return nil
	}
	t := m.TTL
	share := float64(t.NoExpiry) / float64(t.Items)
	if share < ttlShare {
		return nil
	}
	src := "memcached lru_crawler metadump all"
	if t.Truncated {
		src += fmt.Sprintf(" (the first %d items)", t.Items)
	}
	f := Finding{
		ID:       "memcached-ttl",
		Title:    fmt.Sprintf("%s of memcached's items never expire (%d of %d)", pct(share), t.NoExpiry, t.Items),
		Severity: Warning,
		Evidence: []Evidence{ev("items read", fmt.Sprint(t.Items), "", src), ev("items without expiry (TTL 0)", fmt.Sprint(t.NoExpiry), "", src),
			ev("items expiring more than an hour ahead", fmt.Sprint(t.OverHour), "", src)},
		Change: &changeset.Change{Kind: changeset.App, Target: "application cache writes", Name: "TTL", From: "0 (never expires)",
			To: "at most 3600 s (set key flags 3600 ...; add for immutable data, set after a miss)", Direction: Set},
		Effect: "items stop piling up until memcached's LRU has to evict live ones, and stale entries expire: the smartphone game backend's latency fell back from 200-400 ms to 40-50 ms with TTLs of at most an hour",
		Risk:   changeset.Risk{Note: "a change to the application's code; items already written without a TTL stay until evicted or flushed"},
		Source: "the smartphone game backend's write-up (permanent cache entries degraded latency over hours; TTL ≤ 1 h)",
	}
	if ev1 := c.mcCounter("evictions"); ev1.n > 0 {
		f.Evidence = append(f.Evidence, ev("evictions", num(ev1.n), "items", ev1.src))
	}
	return []Finding{f}
}

func checkMemcachedUDP(c *Context) []Finding {
	m := c.Memcached
	if m == nil || m.UDPPort == 0 || m.Settings["udpport"] == "" {
		return nil
	}
	return []Finding{{
		ID:       "memcached-udp",
		Title:    fmt.Sprintf("memcached listens on UDP port %d", m.UDPPort),
		Severity: Info,
		Evidence: []Evidence{ev("udpport (-U)", fmt.Sprint(m.UDPPort), "", "memcached stats settings")},
		Change:   &changeset.Change{Kind: changeset.Memcached, Target: "memcached", Name: "-U", From: fmt.Sprint(m.UDPPort), To: "0", Direction: Set},
		Effect:   "no UDP listener: web stacks' clients use TCP or a unix socket, and a UDP memcached reachable from outside amplifies spoofed requests",
		Risk:     changeset.Risk{Restart: true, Note: "a client configured for UDP (rare) loses the server"},
		Source:   "the smartphone game backend's write-up (memcached -U 0); memcached 1.5.6 release notes (UDP off by default)",
	}}
}

func checkMemcachedBacklog(c *Context) []Finding {
	m := c.Memcached
	if m == nil || m.Unix || c.Linux == nil || m.TCPBacklog <= 0 {
		return nil
	}
	port := addrPort(m.Addr)
	ps := c.portSockets(port)
	if !ps.listening {
		return nil // not on this host: its listen queue is not seen
	}
	c.usesRates(LayerLinux)
	overflows := c.Linux.NetDeltas["TcpExt.ListenOverflows"]
	queued := 0
	for _, l := range c.Linux.TCP.Listen {
		if l.Port == port {
			queued = max(queued, l.AcceptQueue)
		}
	}
	conns := c.mcCounter("total_connections")
	if overflows <= 0 || conns.rate < 1 {
		return nil
	}
	somax, _ := c.SysctlInt("net.core.somaxconn")
	eff := m.TCPBacklog
	if somax > 0 {
		eff = min(eff, somax)
	}
	value := max(int64(memcachedBacklog2), m.TCPBacklog*2)
	f := Finding{
		ID:       "memcached-backlog",
		Title:    fmt.Sprintf("Listen queues overflowed %s times while memcached (backlog %d) took %s new connections a second", num(overflows), eff, num(conns.rate)),
		Severity: Warning,
		Evidence: []Evidence{ev("tcp_backlog (-b)", fmt.Sprint(m.TCPBacklog), "", "memcached stats settings"),
			ev("TcpExt.ListenOverflows", num(overflows), "", fmt.Sprintf("/proc/net/netstat, delta over %s s (all listeners of the host)", num(c.Linux.IntervalSeconds))),
			ev("connections waiting for accept on port "+strconv.Itoa(port), fmt.Sprint(queued), "", srcTCP),
			ev("total_connections", fmt.Sprintf("%s (%s/s)", num(conns.n), num(conns.rate)), "", conns.src)},
		Change: &changeset.Change{Kind: changeset.Memcached, Target: "memcached", Name: "-b", From: fmt.Sprint(m.TCPBacklog), To: fmt.Sprint(value), Direction: Increase},
		Effect: "a burst of new connections waits in the queue instead of being dropped (a client's connect then stalls for a SYN retransmission, a second or more); keeping connections open (connection-churn) removes the bursts",
		Risk:   changeset.Risk{Restart: true},
		Source: "the smartphone game backend's write-up (memcached -b 2048 with net.core.somaxconn raised); listen(2) (the backlog is capped at somaxconn)",
	}
	if somax > 0 && somax < value {
		f.Also = []changeset.Change{*c.SysctlChange("net.core.somaxconn", fmt.Sprint(value), Increase)}
		f.Risk.Note = fmt.Sprintf("the kernel caps every listen backlog at net.core.somaxconn (%d): it rises with it", somax)
	}
	return []Finding{f}
}

func checkMemcachedCAS(c *Context) []Finding {
	m := c.Memcached
	if m == nil || !m.CASEnabled || m.Interval == nil || m.Interval.Restarted {
		return nil
	}
	gets, sets := c.mcCounter("cmd_get"), c.mcCounter("cmd_set")
	if gets.n+sets.n < casMinCommands {
		return nil
	}
	cas := c.mcCounter("cas_hits").n + c.mcCounter("cas_misses").n + c.mcCounter("cas_badval").n
	if cas > 0 {
		return nil
	}
	return []Finding{{
		ID:       "memcached-cas",
		Title:    fmt.Sprintf("memcached keeps a CAS value on its %d items but no cas command ran over the interval", m.CurrItems),
		Severity: Info,
		Evidence: []Evidence{ev("cas_enabled", "yes", "", "memcached stats settings"),
			ev("cas commands (cas_hits + cas_misses + cas_badval)", "0", "", gets.src),
			ev("gets and sets", num(gets.n+sets.n), "", gets.src), ev("curr_items", fmt.Sprint(m.CurrItems), "", "memcached stats (current)")},
		Change: &changeset.Change{Kind: changeset.Memcached, Target: "memcached", Name: "-C", From: "", To: "", Direction: Set},
		Effect: fmt.Sprintf("8 bytes less per item (%s for the items now), more items in the same -m", fmtBytes(8*m.CurrItems)),
		Risk:   changeset.Risk{Restart: true, Note: "a client that uses gets/cas (optimistic locking) stops working: check none does (the interval may not have seen it)"},
		Source: "the smartphone game backend's write-up (memcached -C); memcached's protocol.txt (cas)",
	}}
}
