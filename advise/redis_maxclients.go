package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// redis-maxclients: Redis refuses clients past maxclients
// (rejected_connections); it also needs maxclients + 32 file descriptors.
var redisMaxclients = ruleFunc{"redis-maxclients", LayerRedis, checkRedisMaxclients}

func checkRedisMaxclients(c *Context) []Finding {
	r := c.Redis
	if r == nil || r.MaxClients <= 0 {
		return nil
	}
	busy := float64(r.ConnectedClients) >= 0.8*float64(r.MaxClients)
	if !busy && r.RejectedConnections == 0 {
		return nil
	}
	value := max(r.MaxClients*2, nextPow2(r.ConnectedClients*2))
	f := Finding{
		ID:       "redis-maxclients",
		Title:    fmt.Sprintf("Redis has %d clients of maxclients %d", r.ConnectedClients, r.MaxClients),
		Severity: Warning,
		Evidence: []Evidence{ev("connected_clients", fmt.Sprint(r.ConnectedClients), "clients", "Redis INFO clients (current)"),
			ev("maxclients", fmt.Sprint(r.MaxClients), "clients", "CONFIG GET maxclients")},
		Change: &changeset.Change{Kind: changeset.Redis, Target: "redis", Name: "maxclients", From: fmt.Sprint(r.MaxClients), To: fmt.Sprint(value), Direction: Increase,
			Apply: fmt.Sprintf("redis-cli CONFIG SET maxclients %d", value)},
		Effect: "clients are not refused at the peak; size it to web servers × workers × connections per worker (stacktune plan cache-connections)",
		Risk:   changeset.Risk{Note: fmt.Sprintf("Redis needs maxclients + 32 file descriptors: its LimitNOFILE must be at least %d", value+32)},
		Source: "Redis docs 'Client handling' (maxclients); the smartphone game backend's write-up",
	}
	if r.RejectedConnections > 0 {
		f.Severity = Critical
		f.Evidence = append(f.Evidence, ev("rejected_connections", fmt.Sprint(r.RejectedConnections), "connections", sinceStart("Redis INFO stats", r.UptimeSec)))
	}
	return []Finding{f}
}
