package advise

import (
	"fmt"
	"net"
)

// Helpers of the memcached and Redis rules. Both servers report counters
// since they started and the collectors read them once, so these rules
// judge averages since start (Source says so), the one place stacktune
// does: there is no interval to take a delta over.

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
