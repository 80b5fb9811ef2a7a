package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/mysqlvar"
)

// mysql-query-cache: the query cache serialises every read and write on
// one mutex and invalidates a table's entries on every write to it; it
// was removed from MySQL 8.0 and is off by default in MariaDB since 10.1.7.
// The rule speaks only where the variables exist (MySQL 5.7, MariaDB) and
// the cache is on: disable it (a decrease). The 2015 tpcc-mysql contest entry found
// query_cache_size=0 made no difference in its write-heavy contest:
// with the cache already off there is nothing to gain.
var mysqlQueryCache = ruleFunc{"mysql-query-cache", LayerMySQL, checkMySQLQueryCache}

func checkMySQLQueryCache(c *Context) []Finding {
	if !c.mysqlReady() || !c.Has("query_cache_type") || !c.Has("query_cache_size") {
		return nil
	}
	t, _ := c.Var("query_cache_type")
	size, _ := c.Int("query_cache_size")
	if mysqlvar.Equal(t, "0") || size == 0 {
		return nil
	}
	f := Finding{
		ID:       "mysql-query-cache",
		Title:    fmt.Sprintf("The query cache is on (%s, %s)", t, fmtBytes(size)),
		Severity: Warning,
		Evidence: []Evidence{c.varEv("query_cache_type", ""), c.varEv("query_cache_size", "bytes")},
		Change:   c.MySQLChange("query_cache_type", "OFF", Decrease),
		Also:     []changeset.Change{*c.MySQLChange("query_cache_size", "0", Decrease)},
		Effect:   "reads and writes no longer queue on the query cache's global mutex, and writes no longer invalidate cached results; the memory is freed",
		Risk:     changeset.Risk{Memory: fmt.Sprintf("-%s", fmtBytes(size)), Restart: c.Restart("query_cache_type")},
		Source:   "MySQL 8.0 release notes (query cache removed); MariaDB KB 'Query Cache' (off by default since 10.1.7); the 2015 tpcc-mysql contest write-up (query_cache_size=0)",
	}
	for _, s := range []string{"Qcache_hits", "Qcache_inserts", "Qcache_lowmem_prunes", "Com_select"} {
		if _, ok := c.Delta(s); ok {
			f.Evidence = append(f.Evidence, c.deltaEv(s))
		}
	}
	hits, ok1 := c.Delta("Qcache_hits")
	ins, ok2 := c.Delta("Qcache_inserts")
	if ok1 && ok2 && hits > 10*ins && hits > 0 {
		f.Severity = Info
		f.Risk.Note = fmt.Sprintf("the cache answered %s reads for %s inserts over the interval: a read-mostly load gains from it; measure the score with it off before keeping the change", num(hits), num(ins))
	}
	return []Finding{f}
}
