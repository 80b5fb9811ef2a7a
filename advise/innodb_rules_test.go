package advise

import (
	"testing"

	"github.com/stacktune/stacktune/collect"
)

func TestMySQLMaxDirtyPages(t *testing.T) {
	writes := func(s *collect.Snapshot) { setDelta(s, "Innodb_buffer_pool_pages_flushed", 5000) }
	runRuleCases(t, mysqlMaxDirtyPages, []ruleCase{
		{name: "MariaDB's 90: silent", setup: writes, fires: false},
		{name: "MySQL 5.7's 75 on a write-heavy server: 90", on: "MySQL 5.7", setup: writes, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "innodb_max_dirty_pages_pct", "90") }},
		{name: "MySQL 5.7, few writes: silent", on: "MySQL 5.7", setup: func(s *collect.Snapshot) { setDelta(s, "Innodb_buffer_pool_pages_flushed", 10) }, fires: false},
	})
}

func TestMySQLLRUScanDepth(t *testing.T) {
	runRuleCases(t, mysqlLRUScanDepth, []ruleCase{
		{name: "no free-page waits: silent", fires: false},
		{name: "waits for a free page: deeper scans", setup: func(s *collect.Snapshot) { setDelta(s, "Innodb_buffer_pool_wait_free", 42) }, fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantSeverity(t, fs, Warning)
				wantChange(t, fs, "innodb_lru_scan_depth", "3072") // MariaDB's 1536 doubled
			}},
		{name: "MySQL: 1024 → 2048", on: "MySQL 8.0", setup: func(s *collect.Snapshot) { setDelta(s, "Innodb_buffer_pool_wait_free", 3) }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "innodb_lru_scan_depth", "2048") }},
	})
}

func TestMySQLAutoincLockMode(t *testing.T) {
	inserts := func(s *collect.Snapshot) { setDelta(s, "Com_insert", 3000) }
	runRuleCases(t, mysqlAutoincLockMode, []ruleCase{
		{name: "MariaDB mode 1, few inserts: silent", fires: false},
		{name: "MariaDB mode 1, 300 inserts a second, no binary log: mode 2", setup: inserts, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "innodb_autoinc_lock_mode", "2")
			if change(fs, "binlog_format") != nil || !fs[0].Risk.Restart {
				t.Errorf("%s", describe(fs))
			}
		}},
		{name: "with a MIXED binary log: ROW with it", setup: both(inserts, func(s *collect.Snapshot) { setVar(s, "log_bin", "ON") }), fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "binlog_format", "ROW") }},
		{name: "MySQL 8.0's mode 2: silent", on: "MySQL 8.0", setup: inserts, fires: false},
	})
}

func TestMySQLIsolation(t *testing.T) {
	waits := func(s *collect.Snapshot) { setDelta(s, "Innodb_row_lock_waits", 150) }
	runRuleCases(t, mysqlIsolation, []ruleCase{
		{name: "no lock waits: silent", fires: false},
		{name: "MariaDB 10.11: tx_isolation, written as transaction-isolation, the trade-off stated", setup: waits, fires: true, check: func(t *testing.T, fs []Finding) {
			ch := change(fs, "tx_isolation")
			if ch == nil || ch.To != "READ-COMMITTED" || ch.Option != "transaction_isolation" {
				t.Fatalf("%s", describe(fs))
			}
			wantText(t, fs[0].Risk.Note, "non-repeatable reads")
		}},
		{name: "MySQL 8.0 with a ROW binary log: transaction_isolation alone", on: "MySQL 8.0", setup: waits, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "transaction_isolation", "READ-COMMITTED")
			if change(fs, "binlog_format") != nil {
				t.Error("ROW already")
			}
		}},
		{name: "deadlocks alone (MariaDB counts them)", setup: func(s *collect.Snapshot) { setDelta(s, "Innodb_deadlocks", 3) }, fires: true},
		{name: "READ-COMMITTED already: silent", setup: both(waits, func(s *collect.Snapshot) { setVar(s, "tx_isolation", "READ-COMMITTED") }), fires: false},
		{name: "fixed by the user: the trade-off stated, nothing changed", setup: waits, opt: Options{Fixed: map[string]string{"transaction_isolation": "REPEATABLE-READ"}}, fires: true,
			check: func(t *testing.T, fs []Finding) { wantNoChange(t, fs) }},
	})
}

func TestMySQLBinlogFormat(t *testing.T) {
	runRuleCases(t, mysqlBinlogFormat, []ruleCase{
		{name: "no binary log: silent", fires: false},
		{name: "MariaDB's MIXED binary log: ROW", setup: func(s *collect.Snapshot) { setVar(s, "log_bin", "ON") }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "binlog_format", "ROW") }},
		{name: "MySQL 8.0's ROW: silent", on: "MySQL 8.0", fires: false},
	})
}
