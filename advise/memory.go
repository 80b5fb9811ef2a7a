package advise

import (
	"fmt"
	"maps"
	"strings"

	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/mysqlvar"
)

// Budget is the memory the host must hold at worst: MySQL's global
// buffers, its per-connection buffers times max_connections, the other
// services measured on the host and a reserve for the OS. The buffer pool
// rules size the pool within it, and mysql-memory-budget reports when it
// does not fit.
//
// The per-connection figure is the buffers a session may allocate (sort,
// join, read, read_rnd, the thread stack, the network buffer, the binary
// log caches with log_bin); a session allocates sort, join and read
// buffers only when a query needs them, so the worst case is rare, but it
// is what the server has promised. Temporary tables (tmp_table_size per
// table) and max_allowed_packet (a network buffer grows to it only for a
// large row) are left out; MySQLTuner counts max_allowed_packet in full
// per connection, which is why its "per thread" figure is larger.
type Budget struct {
	RAM     int64
	Reserve int64
	// BufferPool is innodb_buffer_pool_size; Global the other global
	// buffers (GlobalParts).
	BufferPool  int64
	Global      int64
	GlobalParts []Part
	// PerConnection is one session's buffers (PerConnectionParts),
	// MaxConnections the server's limit.
	PerConnection      int64
	PerConnectionParts []Part
	MaxConnections     int64
	// Services is the memory of the other services on the host
	// (ServiceParts): their resident size when collected.
	Services     int64
	ServiceParts []Part
}

// Part is one term of a budget.
type Part struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	Source string `json:"source"`
}

// Total is everything the host must hold.
func (b *Budget) Total() int64 {
	return b.BufferPool + b.Global + b.PerConnection*b.MaxConnections + b.Services + b.Reserve
}

// Sessions is per-connection buffers × max_connections.
func (b *Budget) Sessions() int64 { return b.PerConnection * b.MaxConnections }

// BufferPoolRoom is the largest buffer pool that fits with everything
// else unchanged (may be negative).
func (b *Budget) BufferPoolRoom() int64 { return b.RAM - (b.Total() - b.BufferPool) }

// Formula is the budget as an equation: "8.0 GiB buffer pool + ... = X of
// Y RAM".
func (b *Budget) Formula() string {
	return fmt.Sprintf("%s buffer pool + %s other global buffers + %s per connection × %d max_connections + %s other services + %s reserve = %s of %s RAM",
		fmtBytes(b.BufferPool), fmtBytes(b.Global), fmtBytes(b.PerConnection), b.MaxConnections,
		fmtBytes(b.Services), fmtBytes(b.Reserve), fmtBytes(b.Total()), fmtBytes(b.RAM))
}

// Evidence lists the budget's terms.
func (b *Budget) Evidence() []Evidence {
	var out []Evidence
	out = append(out, ev("RAM", fmt.Sprint(b.RAM), "bytes ("+fmtBytes(b.RAM)+")", srcMeminfo))
	out = append(out, ev("innodb_buffer_pool_size", fmt.Sprint(b.BufferPool), "bytes ("+fmtBytes(b.BufferPool)+")", srcVariables))
	var g []string
	for _, p := range b.GlobalParts {
		g = append(g, fmt.Sprintf("%s %s", p.Name, fmtBytes(p.Bytes)))
	}
	out = append(out, ev("other global buffers", fmt.Sprint(b.Global), "bytes ("+strings.Join(g, " + ")+")", srcVariables))
	var pc []string
	for _, p := range b.PerConnectionParts {
		pc = append(pc, fmt.Sprintf("%s %s", p.Name, fmtBytes(p.Bytes)))
	}
	out = append(out, ev("per-connection buffers", fmt.Sprint(b.PerConnection), "bytes ("+strings.Join(pc, " + ")+")", srcVariables))
	out = append(out, ev("max_connections", fmt.Sprint(b.MaxConnections), "connections", srcVariables))
	var sv []string
	for _, p := range b.ServiceParts {
		sv = append(sv, fmt.Sprintf("%s %s", p.Name, fmtBytes(p.Bytes)))
	}
	svs := "bytes"
	if len(sv) > 0 {
		svs += " (" + strings.Join(sv, " + ") + ")"
	}
	out = append(out, ev("other services", fmt.Sprint(b.Services), svs, "/proc/PID/status VmRSS"))
	out = append(out, ev("reserve for the OS", fmt.Sprint(b.Reserve), "bytes ("+fmtBytes(b.Reserve)+")", "Options.MemoryReserveBytes, default max(1 GiB, 10% of RAM)"))
	return out
}

