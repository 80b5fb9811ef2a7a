package advise

import (
	"fmt"
	"net"
	"strconv"
)

// Helpers of the memcached and Redis rules. Both servers report counters
// since they started. The memcached collector reads them at the run's
// start and end, so its rules judge the interval (mcCounter); a snapshot
// without a second reading (an older one) and Redis's rules fall back to
// averages since start, and their Source says so.

// kvCounter is a counter of a memcached or Redis server: its growth over
// the collection interval when there is one, else its total since start,
// with its rate per second and the source saying which.
type kvCounter struct {
	n, rate float64
	src     string
	// interval: n is the growth over the interval.
	interval bool
}

// mcCounter reads a memcached counter (a `stats` field) over the
// interval, or since start without one.
func (c *Context) mcCounter(stat string) kvCounter {
	m := c.Memcached
	c.usesRates(LayerMemcached)
	if iv := m.Interval; iv != nil && !iv.Restarted && iv.Seconds > 0 {
		d := iv.Deltas[stat]
		return kvCounter{n: d, rate: d / iv.Seconds, src: fmt.Sprintf("memcached stats, delta over %s s", num(iv.Seconds)), interval: true}
	}
	return c.mcSinceStart(stat)
}

// mcSinceStart reads a memcached counter's total since start.
func (c *Context) mcSinceStart(stat string) kvCounter {
	m := c.Memcached
	n, _ := strconv.ParseFloat(m.Stats[stat], 64)
	switch stat { // the derived fields, for layers built without Stats
	case "get_hits":
		n = float64(m.GetHits)
	case "get_misses":
		n = float64(m.GetMisses)
	case "evictions":
		n = float64(m.Evictions)
	case "rejected_connections":
		n = float64(m.RejectedConnections)
	case "listen_disabled_num":
		n = float64(m.ListenDisabledNum)
	case "total_connections":
		n = float64(m.TotalConnections)
	}
	src := sinceStart("memcached stats", m.UptimeSec)
	if m.Interval != nil && m.Interval.Restarted {
		src += "; memcached restarted during the interval"
	}
	return kvCounter{n: n, rate: perSecond(int64(n), m.UptimeSec), src: src}
}

// sinceStart is the source of a memcached or Redis counter.
func sinceStart(what string, uptime int64) string {
	return fmt.Sprintf("%s, total since start (%s ago; no second reading, so an average since start)", what, fmtSeconds(float64(uptime)))
}

// perSecond is a counter's average rate since start.
func perSecond(total, uptime int64) float64 {
	if uptime <= 0 {
		return 0
	}
	return float64(total) / float64(uptime)
}

// localAddr reports whether a server address (host:port) is on this host.
func localAddr(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return isLoopback(h)
}
