package advise

import "fmt"

// mysql-buffer-pool-hit-ratio: the share of page reads the buffer pool
// served over the sampling interval (not since start: a server that has
// run for weeks hides a bad hour).
var mysqlBufferPoolHitRatio = ruleFunc{"mysql-buffer-pool-hit-ratio", LayerMySQL, checkMySQLBufferPoolHitRatio}

// Thresholds of the hit ratio rule.
const (
	// hitRatioMinRequests is the read requests an interval needs before
	// its ratio means something.
	hitRatioMinRequests = 1000
	hitRatioWarn        = 0.95
	hitRatioInfo        = 0.99
)

func checkMySQLBufferPoolHitRatio(c *Context) []Finding {
	if !c.mysqlReady() || c.Interval() <= 0 {
		return nil
	}
	in := c.My.InnoDB
	if in.HitRatio == nil || in.ReadRequests < hitRatioMinRequests || *in.HitRatio >= hitRatioInfo {
		return nil
	}
	h := *in.HitRatio
	f := Finding{
		ID:       "mysql-buffer-pool-hit-ratio",
		Title:    fmt.Sprintf("Buffer pool served %s of page reads over the interval", pct(h)),
		Severity: Info,
		Source:   "MySQL manual 'InnoDB Buffer Pool' (Innodb_buffer_pool_reads are reads the pool could not serve)",
		Evidence: []Evidence{
			c.deltaEv("Innodb_buffer_pool_read_requests"),
			c.deltaEv("Innodb_buffer_pool_reads"),
			ev("hit ratio over the interval", pct(h), "", "1 - Innodb_buffer_pool_reads / Innodb_buffer_pool_read_requests, "+c.StatusSource()),
		},
	}
	if h < hitRatioWarn {
		f.Severity = Warning
	}
	if s := in.HitRatioSinceStart; s != nil {
		f.Evidence = append(f.Evidence, ev("hit ratio since start (for comparison, not judged)", pct(*s), "", "SHOW GLOBAL STATUS totals"))
	}
	bp, _ := c.Int("innodb_buffer_pool_size")
	data := c.My.Data.InnoDBDataBytes + c.My.Data.InnoDBIndexBytes
	f.Evidence = append(f.Evidence, c.varEv("innodb_buffer_pool_size", "bytes"),
		ev("InnoDB data + indexes", fmt.Sprint(data), "bytes ("+fmtBytes(data)+")", srcTables))
	if bp < data {
		f.Effect = "the data does not fit in the pool: mysql-buffer-pool-size says how large it can be"
		return []Finding{f}
	}
	// The data fits: misses are pages read for the first time since
	// start (a cold pool). Warming it at start avoids them.
	f.Effect = "the data fits in the pool, so the misses are pages read for the first time since the server started (a cold pool)"
	load, ok1 := c.On("innodb_buffer_pool_load_at_startup")
	dump, ok2 := c.On("innodb_buffer_pool_dump_at_shutdown")
	if ok1 && ok2 && (!load || !dump) {
		name := "innodb_buffer_pool_load_at_startup"
		if load {
			name = "innodb_buffer_pool_dump_at_shutdown"
		}
		f.Change = c.MySQLChange(name, "ON", Set)
		if !load && !dump {
			f.Also = append(f.Also, *c.MySQLChange("innodb_buffer_pool_dump_at_shutdown", "ON", Set))
		}
		f.Effect += "; saving the pool's page list at shutdown and loading it at start warms it before traffic (the ISUCON5 runner-up lost 3000-4000 of ~25000 points to a cold start; the 2015 tpcc-mysql contest entry warmed with count(*) per table)"
		f.Risk.Restart = true
		f.Risk.Note = "the load runs in the background after start; Innodb_buffer_pool_load_status shows its progress"
	} else {
		f.Effect += "; the pool is dumped and loaded across restarts already, so these are new pages: warm it after start (the 2015 tpcc-mysql contest entry: count(*) per table) or let it warm"
	}
	return []Finding{f}
}