// Budget computes the memory budget; ok is false without the RAM or the
// MySQL variables.
func (c *Context) Budget() (*Budget, bool) {
	if c.mem != nil {
		return c.mem, true
	}
	ram := c.MySQLRAM()
	if ram <= 0 || c.My == nil || len(c.My.Variables) == 0 {
		return nil, false
	}
	bp, ok := c.Int("innodb_buffer_pool_size")
	if !ok {
		return nil, false
	}
	b := &Budget{RAM: ram, BufferPool: bp}
	b.Reserve = c.Opt.MemoryReserveBytes
	if b.Reserve <= 0 {
		b.Reserve = max(gib, ram/10)
	}
	add := func(parts *[]Part, sum *int64, name string) {
		if v, ok := c.Int(name); ok && v > 0 {
			*parts = append(*parts, Part{Name: name, Bytes: v, Source: srcVariables})
			*sum += v
		}
	}
	for _, n := range []string{"innodb_log_buffer_size", "key_buffer_size", "aria_pagecache_buffer_size"} {
		add(&b.GlobalParts, &b.Global, n)
	}
	if t, ok := c.Var("query_cache_type"); ok && !mysqlvar.Equal(t, "0") {
		add(&b.GlobalParts, &b.Global, "query_cache_size")
	}
	if e, ok := c.Var("internal_tmp_mem_storage_engine"); ok && strings.EqualFold(e, "TempTable") {
		add(&b.GlobalParts, &b.Global, "temptable_max_ram")
	}
	for _, n := range []string{"sort_buffer_size", "join_buffer_size", "read_buffer_size", "read_rnd_buffer_size", "thread_stack", "net_buffer_length"} {
		add(&b.PerConnectionParts, &b.PerConnection, n)
	}
	if on, _ := c.On("log_bin"); on {
		add(&b.PerConnectionParts, &b.PerConnection, "binlog_cache_size")
		add(&b.PerConnectionParts, &b.PerConnection, "binlog_stmt_cache_size")
	}
	b.MaxConnections, _ = c.Int("max_connections")
	for _, p := range c.otherServices() {
		b.ServiceParts = append(b.ServiceParts, p)
		b.Services += p.Bytes
	}
	c.mem = b
	return b, true
}

// otherServices are the resident sizes of the snapshot's processes that
// are not a MySQL server, summed by process name.
func (c *Context) otherServices() []Part {
	if c.Linux == nil {
		return nil
	}
	var out []Part
	idx := map[string]int{}
	mysql := map[int]bool{}
	for _, p := range c.Processes(mysqlPatterns...) {
		mysql[p.PID] = true
	}
	if n := len(mysql); n > 1 {
		c.NotSeen(fmt.Sprintf("linux: %d MySQL server processes run on this host; the memory budget counts the audited server's buffers and not the others'", n))
	}
	for _, p := range c.Linux.Processes {
		if mysql[p.PID] || p.RSSBytes <= 0 {
			continue
		}
		name := p.Name
		if i, ok := idx[name]; ok {
			out[i].Bytes += p.RSSBytes
			continue
		}
		idx[name] = len(out)
		out = append(out, Part{Name: name, Bytes: p.RSSBytes, Source: "/proc/PID/status VmRSS"})
	}
	return out
}

// BudgetWith is the memory budget of the snapshot's MySQL server as if it
// ran with values over its own variables: the same terms and formula as
// the audit's (Budget), for a candidate configuration that is not
// running yet (the knob search tries none whose Total exceeds its RAM).
// ok is false without the RAM or the MySQL variables.
func BudgetWith(s *collect.Snapshot, opt Options, values map[string]string) (*Budget, bool) {
	if s == nil || s.MySQL == nil {
		return nil, false
	}
	snap := *s
	my := *s.MySQL
	my.Variables = maps.Clone(s.MySQL.Variables)
	for k, v := range values {
		my.Variables[k] = v
	}
	snap.MySQL = &my
	return newContext(&snap, opt).Budget()
}
