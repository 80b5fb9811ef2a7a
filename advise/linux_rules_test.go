package advise

import (
	"fmt"
	"testing"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
)

// phpToMySQL is the TIME_WAIT write-up's web server: non-persistent PHP → MySQL at
// about 400 connections per second, 24000 TIME_WAIT sockets to :3306.
func phpToMySQL(s *collect.Snapshot) {
	s.Linux.TCP.TimeWait.ByRemotePort[3306] = 24000
	s.Linux.TCP.TimeWait.Outbound = 24000
	s.Linux.TCP.TimeWait.Count = 24100
	s.Linux.TCP.Established.ByRemotePort[3306] = 200
}

func TestLinuxPortRange(t *testing.T) {
	runRuleCases(t, linuxPortRange, []ruleCase{
		{name: "few connections: silent", fires: false},
		{name: "24200 of 28232 ports to :3306: critical, widen (the PHP + MySQL TIME_WAIT write-up)", setup: phpToMySQL, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Critical)
			// 24200 × 2 = 48400 ports: 65536 - 48400 = 17136.
			wantChange(t, fs, "net.ipv4.ip_local_port_range", "17136 65535")
			wantText(t, fs[0].Title, "port 3306")
			wantText(t, fs[0].Effect, "tcp_fin_timeout does not shorten TIME_WAIT")
		}},
		{name: "half the range: warning", setup: func(s *collect.Snapshot) { s.Linux.TCP.TimeWait.ByRemotePort[11211] = 15000 }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantSeverity(t, fs, Warning) }},
		{name: "already widest: no change, keep connections open", setup: func(s *collect.Snapshot) {
			s.Linux.Sysctls["net.ipv4.ip_local_port_range"] = "1024 65535"
			s.Linux.TCP.TimeWait.ByRemotePort[3306] = 60000
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantNoChange(t, fs)
			wantText(t, fs[0].Effect, "more than any range holds")
		}},
		{name: "inbound TIME_WAIT (nginx's clients) takes no local port: silent", setup: func(s *collect.Snapshot) {
			s.Linux.TCP.TimeWait.ByLocalPort[80] = 50000
		}, fires: false},
	})
}

func TestLinuxTWBuckets(t *testing.T) {
	runRuleCases(t, linuxTWBuckets, []ruleCase{
		{name: "few: silent", fires: false},
		{name: "4096 buckets, 24100 TIME_WAIT: overflowing, raise (never lower)", setup: func(s *collect.Snapshot) {
			phpToMySQL(s)
			s.Linux.Sysctls["net.ipv4.tcp_max_tw_buckets"] = "4096"
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Critical)
			wantChange(t, fs, "net.ipv4.tcp_max_tw_buckets", "65536")
		}},
		{name: "huge buckets: silent", setup: func(s *collect.Snapshot) {
			phpToMySQL(s)
			s.Linux.Sysctls["net.ipv4.tcp_max_tw_buckets"] = "262144"
		}, fires: false},
	})
}

func TestLinuxTWReuse(t *testing.T) {
	runRuleCases(t, linuxTWReuse, []ruleCase{
		{name: "default 2: silent", setup: phpToMySQL, fires: false},
		{name: "1 with many outgoing TIME_WAIT: masks (the PHP + MySQL TIME_WAIT write-up)", setup: func(s *collect.Snapshot) {
			phpToMySQL(s)
			s.Linux.Sysctls["net.ipv4.tcp_tw_reuse"] = "1"
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantNoChange(t, fs)
			wantText(t, fs[0].Effect, "keep connections open")
		}},
		{name: "without timestamps it does nothing", setup: func(s *collect.Snapshot) {
			phpToMySQL(s)
			s.Linux.Sysctls["net.ipv4.tcp_tw_reuse"] = "1"
			s.Linux.Sysctls["net.ipv4.tcp_timestamps"] = "0"
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantText(t, fs[0].Effect, "does nothing with tcp_timestamps=0") }},
	})
}

func TestLinuxTWRecycle(t *testing.T) {
	runRuleCases(t, linuxTWRecycle, []ruleCase{
		{name: "absent (Linux 4.12+): never suggested", fires: false},
		{name: "old kernel with it on: off", setup: func(s *collect.Snapshot) {
			s.Linux.Sysctls["net.ipv4.tcp_tw_recycle"] = "1"
			s.Linux.KernelRelease = "3.10.0-1160.el7.x86_64"
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "net.ipv4.tcp_tw_recycle", "0") }},
	})
}

func TestLinuxFinTimeout(t *testing.T) {
	runRuleCases(t, linuxFinTimeout, []ruleCase{
		{name: "default 60: silent", fires: false},
		{name: "lowered to 10 expecting shorter TIME_WAIT (the smartphone game backend): corrected, no change", setup: func(s *collect.Snapshot) {
			phpToMySQL(s)
			s.Linux.Sysctls["net.ipv4.tcp_fin_timeout"] = "10"
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantNoChange(t, fs)
			wantText(t, fs[0].Title, "does not shorten TIME_WAIT")
			wantText(t, fs[0].Source, "the smartphone game backend's write-up")
		}},
	})
}

