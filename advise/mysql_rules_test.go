package advise

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/capacity"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
)

// bigData makes the InnoDB data 4 GiB + 1 GiB of indexes.
func bigData(s *collect.Snapshot) {
	s.MySQL.Data.InnoDBDataBytes, s.MySQL.Data.InnoDBIndexBytes = 4*gib, gib
}

// missReads makes the pool miss 20% of 100000 reads over the interval.
func missReads(s *collect.Snapshot) {
	setDelta(s, "Innodb_buffer_pool_read_requests", 100000)
	setDelta(s, "Innodb_buffer_pool_reads", 20000)
}

func TestMySQLBufferPoolSize(t *testing.T) {
	runRuleCases(t, mysqlBufferPoolSize, []ruleCase{
		{name: "data fits: silent", fires: false},
		{name: "data larger than the pool: increase to data × 1.25", setup: bigData, fires: true,
			check: func(t *testing.T, fs []Finding) {
				// 5 GiB × 1.25 = 6.25 GiB, rounded up to 128 MiB.
				wantChange(t, fs, "innodb_buffer_pool_size", fmt.Sprint(roundUp(5*gib*5/4, 128*mib)))
				wantSeverity(t, fs, Warning)
				if fs[0].Risk.Restart {
					t.Error("innodb_buffer_pool_size is dynamic on MariaDB 10.11")
				}
			}},
		{name: "data larger and misses over the interval: critical", setup: func(s *collect.Snapshot) { bigData(s); missReads(s) }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantSeverity(t, fs, Critical) }},
		{name: "MySQL 8.0: chunk × instances granularity", on: "MySQL 8.0", setup: func(s *collect.Snapshot) {
			bigData(s)
			setVar(s, "innodb_buffer_pool_instances", "8")
		}, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "innodb_buffer_pool_size", fmt.Sprint(roundUp(5*gib*5/4, 8*128*mib)))
			}},
		{name: "dedicated host: 75% of RAM", opt: Options{DedicatedDB: true}, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "innodb_buffer_pool_size", fmt.Sprint(12*gib))
				wantSeverity(t, fs, Info)
			}},
		{name: "dedicated host but the budget is tight: within the budget", opt: Options{DedicatedDB: true}, setup: func(s *collect.Snapshot) {
			s.Linux.Processes = append(s.Linux.Processes, collect.Process{PID: 300, Name: "php-fpm8.2", RSSBytes: 6 * gib})
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			ch := change(fs, "innodb_buffer_pool_size")
			if ch == nil {
				t.Fatal("no change")
			}
			var v int64
			fmt.Sscan(ch.To, &v)
			if v >= 12*gib || v < 6*gib {
				t.Errorf("pool %s: want within RAM - php-fpm - reserve - the rest", fmtBytes(v))
			}
		}},
		{name: "data larger than any budget allows: no change, says why", setup: func(s *collect.Snapshot) {
			s.MySQL.Data.InnoDBDataBytes = 40 * gib
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			// 40 GiB × 1.25 does not fit in 16 GiB: the pool grows to
			// what fits, less than the data needs.
			ch := change(fs, "innodb_buffer_pool_size")
			if ch == nil {
				t.Fatal("no change")
			}
			wantText(t, fs[0].Effect, "memory budget allows no more")
		}},
		{name: "no RAM known (no linux layer): data size alone", setup: func(s *collect.Snapshot) { bigData(s); s.Linux = nil }, fires: true},
		{name: "no variables: silent", setup: func(s *collect.Snapshot) { bigData(s); s.MySQL.Variables = map[string]string{} }, fires: false},
		{name: "running value counts, not a file: 6 GiB of 30 GiB with 20 GiB of data (the smartphone game backend)", on: "MySQL 8.0", setup: func(s *collect.Snapshot) {
			s.Linux.Memory.TotalBytes = 30 * gib
			setVar(s, "innodb_buffer_pool_size", fmt.Sprint(6*gib))
			s.MySQL.Data.InnoDBDataBytes = 20 * gib
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			ch := change(fs, "innodb_buffer_pool_size")
			if ch == nil || ch.From != fmt.Sprint(6*gib) {
				t.Fatalf("change %+v", ch)
			}
		}},
	})
}

func TestMySQLBufferPoolHitRatio(t *testing.T) {
	runRuleCases(t, mysqlBufferPoolHitRatio, []ruleCase{
		{name: "99.98% over the interval: silent", fires: false},
		{name: "80% with the data larger than the pool: evidence only", setup: func(s *collect.Snapshot) { bigData(s); missReads(s) }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantSeverity(t, fs, Warning)
				wantNoChange(t, fs)
				wantText(t, fs[0].Effect, "mysql-buffer-pool-size")
			}},
		{name: "80% with the data in the pool and no warm-up: load at startup", setup: func(s *collect.Snapshot) {
			missReads(s)
			setVar(s, "innodb_buffer_pool_load_at_startup", "OFF")
			setVar(s, "innodb_buffer_pool_dump_at_shutdown", "OFF")
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "innodb_buffer_pool_load_at_startup", "ON")
			wantChange(t, fs, "innodb_buffer_pool_dump_at_shutdown", "ON")
		}},
		{name: "too few read requests to judge: silent", setup: func(s *collect.Snapshot) {
			setDelta(s, "Innodb_buffer_pool_read_requests", 100)
			setDelta(s, "Innodb_buffer_pool_reads", 50)
		}, fires: false},
		{name: "one status reading: silent (no totals since start)", setup: func(s *collect.Snapshot) {
			missReads(s)
			s.MySQL.Status.Second = nil
			s.MySQL.Status.IntervalSeconds = 0
		}, fires: false},
	})
}

func TestMySQLBufferPoolInstances(t *testing.T) {
	big := func(s *collect.Snapshot) { setVar(s, "innodb_buffer_pool_size", fmt.Sprint(8*gib)) }
	runRuleCases(t, mysqlBufferPoolInstances, []ruleCase{
		{name: "MySQL 8.0, 8 GiB in one instance", on: "MySQL 8.0", setup: big, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "innodb_buffer_pool_instances", "8") }},
		{name: "MySQL 8.0, 128 MiB: silent", on: "MySQL 8.0", fires: false},
		{name: "MySQL 8.0, 8 instances: silent", on: "MySQL 8.0", setup: func(s *collect.Snapshot) { big(s); setVar(s, "innodb_buffer_pool_instances", "8") }, fires: false},
		{name: "MariaDB 10.11 has no such variable: silent", setup: big, fires: false},
		{name: "MariaDB 11.4 has no such variable: silent", on: "MariaDB 11.4", setup: big, fires: false},
	})
}

