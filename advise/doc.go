// Package advise is stacktune's audit: rules that read a collect.Snapshot
// and say what to change, each with the evidence behind it, the change as
// a typed setting, its expected effect, its risk and where the rule comes
// from. `stacktune audit` calls Audit and, with --emit DIR, Emit; package
// report renders the Result.
//
// # Design
//
//	collect.Snapshot ─▶ Context ─▶ every Rule.Check ─▶ []Finding ─▶ enforce ─▶ sort ─▶ resolve ─▶ Result
//	                   (helpers)   (one file each)                  (Fixed,    (severity,  (one value   └▶ Emit(dir)
//	                                                                 variables) id, title)  per setting)
//
// A Rule has an id, a layer and a Check that returns nothing when its
// evidence is missing or fine. Checks read the snapshot through Context,
// which encodes the audit's principles so a rule cannot forget them:
//
//   - Running values, not files: Var and Int read SHOW GLOBAL VARIABLES
//     (the smartphone game backend's RDS buffer pool was 6 GB of 30 GB though the parameter
//     group said 3/4 of RAM).
//   - Rates over the collector's interval, never totals since start when
//     a delta exists: Delta and Rate are empty without two status readings,
//     and the rules then stay silent (NotSeen says so). memcached is read
//     at the run's start and end, so its rules judge the interval too;
//     Redis (read once) and older snapshots fall back to averages since
//     start and say so in each Evidence.Source. A layer that was idle
//     during the interval (MySQL: under one client statement a second;
//     the host: CPUs under 2% busy; memcached: under one get or set a
//     second) is said to be, in NotSeen, with the rules that read its
//     rates (Context records which rule read which layer's rates), so
//     their silence is not taken for health.
//   - Names as the server spells them: Var resolves renames
//     (transaction_isolation is tx_isolation on MariaDB before 11.1),
//     MySQLChange writes the my.cnf option name when it differs
//     (Change.Option), Restart knows which variables SET GLOBAL changes.
//     A rule proposes only variables the server has (Has), and Audit drops
//     any change of a variable the server lacks as a last safety net.
//   - The memory budget: buffer pool + other global buffers +
//     per-connection buffers × max_connections + the other services' RSS +
//     an OS reserve (Options.MemoryReserveBytes, default max(1 GiB,
//     10% of RAM)) must fit the RAM. Budget computes it once; the buffer
//     pool is only raised within it, and mysql-memory-budget,
//     mysql-per-session-buffers and mysql-max-connections say decrease
//     when it does not fit.
//   - Durability: innodb_flush_log_at_trx_commit, sync_binlog and
//     innodb_doublewrite are relaxed only with Options.AllowDurabilityLoss,
//     always with Risk.Durability saying what a crash loses ("up to ~1 s
//     of commits"); without it the finding states the cost and proposes
//     nothing, and an already relaxed setting is reported with its cost.
//   - Fixed settings (Options.Fixed, --fix innodb_doublewrite=1, the
//     rules of the 2015 tpcc-mysql contest) are never changed: Audit removes any change to
//     them (under any of their names) unless it restores the fixed value,
//     and the fixed-settings rule reports a fixed value that is not in
//     force, compared after the server's own rounding (collect's
//     VariableRules: MariaDB holds tmp_table_size=1024 as 0).
//   - Observability: changes that add measurement at a cost in speed and
//     memory (performance_schema, the slow log) are proposed only with
//     Options.Observability; without it the finding says what is missing.
//   - Layers without a typed Snapshot field (php_fpm, http_log, queries)
//     are read once into Context (PHPFPM, HTTPLog, Queries) with LayerOf;
//     a rule that needs one is silent without it.
//
// After the rules run, Audit sorts the findings (critical, warning, info,
// then id) and, when two findings set one setting to different values,
// keeps the most severe one's and notes the other. Change.Apply says how
// to apply a change now (SET GLOBAL for dynamic variables, sysctl -w,
// nginx -s reload, systemctl restart).
//
// Bad input: Audit runs on whatever was collected. A nil layer, a
// collector's error or a missing part (Missing in the MySQL and Linux
// layers) is listed in Result.NotSeen; a rule that panics on a snapshot it
// did not expect is reported there too, and the others still run.
//
// # Emit
//
// Emit writes ready files under a directory, every setting preceded by
// "# <finding id>: <title>" (and its durability cost when it has one):
//
//	mysql/99-stacktune.cnf                   [mysqld] variables and options, under their my.cnf names
//	sysctl/99-stacktune.conf                 for /etc/sysctl.d
//	nginx/stacktune.conf                     a snippet: each directive under the context it goes in
//	systemd/<unit>.d/stacktune.conf          [Service] LimitNOFILE= (mariadb.service, mysqld.service, nginx.service)
//	memcached/options                        flags, one per line as /etc/memcached.conf takes them
//	redis/stacktune.conf                     redis.conf settings
//	php-fpm/stacktune.conf                   PHP-FPM pool settings under each pool's [name]
//	fstab/stacktune                          mount options (noatime), for /etc/fstab
//
// It writes all of them or none: they are staged in a directory inside the
// target, renamed into place, and on any failure the renamed files are
// removed, the files they replaced put back and the directories Emit made
// removed. Changes of kind ddl and code are for people, not files.
//
// # Where a new rule goes
//
// One file per rule, named by its id (mysql-tmp-table-size is
// mysql_tmp_table_size.go), declaring a ruleFunc with the id, the layer and
// the check, and a line in Rules (rules.go). The finding gives Evidence
// with units and how it was measured (StatusSource, srcVariables,
// sysctlSource, a nginx.conf place), Change built with MySQLChange,
// SysctlChange or nginxChange (Also for changes that go with it), Effect,
// Risk (Restart from Context.Restart for MySQL) and Source: the public
// write-up ("the smartphone game backend's write-up") or the manual it
// comes from; say where a write-up is wrong (mysql-aborted-connects,
// linux-fin-timeout correct the smartphone game backend). Its tests
// are named table cases in the layer's _test.go (runRuleCases: fires on
// evidence, silent otherwise, per flavour and version, with Fixed and
// AllowDurabilityLoss); TestNoVariableTheServerLacks sweeps every rule over
// every version. A rule that proposes a MySQL variable needs its row in
// the version table.
//
// # The version table
//
// versions.go lists, per variable a rule reads or proposes, the MySQL and
// MariaDB versions that have it, those where SET GLOBAL changes it, and
// its my.cnf spelling when that differs. Facts and their sources, each on
// its row: the MySQL 5.7, 8.0 and 8.4 Reference Manuals (system variable
// pages with their "Introduced/Deprecated/Removed" notes, "Changes in
// MySQL 8.0", "What Is New in MySQL 8.4"), the MariaDB Knowledge Base
// (system variable pages, "System Variables Added in MariaDB 11.0/11.1",
// "InnoDB Flush Method"), and MariaDB 10.11.19 as installed here
// (`mariadbd --verbose --help` and a throwaway server). Among them:
// innodb_support_xa removed in MySQL 8.0 and MariaDB 10.3; the query cache
// removed in MySQL 8.0.3 (still in MariaDB, off since 10.1.7);
// tx_isolation → transaction_isolation (MySQL 5.7.20 added, 8.0.3
// removed tx_isolation; MariaDB added transaction_isolation in 11.1.1;
// the option transaction-isolation everywhere); innodb_log_file_size ×
// innodb_log_files_in_group → innodb_redo_log_capacity in MySQL 8.0.30;
// innodb_log_files_in_group and innodb_buffer_pool_instances removed in
// MariaDB 10.6; innodb_log_file_size resizable online since MariaDB 10.9;
// innodb_flush_method defaults to O_DIRECT in MariaDB 10.6 and MySQL 8.4,
// deprecated in MariaDB 11.0 for innodb_data_file_buffering;
// innodb_flush_neighbors 0 by default since MySQL 8.0.3; innodb_io_capacity
// 10000 by default in MySQL 8.4. TestVersionTableMatchesMariaDB compares
// every row with the MariaDB installed here on each run (presence, and
// whether SET GLOBAL to its own value succeeds).
//
// # Against MySQLTuner
//
// TestMySQLTunerComparison runs MySQLTuner 1.9.9 on the end-to-end test's
// server and maps each of its recommendations to stacktune's: the same
// change (tmp_table_size and max_heap_table_size, innodb_buffer_pool_size,
// performance_schema), or a reason to reject it (innodb_log_file_size as
// 25% of the buffer pool; warnings from totals since start; version
// support; the error log stacktune does not read). An unexplained one, on
// either side, fails the test. Two findings about MySQLTuner itself are
// recorded there: its --socket is overridden by the -P it always passes
// (MariaDB 10.11's client, given a port, ignores the socket and uses TCP
// to port 3306, another server), and it
// divides by innodb_buffer_pool_chunk_size, which MariaDB 10.11 reports as
// 0, dying before any recommendation.
package advise
