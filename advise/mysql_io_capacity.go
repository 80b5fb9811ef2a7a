package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-io-capacity: innodb_io_capacity tells InnoDB how many IOPS its
// background flushing may use; left at 200 on SSD or provisioned IOPS
// (the smartphone game backend on RDS) flushing falls behind and queries wait for free pages
// (Innodb_buffer_pool_wait_free) or dirty pages pile up to
// innodb_max_dirty_pages_pct.
var mysqlIOCapacity = ruleFunc{"mysql-io-capacity", LayerMySQL, checkMySQLIOCapacity}

// io capacity proposal for SSDs (MySQL manual: "SSDs ... benefit from
// higher values"; MySQL 8.4's default is 10000).
const (
	ioCapacitySSD    = 2000
	ioCapacityMaxSSD = 4000
	// dirtyNear is how close to innodb_max_dirty_pages_pct the dirty
	// share must be to count as evidence.
	dirtyNear = 0.9
)

func checkMySQLIOCapacity(c *Context) []Finding {
	if !c.mysqlReady() || c.Interval() <= 0 {
		return nil
	}
	cur, ok := c.Int("innodb_io_capacity")
	if !ok || cur >= ioCapacitySSD {
		return nil
	}
	in := c.My.InnoDB
	var evs []Evidence
	if in.WaitFree > 0 {
		evs = append(evs, c.deltaEv("Innodb_buffer_pool_wait_free"))
	}
	if maxPct, ok := c.Float("innodb_max_dirty_pages_pct"); ok && in.PagesTotal > 0 && maxPct > 0 {
		share := float64(in.PagesDirty) / float64(in.PagesTotal)
		if share*100 >= dirtyNear*maxPct {
			evs = append(evs,
				ev("dirty pages", fmt.Sprintf("%d of %d (%s)", in.PagesDirty, in.PagesTotal, pct(share)), "pages", srcGauge),
				c.varEv("innodb_max_dirty_pages_pct", "%"))
		}
	}
	if len(evs) == 0 {
		return nil
	}
	f := Finding{
		ID:       "mysql-io-capacity",
		Title:    fmt.Sprintf("Background flushing falls behind at innodb_io_capacity = %d", cur),
		Severity: Warning,
		Evidence: append([]Evidence{c.varEv("innodb_io_capacity", "IOPS")}, evs...),
		Change:   c.MySQLChange("innodb_io_capacity", fmt.Sprint(ioCapacitySSD), Increase),
		Effect:   "InnoDB flushes dirty pages fast enough that queries no longer wait for a free page",
		Risk: changeset.Risk{Restart: c.Restart("innodb_io_capacity"),
			Note: "for SSDs or provisioned IOPS only: set it to about the IOPS the storage sustains for writes; on a spinning disk keep it near 200, and on SSD innodb_flush_neighbors=0 stops flushing adjacent pages for nothing"},
		Source: "the smartphone game backend's write-up (provisioned IOPS left at the defaults); MySQL manual 'Configuring InnoDB I/O Capacity'",
	}
	if mx, ok := c.Int("innodb_io_capacity_max"); ok && mx < ioCapacityMaxSSD {
		f.Also = append(f.Also, *c.MySQLChange("innodb_io_capacity_max", fmt.Sprint(ioCapacityMaxSSD), Increase))
	}
	return []Finding{f}
}