// budgetBreaker is a 4 GiB host with a 3 GiB pool, 1000 connections and
// 8 MiB sort and join buffers: the worst case is far beyond the RAM.
func budgetBreaker(s *collect.Snapshot) {
	s.Linux.Memory.TotalBytes = 4 * gib
	setVar(s, "innodb_buffer_pool_size", fmt.Sprint(3*gib))
	setVar(s, "max_connections", "1000")
	setVar(s, "sort_buffer_size", fmt.Sprint(8*mib))
	setVar(s, "join_buffer_size", fmt.Sprint(8*mib))
}

func TestMySQLMemoryBudget(t *testing.T) {
	runRuleCases(t, mysqlMemoryBudget, []ruleCase{
		{name: "fits: silent", fires: false},
		{name: "pool alone over the RAM: decrease the pool", setup: func(s *collect.Snapshot) {
			s.Linux.Memory.TotalBytes = 4 * gib
			setVar(s, "innodb_buffer_pool_size", fmt.Sprint(4*gib))
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Critical)
			ch := change(fs, "innodb_buffer_pool_size")
			if ch == nil || ch.Direction != Decrease {
				t.Fatalf("want a decrease:%s", describe(fs))
			}
			var v int64
			fmt.Sscan(ch.To, &v)
			// RAM 4 GiB - reserve 1 GiB - other buffers and sessions.
			if v <= 0 || v >= 3*gib || v%(128*mib) != 0 {
				t.Errorf("pool %s", fmtBytes(v))
			}
		}},
		{name: "sessions take it all: no pool decrease can fix it", setup: budgetBreaker, fires: true, check: func(t *testing.T, fs []Finding) {
			wantNoChange(t, fs)
			wantText(t, fs[0].Effect, "mysql-per-session-buffers")
		}},
		{name: "no RAM known: silent", setup: func(s *collect.Snapshot) { budgetBreaker(s); s.Linux = nil }, fires: false},
		{name: "explicit reserve counts", opt: Options{MemoryReserveBytes: 14 * gib}, setup: func(s *collect.Snapshot) {
			setVar(s, "innodb_buffer_pool_size", fmt.Sprint(2*gib))
		}, fires: true},
	})
}

func TestMySQLPerSessionBuffers(t *testing.T) {
	runRuleCases(t, mysqlPerSessionBuffers, []ruleCase{
		{name: "defaults: silent", fires: false},
		{name: "8 MiB sort and join buffers × 1000: back to the defaults", setup: budgetBreaker, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Critical)
			wantChange(t, fs, "sort_buffer_size", "2097152") // MariaDB's default
			wantChange(t, fs, "join_buffer_size", "262144")
			if fs[0].Change.Direction != Decrease {
				t.Error("a decrease")
			}
		}},
		{name: "MySQL's sort buffer default is 256 KiB", on: "MySQL 8.0", setup: budgetBreaker, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "sort_buffer_size", "262144") }},
		{name: "large buffers but few connections: silent", setup: func(s *collect.Snapshot) {
			setVar(s, "sort_buffer_size", fmt.Sprint(8*mib))
		}, fires: false},
		{name: "many connections at default buffers: not this rule", setup: func(s *collect.Snapshot) {
			s.Linux.Memory.TotalBytes = 4 * gib
			setVar(s, "max_connections", "5000")
		}, fires: false},
	})
}

func TestMySQLRedoLogCapacity(t *testing.T) {
	// 5 MiB/s on a server whose buffer pool (64 GiB) does not cap the
	// proposal.
	heavy := func(s *collect.Snapshot) {
		setDelta(s, "Innodb_os_log_written", 5*float64(mib)*fixInterval)
		setVar(s, "innodb_buffer_pool_size", fmt.Sprint(64*gib))
	}
	runRuleCases(t, mysqlRedoLogCapacity, []ruleCase{
		{name: "100 KiB/s fills 96 MiB in 16 min: info, 1 h is 352 MiB", fires: true, setup: func(s *collect.Snapshot) {
			setDelta(s, "Innodb_os_log_written", 100*1024*fixInterval)
		}, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "innodb_log_file_size", fmt.Sprint(roundUp(100*1024*3600, 64*mib)))
			wantSeverity(t, fs, Info)
		}},
		{name: "quiet: silent", setup: func(s *collect.Snapshot) { setDelta(s, "Innodb_os_log_written", 1000) }, fires: false},
		{name: "MariaDB 10.11: innodb_log_file_size, one file, online", setup: heavy, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "innodb_log_file_size", fmt.Sprint(roundUp(5*mib*3600, 64*mib)))
			wantSeverity(t, fs, Warning)
			if fs[0].Risk.Restart {
				t.Error("MariaDB 10.9+ resizes the redo log online")
			}
		}},
		{name: "MariaDB 10.6: innodb_log_file_size with a restart", on: "MariaDB 10.6", setup: heavy, fires: true, check: func(t *testing.T, fs []Finding) {
			if change(fs, "innodb_log_file_size") == nil || !fs[0].Risk.Restart {
				t.Errorf("%s", describe(fs))
			}
		}},
		{name: "MySQL 8.0.36: innodb_redo_log_capacity", on: "MySQL 8.0", setup: heavy, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "innodb_redo_log_capacity", fmt.Sprint(roundUp(5*mib*3600, 64*mib)))
			if change(fs, "innodb_log_file_size") != nil {
				t.Error("innodb_log_file_size is deprecated on 8.0.30+")
			}
		}},
		{name: "MySQL 8.0.28: innodb_log_file_size per file (2 files)", on: "MySQL 8.0.28", setup: heavy, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "innodb_log_file_size", fmt.Sprint(roundUp(roundUp(5*mib*3600, 64*mib)/2, mib)))
			if change(fs, "innodb_redo_log_capacity") != nil {
				t.Error("8.0.28 has no innodb_redo_log_capacity")
			}
		}},
		{name: "MySQL 8.4: innodb_redo_log_capacity", on: "MySQL 8.4", setup: heavy, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "innodb_redo_log_capacity", fmt.Sprint(roundUp(5*mib*3600, 64*mib)))
			}},
		{name: "huge write rate: capped at 32 GiB", setup: func(s *collect.Snapshot) {
			heavy(s)
			setDelta(s, "Innodb_os_log_written", 100*float64(mib)*fixInterval)
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "innodb_log_file_size", fmt.Sprint(32*gib)) }},
		// A bulk load during the interval (a pre-run /initialize) on the
		// 128 MiB default pool: an hour would be 18 GiB; 1 GiB is what a
		// small pool can use.
		{name: "5 MiB/s on a 128 MiB pool: capped at 1 GiB", setup: func(s *collect.Snapshot) {
			heavy(s)
			setVar(s, "innodb_buffer_pool_size", fmt.Sprint(128*mib))
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "innodb_log_file_size", fmt.Sprint(gib))
			wantText(t, fs[0].Effect, "an hour of writes at 5.0 MiB/s would be 17.6 GiB of redo")
		}},
		{name: "5 MiB/s on an 8 GiB pool: capped at the pool", setup: func(s *collect.Snapshot) {
			heavy(s)
			setVar(s, "innodb_buffer_pool_size", fmt.Sprint(8*gib))
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "innodb_log_file_size", fmt.Sprint(8*gib)) }},
		{name: "the redo already as large as the cap: silent", setup: func(s *collect.Snapshot) {
			heavy(s)
			setVar(s, "innodb_buffer_pool_size", fmt.Sprint(128*mib))
			setVar(s, "innodb_log_file_size", fmt.Sprint(gib))
			s.MySQL.InnoDB.RedoCapacityBytes = gib
		}, fires: false},
	})
}

