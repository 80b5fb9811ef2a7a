package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-table-open-cache-instances: the table cache is split into
// instances to spread its lock; more instances than cores only divides the
// cache (the smartphone game backend: 16 was too many on 8 cores; MySQL suggests 8 or 16 on
// 16 cores or more). It speaks only when the cache overflows over the
// interval: each instance holds table_open_cache / instances tables, and
// without overflows their number costs nothing measurable.
var mysqlTableOpenCacheInstances = ruleFunc{"mysql-table-open-cache-instances", LayerMySQL, checkMySQLTableOpenCacheInstances}

func checkMySQLTableOpenCacheInstances(c *Context) []Finding {
	if !c.mysqlReady() || !c.Has("table_open_cache_instances") {
		return nil
	}
	inst, ok := c.Int("table_open_cache_instances")
	cores := int64(c.Cores())
	if !ok || cores <= 0 || inst <= cores {
		return nil
	}
	overflows, _ := c.Delta("Table_open_cache_overflows")
	if overflows <= 0 {
		return nil
	}
	value := min(cores, 16)
	return []Finding{{
		ID:       "mysql-table-open-cache-instances",
		Title:    fmt.Sprintf("%d table cache instances on %d cores", inst, cores),
		Severity: Info,
		Evidence: []Evidence{c.varEv("table_open_cache_instances", ""), ev("CPUs", fmt.Sprint(cores), "cores", srcCPUs),
			c.varEv("table_open_cache", "tables"), c.deltaEv("Table_open_cache_overflows")},
		Change: c.MySQLChange("table_open_cache_instances", fmt.Sprint(value), Decrease),
		Effect: "each instance holds table_open_cache / instances tables: fewer instances, each larger, while still one per core for the lock",
		Risk:   changeset.Risk{Restart: c.Restart("table_open_cache_instances")},
		Source: "the smartphone game backend's write-up (16 instances too many on 8 cores); MySQL manual (table_open_cache_instances: 8 or 16 on systems with 16 or more cores)",
	}}
}
