package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-thread-cache: a connection finds a cached thread or MySQL creates
// one; Threads_created growing over the interval while the cache is
// smaller than the connections open at once means the cache is too small
// (the smartphone game backend set thread_cache_size up to max_connections; plan's
// thread-cache-size formula).
var mysqlThreadCache = ruleFunc{"mysql-thread-cache", LayerMySQL, checkMySQLThreadCache}

const (
	// threadCreateMinRate is the thread creations per second that make
	// the cache worth a look.
	threadCreateMinRate = 1.0
	// threadCacheMax is thread_cache_size's maximum.
	threadCacheMax = 16384
)

func checkMySQLThreadCache(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	if h, _ := c.Var("thread_handling"); h == "pool-of-threads" {
		return nil // the thread pool ignores thread_cache_size
	}
	rate, ok := c.Rate("Threads_created")
	if !ok || rate < threadCreateMinRate {
		return nil
	}
	cur, ok1 := c.Int("thread_cache_size")
	limit, ok2 := c.Int("max_connections")
	if !ok1 || !ok2 {
		return nil
	}
	peak := c.My.Connections.MaxUsedConnections
	def := min(100, 8+limit/100)
	target := min(limit, threadCacheMax, max(def, peak))
	if target <= cur {
		return nil
	}
	f := Finding{
		ID:       "mysql-thread-cache",
		Title:    fmt.Sprintf("MySQL created %s threads per second; the thread cache holds %d", num(rate), cur),
		Severity: Info,
		Evidence: []Evidence{c.deltaEv("Threads_created"), c.varEv("thread_cache_size", "threads"),
			ev("Max_used_connections", fmt.Sprint(peak), "connections", srcHighWater)},
		Change: c.MySQLChange("thread_cache_size", fmt.Sprint(target), Increase),
		Effect: "new connections reuse a cached thread instead of creating one; the cache covers the peak of connections open at once",
		Risk:   changeset.Risk{Restart: c.Restart("thread_cache_size"), Memory: "a cached thread keeps its stack (thread_stack) while idle"},
		Source: "the smartphone game backend's write-up (thread_cache_size up to max_connections); MySQL manual (thread_cache_size); stacktune plan thread-cache-size",
	}
	if _, ok := c.Rate("Connections"); ok {
		f.Evidence = append(f.Evidence, c.deltaEv("Connections"))
	}
	if rate >= 10 {
		f.Severity = Warning
	}
	return []Finding{f}
}