func TestMySQLLogBuffer(t *testing.T) {
	runRuleCases(t, mysqlLogBuffer, []ruleCase{
		{name: "no waits: silent", fires: false},
		{name: "issue 17: 300 waits since start, none over the interval: said, as such", setup: func(s *collect.Snapshot) {
			s.MySQL.Status.First["Innodb_log_waits"], s.MySQL.Status.Second["Innodb_log_waits"] = "300", "300"
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Info)
			wantText(t, fs[0].Title, "300 times since the server started, none over the interval")
			wantChange(t, fs, "innodb_log_buffer_size", fmt.Sprint(64*mib))
		}},
		{name: "a few waits since start: silent", setup: func(s *collect.Snapshot) {
			s.MySQL.Status.First["Innodb_log_waits"], s.MySQL.Status.Second["Innodb_log_waits"] = "12", "12"
		}, fires: false},
		{name: "waits: 64 MiB", setup: func(s *collect.Snapshot) { setDelta(s, "Innodb_log_waits", 12) }, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "innodb_log_buffer_size", fmt.Sprint(64*mib))
			if !fs[0].Risk.Restart {
				t.Error("innodb_log_buffer_size is read-only on MariaDB 10.11")
			}
		}},
		{name: "MySQL 8.0: dynamic", on: "MySQL 8.0", setup: func(s *collect.Snapshot) { setDelta(s, "Innodb_log_waits", 12) }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				if fs[0].Risk.Restart {
					t.Error("dynamic since 8.0.11")
				}
			}},
		{name: "MySQL 8.4's 64 MiB default: doubled", on: "MySQL 8.4", setup: func(s *collect.Snapshot) { setDelta(s, "Innodb_log_waits", 1) }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "innodb_log_buffer_size", fmt.Sprint(128*mib)) }},
	})
}

// commitHeavy makes 500 redo fsyncs and commits per second.
func commitHeavy(s *collect.Snapshot) {
	setDelta(s, "Innodb_os_log_fsyncs", 500*fixInterval)
	setDelta(s, "Handler_commit", 500*fixInterval)
	setDelta(s, "Innodb_dblwr_pages_written", 800*fixInterval)
}

func TestMySQLFlushLogAtTrxCommit(t *testing.T) {
	runRuleCases(t, mysqlFlushLogAtTrxCommit, []ruleCase{
		{name: "quiet: silent", fires: false},
		{name: "commit-heavy without permission: the cost, no change", setup: commitHeavy, fires: true, check: func(t *testing.T, fs []Finding) {
			wantNoChange(t, fs)
			wantSeverity(t, fs, Info)
			wantText(t, fs[0].Risk.Note, "--allow-durability-loss")
			wantText(t, fs[0].Risk.Durability, "~1 s of commits")
		}},
		{name: "commit-heavy with permission: 2, cost stated", setup: commitHeavy, opt: Options{AllowDurabilityLoss: true}, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "innodb_flush_log_at_trx_commit", "2")
				wantText(t, fs[0].Risk.Durability, "up to ~1 s of commits")
				if fs[0].Risk.Restart {
					t.Error("dynamic")
				}
			}},
		{name: "fixed at 1 (the 2015 tpcc-mysql contest entry): never changed, even when allowed", setup: commitHeavy,
			opt:   Options{AllowDurabilityLoss: true, Fixed: map[string]string{"innodb-flush-log-at-trx-commit": "1"}},
			fires: true, check: func(t *testing.T, fs []Finding) {
				wantNoChange(t, fs)
				wantText(t, fs[0].Risk.Note, "fixed")
			}},
		{name: "already 2: the cost is stated", setup: func(s *collect.Snapshot) { setVar(s, "innodb_flush_log_at_trx_commit", "2") }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantNoChange(t, fs)
				wantText(t, fs[0].Risk.Durability, "OS crash or power loss")
			}},
		{name: "0: mysqld crash too", setup: func(s *collect.Snapshot) { setVar(s, "innodb_flush_log_at_trx_commit", "0") }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantText(t, fs[0].Risk.Durability, "crash of mysqld") }},
	})
}

func TestMySQLSyncBinlog(t *testing.T) {
	runRuleCases(t, mysqlSyncBinlog, []ruleCase{
		{name: "no binary log (MariaDB default): silent", setup: commitHeavy, fires: false},
		{name: "MySQL 8.0, binlog on, commit-heavy, allowed: 0", on: "MySQL 8.0", setup: commitHeavy, opt: Options{AllowDurabilityLoss: true}, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "sync_binlog", "0")
				wantText(t, fs[0].Risk.Durability, "binlog events")
			}},
		{name: "MySQL 8.0, not allowed: no change", on: "MySQL 8.0", setup: commitHeavy, fires: true,
			check: func(t *testing.T, fs []Finding) { wantNoChange(t, fs) }},
		{name: "MySQL 8.0, fixed: no change", on: "MySQL 8.0", setup: commitHeavy, opt: Options{AllowDurabilityLoss: true, Fixed: map[string]string{"sync_binlog": "1"}},
			fires: true, check: func(t *testing.T, fs []Finding) { wantNoChange(t, fs) }},
		{name: "MariaDB with binlog at its default 0: cost stated", setup: func(s *collect.Snapshot) { setVar(s, "log_bin", "ON") }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantNoChange(t, fs)
				wantText(t, fs[0].Risk.Durability, "with 0")
			}},
		{name: "MySQL 8.0 quiet: silent", on: "MySQL 8.0", fires: false},
	})
}

