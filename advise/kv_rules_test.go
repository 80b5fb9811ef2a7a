package advise

import (
	"testing"

	"github.com/stacktune/stacktune/collect"
)

// cacheSnap is a web host with the memcached and Redis fixtures.
func cacheSnap(t testing.TB) *collect.Snapshot {
	s := webSnap(t, "isucon")
	s.Memcached = memcachedLayer()
	s.Redis = redisLayer()
	return s
}

// mcInterval gives the memcached fixture a 10 s interval with these
// counters' growth.
func mcInterval(deltas map[string]float64) func(s *collect.Snapshot) {
	return func(s *collect.Snapshot) {
		s.Memcached.Interval = &collect.CounterInterval{Seconds: 10, Deltas: deltas}
	}
}

func TestMemcachedHitRatio(t *testing.T) {
	runRuleCases(t, memcachedHitRatio, []ruleCase{
		{name: "95%: silent", snap: cacheSnap, fires: false},
		{name: "95% since start but 30% over the interval: warning from the interval", snap: cacheSnap,
			setup: mcInterval(map[string]float64{"get_hits": 300, "get_misses": 700, "cmd_get": 1000}), fires: true, check: func(t *testing.T, fs []Finding) {
				wantSeverity(t, fs, Warning)
				wantText(t, fs[0].Title, "30%")
				wantText(t, fs[0].Evidence[0].Source, "delta over 10 s")
			}},
		{name: "too few gets in the interval: silent", snap: cacheSnap, setup: mcInterval(map[string]float64{"get_hits": 3, "get_misses": 7}), fires: false},
		{name: "a restart during the interval: since start, said so", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			h := 0.4
			s.Memcached.GetHits, s.Memcached.GetMisses, s.Memcached.HitRatio = 40000, 60000, &h
			s.Memcached.Interval = &collect.CounterInterval{Seconds: 10, Restarted: true, Deltas: map[string]float64{}}
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantText(t, fs[0].Evidence[0].Source, "restarted during the interval")
		}},
		{name: "40% since start: warning, no setting to change", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			h := 0.4
			s.Memcached.GetHits, s.Memcached.GetMisses, s.Memcached.HitRatio = 40000, 60000, &h
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Warning)
			wantNoChange(t, fs)
			wantText(t, fs[0].Evidence[0].Source, "since start")
		}},
	})
}

func TestMemcachedEvictions(t *testing.T) {
	runRuleCases(t, memcachedEvictions, []ruleCase{
		{name: "none: silent", snap: cacheSnap, fires: false},
		{name: "1/s since start: -m doubled", snap: cacheSnap, setup: func(s *collect.Snapshot) { s.Memcached.Evictions = 86400 }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "-m", "128") }},
		{name: "1/s since start but none over the interval: silent", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.Evictions = 86400
			mcInterval(map[string]float64{"evictions": 0, "cmd_get": 5000})(s)
		}, fires: false},
		{name: "5/s over the interval", snap: cacheSnap, setup: mcInterval(map[string]float64{"evictions": 50, "cmd_get": 5000}), fires: true,
			check: func(t *testing.T, fs []Finding) { wantText(t, fs[0].Evidence[0].Value, "50 (5/s)") }},
	})
}

func TestMemcachedConnections(t *testing.T) {
	runRuleCases(t, memcachedConnections, []ruleCase{
		{name: "50 of 1024: silent", snap: cacheSnap, fires: false},
		{name: "rejected: critical, -c doubled", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.CurrConnections, s.Memcached.RejectedConnections = 1000, 12
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Critical)
			wantChange(t, fs, "-c", "2048")
		}},
		{name: "rejected long ago, none over the interval, few open: silent", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.RejectedConnections = 12
			mcInterval(map[string]float64{"rejected_connections": 0, "cmd_get": 5000})(s)
		}, fires: false},
	})
}

