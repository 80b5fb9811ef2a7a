package advise

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Activity: a rate over an interval says something only when the layer
// worked during it. A server that was idle while the collector watched
// gives rates of zero, and the rules that judge rates then find nothing:
// the audit says so (in NotSeen, naming the rules) instead of staying
// silent. Rules do not declare it: Context's rate accessors (Delta, Rate,
// memcached and Linux interval figures) record which rule read the rates
// of which layer while it ran.

// Thresholds below which a layer counts as idle over its interval.
const (
	// idleStatementsPerSecond: client statements per second (Questions,
	// less the collector's own SHOW GLOBAL STATUS).
	idleStatementsPerSecond = 1.0
	// collectorStatements are the statements the MySQL collector itself
	// adds to Questions between its two readings.
	collectorStatements = 1
	// idleCPUBusy: the host's busy share.
	idleCPUBusy = 0.02
	// idleCacheCommandsPerSecond: memcached gets and sets per second.
	idleCacheCommandsPerSecond = 1.0
)

// usesRates records that the running rule reads rates of layer.
func (c *Context) usesRates(layer string) {
	if c.current == "" {
		return
	}
	if c.rateRules == nil {
		c.rateRules = map[string][]string{}
	}
	if !slices.Contains(c.rateRules[layer], c.current) {
		c.rateRules[layer] = append(c.rateRules[layer], c.current)
	}
}

// MySQLIdle reports whether the MySQL server ran fewer than
// idleStatementsPerSecond client statements per second over the
// interval, with the count; known is false without two readings or a
// Questions counter.
func (c *Context) MySQLIdle() (idle bool, statements float64, known bool) {
	if c.Interval() <= 0 {
		return false, 0, false
	}
	q, ok := c.My.Status.Deltas["Questions"]
	if !ok {
		return false, 0, false
	}
	statements = max(0, q-collectorStatements)
	return statements < idleStatementsPerSecond*c.Interval(), statements, true
}

// LinuxIdle reports whether the host's CPUs were almost idle over the
// interval; known is false without two readings.
func (c *Context) LinuxIdle() (idle bool, known bool) {
	if c.Linux == nil || c.Linux.CPU == nil || c.Linux.IntervalSeconds <= 0 {
		return false, false
	}
	return c.Linux.CPU.Busy < idleCPUBusy, true
}

// idleNotes are the NotSeen lines for the layers that were idle while
// rules read their rates.
func (c *Context) idleNotes() []string {
	var out []string
	rules := func(layer string) string {
		ids := slices.Clone(c.rateRules[layer])
		sort.Strings(ids)
		return strings.Join(ids, ", ")
	}
	const advice = "collect while the application is under its usual load (stacktune diagnose runs your scenario and collects during it)"
	if idle, n, ok := c.MySQLIdle(); ok && idle && len(c.rateRules[LayerMySQL]) > 0 {
		out = append(out, fmt.Sprintf("mysql: the server was idle during the %s s interval (%s client statements): the rules that judge rates over it (%s) had nothing to judge; %s",
			num(c.Interval()), num(n), rules(LayerMySQL), advice))
	}
	if idle, ok := c.LinuxIdle(); ok && idle && len(c.rateRules[LayerLinux]) > 0 {
		out = append(out, fmt.Sprintf("linux: the host's CPUs were %s busy during the %s s interval: the rules that judge CPU over it (%s) had nothing to judge; %s",
			pct(c.Linux.CPU.Busy), num(c.Linux.IntervalSeconds), rules(LayerLinux), advice))
	}
	if m := c.Memcached; m != nil && m.Interval != nil && len(c.rateRules[LayerMemcached]) > 0 {
		iv := m.Interval
		if cmds := iv.Deltas["cmd_get"] + iv.Deltas["cmd_set"]; cmds < idleCacheCommandsPerSecond*iv.Seconds {
			out = append(out, fmt.Sprintf("memcached: %s gets and sets during the %s s interval: the rules that judge its rates (%s) had nothing to judge; %s",
				num(cmds), num(iv.Seconds), rules(LayerMemcached), advice))
		}
	}
	return out
}
