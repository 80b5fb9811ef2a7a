package advise

import (
	"fmt"
	"math"
)

// mysql-buffer-pool-size: the buffer pool should hold the InnoDB data and
// indexes (with room to grow), and on a dedicated host most of the RAM,
// always within the memory budget. It reads the running value (the smartphone game backend
// found RDS at 6 GB of 30 GB though the parameter group said 3/4 of RAM:
// check the server, not the file).
var mysqlBufferPoolSize = ruleFunc{"mysql-buffer-pool-size", LayerMySQL, checkMySQLBufferPoolSize}

// Sizing constants.
const (
	// dataGrowth is the room left for the data to grow: the pool should
	// hold the data and indexes × dataGrowth.
	dataGrowth = 1.25
	// dedicatedShare is the share of RAM a dedicated host gives the pool:
	// MySQL's innodb_dedicated_server takes 75% above 4 GiB, the ISUCON5 qualifier write-up
	// ~80%.
	dedicatedShare = 0.75
)

// poolUnit is the granularity of innodb_buffer_pool_size: MySQL rounds it
// to innodb_buffer_pool_chunk_size × innodb_buffer_pool_instances;
// otherwise (MariaDB 10.11 reports a chunk size of 0, sized by the
// server) 128 MiB, the default chunk.
func poolUnit(c *Context) int64 {
	chunk, _ := c.Int("innodb_buffer_pool_chunk_size")
	inst, ok := c.Int("innodb_buffer_pool_instances")
	if !ok || inst < 1 {
		inst = 1
	}
	if chunk > 0 {
		return chunk * inst
	}
	return 128 * mib
}

// poolTarget is the buffer pool stacktune aims at: data and indexes ×
// dataGrowth (and 75% of RAM on a dedicated host), within the budget.
// fits is false when the budget leaves less than the data needs.
func poolTarget(c *Context) (target, need int64, fits, ok bool) {
	if c.My == nil {
		return 0, 0, false, false
	}
	unit := poolUnit(c)
	data := c.My.Data.InnoDBDataBytes + c.My.Data.InnoDBIndexBytes
	need = roundUp(int64(math.Ceil(float64(data)*dataGrowth)), unit)
	want := need
	if ram := c.MySQLRAM(); c.Opt.DedicatedDB && ram > 0 {
		want = max(want, roundDown(int64(float64(ram)*dedicatedShare), unit))
	}
	b, ok := c.Budget()
	if !ok {
		return want, need, true, true
	}
	room := roundDown(b.BufferPoolRoom(), unit)
	return min(want, room), need, room >= need, true
}

func checkMySQLBufferPoolSize(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	bp, ok := c.Int("innodb_buffer_pool_size")
	if !ok || c.My.Data.InnoDBDataBytes+c.My.Data.InnoDBIndexBytes == 0 && !c.Opt.DedicatedDB {
		return nil
	}
	target, need, fits, _ := poolTarget(c)
	data := c.My.Data.InnoDBDataBytes + c.My.Data.InnoDBIndexBytes
	small := bp < data
	idle := c.Opt.DedicatedDB && target >= 2*bp && target-bp >= gib
	if !small && !idle {
		return nil
	}
	f := Finding{
		ID: "mysql-buffer-pool-size", Severity: Warning,
		Source: "the ISUCON5 qualifier write-up (~80% of RAM on a dedicated host), the smartphone game backend's write-up (running value, not the file); MySQL manual 'Configuring InnoDB Buffer Pool Size'",
	}
	f.Evidence = append(f.Evidence,
		c.varEv("innodb_buffer_pool_size", "bytes"),
		ev("InnoDB data + indexes", fmt.Sprint(data), "bytes ("+fmtBytes(data)+")", srcTables),
	)
	if h := c.My.InnoDB.HitRatio; h != nil {
		f.Evidence = append(f.Evidence, ev("buffer pool hit ratio", pct(*h), "", c.StatusSource()+" (1 - Innodb_buffer_pool_reads / Innodb_buffer_pool_read_requests)"))
	}
	if _, ok := c.Rate("Innodb_buffer_pool_reads"); ok {
		f.Evidence = append(f.Evidence, c.deltaEv("Innodb_buffer_pool_reads"))
	}
	if ram := c.MySQLRAM(); ram > 0 {
		f.Evidence = append(f.Evidence, ev("RAM", fmt.Sprint(ram), "bytes ("+fmtBytes(ram)+")", srcMeminfo))
	}
	if small {
		f.Title = fmt.Sprintf("Buffer pool (%s) smaller than the InnoDB data and indexes (%s)", fmtBytes(bp), fmtBytes(data))
		if h := c.My.InnoDB.HitRatio; h != nil && *h < 0.9 {
			f.Severity = Critical
		}
	} else {
		f.Title = fmt.Sprintf("Buffer pool (%s) uses little of a dedicated host's RAM", fmtBytes(bp))
		f.Severity = Info
	}
	if target <= bp {
		f.Effect = "no larger buffer pool fits in the memory budget: " + budgetSentence(c) +
			"; free memory first (mysql-per-session-buffers, mysql-max-connections) or add RAM"
		if !fits {
			f.Risk.Note = fmt.Sprintf("the data needs a %s pool", fmtBytes(need))
		}
		return []Finding{f}
	}
	f.Change = c.MySQLChange("innodb_buffer_pool_size", fmt.Sprint(target), Increase)
	f.Effect = fmt.Sprintf("reads served from memory instead of disk: the pool grows from %s to %s", fmtBytes(bp), fmtBytes(target))
	if target < need {
		f.Effect += fmt.Sprintf(", less than the %s the data needs (the memory budget allows no more)", fmtBytes(need))
	} else if target >= need {
		f.Effect += fmt.Sprintf(", enough for the data and indexes × %s for growth", num(dataGrowth))
	}
	f.Risk.Memory = fmt.Sprintf("+%s of RAM", fmtBytes(target-bp))
	if b, ok := c.Budget(); ok {
		f.Risk.Memory += fmt.Sprintf("; budget after the change: %s of %s", fmtBytes(b.Total()-bp+target), fmtBytes(b.RAM))
	}
	f.Risk.Restart = c.Restart("innodb_buffer_pool_size")
	if !f.Risk.Restart {
		f.Risk.Note = joinNote(f.Risk.Note, "resized online in chunks (SET GLOBAL); persist it in my.cnf too")
	}
	return []Finding{f}
}

// budgetSentence is the budget formula, or "" without one.
func budgetSentence(c *Context) string {
	if b, ok := c.Budget(); ok {
		return b.Formula()
	}
	return "the RAM is unknown (no linux layer)"
}
