package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// redis-evictions: with maxmemory reached Redis evicts keys by its policy;
// evicted keys are later misses (or lost data if Redis is not only a
// cache).
var redisEvictions = ruleFunc{"redis-evictions", LayerRedis, checkRedisEvictions}

func checkRedisEvictions(c *Context) []Finding {
	r := c.Redis
	if r == nil || r.EvictedKeys <= 0 {
		return nil
	}
	rate := perSecond(r.EvictedKeys, r.UptimeSec)
	if rate < evictMinRate {
		return nil
	}
	src := sinceStart("Redis INFO stats", r.UptimeSec)
	f := Finding{
		ID:       "redis-evictions",
		Title:    fmt.Sprintf("Redis evicts %s keys per second at maxmemory", num(rate)),
		Severity: Warning,
		Evidence: []Evidence{ev("evicted_keys", fmt.Sprint(r.EvictedKeys), "keys", src),
			ev("used_memory", fmt.Sprint(r.UsedMemory), "bytes ("+fmtBytes(r.UsedMemory)+")", "Redis INFO memory"),
			ev("maxmemory", fmt.Sprint(r.MaxMemory), "bytes ("+fmtBytes(r.MaxMemory)+")", "CONFIG GET maxmemory"),
			ev("maxmemory-policy", r.MaxMemoryPolicy, "", "CONFIG GET maxmemory-policy")},
		Effect: "keys live until their TTL instead of being evicted",
		Source: "Redis docs 'Key eviction'",
	}
	if r.MaxMemory > 0 {
		value := roundUp(r.MaxMemory*2, mib)
		f.Change = &changeset.Change{Kind: changeset.Redis, Target: "redis", Name: "maxmemory", From: fmt.Sprint(r.MaxMemory), To: fmt.Sprint(value), Direction: Increase,
			Apply: fmt.Sprintf("redis-cli CONFIG SET maxmemory %d", value)}
		f.Risk.Memory = fmt.Sprintf("+%s of RAM on the Redis host", fmtBytes(value-r.MaxMemory))
		f.Risk.Note = "if Redis persists (RDB/AOF), a fork for saving can need up to as much memory again while pages are copied"
	}
	return []Finding{f}
}
