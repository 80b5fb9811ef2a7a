package advise

import (
	"fmt"
	"strconv"

	"github.com/stacktune/stacktune/changeset"
)

// memcached-write-on-read: a client that writes a value back after every
// read, hit or miss, doubles the round trips and keeps every item alive
// forever; one that fetches a page's keys one get at a time pays a round
// trip per key (the smartphone game backend: set only what is read many times, TTL ≤ 1 h,
// multi-gets).
var memcachedWriteOnRead = ruleFunc{"memcached-write-on-read", LayerMemcached, checkMemcachedWriteOnRead}

const (
	writeOnReadMinGets = 100
	// writeOnReadMinGetsInterval: hits over the collection interval (a
	// short diagnosis run of a slow app makes few).
	writeOnReadMinGetsInterval = 20
	writeOnReadRatio           = 0.9 // sets per hit
)

func checkMemcachedWriteOnRead(c *Context) []Finding {
	m := c.Memcached
	if m == nil {
		return nil
	}
	hits, misses, sets := c.mcCounter("get_hits"), c.mcCounter("get_misses"), c.mcCounter("cmd_set")
	if hits.interval && hits.n < writeOnReadMinGetsInterval {
		// Too few gets over the interval (a short run of a slow app): the
		// client's habit shows in the totals since start as well, and the
		// source says which was used.
		hits, misses, sets = c.mcSinceStart("get_hits"), c.mcSinceStart("get_misses"), c.mcSinceStart("cmd_set")
	}
	if hits.n < writeOnReadMinGetsInterval || (!hits.interval && hits.n < writeOnReadMinGets) {
		return nil
	}
	if _, err := strconv.ParseInt(m.Stats["cmd_set"], 10, 64); err != nil && !hits.interval {
		return nil
	}
	ratio := sets.n / hits.n
	if ratio < writeOnReadRatio {
		return nil
	}
	return []Finding{{
		ID:       "memcached-write-on-read",
		Title:    fmt.Sprintf("memcached gets %.2f sets per hit: values are written back on every read", ratio),
		Severity: Warning,
		Evidence: []Evidence{ev("cmd_set", num(sets.n), "sets", sets.src), ev("get_hits", num(hits.n), "gets", hits.src),
			ev("get_misses", num(misses.n), "gets", misses.src), ev("sets per hit", fmt.Sprintf("%.2f", ratio), "", "cmd_set / get_hits")},
		Change: &changeset.Change{Kind: changeset.App, Target: "application cache client", Name: "cache reads",
			From: "get one key per round trip, set after every read",
			To:   "one multi-get (get k1 k2 ...) per page, set (or add) only on a miss, with a TTL of at most an hour", Direction: Set},
		Effect: "a hit costs one round trip instead of two, a page's keys come in one round trip instead of one per key, and items expire instead of living forever",
		Risk:   changeset.Risk{Note: "a change to the application's code: values cached without a TTL before the change stay until evicted or flushed"},
		Source: "the smartphone game backend's write-up (cache what is read many times, TTL ≤ 1 h, get_multi)",
	}}
}