func TestMySQLDoublewrite(t *testing.T) {
	runRuleCases(t, mysqlDoublewrite, []ruleCase{
		{name: "quiet: silent", fires: false},
		{name: "write-heavy, not allowed: cost, no change", setup: commitHeavy, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantNoChange(t, fs)
				wantText(t, fs[0].Risk.Durability, "half-written")
			}},
		{name: "write-heavy, allowed: OFF with a restart", setup: commitHeavy, opt: Options{AllowDurabilityLoss: true}, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "innodb_doublewrite", "OFF")
				if !fs[0].Risk.Restart {
					t.Error("read-only")
				}
			}},
		{name: "fixed innodb_doublewrite=1 (the 2015 tpcc-mysql contest entry): never", setup: commitHeavy,
			opt: Options{AllowDurabilityLoss: true, Fixed: map[string]string{"innodb_doublewrite": "1"}}, fires: true,
			check: func(t *testing.T, fs []Finding) { wantNoChange(t, fs) }},
		{name: "off: cost stated", setup: func(s *collect.Snapshot) { setVar(s, "innodb_doublewrite", "OFF") }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantNoChange(t, fs) }},
		{name: "MySQL 8.0.30+ DETECT_ONLY counts as off", on: "MySQL 8.0", setup: func(s *collect.Snapshot) { setVar(s, "innodb_doublewrite", "DETECT_ONLY") }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantText(t, fs[0].Title, "off") }},
	})
}

func TestMySQLFlushMethod(t *testing.T) {
	bigPool := func(s *collect.Snapshot) { setVar(s, "innodb_buffer_pool_size", fmt.Sprint(10*gib)) }
	runRuleCases(t, mysqlFlushMethod, []ruleCase{
		{name: "MySQL 8.0 fsync, small pool: silent", on: "MySQL 8.0", fires: false},
		{name: "MySQL 8.0 fsync, 10 GiB pool of 16 GiB: O_DIRECT", on: "MySQL 8.0", setup: bigPool, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "innodb_flush_method", "O_DIRECT")
			wantSeverity(t, fs, Warning)
			if !fs[0].Risk.Restart {
				t.Error("read-only")
			}
		}},
		{name: "MySQL 8.4 default O_DIRECT: silent", on: "MySQL 8.4", setup: bigPool, fires: false},
		{name: "MariaDB 10.11 default O_DIRECT: silent", setup: bigPool, fires: false},
		{name: "MariaDB 10.11 with fsync", setup: func(s *collect.Snapshot) { bigPool(s); setVar(s, "innodb_flush_method", "fsync") }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "innodb_flush_method", "O_DIRECT") }},
		{name: "MariaDB 11.4: innodb_data_file_buffering, not the deprecated variable", on: "MariaDB 11.4", setup: func(s *collect.Snapshot) {
			bigPool(s)
			setVar(s, "innodb_data_file_buffering", "ON")
			setVar(s, "innodb_flush_method", "fsync")
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "innodb_data_file_buffering", "OFF")
			if change(fs, "innodb_flush_method") != nil || fs[0].Risk.Restart {
				t.Errorf("%s", describe(fs))
			}
		}},
	})
}

func TestMySQLIOCapacity(t *testing.T) {
	runRuleCases(t, mysqlIOCapacity, []ruleCase{
		{name: "no flushing trouble: silent", fires: false},
		{name: "waits for free pages at 200: 2000", setup: func(s *collect.Snapshot) { setDelta(s, "Innodb_buffer_pool_wait_free", 30) }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "innodb_io_capacity", "2000")
				wantChange(t, fs, "innodb_io_capacity_max", "4000")
			}},
		{name: "dirty pages near the maximum", setup: func(s *collect.Snapshot) { setGauge(s, "Innodb_buffer_pool_pages_dirty", 7800) }, fires: true},
		{name: "MySQL 8.4 at 10000: silent", on: "MySQL 8.4", setup: func(s *collect.Snapshot) { setDelta(s, "Innodb_buffer_pool_wait_free", 30) }, fires: false},
	})
}

func TestMySQLMaxConnections(t *testing.T) {
	runRuleCases(t, mysqlMaxConnections, []ruleCase{
		{name: "40 of 151: silent", fires: false},
		{name: "refused over the interval: critical increase", setup: func(s *collect.Snapshot) {
			setGauge(s, "Max_used_connections", 152)
			setDelta(s, "Connection_errors_max_connections", 30)
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Critical)
			wantChange(t, fs, "max_connections", "230")
		}},
		{name: "refused but the memory budget is over: memory first, no increase", setup: func(s *collect.Snapshot) {
			budgetBreaker(s)
			setGauge(s, "Max_used_connections", 1001)
			setDelta(s, "Connection_errors_max_connections", 30)
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Critical)
			wantNoChange(t, fs)
			wantText(t, fs[0].Effect, "free memory first")
		}},
		{name: "peak at 95%: warning increase", setup: func(s *collect.Snapshot) { setGauge(s, "Max_used_connections", 145) }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantSeverity(t, fs, Warning) }},
		{name: "5000 allowed, peak 100, big per-session buffers on 16 GiB: decrease", setup: func(s *collect.Snapshot) {
			setVar(s, "max_connections", "5000")
			setGauge(s, "Max_used_connections", 100)
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "max_connections", "200")
			if fs[0].Change.Direction != Decrease {
				t.Error("decrease")
			}
		}},
		{name: "same, but up for a day only: silent", setup: func(s *collect.Snapshot) {
			setVar(s, "max_connections", "5000")
			setGauge(s, "Max_used_connections", 100)
			setGauge(s, "Uptime", 86400)
		}, fires: false},
		{name: "1000 allowed, peak 100, memory no issue: silent", setup: func(s *collect.Snapshot) {
			setVar(s, "max_connections", "1000")
			setGauge(s, "Max_used_connections", 100)
		}, fires: false},
	})
}

func TestMySQLThreadCache(t *testing.T) {
	runRuleCases(t, mysqlThreadCache, []ruleCase{
		{name: "no threads created: silent", fires: false},
		{name: "MySQL 8.0 creates 50 threads/s with a cache of 9", on: "MySQL 8.0", setup: func(s *collect.Snapshot) {
			setDelta(s, "Threads_created", 500)
			setDelta(s, "Connections", 600)
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "thread_cache_size", "40") // the peak of 40
			wantSeverity(t, fs, Warning)
		}},
		{name: "cache already at the peak: silent", setup: func(s *collect.Snapshot) { setDelta(s, "Threads_created", 500) }, fires: false},
		{name: "thread pool ignores it: silent", on: "MySQL 8.0", setup: func(s *collect.Snapshot) {
			setDelta(s, "Threads_created", 500)
			setVar(s, "thread_handling", "pool-of-threads")
		}, fires: false},
	})
}

func TestMySQLAbortedConnects(t *testing.T) {
	runRuleCases(t, mysqlAbortedConnects, []ruleCase{
		{name: "none: silent", fires: false},
		{name: "access denied and handshakes: causes named, the smartphone game backend corrected", setup: func(s *collect.Snapshot) {
			setDelta(s, "Aborted_connects", 50)
			setDelta(s, "Access_denied_errors", 30)
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantNoChange(t, fs)
			wantSeverity(t, fs, Warning)
			wantText(t, fs[0].Effect, "30 × wrong user")
			wantText(t, fs[0].Effect, "20 × no counter")
			wantText(t, fs[0].Effect, "Neither thread_cache_size nor wait_timeout")
		}},
	})
}

