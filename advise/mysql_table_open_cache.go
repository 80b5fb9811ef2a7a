package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-table-open-cache: Opened_tables growing over the interval while
// the cache is full (Open_tables at table_open_cache, or
// Table_open_cache_overflows growing) means tables are closed and reopened
// for lack of room (the smartphone game backend checked Open_tables against
// table_open_cache).
var mysqlTableOpenCache = ruleFunc{"mysql-table-open-cache", LayerMySQL, checkMySQLTableOpenCache}

const (
	// openedMinRate is the table opens per second worth a look.
	openedMinRate = 1.0
	// cacheFull is the share of a cache in use that counts as full.
	cacheFull = 0.95
)

func checkMySQLTableOpenCache(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	rate, ok := c.Rate("Opened_tables")
	if !ok || rate < openedMinRate {
		return nil
	}
	size, ok := c.Int("table_open_cache")
	if !ok || size <= 0 {
		return nil
	}
	open, _ := c.Gauge("Open_tables")
	overflows, _ := c.Delta("Table_open_cache_overflows")
	if open < cacheFull*float64(size) && overflows <= 0 {
		return nil
	}
	value := roundUp(size*2, 100)
	f := Finding{
		ID:       "mysql-table-open-cache",
		Title:    fmt.Sprintf("Tables are reopened %s times per second with the table cache full (%s of %d)", num(rate), num(open), size),
		Severity: Warning,
		Evidence: []Evidence{c.deltaEv("Opened_tables"), ev("Open_tables", num(open), "tables", srcGauge), c.varEv("table_open_cache", "tables")},
		Change:   c.MySQLChange("table_open_cache", fmt.Sprint(value), Increase),
		Effect:   "tables stay open between queries instead of being closed and reopened",
		Risk: changeset.Risk{Restart: c.Restart("table_open_cache"),
			Note: "each cached table can hold file descriptors: check open_files_limit and the process limit (mysql-open-files-limit, linux-mysqld-nofile)"},
		Source: "the smartphone game backend's write-up (Open_tables vs table_open_cache); MySQL manual 'How MySQL Opens and Closes Tables'",
	}
	if _, ok := c.Delta("Table_open_cache_overflows"); ok {
		f.Evidence = append(f.Evidence, c.deltaEv("Table_open_cache_overflows"))
	}
	if rate < 10 {
		f.Severity = Info
	}
	return []Finding{f}
}
