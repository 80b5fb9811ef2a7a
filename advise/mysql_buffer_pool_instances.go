package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-buffer-pool-instances: MySQL splits a large buffer pool into
// instances to spread mutex contention (the smartphone game backend: 10-16). MariaDB 10.6
// and later have one instance and no such variable, so the rule never
// speaks there.
var mysqlBufferPoolInstances = ruleFunc{"mysql-buffer-pool-instances", LayerMySQL, checkMySQLBufferPoolInstances}

func checkMySQLBufferPoolInstances(c *Context) []Finding {
	if !c.mysqlReady() || !c.Has("innodb_buffer_pool_instances") || c.MariaDB() {
		return nil
	}
	bp, ok1 := c.Int("innodb_buffer_pool_size")
	inst, ok2 := c.Int("innodb_buffer_pool_instances")
	if !ok1 || !ok2 || bp < 2*gib {
		return nil
	}
	// One instance per GiB at least (the manual's minimum size of an
	// instance), at most 16 and at most the cores.
	want := min(bp/gib, 16)
	if n := int64(c.Cores()); n > 0 {
		want = min(want, max(n, 8))
	}
	if inst >= want || inst >= 8 {
		return nil
	}
	f := Finding{
		ID:       "mysql-buffer-pool-instances",
		Title:    fmt.Sprintf("A %s buffer pool in %d instance(s)", fmtBytes(bp), inst),
		Severity: Info,
		Evidence: []Evidence{c.varEv("innodb_buffer_pool_size", "bytes"), c.varEv("innodb_buffer_pool_instances", "")},
		Change:   c.MySQLChange("innodb_buffer_pool_instances", fmt.Sprint(want), Increase),
		Effect:   "less contention on the buffer pool's mutexes under concurrent load; each instance should be at least 1 GiB",
		Risk:     changeset.Risk{Restart: true, Note: "innodb_buffer_pool_size is rounded to a multiple of innodb_buffer_pool_chunk_size × instances"},
		Source:   "the smartphone game backend's write-up (10-16 instances); MySQL manual 'Configuring Multiple Buffer Pool Instances'",
	}
	if n := c.Cores(); n > 0 {
		f.Evidence = append(f.Evidence, ev("CPUs", fmt.Sprint(n), "cores", srcCPUs))
	}
	return []Finding{f}
}