func TestMySQLTableOpenCache(t *testing.T) {
	full := func(s *collect.Snapshot) {
		setDelta(s, "Opened_tables", 300)
		setGauge(s, "Open_tables", 2000)
	}
	runRuleCases(t, mysqlTableOpenCache, []ruleCase{
		{name: "cache not full: silent", setup: func(s *collect.Snapshot) { setDelta(s, "Opened_tables", 300) }, fires: false},
		{name: "full and reopening 30/s: double it", setup: full, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "table_open_cache", "4000")
				wantSeverity(t, fs, Warning)
			}},
		{name: "overflows count as full", setup: func(s *collect.Snapshot) {
			setDelta(s, "Opened_tables", 30)
			setDelta(s, "Table_open_cache_overflows", 10)
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantSeverity(t, fs, Info) }},
		{name: "full but no opens over the interval: silent", setup: func(s *collect.Snapshot) { setGauge(s, "Open_tables", 2000) }, fires: false},
	})
}

func TestMySQLTableOpenCacheInstances(t *testing.T) {
	runRuleCases(t, mysqlTableOpenCacheInstances, []ruleCase{
		{name: "MySQL default 16 on 8 cores, no overflows: silent", on: "MySQL 8.0", fires: false},
		{name: "16 on 8 cores with overflows (the smartphone game backend): 8", on: "MySQL 8.0", setup: func(s *collect.Snapshot) { setDelta(s, "Table_open_cache_overflows", 40) },
			fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "table_open_cache_instances", "8") }},
		{name: "MariaDB 8 on 8 cores: silent", setup: func(s *collect.Snapshot) { setDelta(s, "Table_open_cache_overflows", 40) }, fires: false},
	})
}

func TestMySQLTableDefinitionCache(t *testing.T) {
	runRuleCases(t, mysqlTableDefinitionCache, []ruleCase{
		{name: "quiet: silent", fires: false},
		{name: "MariaDB's 400 full, 20/s: 800", setup: func(s *collect.Snapshot) {
			setDelta(s, "Opened_table_definitions", 200)
			setGauge(s, "Open_table_definitions", 400)
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "table_definition_cache", "800") }},
	})
}

// diskTmp makes 60% of temporary tables go to disk, 6 per second.
func diskTmp(s *collect.Snapshot) {
	setDelta(s, "Created_tmp_tables", 100)
	setDelta(s, "Created_tmp_disk_tables", 60)
}

func TestMySQLTmpTableSize(t *testing.T) {
	runRuleCases(t, mysqlTmpTableSize, []ruleCase{
		{name: "none on disk: silent", fires: false},
		{name: "MariaDB at 16 MiB: both to 64 MiB", setup: diskTmp, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "tmp_table_size", fmt.Sprint(64*mib))
			wantChange(t, fs, "max_heap_table_size", fmt.Sprint(64*mib))
			wantSeverity(t, fs, Warning)
		}},
		{name: "16 KiB tmp_table_size: the smaller limit counts", setup: func(s *collect.Snapshot) {
			diskTmp(s)
			setVar(s, "tmp_table_size", "16384")
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantText(t, fs[0].Title, "16.0 KiB")
			wantChange(t, fs, "tmp_table_size", fmt.Sprint(64*mib))
		}},
		{name: "already 256 MiB: no size helps, find the queries", setup: func(s *collect.Snapshot) {
			diskTmp(s)
			setVar(s, "tmp_table_size", fmt.Sprint(256*mib))
			setVar(s, "max_heap_table_size", fmt.Sprint(256*mib))
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantNoChange(t, fs)
			wantText(t, fs[0].Effect, "stacktune digest")
		}},
		{name: "MySQL 8.0 TempTable: tmp_table_size, max_heap_table_size raised too", on: "MySQL 8.0", setup: diskTmp, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "tmp_table_size", fmt.Sprint(64*mib))
				wantText(t, fs[0].Risk.Memory, "temptable_max_ram")
			}},
		{name: "few and rare: silent", setup: func(s *collect.Snapshot) {
			setDelta(s, "Created_tmp_tables", 1000)
			setDelta(s, "Created_tmp_disk_tables", 6)
		}, fires: false},
		// Issue 17: on MariaDB 10.11 the disk temporary tables come from a
		// GROUP BY over a TEXT column, which no size keeps in memory.
		{name: "MariaDB 10.11, all from a TEXT column: no size change, the query", setup: both(diskTmp, notesText, withQueries(true,
			collect.QueryClass{Fingerprint: "select body, count(*) from shop.notes where author > ? group by body", Sample: "SELECT body, COUNT(*) FROM shop.notes WHERE author > 0 GROUP BY body", Count: 400, TmpTables: 400, TmpDiskTables: 400})),
			fires: true, check: func(t *testing.T, fs []Finding) {
				if change(fs, "tmp_table_size") != nil {
					t.Fatalf("a size change for TEXT temporary tables:%s", describe(fs))
				}
				wantText(t, fs[0].Title, "all of them holding TEXT or BLOB columns")
				wantText(t, fs[0].Change.From, "notes.body (text)")
				wantText(t, fs[0].Effect, "MariaDB's in-memory temporary tables cannot hold TEXT")
			}},
		{name: "MySQL 5.7 too", on: "MySQL 5.7", setup: both(diskTmp, notesText, withQueries(true,
			collect.QueryClass{Fingerprint: "select * from notes order by rand() limit ?", Sample: "SELECT * FROM notes ORDER BY RAND() LIMIT 5", Count: 100, TmpDiskTables: 100})),
			fires: true, check: func(t *testing.T, fs []Finding) {
				if change(fs, "tmp_table_size") != nil {
					t.Fatal("a size change")
				}
			}},
		{name: "MySQL 8.0's TempTable holds TEXT in memory: the size change stands", on: "MySQL 8.0", setup: both(diskTmp, notesText, withQueries(true,
			collect.QueryClass{Fingerprint: "select body, count(*) from shop.notes group by body", Sample: "SELECT body, COUNT(*) FROM shop.notes GROUP BY body", Count: 100, TmpDiskTables: 100})),
			fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "tmp_table_size", fmt.Sprint(64*mib)) }},
		{name: "some from TEXT, some not: the size change, with a note", setup: both(diskTmp, notesText, withQueries(true,
			collect.QueryClass{Fingerprint: "select body, count(*) from shop.notes group by body", Sample: "SELECT body, COUNT(*) FROM shop.notes GROUP BY body", Count: 100, TmpDiskTables: 100},
			collect.QueryClass{Fingerprint: "select author, count(*) from shop.notes group by author order by count(*)", Sample: "SELECT author, COUNT(*) FROM shop.notes GROUP BY author ORDER BY COUNT(*)", Count: 50, TmpDiskTables: 50})),
			fires: true, check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "tmp_table_size", fmt.Sprint(64*mib))
				wantText(t, fs[0].Risk.Note, "100 of the 150 disk temporary tables")
			}},
		{name: "no plans in the slow log, TEXT columns here: said how to tell", setup: both(diskTmp, notesText, withQueries(false)), fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "tmp_table_size", fmt.Sprint(64*mib))
				wantText(t, fs[0].Risk.Note, "log_slow_verbosity=query_plan")
			}},
	})
}