func TestLinuxSomaxconn(t *testing.T) {
	runRuleCases(t, linuxSomaxconn, []ruleCase{
		{name: "MySQL back_log within somaxconn: silent", fires: false},
		{name: "nginx listen backlog=32768 over somaxconn 4096 (the PHP + MySQL TIME_WAIT write-up)", snap: func(t testing.TB) *collect.Snapshot { return webSnap(t, "keepalive") }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "net.core.somaxconn", "32768")
				wantChange(t, fs, "net.ipv4.tcp_max_syn_backlog", "32768")
			}},
		{name: "somaxconn 128 (old kernels) under nginx's 4096", snap: func(t testing.TB) *collect.Snapshot { return webSnap(t, "isucon") },
			setup: func(s *collect.Snapshot) { s.Linux.Sysctls["net.core.somaxconn"] = "128" }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "net.core.somaxconn", "4096") }},
		{name: "a full accept queue makes it a warning", snap: func(t testing.TB) *collect.Snapshot { return webSnap(t, "isucon") }, setup: func(s *collect.Snapshot) {
			s.Linux.Sysctls["net.core.somaxconn"] = "128"
			s.Linux.TCP.Listen = []collect.ListenSocket{{Address: "0.0.0.0", Port: 80, AcceptQueue: 128}}
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantSeverity(t, fs, Warning) }},
	})
}

func TestLinuxSwappiness(t *testing.T) {
	swap := func(s *collect.Snapshot) {
		s.Linux.Memory.SwapTotalBytes, s.Linux.Memory.SwapFreeBytes = 2*gib, gib
	}
	runRuleCases(t, linuxSwappiness, []ruleCase{
		{name: "no swap: silent", fires: false},
		{name: "60 with swap in use on a DB host: 1", setup: swap, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "vm.swappiness", "1")
			wantSeverity(t, fs, Warning)
		}},
		{name: "no mysqld on the host: silent", setup: func(s *collect.Snapshot) { swap(s); s.Linux.Processes = nil }, fires: false},
		{name: "already 1: silent", setup: func(s *collect.Snapshot) { swap(s); s.Linux.Sysctls["vm.swappiness"] = "1" }, fires: false},
	})
}

func TestLinuxMySQLdNofile(t *testing.T) {
	low := func(s *collect.Snapshot) {
		s.Linux.Processes[0].Limits["nofile"] = collect.Limit{Soft: 16384, Hard: 16384}
	}
	runRuleCases(t, linuxMySQLdNofile, []ruleCase{
		{name: "40000 ≥ 32768: silent", fires: false},
		{name: "MariaDB: mariadb.service LimitNOFILE", setup: low, fires: true, check: func(t *testing.T, fs []Finding) {
			ch := fs[0].Change
			if ch.Kind != changeset.Systemd || ch.Target != "mariadb.service" || ch.To != "32768" {
				t.Fatalf("%+v", ch)
			}
		}},
		{name: "MySQL: mysqld.service, need from max_connections", on: "MySQL 8.0", setup: func(s *collect.Snapshot) {
			s.Linux.Processes[0].Limits["nofile"] = collect.Limit{Soft: 10000, Hard: 10000}
			setVar(s, "max_connections", "3000")
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			// 10 + 2 × 4000 tables + 3000 connections (not 5 × 3000).
			if fs[0].Change.Target != "mysqld.service" || fs[0].Change.To != "11010" {
				t.Fatalf("%+v", fs[0].Change)
			}
		}},
		{name: "no process seen: silent", setup: func(s *collect.Snapshot) { s.Linux.Processes = nil }, fires: false},
	})
}

func TestLinuxOvercommit(t *testing.T) {
	redisHere := func(s *collect.Snapshot) {
		s.Redis = redisLayer()
		s.Linux.Processes = append(s.Linux.Processes, collect.Process{PID: 400, Name: "redis-server", Pattern: "redis-server", RSSBytes: 200 * mib})
	}
	runRuleCases(t, linuxOvercommit, []ruleCase{
		{name: "no Redis: silent", fires: false},
		{name: "persisting Redis with 0: 1", setup: redisHere, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "vm.overcommit_memory", "1")
		}},
		{name: "Redis without persistence: silent", setup: func(s *collect.Snapshot) {
			redisHere(s)
			no := false
			s.Redis.RDB, s.Redis.AOF = &no, false
		}, fires: false},
		{name: "strict accounting on a DB host: info", setup: func(s *collect.Snapshot) { s.Linux.Sysctls["vm.overcommit_memory"] = "2" }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantNoChange(t, fs) }},
	})
}

func TestLinuxFileMax(t *testing.T) {
	runRuleCases(t, linuxFileMax, []ruleCase{
		{name: "plenty: silent", fires: false},
		{name: "95% used", setup: func(s *collect.Snapshot) { s.Linux.FileHandles = collect.FileHandles{Allocated: 95000, Max: 100000} }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "fs.file-max", fmt.Sprint(262144)) }},
	})
}

func TestLinuxNginxNofile(t *testing.T) {
	runRuleCases(t, linuxNginxNofile, []ruleCase{
		{name: "Debian nginx: 768 connections, soft limit 1024 (proxying would need 2 each)", snap: func(t testing.TB) *collect.Snapshot { return webSnap(t, "debian") },
			fires: true, check: func(t *testing.T, fs []Finding) {
				if fs[0].Change.Target != "nginx.service" || fs[0].Change.To != "2560" {
					t.Fatalf("%+v", fs[0].Change)
				}
			}},
		{name: "worker_rlimit_nofile set: nginx's own rule", snap: func(t testing.TB) *collect.Snapshot { return webSnap(t, "isucon") }, fires: false},
	})
}
