package advise

import (
	"fmt"
	"math"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-max-connections: both directions. Up when clients were refused
// over the interval (Connection_errors_max_connections) or the peak since
// start reached 90% of the limit; down when the peak stayed far below a
// large limit and the per-session buffers × the limit weigh on the RAM.
// Size it to the clients: servers × workers per server (the PHP + MySQL TIME_WAIT write-up: 100 ×
// 255 = 25500; stacktune plan).
var mysqlMaxConnections = ruleFunc{"mysql-max-connections", LayerMySQL, checkMySQLMaxConnections}

const (
	// maxConnHigh is the peak share of the limit that counts as full.
	maxConnHigh = 0.9
	// maxConnLowFactor: the limit is "far above" use when it is this
	// many times the peak.
	maxConnLowFactor = 4
	// maxConnLowMin: limits at or below this are never lowered.
	maxConnLowMin = 500
	// minUptimeForPeak is how long the server must have run before its
	// peak says anything about use (a week covers weekly peaks).
	minUptimeForPeak = 7 * 24 * 3600
	// mysqlMaxConnectionsLimit is max_connections' maximum.
	mysqlMaxConnectionsLimit = 100000
)

func checkMySQLMaxConnections(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	limit, ok := c.Int("max_connections")
	if !ok || limit <= 0 {
		return nil
	}
	peak := c.My.Connections.MaxUsedConnections
	refused, _ := c.Delta("Connection_errors_max_connections")
	f := Finding{
		ID:     "mysql-max-connections",
		Source: "the PHP + MySQL TIME_WAIT write-up (max_connections = web servers × workers: 100 × 255 = 25500); MySQL manual (max_connections, Connection_errors_max_connections)",
	}
	f.Evidence = append(f.Evidence, c.varEv("max_connections", "connections"),
		ev("Max_used_connections", fmt.Sprint(peak), "connections", srcHighWater))
	if refused > 0 || float64(peak) >= maxConnHigh*float64(limit) {
		value := min(mysqlMaxConnectionsLimit, roundUp(int64(math.Ceil(float64(max(peak, limit))*1.5)), 10))
		f.Severity = Warning
		f.Title = fmt.Sprintf("Connections reached %d of max_connections %d", peak, limit)
		if refused > 0 {
			f.Severity = Critical
			f.Title = fmt.Sprintf("Clients were refused: %s connections over max_connections in the interval", num(refused))
			f.Evidence = append(f.Evidence, c.deltaEv("Connection_errors_max_connections"))
		}
		if t, ok := c.Gauge("Threads_connected"); ok {
			f.Evidence = append(f.Evidence, ev("Threads_connected", num(t), "connections", srcGauge))
		}
		f.Risk.Note = "more connections running at once is not more throughput: if they pile up because queries are slow, fix the queries (stacktune digest)"
		if b, ok := c.Budget(); ok {
			extra := b.PerConnection * (value - limit)
			if b.Total()+extra > b.RAM {
				// More sessions would put the worst case over the RAM:
				// memory first.
				f.Effect = fmt.Sprintf("%d connections would put the worst case at %s of %s RAM: free memory first (mysql-per-session-buffers lowers what each connection may take), then raise max_connections to the clients' count: web servers × workers per server + admin connections (stacktune plan)",
					value, fmtBytes(b.Total()+extra), fmtBytes(b.RAM))
				return []Finding{f}
			}
			f.Risk.Memory = fmt.Sprintf("+%s worst case (%s per connection × %d)", fmtBytes(extra), fmtBytes(b.PerConnection), value-limit)
		}
		f.Change = c.MySQLChange("max_connections", fmt.Sprint(value), Increase)
		f.Effect = "clients are not refused with \"Too many connections\" at the peak; better still, size it to the clients: web servers × workers per server + admin connections (stacktune plan)"
		f.Risk.Restart = c.Restart("max_connections")
		return []Finding{f}
	}
	uptime, _ := c.Gauge("Uptime")
	if limit <= maxConnLowMin || peak*maxConnLowFactor > limit || uptime < minUptimeForPeak {
		return nil
	}
	b, ok := c.Budget()
	if !ok || float64(b.Sessions()) < 0.25*float64(b.RAM) {
		return nil
	}
	value := max(151, roundUp(peak*2, 50))
	f.Severity = Info
	f.Title = fmt.Sprintf("max_connections %d is %s times the peak of %d", limit, num(math.Round(float64(limit)/float64(max(peak, 1)))), peak)
	f.Evidence = append(f.Evidence, ev("Uptime", num(uptime), "s", srcGauge),
		ev("per-connection buffers × max_connections", fmt.Sprint(b.Sessions()), "bytes", fmt.Sprintf("%s × %d", fmtBytes(b.PerConnection), limit)))
	f.Change = c.MySQLChange("max_connections", fmt.Sprint(value), Decrease)
	f.Effect = fmt.Sprintf("the worst-case memory of the sessions drops by %s, which the buffer pool can use; twice the peak since start remains", fmtBytes(b.PerConnection*(limit-value)))
	f.Risk = changeset.Risk{Memory: fmt.Sprintf("-%s worst case", fmtBytes(b.PerConnection*(limit-value))), Restart: c.Restart("max_connections"),
		Note: "a client beyond the new limit is refused: check the peak covers the busiest day (it is the high-water mark since the server started) and the clients' pool sizes"}
	return []Finding{f}
}