// notesText gives the server a TEXT column, shop.notes.body.
func notesText(s *collect.Snapshot) {
	s.MySQL.BlobColumns = []collect.BlobColumn{{Schema: "shop", Table: "notes", Column: "body", Type: "text"}}
}

// withQueries sets the queries layer: a slow log digest of the interval,
// with or without plans.
func withQueries(plans bool, classes ...collect.QueryClass) func(s *collect.Snapshot) {
	return func(s *collect.Snapshot) {
		q := collect.Queries{Source: "slowlog", Files: []string{"/var/log/mysql/slow.log"}, Window: "interval", Seconds: 10, PlanKnown: plans, Classes: classes}
		for i := range q.Classes {
			if !plans {
				q.Classes[i].TmpTables, q.Classes[i].TmpDiskTables = -1, -1
			}
			q.Events += q.Classes[i].Count
		}
		if err := s.SetLayer("queries", q); err != nil {
			panic(err)
		}
	}
}

func TestMySQLBulkInsert(t *testing.T) {
	single := collect.QueryClass{Fingerprint: "insert into order_items (order_id, item_id, qty) values(?+)",
		Sample: "INSERT INTO order_items (order_id, item_id, qty) VALUES (7, 'it(e)m, 1', 2)", Count: 3000, TimeTotal: 1.5, RowsAffected: 3000}
	multi := single
	multi.Sample = "INSERT INTO order_items (order_id, item_id, qty) VALUES (7, 1, 2), (7, 2, 1)"
	requests := func(n int64) func(s *collect.Snapshot) {
		return withHTTPLog(collect.HTTPLog{Requests: n, Timed: n, TimeTotal: 10, Seconds: 10})
	}
	runRuleCases(t, mysqlBulkInsert, []ruleCase{
		{name: "no digest: silent", fires: false},
		{name: "the smartphone game backend: 10 single-row inserts per request", setup: both(withQueries(false, single), requests(300)), fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Warning)
			wantText(t, fs[0].Title, "INSERT inserts into order_items one row at a time, 10 times per request")
			wantText(t, fs[0].Change.To, "sorted by the table's primary (or unique) key")
		}},
		{name: "already multi-row: silent", setup: both(withQueries(false, multi), requests(300)), fires: false},
		{name: "one per request: silent", setup: both(withQueries(false, single), requests(3000)), fires: false},
		{name: "no access log, a steady stream: information", setup: withQueries(false, single), fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Info)
			wantText(t, fs[0].Title, "300 times a second")
		}},
		{name: "INSERT ... SELECT: silent", setup: both(withQueries(false, collect.QueryClass{Fingerprint: "insert into t select * from u", Sample: "INSERT INTO t SELECT * FROM u", Count: 3000}), requests(10)), fires: false},
	})
}

func TestValueTuples(t *testing.T) {
	for in, want := range map[string]int{
		"INSERT INTO t (a) VALUES (1)":                                 1,
		`insert into t values (1, 'a)b'), (2, "c(")`:                   2,
		"INSERT INTO t (a) VALUE (1)":                                  0,
		"INSERT INTO t SET a = 1":                                      0,
		"INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a=(a+1)": 1,
		"INSERT INTO t (`values`) VALUES ((1)), ((2))":                 2,
		`INSERT INTO t VALUES (1, 'it\'s')`:                            1,
	} {
		if got := valueTuples(in); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}

func TestMySQLBinlogCache(t *testing.T) {
	spill := func(s *collect.Snapshot) {
		setDelta(s, "Binlog_cache_use", 1000)
		setDelta(s, "Binlog_cache_disk_use", 50)
	}
	runRuleCases(t, mysqlBinlogCache, []ruleCase{
		{name: "no binlog: silent", setup: spill, fires: false},
		{name: "MySQL 8.0 spilling 5%: 32 KiB → 128 KiB (the smartphone game backend)", on: "MySQL 8.0", setup: spill, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "binlog_cache_size", fmt.Sprint(128*kib)) }},
		{name: "MySQL 8.0 no spills: silent", on: "MySQL 8.0", fires: false},
	})
}

// timeWaitPlan is the TIME_WAIT write-up's plan (100 servers × 255 workers) with a table
// cache.
func timeWaitPlan(tableOpenCache int) capacity.Options {
	o := capacity.DefaultOptions()
	o.Rate, o.Servers, o.Workers, o.ResponseTime, o.TableOpenCache = 90000, 100, 255, 10*time.Millisecond, tableOpenCache
	return o
}

func TestMySQLOpenFilesLimit(t *testing.T) {
	runRuleCases(t, mysqlOpenFilesLimit, []ruleCase{
		{name: "enough: silent", fires: false},
		{name: "the PHP + MySQL TIME_WAIT write-up: 25500 connections with a 5000 limit: 4849 + 25500 = 30349, as plan says", on: "MySQL 5.7", setup: func(s *collect.Snapshot) {
			setVar(s, "max_connections", "25500")
			setVar(s, "open_files_limit", "5000")
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			// Not 5 × 25500 = 127,500: that is mysqld's request, not its need.
			wantChange(t, fs, "open_files_limit", "30349")
			plan, err := capacity.Compute(timeWaitPlan(2000))
			if err != nil {
				t.Fatal(err)
			}
			if got := plan.Result(capacity.IDOpenFilesLimit).Value; got != 30349 {
				t.Errorf("plan says %v", got)
			}
			if !fs[0].Risk.Restart {
				t.Error("read-only")
			}
		}},
		{name: "MySQL 8.0's table cache of 4000 needs 8010 besides connections, in the audit and in plan", on: "MySQL 8.0", setup: func(s *collect.Snapshot) {
			setVar(s, "max_connections", "25500")
			setVar(s, "open_files_limit", "5000")
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "open_files_limit", "33510")
			plan, _ := capacity.Compute(timeWaitPlan(4000))
			if got := plan.Result(capacity.IDOpenFilesLimit).Value; got != 33510 {
				t.Errorf("plan says %v", got)
			}
		}},
		{name: "a limit that covers the settings but not 5 × connections: silent", on: "MySQL 5.7", setup: func(s *collect.Snapshot) {
			setVar(s, "max_connections", "25500")
			setVar(s, "open_files_limit", "30349")
		}, fires: false},
		{name: "files open near the limit: critical", setup: func(s *collect.Snapshot) { setGauge(s, "Open_files", 32000) }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantSeverity(t, fs, Critical)
				wantChange(t, fs, "open_files_limit", "64000")
			}},
	})
}

