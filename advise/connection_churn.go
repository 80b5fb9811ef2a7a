package advise

import (
	"fmt"
	"strconv"

	"github.com/stacktune/stacktune/changeset"
)

// connection-churn: an application that opens a connection to the
// database or the cache per request (PHP without persistent connections,
// a Go app whose database/sql pool keeps 2 idle connections by default
// and closes the rest after each use) pays a handshake (and MySQL's
// authentication) per request and leaves a TIME_WAIT per connection for
// 60 s on the side that closes first. The PHP + MySQL TIME_WAIT write-up found 14,021 TIME_WAIT to
// :3306 (about 233 new connections a second); the cure is to keep the
// connections open (persistent connections, a pool as large as the
// concurrency), and on one host a unix socket, which leaves none.
// Evidence: the server's own count of new connections over the interval
// (MySQL Connections, memcached total_connections; Redis's since start),
// and the TIME_WAIT of the port on both sides (portSockets). One finding
// per server, in the server's layer.
var connectionChurn = ruleFunc{"connection-churn", LayerLinux, checkConnectionChurn}

const (
	// churnRate is the new connections per second from which a steady
	// stream is churn: a pool opens none once warm, monitoring a few a
	// minute; the Go app of issue 17 with the default idle pool opened 4.
	churnRate = 3.0
	// churnWarnRate is the rate that costs measurable time.
	churnWarnRate = 50.0
)

// churnTarget is one server whose connections are counted.
type churnTarget struct {
	layer, name string
	port        int
	// rate is the server's own count of new connections per second, and
	// its evidence (nil: not known).
	rate   *float64
	rateEv []Evidence
	// statementsPer is the statements per connection (MySQL).
	statementsPer *float64
	unix          bool // the clients already use a unix socket
}

func checkConnectionChurn(c *Context) []Finding {
	var out []Finding
	for _, t := range churnTargets(c) {
		if f := churnFinding(c, t); f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// wellKnown are the servers' default ports, for a web host whose snapshot
// has TIME_WAIT toward them but not the servers themselves.
var wellKnown = []churnTarget{{layer: LayerMySQL, name: "MySQL", port: 3306}, {layer: LayerMemcached, name: "memcached", port: 11211}, {layer: LayerRedis, name: "Redis", port: 6379}}

// churnTargets are MySQL, memcached and Redis as the snapshot saw them,
// and at their default ports those it did not collect.
func churnTargets(c *Context) []churnTarget {
	var ts []churnTarget
	collected := map[string]bool{LayerMySQL: c.My != nil, LayerMemcached: c.Memcached != nil, LayerRedis: c.Redis != nil}
	for _, t := range wellKnown {
		if !collected[t.layer] {
			ts = append(ts, t)
		}
	}
	if c.mysqlReady() {
		port, ok := c.Int("port")
		if !ok || port <= 0 {
			port = 3306
		}
		t := churnTarget{layer: LayerMySQL, name: "MySQL", port: int(port)}
		if r, ok := c.Rate("Connections"); ok {
			t.rate = &r
			t.rateEv = []Evidence{c.deltaEv("Connections")}
			if _, ok := c.Delta("Threads_created"); ok {
				t.rateEv = append(t.rateEv, c.deltaEv("Threads_created"))
			}
			if q, ok := c.Delta("Questions"); ok {
				if n, _ := c.Delta("Connections"); n > 0 {
					per := q / n
					t.statementsPer = &per
				}
			}
		}
		ts = append(ts, t)
	}
	if m := c.Memcached; m != nil {
		t := churnTarget{layer: LayerMemcached, name: "memcached", port: addrPort(m.Addr), unix: m.Unix}
		if k := c.mcCounter("total_connections"); k.interval || m.UptimeSec > 0 {
			r := k.rate
			t.rate = &r
			t.rateEv = []Evidence{ev("total_connections", fmt.Sprintf("%s (%s/s)", num(k.n), num(k.rate)), "connections", k.src)}
		}
		ts = append(ts, t)
	}
	if r := c.Redis; r != nil {
		t := churnTarget{layer: LayerRedis, name: "Redis", port: addrPort(r.Addr), unix: r.Network == "unix"}
		if n, err := strconv.ParseInt(r.Info["stats"]["total_connections_received"], 10, 64); err == nil && r.UptimeSec > 0 {
			rate := perSecond(n, r.UptimeSec)
			t.rate = &rate
			t.rateEv = []Evidence{ev("total_connections_received", fmt.Sprintf("%d (%s/s)", n, num(rate)), "connections", sinceStart("Redis INFO stats", r.UptimeSec))}
		}
		ts = append(ts, t)
	}
	return ts
}

func churnFinding(c *Context, t churnTarget) *Finding {
	ps := c.portSockets(t.port)
	rate := ps.closeRate()
	measured := t.rate != nil
	if measured {
		rate = max(rate, *t.rate)
	}
	if rate < churnRate {
		return nil
	}
	f := &Finding{
		ID:       "connection-churn",
		Layer:    t.layer,
		Severity: Info,
		Evidence: append([]Evidence{}, t.rateEv...),
		Source:   "the PHP + MySQL TIME_WAIT write-up (non-persistent PHP: a TIME_WAIT per request, 14,021 to :3306); the smartphone game backend's write-up (persistent connections and the binary protocol to memcached: 1.5-2x on sessions); Go database/sql (SetMaxIdleConns defaults to 2)",
	}
	if t.port > 0 && c.Linux != nil {
		f.Evidence = append(f.Evidence, ps.evidence()...)
	}
	if t.statementsPer != nil {
		f.Evidence = append(f.Evidence, ev("statements per connection", num(*t.statementsPer), "", "Questions / Connections, "+c.StatusSource()))
	}
	if rate >= churnWarnRate {
		f.Severity = Warning
	}
	f.Title = fmt.Sprintf("Clients open about %s new connections a second to %s instead of keeping them open", num(rate), t.name)
	local := ps.listening && !t.unix
	to := "persistent connections: a pool kept open, as large as the requests served at once (Go: db.SetMaxIdleConns equal to db.SetMaxOpenConns; PHP: PDO::ATTR_PERSISTENT or mysqli's p: host)"
	switch t.layer {
	case LayerMemcached:
		to = "persistent connections (PHP Memcached with a persistent_id, pylibmc/dalli pools) with the binary protocol where the client offers it"
	case LayerRedis:
		to = "persistent connections (phpredis pconnect, a pool in the client)"
	}
	if local {
		to += "; on this host, the unix socket (no TCP handshake, no TIME_WAIT)"
	}
	f.Change = &changeset.Change{Kind: changeset.App, Target: "application " + t.name + " connections", Name: "connection reuse",
		From: fmt.Sprintf("a new connection per use (%s/s)", num(rate)), To: to, Direction: Set}
	f.Effect = "no handshake (and for MySQL no authentication and thread start) per request, and no TIME_WAIT per request filling the port range and tcp_max_tw_buckets"
	f.Risk.Note = "a pool needs its size capped: the server's connection limit (max_connections, memcached -c, maxclients) must hold every web server's pool; persistent PHP connections keep session state (transactions, locks, variables) across requests, which the PHP + MySQL TIME_WAIT write-up found hard with transactions"
	if !measured {
		f.Risk.Note += fmt.Sprintf("; the rate is from TIME_WAIT only (the %s layer was not collected with an interval)", t.layer)
	}
	return f
}
