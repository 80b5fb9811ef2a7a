package advise

import "fmt"

// memcached-hit-ratio: a cache that misses often costs a round trip and
// then the database's work anyway (the smartphone game backend: decide from the hit pattern;
// caching is wrong when it costs more round trips than the database).
var memcachedHitRatio = ruleFunc{"memcached-hit-ratio", LayerMemcached, checkMemcachedHitRatio}

const (
	cacheMinGets = 10000
	// cacheMinGetsInterval: gets over the collection interval.
	cacheMinGetsInterval = 100
	cacheHitWarn         = 0.5
	cacheHitInfo         = 0.8
	cacheEvictMin        = 1
)

func checkMemcachedHitRatio(c *Context) []Finding {
	m := c.Memcached
	if m == nil {
		return nil
	}
	hits, misses := c.mcCounter("get_hits"), c.mcCounter("get_misses")
	min := float64(cacheMinGets)
	if hits.interval {
		min = cacheMinGetsInterval
	}
	if hits.n+misses.n < min {
		return nil
	}
	h := hits.n / (hits.n + misses.n)
	if h >= cacheHitInfo {
		return nil
	}
	f := Finding{
		ID:       "memcached-hit-ratio",
		Title:    fmt.Sprintf("memcached answered %s of gets from the cache", pct(h)),
		Severity: Info,
		Evidence: []Evidence{ev("get_hits", num(hits.n), "gets", hits.src), ev("get_misses", num(misses.n), "gets", misses.src),
			ev("hit ratio", pct(h), "", "get_hits / (get_hits + get_misses)")},
		Source: "the smartphone game backend's write-up (decide from the hit pattern; TTL ≤ 1 h; add for immutable data)",
	}
	if h < cacheHitWarn {
		f.Severity = Warning
	}
	if ev1 := c.mcCounter("evictions"); ev1.n >= cacheEvictMin {
		f.Evidence = append(f.Evidence, ev("evictions", num(ev1.n), "items", ev1.src))
		f.Effect = "items are evicted for lack of memory, so part of the misses are items pushed out (memcached-evictions); "
	}
	f.Effect += "misses also come from keys read before anything wrote them, TTLs shorter than the reuse, and per-request keys that are never read twice: cache what is read many times, use multi-gets, and measure whether the cache saves the database more than it costs in round trips"
	return []Finding{f}
}