func TestMemcachedUnixSocket(t *testing.T) {
	runRuleCases(t, memcachedUnixSocket, []ruleCase{
		{name: "remote: silent", snap: cacheSnap, fires: false},
		{name: "same host over TCP (the smartphone game backend): -s", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.Addr = "127.0.0.1:11211"
			s.Linux.TCP.TimeWait.ByRemotePort[11211] = 3000
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "-s", memcachedSocket)
			wantText(t, fs[0].Risk.Note, "stops listening on TCP")
		}},
		{name: "already a socket: silent", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.Network, s.Memcached.Addr, s.Memcached.Unix = "unix", "/run/memcached.sock", true
		}, fires: false},
	})
}

func TestRedisEvictions(t *testing.T) {
	runRuleCases(t, redisEvictions, []ruleCase{
		{name: "none: silent", snap: cacheSnap, fires: false},
		{name: "evicting at 1 GiB: 2 GiB", snap: cacheSnap, setup: func(s *collect.Snapshot) { s.Redis.EvictedKeys = 100000 }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "maxmemory", "2147483648") }},
	})
}

func TestRedisHitRatio(t *testing.T) {
	runRuleCases(t, redisHitRatio, []ruleCase{
		{name: "90%: silent", snap: cacheSnap, fires: false},
		{name: "30%", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			h := 0.3
			s.Redis.HitRatio = &h
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantSeverity(t, fs, Warning) }},
	})
}

func TestRedisMaxclients(t *testing.T) {
	runRuleCases(t, redisMaxclients, []ruleCase{
		{name: "40 of 10000: silent", snap: cacheSnap, fires: false},
		{name: "rejected", snap: cacheSnap, setup: func(s *collect.Snapshot) { s.Redis.RejectedConnections = 5 }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantSeverity(t, fs, Critical)
				wantChange(t, fs, "maxclients", "20000")
			}},
	})
}

func TestRedisMaxmemory(t *testing.T) {
	runRuleCases(t, redisMaxmemory, []ruleCase{
		{name: "1 GiB: silent", snap: cacheSnap, fires: false},
		{name: "unset: twice the use", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Redis.MaxMemory = 0
			s.Redis.Config["maxmemory"] = "0"
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "maxmemory", "469762048") // 2 × 200 MiB, rounded up to 64 MiB
			if change(fs, "maxmemory-policy") != nil {
				t.Error("persisting Redis: no eviction policy change")
			}
		}},
		{name: "unset on a pure cache with noeviction: allkeys-lru too", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Redis.MaxMemory, s.Redis.MaxMemoryPolicy = 0, "noeviction"
			s.Redis.Config["maxmemory"] = "0"
			no := false
			s.Redis.RDB = &no
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "maxmemory-policy", "allkeys-lru") }},
		{name: "CONFIG refused and INFO silent: unknown, silent", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Redis.MaxMemory = 0
			s.Redis.Config = map[string]string{}
			s.Redis.Info = map[string]map[string]string{}
			s.Redis.ConfigError = "ERR unknown command 'CONFIG'"
		}, fires: false},
	})
}

func TestMemcachedWriteOnRead(t *testing.T) {
	sets := func(n string) func(s *collect.Snapshot) {
		return func(s *collect.Snapshot) { s.Memcached.Stats["cmd_set"] = n }
	}
	runRuleCases(t, memcachedWriteOnRead, []ruleCase{
		{name: "no cmd_set stat: silent", snap: cacheSnap, fires: false},
		{name: "sets on misses only: silent", snap: cacheSnap, setup: sets("5000"), fires: false},
		{name: "a set per hit: multi-get, set on miss, TTL", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.GetHits, s.Memcached.GetMisses, s.Memcached.Stats["cmd_set"] = 95000, 5000, "100000"
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Warning)
			wantText(t, fs[0].Change.To, "multi-get")
			wantText(t, fs[0].Title, "1.05 sets per hit")
		}},
		{name: "too few gets to judge: silent", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.GetHits, s.Memcached.Stats["cmd_set"] = 80, "90"
		}, fires: false},
		{name: "too few gets over the interval: the totals since start, said so", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.GetHits, s.Memcached.GetMisses, s.Memcached.Stats["cmd_set"] = 95000, 5000, "100000"
			mcInterval(map[string]float64{"get_hits": 3, "get_misses": 0, "cmd_set": 3})(s)
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantText(t, fs[0].Evidence[0].Source, "since start") }},
		{name: "a set per hit over the interval", snap: cacheSnap, setup: mcInterval(map[string]float64{"get_hits": 1000, "get_misses": 10, "cmd_set": 1010}),
			fires: true, check: func(t *testing.T, fs []Finding) { wantText(t, fs[0].Evidence[0].Source, "delta over 10 s") }},
	})
}

