package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// redis-maxmemory: without maxmemory Redis grows until the host runs out
// of memory and the OOM killer picks a process (maybe mysqld); with it
// Redis evicts or refuses writes by maxmemory-policy.
var redisMaxmemory = ruleFunc{"redis-maxmemory", LayerRedis, checkRedisMaxmemory}

func checkRedisMaxmemory(c *Context) []Finding {
	r := c.Redis
	if r == nil || r.MaxMemory > 0 || r.Config["maxmemory"] == "" && r.Info["memory"]["maxmemory"] == "" {
		return nil
	}
	value := roundUp(max(r.UsedMemory*2, 256*mib), 64*mib)
	if ram := c.RAM(); ram > 0 && (r.Unix || localAddr(r.Addr)) {
		value = min(value, roundDown(ram/2, 64*mib))
	}
	f := Finding{
		ID:       "redis-maxmemory",
		Title:    "Redis has no memory limit (maxmemory 0)",
		Severity: Warning,
		Evidence: []Evidence{ev("maxmemory", "0", "bytes", "CONFIG GET maxmemory"),
			ev("used_memory", fmt.Sprint(r.UsedMemory), "bytes ("+fmtBytes(r.UsedMemory)+")", "Redis INFO memory"),
			ev("maxmemory-policy", r.MaxMemoryPolicy, "", "CONFIG GET maxmemory-policy")},
		Change: &changeset.Change{Kind: changeset.Redis, Target: "redis", Name: "maxmemory", From: "0", To: fmt.Sprint(value), Direction: Set,
			Apply: fmt.Sprintf("redis-cli CONFIG SET maxmemory %d", value)},
		Effect: fmt.Sprintf("Redis stops at %s (twice its use now) instead of growing until the kernel's OOM killer ends it or another service", fmtBytes(value)),
		Risk:   changeset.Risk{Note: "at the limit Redis applies maxmemory-policy: noeviction refuses writes; a pure cache wants allkeys-lru (or volatile-lru when only keys with a TTL may go)"},
		Source: "Redis docs 'Key eviction' (maxmemory, maxmemory-policy)",
	}
	persist := r.AOF || r.RDB != nil && *r.RDB
	if !persist && (r.MaxMemoryPolicy == "noeviction" || r.MaxMemoryPolicy == "") {
		f.Also = []changeset.Change{{Kind: changeset.Redis, Target: "redis", Name: "maxmemory-policy", From: r.MaxMemoryPolicy, To: "allkeys-lru", Direction: Set,
			Apply: "redis-cli CONFIG SET maxmemory-policy allkeys-lru"}}
	}
	return []Finding{f}
}
