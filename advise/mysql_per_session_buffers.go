package advise

import (
	"fmt"
	"sort"
	"strings"
)

// mysql-per-session-buffers: sort, join and read buffers are allocated
// per session; above their defaults × max_connections they can take more
// than the RAM left to MySQL (the smartphone game backend). The rule sets those above the
// default back to it.
var mysqlPerSessionBuffers = ruleFunc{"mysql-per-session-buffers", LayerMySQL, checkMySQLPerSessionBuffers}

// sessionBufferDefaults are the defaults of the buffers the rule may
// lower: MySQL 5.7-8.4 and MariaDB 10.x-11.x manuals (sort_buffer_size is
// 256 KiB in MySQL, 2 MiB in MariaDB; verified on 10.11.19).
func sessionBufferDefaults(mariadb bool) map[string]int64 {
	sort := 256 * kib
	if mariadb {
		sort = 2 * mib
	}
	return map[string]int64{
		"sort_buffer_size":     sort,
		"join_buffer_size":     256 * kib,
		"read_buffer_size":     128 * kib,
		"read_rnd_buffer_size": 256 * kib,
	}
}

// sessionShare is the share of the RAM left to MySQL (after the OS
// reserve and other services) that per-connection buffers × max_connections
// may take before the rule speaks.
const sessionShare = 0.5

func checkMySQLPerSessionBuffers(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	b, ok := c.Budget()
	if !ok || b.MaxConnections <= 0 {
		return nil
	}
	left := b.RAM - b.Reserve - b.Services
	if left <= 0 || float64(b.Sessions()) <= sessionShare*float64(left) {
		return nil
	}
	defs := sessionBufferDefaults(c.MariaDB())
	type over struct {
		name     string
		cur, def int64
	}
	var lower []over
	for name, def := range defs {
		if v, ok := c.Int(name); ok && v > def {
			lower = append(lower, over{name, v, def})
		}
	}
	sort.Slice(lower, func(i, j int) bool {
		if lower[i].cur-lower[i].def != lower[j].cur-lower[j].def {
			return lower[i].cur-lower[i].def > lower[j].cur-lower[j].def
		}
		return lower[i].name < lower[j].name
	})
	if len(lower) == 0 {
		// All at their defaults: max_connections is what multiplies
		// them; mysql-max-connections judges it against use.
		return nil
	}
	f := Finding{
		ID: "mysql-per-session-buffers",
		Title: fmt.Sprintf("Per-session buffers × max_connections can take %s, %s of the RAM left to MySQL",
			fmtBytes(b.Sessions()), pct(float64(b.Sessions())/float64(left))),
		Severity: Warning,
		Source:   "the smartphone game backend's write-up (sort/join/read buffers are per session: size them against max_connections and RAM); MySQL manual 'How MySQL Uses Memory'",
	}
	if b.Total() > b.RAM {
		f.Severity = Critical
	}
	var names []string
	var freed int64
	for i, o := range lower {
		f.Evidence = append(f.Evidence, c.varEv(o.name, "bytes"))
		ch := c.MySQLChange(o.name, fmt.Sprint(o.def), Decrease)
		if i == 0 {
			f.Change = ch
		} else {
			f.Also = append(f.Also, *ch)
		}
		names = append(names, fmt.Sprintf("%s %s → %s", o.name, fmtBytes(o.cur), fmtBytes(o.def)))
		freed += o.cur - o.def
	}
	f.Evidence = append(f.Evidence,
		c.varEv("max_connections", "connections"),
		ev("per-connection buffers × max_connections", fmt.Sprint(b.Sessions()), "bytes", fmt.Sprintf("%s × %d", fmtBytes(b.PerConnection), b.MaxConnections)),
		ev("RAM left to MySQL", fmt.Sprint(left), "bytes", fmt.Sprintf("%s RAM - %s reserve - %s other services", fmtBytes(b.RAM), fmtBytes(b.Reserve), fmtBytes(b.Services))),
	)
	if d, ok := c.Delta("Sort_merge_passes"); ok {
		f.Evidence = append(f.Evidence, c.deltaEv("Sort_merge_passes"))
		if d > 0 {
			f.Risk.Note = "Sort_merge_passes grew over the interval: some sorts already spill; find them in the slow log (stacktune digest) and fix the query or raise sort_buffer_size for that session only (SET SESSION)"
		}
	}
	f.Effect = fmt.Sprintf("the worst case shrinks by %s (%s): %s", fmtBytes(freed*b.MaxConnections), strings.Join(names, ", "),
		"large per-session buffers rarely help (a bigger sort buffer is even slower to allocate) and multiply by every connection")
	f.Risk.Memory = fmt.Sprintf("-%s worst case", fmtBytes(freed*b.MaxConnections))
	f.Risk.Note = joinNote(f.Risk.Note, "queries that needed a larger buffer can set it for their own session")
	return []Finding{f}
}