func TestMemcachedTTL(t *testing.T) {
	ttl := func(items, none, hour int64) func(s *collect.Snapshot) {
		return func(s *collect.Snapshot) {
			s.Memcached.TTL = &collect.MemcachedTTL{Items: items, NoExpiry: none, OverHour: hour}
		}
	}
	runRuleCases(t, memcachedTTL, []ruleCase{
		{name: "no metadump: silent", snap: cacheSnap, fires: false},
		{name: "the smartphone game backend: most items never expire", snap: cacheSnap, setup: ttl(50000, 40000, 1000), fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Warning)
			wantText(t, fs[0].Title, "80% of memcached's items never expire (40000 of 50000)")
			wantText(t, fs[0].Change.To, "at most 3600 s")
		}},
		{name: "TTLs everywhere: silent", snap: cacheSnap, setup: ttl(50000, 10, 1000), fires: false},
		{name: "too few items: silent", snap: cacheSnap, setup: ttl(50, 50, 0), fires: false},
	})
}

func TestMemcachedUDP(t *testing.T) {
	runRuleCases(t, memcachedUDP, []ruleCase{
		{name: "UDP off: silent", snap: cacheSnap, fires: false},
		{name: "UDP on 11211: -U 0 (the smartphone game backend)", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.UDPPort, s.Memcached.Settings["udpport"] = 11211, "11211"
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "-U", "0") }},
	})
}

func TestMemcachedBacklog(t *testing.T) {
	local := func(overflows float64, conns float64) func(s *collect.Snapshot) {
		return func(s *collect.Snapshot) {
			s.Memcached.Addr = "127.0.0.1:11211"
			s.Linux.TCP.Listen = append(s.Linux.TCP.Listen, collect.ListenSocket{Address: "127.0.0.1", Port: 11211, AcceptQueue: 40})
			s.Linux.IntervalSeconds = 10
			s.Linux.NetDeltas = map[string]float64{"TcpExt.ListenOverflows": overflows}
			s.Memcached.Interval = &collect.CounterInterval{Seconds: 10, Deltas: map[string]float64{"total_connections": conns, "cmd_get": 1e5}}
		}
	}
	runRuleCases(t, memcachedBacklog, []ruleCase{
		{name: "remote memcached: silent", snap: cacheSnap, fires: false},
		{name: "overflows while memcached takes 200 connections a second: -b 2048 and somaxconn", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			local(37, 2000)(s)
			s.Linux.Sysctls["net.core.somaxconn"] = "1024"
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "-b", "2048")
			wantChange(t, fs, "net.core.somaxconn", "2048")
		}},
		{name: "no overflow: silent", snap: cacheSnap, setup: local(0, 2000), fires: false},
		{name: "overflows, but memcached takes no new connections (another listener's): silent", snap: cacheSnap, setup: local(37, 0), fires: false},
	})
}

func TestMemcachedCAS(t *testing.T) {
	runRuleCases(t, memcachedCAS, []ruleCase{
		{name: "no interval: silent", snap: cacheSnap, fires: false},
		{name: "no cas over a busy interval: -C", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.CurrItems = 100000
			mcInterval(map[string]float64{"cmd_get": 50000, "cmd_set": 5000, "cas_hits": 0, "cas_misses": 0, "cas_badval": 0})(s)
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "-C", "")
			wantText(t, fs[0].Effect, "781.2 KiB")
		}},
		{name: "cas in use: silent", snap: cacheSnap, setup: mcInterval(map[string]float64{"cmd_get": 50000, "cmd_set": 5000, "cas_hits": 30}), fires: false},
		{name: "already -C: silent", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.CASEnabled = false
			mcInterval(map[string]float64{"cmd_get": 50000})(s)
		}, fires: false},
	})
}