func TestMySQLQueryCache(t *testing.T) {
	on := func(s *collect.Snapshot) {
		setVar(s, "query_cache_type", "ON")
		setVar(s, "query_cache_size", fmt.Sprint(64*mib))
		setDelta(s, "Qcache_hits", 100)
		setDelta(s, "Qcache_inserts", 900)
	}
	runRuleCases(t, mysqlQueryCache, []ruleCase{
		{name: "MariaDB default (OFF, 1 MiB): silent", fires: false},
		{name: "MariaDB with the cache on: disable", setup: on, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "query_cache_type", "OFF")
			wantChange(t, fs, "query_cache_size", "0")
			if fs[0].Change.Direction != Decrease {
				t.Error("decrease")
			}
		}},
		{name: "MySQL 5.7 with the cache on", on: "MySQL 5.7", setup: on, fires: true},
		{name: "MySQL 8.0 has no query cache: never", on: "MySQL 8.0", setup: func(s *collect.Snapshot) {
			setDelta(s, "Qcache_hits", 100)
		}, fires: false},
		{name: "read-mostly hits: info", setup: func(s *collect.Snapshot) { on(s); setDelta(s, "Qcache_hits", 90000) }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantSeverity(t, fs, Info) }},
	})
}

func TestMySQLPerformanceSchema(t *testing.T) {
	off := false
	runRuleCases(t, mysqlPerformanceSchema, []ruleCase{
		{name: "MariaDB default off, not asked: says so, proposes nothing (--emit must not write it)", fires: true, check: func(t *testing.T, fs []Finding) {
			wantNoChange(t, fs)
			wantText(t, fs[0].Risk.Note, "--observability")
		}},
		{name: "MariaDB default off, asked: enable, restart", opt: Options{Observability: true}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "performance_schema", "ON")
			if !fs[0].Risk.Restart {
				t.Error("restart")
			}
		}},
		{name: "MySQL default on: silent", on: "MySQL 8.0", fires: false},
		{name: "on, digest consumer off: the consumer option", on: "MySQL 8.0", opt: Options{Observability: true}, setup: func(s *collect.Snapshot) {
			s.MySQL.PerformanceSchema.StatementsDigest = &off
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			ch := change(fs, "performance-schema-consumer-statements-digest")
			if ch == nil || ch.Kind != changeset.MySQLOption || !strings.Contains(ch.Apply, "setup_consumers") {
				t.Fatalf("%+v", ch)
			}
		}},
	})
}

func TestMySQLSlowLog(t *testing.T) {
	runRuleCases(t, mysqlSlowLog, []ruleCase{
		{name: "off, not asked: nothing proposed", fires: true, check: func(t *testing.T, fs []Finding) { wantNoChange(t, fs) }},
		{name: "off: on, 0.1 s", opt: Options{Observability: true}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "slow_query_log", "ON")
			wantChange(t, fs, "long_query_time", "0.1")
		}},
		{name: "on at 10 s: 0.1 s", opt: Options{Observability: true}, setup: func(s *collect.Snapshot) { setVar(s, "slow_query_log", "ON") }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "long_query_time", "0.1") }},
		{name: "on at 0.5 s: silent", setup: func(s *collect.Snapshot) {
			setVar(s, "slow_query_log", "ON")
			setVar(s, "long_query_time", "0.500000")
		}, fires: false},
	})
}

func TestFixedSettings(t *testing.T) {
	runRuleCases(t, fixedSettings, []ruleCase{
		{name: "in force: silent", opt: Options{Fixed: map[string]string{"innodb_doublewrite": "1", "innodb_flush_log_at_trx_commit": "1"}}, fires: false},
		{name: "broken: critical, set back", opt: Options{Fixed: map[string]string{"innodb_flush_log_at_trx_commit": "1"}},
			setup: func(s *collect.Snapshot) { setVar(s, "innodb_flush_log_at_trx_commit", "2") }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantSeverity(t, fs, Critical)
				wantChange(t, fs, "innodb_flush_log_at_trx_commit", "1")
			}},
		{name: "a renamed variable under its other name", opt: Options{Fixed: map[string]string{"transaction-isolation": "READ-COMMITTED"}}, fires: true,
			check: func(t *testing.T, fs []Finding) {
				ch := change(fs, "tx_isolation")
				if ch == nil || ch.Option != "transaction_isolation" {
					t.Fatalf("MariaDB 10.11's variable is tx_isolation, its my.cnf option transaction-isolation: %+v", ch)
				}
			}},
		{name: "a sysctl", opt: Options{Fixed: map[string]string{"vm.swappiness": "1"}}, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "vm.swappiness", "1") }},
		// MariaDB rounds tmp_table_size down to a multiple of 16384: the
		// 1024 fixed is held as 0 (the rules as collect reads them from
		// a real MariaDB 10.11, TestMySQLSandbox).
		{name: "rounded by the server: in force, said how, no change", opt: Options{Fixed: map[string]string{"tmp_table_size": "1024"}},
			setup: func(s *collect.Snapshot) { setVar(s, "tmp_table_size", "0"); mariadbRules(s) }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantSeverity(t, fs, Info)
				wantNoChange(t, fs)
				wantText(t, fs[0].Title, "in force as the server holds it: 0")
				wantText(t, fs[0].Evidence[2].Value, "rounds it down to 0, a multiple of 16384")
			}},
		{name: "clamped to the server's least value: in force as it", opt: Options{Fixed: map[string]string{"max_heap_table_size": "1000"}},
			setup: func(s *collect.Snapshot) { setVar(s, "max_heap_table_size", "16384"); mariadbRules(s) }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantSeverity(t, fs, Info)
				wantText(t, fs[0].Title, "as the server holds it: 16384")
			}},
		{name: "rounded value that differs from the running one: critical", opt: Options{Fixed: map[string]string{"tmp_table_size": "40000"}},
			setup: func(s *collect.Snapshot) { setVar(s, "tmp_table_size", "16384"); mariadbRules(s) }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				// 40000 is held as 32768, and 16384 runs.
				wantSeverity(t, fs, Critical)
				wantChange(t, fs, "tmp_table_size", "40000")
			}},
		{name: "no published rules (MySQL): compared as written", on: "MySQL 8.0", opt: Options{Fixed: map[string]string{"tmp_table_size": "1024"}},
			setup: func(s *collect.Snapshot) { setVar(s, "tmp_table_size", "1024") }, fires: false},
	})
}

