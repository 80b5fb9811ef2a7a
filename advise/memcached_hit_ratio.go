package advise

import "fmt"

// memcached-hit-ratio: a cache that misses often costs a round trip and
// then the database's work anyway (seed 004: decide from the hit pattern;
// caching is wrong when it costs more round trips than the database).
var memcachedHitRatio = ruleFunc{"memcached-hit-ratio", LayerMemcached, checkMemcachedHitRatio}

const (
	cacheMinGets  = 10000
	cacheHitWarn  = 0.5
	cacheHitInfo  = 0.8
	cacheEvictMin = 1
)

func checkMemcachedHitRatio(c *Context) []Finding {
	m := c.Memcached
	if m == nil || m.HitRatio == nil || m.GetHits+m.GetMisses < cacheMinGets || *m.HitRatio >= cacheHitInfo {
		return nil
	}
	h := *m.HitRatio
	src := sinceStart("memcached stats", m.UptimeSec)
	f := Finding{
		ID:       "memcached-hit-ratio",
		Title:    fmt.Sprintf("memcached answered %s of gets from the cache", pct(h)),
		Severity: Info,
		Evidence: []Evidence{ev("get_hits", fmt.Sprint(m.GetHits), "gets", src), ev("get_misses", fmt.Sprint(m.GetMisses), "gets", src),
			ev("hit ratio", pct(h), "", "get_hits / (get_hits + get_misses)")},
		Source: "seed 004 (decide from the hit pattern; TTL ≤ 1 h; add for immutable data)",
	}
	if h < cacheHitWarn {
		f.Severity = Warning
	}
	if m.Evictions >= cacheEvictMin {
		f.Evidence = append(f.Evidence, ev("evictions", fmt.Sprint(m.Evictions), "items", src))
		f.Effect = "items are evicted for lack of memory, so part of the misses are items pushed out (memcached-evictions); "
	}
	f.Effect += "misses also come from keys read before anything wrote them, TTLs shorter than the reuse, and per-request keys that are never read twice: cache what is read many times, use multi-gets, and measure whether the cache saves the database more than it costs in round trips"
	return []Finding{f}
}
