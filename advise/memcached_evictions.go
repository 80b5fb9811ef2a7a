package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// memcached-evictions: memcached evicts live items when its memory (-m)
// is full; each eviction is a later miss (the smartphone game backend ran -m 1024).
var memcachedEvictions = ruleFunc{"memcached-evictions", LayerMemcached, checkMemcachedEvictions}

// evictMinRate is the evictions per second worth a change.
const evictMinRate = 0.1

func checkMemcachedEvictions(c *Context) []Finding {
	m := c.Memcached
	if m == nil {
		return nil
	}
	evc := c.mcCounter("evictions")
	rate := evc.rate
	if evc.n <= 0 || rate < evictMinRate {
		return nil
	}
	cur := m.LimitMaxbytes / mib
	value := max(cur*2, 64)
	f := Finding{
		ID:       "memcached-evictions",
		Title:    fmt.Sprintf("memcached evicts %s items per second for lack of memory", num(rate)),
		Severity: Warning,
		Evidence: []Evidence{ev("evictions", fmt.Sprintf("%s (%s/s)", num(evc.n), num(rate)), "items", evc.src),
			ev("limit_maxbytes (-m)", fmt.Sprint(m.LimitMaxbytes), "bytes ("+fmtBytes(m.LimitMaxbytes)+")", "memcached stats"),
			ev("bytes", fmt.Sprint(m.Bytes), "bytes ("+fmtBytes(m.Bytes)+")", "memcached stats")},
		Change: &changeset.Change{Kind: changeset.Memcached, Target: "memcached", Name: "-m", From: fmt.Sprint(cur), To: fmt.Sprint(value), Direction: Increase},
		Effect: "items live until their TTL instead of being pushed out, so later gets hit",
		Risk:   changeset.Risk{Memory: fmt.Sprintf("+%s of RAM on the memcached host", fmtBytes((value-cur)*mib)), Restart: true, Note: "a restart empties the cache: do it off-peak"},
		Source: "the smartphone game backend's write-up (memcached -m 1024); memcached protocol.txt (evictions)",
	}
	if ram := c.RAM(); ram > 0 && (localAddr(m.Addr) || m.Unix) && value*mib > ram/4 {
		f.Risk.Note += fmt.Sprintf("; %s is over a quarter of this host's RAM: check the memory budget of the other services", fmtBytes(value*mib))
	}
	return []Finding{f}
}
