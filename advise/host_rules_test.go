package advise

import (
	"testing"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
)

func TestMySQLNUMAInterleave(t *testing.T) {
	twoNodes := func(pool string) func(s *collect.Snapshot) {
		return func(s *collect.Snapshot) {
			s.Linux.NUMANodes = 2
			setVar(s, "innodb_buffer_pool_size", pool)
		}
	}
	runRuleCases(t, mysqlNUMAInterleave, []ruleCase{
		{name: "one node: silent", setup: func(s *collect.Snapshot) { setVar(s, "innodb_buffer_pool_size", "12884901888") }, fires: false},
		{name: "two nodes of 8 GiB, a 12 GiB pool: interleave", setup: twoNodes("12884901888"), fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "innodb_numa_interleave", "ON")
		}},
		{name: "a small pool: silent", setup: twoNodes("134217728"), fires: false},
		{name: "a build without NUMA: systemd's NUMAPolicy", setup: func(s *collect.Snapshot) {
			twoNodes("12884901888")(s)
			delete(s.MySQL.Variables, "innodb_numa_interleave")
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			ch := fs[0].Change
			if ch.Kind != changeset.Systemd || ch.Name != "NUMAPolicy" || ch.To != "interleave" || ch.Target != "mariadb.service" {
				t.Errorf("%+v", ch)
			}
		}},
	})
}

func TestMySQLJemalloc(t *testing.T) {
	busy := func(cores float64) func(s *collect.Snapshot) {
		return func(s *collect.Snapshot) {
			withCPU(s, 0.6, map[string]float64{"mariadbd": cores})
			s.MySQL.Variables["version_malloc_library"] = "system"
		}
	}
	runRuleCases(t, mysqlJemalloc, []ruleCase{
		{name: "no interval: silent", fires: false},
		{name: "mariadbd at 3 cores on glibc malloc: LD_PRELOAD jemalloc", setup: busy(3), fires: true, check: func(t *testing.T, fs []Finding) {
			ch := fs[0].Change
			if ch.Kind != changeset.Systemd || ch.Name != "Environment" || ch.To != "LD_PRELOAD="+jemallocPath {
				t.Errorf("%+v", ch)
			}
		}},
		{name: "idle mariadbd: silent", setup: busy(0.2), fires: false},
		{name: "jemalloc already: silent", setup: func(s *collect.Snapshot) {
			busy(3)(s)
			s.MySQL.Variables["version_malloc_library"] = "jemalloc 5.3.0"
		}, fires: false},
		{name: "MySQL with jemalloc in its maps: silent", on: "MySQL 8.0", setup: func(s *collect.Snapshot) {
			withCPU(s, 0.6, map[string]float64{"mysqld": 3})
			s.Linux.Processes[0].Allocator = "jemalloc"
		}, fires: false},
	})
}

// withMounts puts the datadir (/var/lib/mysql) on a file system.
func withMounts(opts string, logOwnDevice bool) func(s *collect.Snapshot) {
	return func(s *collect.Snapshot) {
		s.MySQL.Variables["datadir"] = "/var/lib/mysql/"
		s.Linux.Mounts = []collect.Mount{{Point: "/", Device: "8:1", FSType: "ext4", Source: "/dev/sda1", Options: "rw,relatime,rw"},
			{Point: "/var/lib/mysql", Device: "8:17", FSType: "xfs", Source: "/dev/sdb1", Options: opts}}
		if logOwnDevice {
			s.MySQL.Variables["innodb_log_group_home_dir"] = "/srv/redo"
			s.Linux.Mounts = append(s.Linux.Mounts, collect.Mount{Point: "/srv/redo", Device: "259:0", FSType: "xfs", Source: "/dev/nvme0n1", Options: "rw,noatime"})
		}
	}
}

func TestLinuxNoatime(t *testing.T) {
	runRuleCases(t, linuxNoatime, []ruleCase{
		{name: "no mounts: silent", fires: false},
		{name: "relatime datadir: noatime, information", setup: withMounts("rw,relatime,rw", false), fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Info)
			ch := fs[0].Change
			if ch.Kind != changeset.Mount || ch.Target != "/var/lib/mysql" || ch.To != "noatime" {
				t.Errorf("%+v", ch)
			}
		}},
		{name: "strictatime: warning", setup: withMounts("rw,strictatime", false), fires: true, check: func(t *testing.T, fs []Finding) { wantSeverity(t, fs, Warning) }},
		{name: "noatime already: silent", setup: withMounts("rw,noatime,rw", false), fires: false},
	})
}

func TestMySQLLogDevice(t *testing.T) {
	writes := func(s *collect.Snapshot) { setDelta(s, "Innodb_os_log_written", 50<<20) }
	runRuleCases(t, mysqlLogDevice, []ruleCase{
		{name: "5 MiB/s of redo on the data's device: said", setup: both(writes, withMounts("rw,noatime", false)), fires: true, check: func(t *testing.T, fs []Finding) {
			wantNoChange(t, fs)
			wantText(t, fs[0].Title, "5.0 MiB/s")
		}},
		{name: "the redo log on its own device: silent", setup: both(writes, withMounts("rw,noatime", true)), fires: false},
		{name: "few writes: silent", setup: withMounts("rw,noatime", false), fires: false},
	})
}

func TestLinuxSocketBuffers(t *testing.T) {
	pruned := func(s *collect.Snapshot) {
		s.Linux.IntervalSeconds = 10
		s.Linux.NetDeltas = map[string]float64{"TcpExt.PruneCalled": 12, "TcpExt.RcvPruned": 3, "TcpExt.TCPRcvQDrop": 0}
		s.Linux.Sysctls["net.core.rmem_max"], s.Linux.Sysctls["net.core.wmem_max"] = "212992", "212992"
	}
	runRuleCases(t, linuxSocketBuffers, []ruleCase{
		{name: "no interval: silent", fires: false},
		{name: "pruned queues: rmem_max and wmem_max 16 MiB (the smartphone game backend)", setup: pruned, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "net.core.rmem_max", "16777216")
			wantChange(t, fs, "net.core.wmem_max", "16777216")
			wantText(t, fs[0].Title, "15 times")
		}},
		{name: "nothing pruned: silent", setup: func(s *collect.Snapshot) {
			s.Linux.IntervalSeconds, s.Linux.NetDeltas = 10, map[string]float64{"TcpExt.PruneCalled": 0}
		}, fires: false},
	})
}