// mariadbRules gives the snapshot MariaDB 10.11's published rules of two
// variables.
func mariadbRules(s *collect.Snapshot) {
	s.MySQL.VariableRules = map[string]collect.VariableRule{
		"tmp_table_size":      {Type: "BIGINT UNSIGNED", Min: "0", Max: "18446744073709551615", Block: 16384, Exact: true},
		"max_heap_table_size": {Type: "BIGINT UNSIGNED", Min: "16384", Max: "18446744073709551615", Block: 1024, Exact: true},
	}
}

// TestFixedUnknown: a fixed setting the snapshot does not show is named
// in NotSeen.
func TestFixedUnknown(t *testing.T) {
	res := Audit(snapFor(servers[5]), Options{Fixed: map[string]string{"innodb_support_xa": "0"}})
	found := false
	for _, n := range res.NotSeen {
		found = found || strings.Contains(n, "innodb_support_xa")
	}
	if !found {
		t.Errorf("NotSeen: %q", res.NotSeen)
	}
}

// TestRemoteDatabase: MySQL audited over the network from a web host (no
// mysqld there): its buffers are not weighed against the web host's RAM.
func TestRemoteDatabase(t *testing.T) {
	s := snapFor(servers[5])
	budgetBreaker(s)
	s.Linux.Processes = nil
	res := Audit(s, Options{DedicatedDB: true})
	for _, f := range res.Findings {
		if f.ID == "mysql-memory-budget" || f.ID == "mysql-per-session-buffers" {
			t.Errorf("%s judged against another host's RAM", f.ID)
		}
	}
	if !strings.Contains(strings.Join(res.NotSeen, "\n"), "database host's RAM is unknown") {
		t.Errorf("NotSeen: %q", res.NotSeen)
	}
}

func TestMySQLUnixSocket(t *testing.T) {
	local := func(in, out int) func(s *collect.Snapshot) {
		return func(s *collect.Snapshot) {
			setVar(s, "port", "3306")
			setVar(s, "socket", "/run/mysqld/mysqld.sock")
			s.Linux.TCP.Established.ByLocalPort[3306] = in
			s.Linux.TCP.Established.ByRemotePort[3306] = out
		}
	}
	runRuleCases(t, mysqlUnixSocket, []ruleCase{
		{name: "no TCP clients: silent", setup: local(0, 0), fires: false},
		{name: "remote clients only: silent", setup: local(40, 0), fires: false},
		{name: "this host's app over loopback TCP (the ISUCON5 qualifier write-up): the socket", setup: local(12, 12), fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "address", "unix(/run/mysqld/mysqld.sock)")
				wantText(t, fs[0].Title, "12 connections")
			}},
		{name: "local and remote clients: the local ones counted", setup: local(50, 8), fires: true,
			check: func(t *testing.T, fs []Finding) { wantText(t, fs[0].Title, "8 connections") }},
		// The PHP + MySQL TIME_WAIT write-up on one host: PHP connects per request and closes, so
		// nothing stays ESTABLISHED at the moment of the snapshot, but
		// 14,021 TIME_WAIT toward :3306 from this host, where MySQL
		// listens.
		{name: "per-request connections closed before the snapshot: TIME_WAIT and the rate", setup: func(s *collect.Snapshot) {
			local(0, 0)(s)
			s.Linux.TCP.TimeWait.ByRemotePort[3306] = 14021
			setDelta(s, "Connections", 2330)
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Warning)
			wantText(t, fs[0].Title, "14021 TIME_WAIT in the last minute (233.7/s)")
			wantChange(t, fs, "address", "unix(/run/mysqld/mysqld.sock)")
		}},
		{name: "TIME_WAIT toward :3306 but no MySQL listening here (a remote server): silent", setup: func(s *collect.Snapshot) {
			local(0, 0)(s)
			s.Linux.TCP.Listen = nil
			s.Linux.TCP.TimeWait.ByRemotePort[3306] = 14021
		}, fires: false},
	})
}

func TestConnectionChurn(t *testing.T) {
	runRuleCases(t, connectionChurn, []ruleCase{
		{name: "a pool: 20 connections in 10 s, no TIME_WAIT: silent", fires: false},
		{name: "2/s with 30 TIME_WAIT (monitoring, cron): silent", setup: func(s *collect.Snapshot) { s.Linux.TCP.TimeWait.ByRemotePort[3306] = 30 }, fires: false},
		{name: "the PHP + MySQL TIME_WAIT write-up: 14,021 TIME_WAIT to :3306 (233/s), both sides counted", setup: func(s *collect.Snapshot) {
			s.Linux.TCP.TimeWait.ByRemotePort[3306] = 14000
			s.Linux.TCP.TimeWait.ByLocalPort[3306] = 21
			setDelta(s, "Connections", 2330)
			setDelta(s, "Questions", 11650)
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Warning)
			if fs[0].Layer != LayerMySQL {
				t.Errorf("layer %s", fs[0].Layer)
			}
			wantText(t, fs[0].Title, "about 233.7 new connections a second to MySQL")
			wantText(t, fs[0].Change.To, "SetMaxIdleConns")
			wantText(t, fs[0].Change.To, "unix socket") // MySQL listens here
			var got []string
			for _, e := range fs[0].Evidence {
				got = append(got, e.String())
			}
			for _, w := range []string{"Connections: 2330 (233/s)", "toward port 3306 (this host's clients closed first): 14000", "on port 3306 (the server here closed first): 21", "statements per connection: 5"} {
				if !strings.Contains(strings.Join(got, "\n"), w) {
					t.Errorf("no %q in %q", w, got)
				}
			}
		}},
		{name: "a Go app with the default idle pool: Connections 4/s, no TIME_WAIT here (another host)", setup: func(s *collect.Snapshot) {
			setDelta(s, "Connections", 40)
			s.Linux.TCP.Listen = nil
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Info)
			wantText(t, fs[0].Title, "about 4 new connections")
			if strings.Contains(fs[0].Change.To, "unix socket") {
				t.Error("a unix socket for a remote server")
			}
		}},
		{name: "a web host: TIME_WAIT toward a remote memcached, not collected", setup: func(s *collect.Snapshot) {
			s.MySQL = nil
			s.Linux.TCP.TimeWait.ByRemotePort[11211] = 600
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			if fs[0].Layer != LayerMemcached {
				t.Errorf("layer %s", fs[0].Layer)
			}
			wantText(t, fs[0].Change.To, "binary protocol")
			wantText(t, fs[0].Risk.Note, "from TIME_WAIT only")
		}},
		{name: "memcached's total_connections over the interval", snap: cacheSnap, setup: func(s *collect.Snapshot) {
			s.Memcached.Interval = &collect.CounterInterval{Seconds: 10, Deltas: map[string]float64{"total_connections": 1200, "cmd_get": 5000}}
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantText(t, fs[0].Title, "about 120 new connections a second to memcached")
		}},
	})
}
