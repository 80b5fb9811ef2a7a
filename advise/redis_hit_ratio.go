package advise

import "fmt"

// redis-hit-ratio: reads of keys that do not exist (keyspace_misses)
// cost a round trip for nothing (the smartphone game backend: decide caching from the hit
// pattern; pipelines and multi-gets for per-item reads).
var redisHitRatio = ruleFunc{"redis-hit-ratio", LayerRedis, checkRedisHitRatio}

func checkRedisHitRatio(c *Context) []Finding {
	r := c.Redis
	if r == nil || r.HitRatio == nil || r.KeyspaceHits+r.KeyspaceMisses < cacheMinGets || *r.HitRatio >= cacheHitInfo {
		return nil
	}
	h := *r.HitRatio
	src := sinceStart("Redis INFO stats", r.UptimeSec)
	f := Finding{
		ID:       "redis-hit-ratio",
		Title:    fmt.Sprintf("Redis found %s of the keys read", pct(h)),
		Severity: Info,
		Evidence: []Evidence{ev("keyspace_hits", fmt.Sprint(r.KeyspaceHits), "reads", src), ev("keyspace_misses", fmt.Sprint(r.KeyspaceMisses), "reads", src),
			ev("hit ratio", pct(h), "", "keyspace_hits / (keyspace_hits + keyspace_misses)")},
		Effect: "misses are reads of keys that expired, were evicted (redis-evictions) or were never written: check TTLs against how long values are reused, and whether the cache saves more than its round trips",
		Source: "the smartphone game backend's write-up (decide from the hit pattern)",
	}
	if h < cacheHitWarn {
		f.Severity = Warning
	}
	return []Finding{f}
}
