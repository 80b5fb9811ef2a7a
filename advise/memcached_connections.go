package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// memcached-connections: memcached refuses connections past -c (maxconns,
// counting its own reserved descriptors) and counts them in
// rejected_connections, or stops listening for a while
// (listen_disabled_num). Size -c to web servers × workers × cache clients
// per worker (the smartphone game backend; stacktune plan cache-connections).
var memcachedConnections = ruleFunc{"memcached-connections", LayerMemcached, checkMemcachedConnections}

func checkMemcachedConnections(c *Context) []Finding {
	m := c.Memcached
	if m == nil || m.MaxConns <= 0 {
		return nil
	}
	busy := float64(m.CurrConnections) >= 0.8*float64(m.MaxConns)
	rejected, disabled := c.mcCounter("rejected_connections"), c.mcCounter("listen_disabled_num")
	if !busy && rejected.n == 0 && disabled.n == 0 {
		return nil
	}
	value := max(m.MaxConns*2, nextPow2(m.CurrConnections*2))
	f := Finding{
		ID:       "memcached-connections",
		Title:    fmt.Sprintf("memcached has %d connections open of -c %d", m.CurrConnections, m.MaxConns),
		Severity: Warning,
		Evidence: []Evidence{ev("curr_connections", fmt.Sprint(m.CurrConnections), "connections", "memcached stats (current)"),
			ev("maxconns (-c)", fmt.Sprint(m.MaxConns), "connections", "memcached stats settings")},
		Change: &changeset.Change{Kind: changeset.Memcached, Target: "memcached", Name: "-c", From: fmt.Sprint(m.MaxConns), To: fmt.Sprint(value), Direction: Increase},
		Effect: "clients are not refused at the peak; size -c to web servers × workers × cache connections per worker + 32 (stacktune plan cache-connections)",
		Risk:   changeset.Risk{Restart: true, Note: "memcached needs a file descriptor per connection: its LimitNOFILE must be above -c"},
		Source: "the smartphone game backend's write-up (memcached -c 65535; size -c for web servers × workers); memcached.c (reserved_fds); stacktune plan cache-connections",
	}
	if rejected.n > 0 || disabled.n > 0 {
		f.Severity = Critical
		f.Title = fmt.Sprintf("memcached refused connections: %s rejected, listening disabled %s times", num(rejected.n), num(disabled.n))
		f.Evidence = append(f.Evidence, ev("rejected_connections", num(rejected.n), "connections", rejected.src),
			ev("listen_disabled_num", num(disabled.n), "times", disabled.src))
	}
	return []Finding{f}
}
