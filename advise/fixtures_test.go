package advise

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/mysqlvar"
)

// Test fixtures: snapshots of a quiet, healthy host for each flavour and
// version the rules know, which a case then makes bad in one respect.
// The MySQL variables are the defaults of that version (MySQL 5.7, 8.0 and
// 8.4 Reference Manuals; MariaDB KB; MariaDB 10.11 checked against the
// server installed here), and exist only where versionTable says the
// version has them.

// server is a flavour and version under test.
type server struct {
	name, flavor, version string
}

// servers are every flavour and version the rules are tested on.
var servers = []server{
	{"MySQL 5.7", "mysql", "5.7.44"},
	{"MySQL 8.0.28", "mysql", "8.0.28"},
	{"MySQL 8.0", "mysql", "8.0.36"},
	{"MySQL 8.4", "mysql", "8.4.3"},
	{"MariaDB 10.6", "mariadb", "10.6.20"},
	{"MariaDB 10.11", "mariadb", "10.11.19"},
	{"MariaDB 11.4", "mariadb", "11.4.4"},
}

func parseVersion(s string) mysqlvar.Version {
	var v mysqlvar.Version
	fmt.Sscanf(s, "%d.%d.%d", &v.Major, &v.Minor, &v.Patch)
	return v
}

// defaultValue is a variable's default on a flavour and version.
func defaultValue(name, flavor string, v mysqlvar.Version) string {
	maria := flavor == "mariadb"
	my80 := !maria && v.AtLeast(8, 0, 0)
	my84 := !maria && v.AtLeast(8, 4, 0)
	pick := func(mysql, mariadb string) string {
		if maria {
			return mariadb
		}
		return mysql
	}
	switch name {
	case "innodb_buffer_pool_size":
		return "134217728"
	case "innodb_buffer_pool_instances":
		return "1"
	case "innodb_buffer_pool_chunk_size":
		if maria && v.AtLeast(10, 11, 0) {
			return "0"
		}
		return "134217728"
	case "innodb_buffer_pool_load_at_startup", "innodb_buffer_pool_dump_at_shutdown":
		return "ON"
	case "innodb_dedicated_server":
		return "OFF"
	case "innodb_log_file_size":
		return pick("50331648", "100663296")
	case "innodb_log_files_in_group":
		return "2"
	case "innodb_redo_log_capacity":
		return "104857600"
	case "innodb_log_buffer_size":
		if my84 {
			return "67108864"
		}
		return "16777216"
	case "innodb_log_file_buffering":
		return "OFF"
	case "innodb_flush_log_at_trx_commit":
		return "1"
	case "sync_binlog":
		return pick("1", "0")
	case "innodb_doublewrite":
		return "ON"
	case "log_bin":
		if my80 {
			return "ON"
		}
		return "OFF"
	case "innodb_flush_method":
		switch {
		case maria && v.AtLeast(10, 6, 0), my84:
			return "O_DIRECT"
		}
		return "fsync"
	case "innodb_data_file_buffering":
		return "OFF"
	case "innodb_io_capacity":
		if my84 {
			return "10000"
		}
		return "200"
	case "innodb_io_capacity_max":
		if my84 {
			return "20000"
		}
		return "2000"
	case "innodb_flush_neighbors":
		if my80 {
			return "0"
		}
		return "1"
	case "innodb_support_xa":
		return "ON"
	case "query_cache_type":
		return "OFF"
	case "query_cache_size":
		return "1048576"
	case "tx_isolation", "transaction_isolation":
		return "REPEATABLE-READ"
	case "max_connections":
		return "151"
	case "thread_cache_size":
		return pick("9", "151")
	case "thread_handling":
		return "one-thread-per-connection"
	case "thread_stack":
		if my80 {
			return "1048576"
		}
		return pick("262144", "299008")
	case "wait_timeout":
		return "28800"
	case "back_log":
		return pick("151", "80")
	case "table_open_cache":
		if my80 {
			return "4000"
		}
		return "2000"
	case "table_definition_cache":
		if my80 {
			return "2000"
		}
		return pick("1400", "400")
	case "table_open_cache_instances":
		return pick("16", "8")
	case "open_files_limit":
		return pick("10000", "32768")
	case "tmp_table_size", "max_heap_table_size":
		return "16777216"
	case "temptable_max_ram":
		return "1073741824"
	case "internal_tmp_mem_storage_engine":
		return "TempTable"
	case "binlog_cache_size", "binlog_stmt_cache_size":
		return "32768"
	case "sort_buffer_size":
		return pick("262144", "2097152")
	case "join_buffer_size", "read_rnd_buffer_size":
		return "262144"
	case "read_buffer_size":
		return "131072"
	case "net_buffer_length":
		return "16384"
	case "max_allowed_packet":
		if my80 {
			return "67108864"
		}
		return pick("4194304", "16777216")
	case "key_buffer_size":
		return pick("8388608", "134217728")
	case "aria_pagecache_buffer_size":
		return "134217728"
	case "performance_schema":
		return pick("ON", "OFF")
	case "innodb_max_dirty_pages_pct":
		if !maria && !my80 {
			return "75"
		}
		return "90"
	case "innodb_lru_scan_depth":
		return pick("1024", "1536")
	case "innodb_autoinc_lock_mode":
		if my80 {
			return "2"
		}
		return "1"
	case "binlog_format":
		return pick("ROW", "MIXED")
	case "innodb_numa_interleave":
		return "OFF"
	case "slow_query_log":
		return "OFF"
	case "long_query_time":
		return "10.000000"
	// The knob search's rows.
	case "innodb_max_dirty_pages_pct_lwm":
		if my80 {
			return "10.000000"
		}
		return "0.000000"
	case "innodb_adaptive_flushing_lwm":
		return "10.000000"
	case "innodb_adaptive_hash_index":
		if maria || my84 {
			return "OFF"
		}
		return "ON"
	case "innodb_change_buffering":
		if maria || my84 {
			return "none"
		}
		return "all"
	case "innodb_thread_concurrency":
		return "0"
	case "innodb_purge_threads", "innodb_read_io_threads", "innodb_write_io_threads":
		return "4"
	case "innodb_spin_wait_delay":
		return pick("6", "4")
	}
	panic("fixtures: no default for " + name)
}

// extraVariables exist on every version and are read by rules, but no
// rule changes them, so versionTable does not list them.
var extraVariables = map[string]string{
	"connect_timeout":     "10",
	"slow_query_log_file": "/var/lib/mysql/host-slow.log",
	"innodb_page_size":    "16384",
}

// Fixture figures.
const (
	fixRAM      = 16 * gib
	fixCores    = 8
	fixInterval = 10.0
	fixData     = 50 * mib
	fixIndex    = 10 * mib
)

var fixTaken = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// snapFor is a healthy host running the given server: MySQL with its
// defaults, a quiet status interval, and a Linux layer with a mysqld.
func snapFor(sv server) *collect.Snapshot {
	v := parseVersion(sv.version)
	vars := map[string]string{}
	for _, name := range mysqlvar.Names() {
		if ok, _ := mysqlvar.Available(sv.flavor, v, name); ok {
			vars[name] = defaultValue(name, sv.flavor, v)
		}
	}
	for k, val := range extraVariables {
		vars[k] = val
	}
	version := sv.version
	comment := "MySQL Community Server - GPL"
	if sv.flavor == "mariadb" {
		version += "-MariaDB-log"
		comment = "mariadb.org binary distribution"
	}
	vars["version"] = version
	m := &collect.MySQL{
		Flavor: sv.flavor, Version: version, VersionNumber: v, VersionComment: comment,
		Variables: vars,
		Status: collect.Status{
			First: map[string]string{}, Second: map[string]string{},
			FirstAt: fixTaken.Add(-10 * time.Second), SecondAt: fixTaken, IntervalSeconds: fixInterval,
			Deltas: map[string]float64{}, Rates: map[string]float64{},
		},
		Data: collect.DataSizes{
			Schemas:        []collect.SchemaSize{{Name: "app", Tables: 20, DataBytes: fixData, IndexBytes: fixIndex, InnoDBBytes: fixData + fixIndex}},
			TotalDataBytes: fixData + 2*mib, TotalIndexBytes: fixIndex,
			InnoDBDataBytes: fixData, InnoDBIndexBytes: fixIndex, Complete: true,
		},
		PerformanceSchema: collect.PerformanceSchema{Enabled: vars["performance_schema"] == "ON"},
	}
	s := &collect.Snapshot{Version: collect.SchemaVersion, Taken: fixTaken, Host: "db1", MySQL: m, Errors: []collect.CollectorError{}}
	// A quiet interval: counters that exist, barely moving.
	for _, c := range []string{"Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads", "Innodb_os_log_written", "Innodb_log_waits",
		"Innodb_os_log_fsyncs", "Innodb_buffer_pool_wait_free", "Innodb_dblwr_pages_written", "Handler_commit", "Connections", "Threads_created",
		"Aborted_connects", "Connection_errors_max_connections", "Opened_tables", "Opened_table_definitions", "Table_open_cache_overflows",
		"Created_tmp_tables", "Created_tmp_disk_tables", "Binlog_cache_use", "Binlog_cache_disk_use", "Sort_merge_passes", "Com_select",
		"Qcache_hits", "Qcache_inserts"} {
		setDelta(s, c, 0)
	}
	// No log waits ever (the quiet counters' base is 1000000 otherwise).
	s.MySQL.Status.First["Innodb_log_waits"], s.MySQL.Status.Second["Innodb_log_waits"] = "0", "0"
	setDelta(s, "Innodb_buffer_pool_read_requests", 50000)
	setDelta(s, "Innodb_buffer_pool_reads", 10)
	setDelta(s, "Connections", 20)
	setDelta(s, "Handler_commit", 50)
	setDelta(s, "Innodb_os_log_written", 100*1024)
	setGauge(s, "Uptime", 30*24*3600)
	setGauge(s, "Max_used_connections", 40)
	setGauge(s, "Threads_connected", 12)
	setGauge(s, "Open_tables", 300)
	setGauge(s, "Open_table_definitions", 150)
	setGauge(s, "Open_files", 60)
	setGauge(s, "Innodb_buffer_pool_pages_total", 8192)
	setGauge(s, "Innodb_buffer_pool_pages_dirty", 100)
	setGauge(s, "Innodb_checkpoint_age", 1000000)

	s.Linux = &collect.Linux{
		KernelRelease: "6.1.0-18-amd64", Cores: fixCores, LoadAverage: [3]float64{0.5, 0.4, 0.3},
		Memory: collect.Memory{TotalBytes: fixRAM, AvailableBytes: 12 * gib},
		Sysctls: map[string]string{
			"net.ipv4.ip_local_port_range": "32768 60999", "net.ipv4.tcp_max_tw_buckets": "65536",
			"net.ipv4.tcp_tw_reuse": "2", "net.ipv4.tcp_timestamps": "1", "net.ipv4.tcp_fin_timeout": "60",
			"net.core.somaxconn": "4096", "net.core.netdev_max_backlog": "1000", "net.ipv4.tcp_max_syn_backlog": "4096",
			"fs.file-max": "9223372036854775807", "fs.nr_open": "1048576", "vm.swappiness": "60", "vm.overcommit_memory": "0",
		},
		SysctlsAbsent: []string{"net.ipv4.tcp_tw_recycle"},
		FileHandles:   collect.FileHandles{Allocated: 3000, Max: 9223372036854775807},
		Processes: []collect.Process{{PID: 100, PPID: 1, Name: "mysqld", Exe: "/usr/sbin/mysqld", Pattern: "mysqld", Threads: 40, RSSBytes: 600 * mib,
			Limits: map[string]collect.Limit{"nofile": {Soft: 40000, Hard: 40000, Unit: "files"}}, OpenFDs: 60}},
		TCP: collect.TCP{States: map[string]int{"ESTABLISHED": 20, "LISTEN": 2}, Listen: []collect.ListenSocket{{Address: "0.0.0.0", Port: 3306}},
			Established: newPorts(), TimeWait: newPorts()},
	}
	if sv.flavor == "mariadb" {
		s.Linux.Processes[0].Name, s.Linux.Processes[0].Exe, s.Linux.Processes[0].Pattern = "mariadbd", "/usr/sbin/mariadbd", "mariadbd"
	}
	derive(s)
	return s
}

func newPorts() collect.PortCounts {
	return collect.PortCounts{ByLocalPort: map[int]int{}, ByRemotePort: map[int]int{}}
}

// setDelta makes a status counter grow by d over the interval.
func setDelta(s *collect.Snapshot, name string, d float64) {
	st := &s.MySQL.Status
	st.First[name] = "1000000"
	st.Second[name] = strconv.FormatFloat(1000000+d, 'f', -1, 64)
	st.Deltas[name] = d
	st.Rates[name] = d / st.IntervalSeconds
	derive(s)
}

// setGauge sets a status gauge.
func setGauge(s *collect.Snapshot, name string, v float64) {
	val := strconv.FormatFloat(v, 'f', -1, 64)
	s.MySQL.Status.First[name] = val
	s.MySQL.Status.Second[name] = val
	derive(s)
}

// setVar sets a variable (and what collect derives from it).
func setVar(s *collect.Snapshot, name, v string) {
	s.MySQL.Variables[name] = v
	derive(s)
}

// derive recomputes what collect derives from variables and status (the
// collector's own derivation is unexported; this follows it).
func derive(s *collect.Snapshot) {
	m := s.MySQL
	if m == nil {
		return
	}
	vi := func(n string) int64 { x, _ := strconv.ParseInt(m.Variables[n], 10, 64); return x }
	gi := func(n string) int64 { f, _ := m.Status.Value(n); return int64(f) }
	in := &m.InnoDB
	in.BufferPoolBytes = vi("innodb_buffer_pool_size")
	in.BufferPoolInstances = vi("innodb_buffer_pool_instances")
	in.PageSize = 16384
	in.PagesTotal = gi("Innodb_buffer_pool_pages_total")
	in.PagesDirty = gi("Innodb_buffer_pool_pages_dirty")
	in.ReadRequests = m.Status.Deltas["Innodb_buffer_pool_read_requests"]
	in.DiskReads = m.Status.Deltas["Innodb_buffer_pool_reads"]
	in.HitRatio = nil
	if in.ReadRequests > 0 {
		r := 1 - in.DiskReads/in.ReadRequests
		in.HitRatio = &r
	}
	in.WaitFree = m.Status.Deltas["Innodb_buffer_pool_wait_free"]
	if c, ok := m.Variables["innodb_redo_log_capacity"]; ok {
		in.RedoCapacityBytes, _ = strconv.ParseInt(c, 10, 64)
		in.RedoCapacitySource = "innodb_redo_log_capacity"
	} else {
		files := int64(1)
		in.RedoCapacitySource = "innodb_log_file_size (one file)"
		if _, ok := m.Variables["innodb_log_files_in_group"]; ok {
			files = vi("innodb_log_files_in_group")
			in.RedoCapacitySource = "innodb_log_file_size x innodb_log_files_in_group"
		}
		in.RedoCapacityBytes = vi("innodb_log_file_size") * files
	}
	in.RedoBytesPerSecond = nil
	if r, ok := m.Status.Rates["Innodb_os_log_written"]; ok {
		in.RedoBytesPerSecond = &r
	}
	in.LogWaitsDelta = m.Status.Deltas["Innodb_log_waits"]
	c := &m.Connections
	c.MaxConnections = vi("max_connections")
	c.MaxUsedConnections = gi("Max_used_connections")
	c.ThreadsConnected = gi("Threads_connected")
	if c.MaxConnections > 0 {
		c.UsedRatio = float64(c.MaxUsedConnections) / float64(c.MaxConnections)
	}
}

// loadNginx reads a real nginx layer, as the collector produced it for
// one of its test configurations (copied from collect/testdata).
func loadNginx(t testing.TB, name string) *collect.Nginx {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "nginx", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var n collect.Nginx
	if err := json.Unmarshal(b, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

// webSnap is a web host: the Linux layer of snapFor without MySQL,
// with an nginx and its processes.
func webSnap(t testing.TB, nginx string) *collect.Snapshot {
	t.Helper()
	s := snapFor(servers[5])
	s.MySQL = nil
	s.Host = "web1"
	s.Nginx = loadNginx(t, nginx)
	s.Linux.Processes = []collect.Process{
		{PID: 200, PPID: 1, Name: "nginx", Exe: "/usr/sbin/nginx", Pattern: "nginx", RSSBytes: 8 * mib,
			Limits: map[string]collect.Limit{"nofile": {Soft: 1024, Hard: 524288}}, OpenFDs: 20},
		{PID: 201, PPID: 200, Name: "nginx", Exe: "/usr/sbin/nginx", Pattern: "nginx", RSSBytes: 12 * mib,
			Limits: map[string]collect.Limit{"nofile": {Soft: 1024, Hard: 524288}}, OpenFDs: 40},
	}
	return s
}

// memcachedLayer is a healthy memcached on another host.
func memcachedLayer() *collect.Memcached {
	hit := 0.95
	return &collect.Memcached{
		Network: "tcp", Addr: "10.0.0.5:11211", Version: "1.6.18",
		Stats:     map[string]string{"evictions": "0"},
		Settings:  map[string]string{"maxconns": "1024"},
		UptimeSec: 86400, GetHits: 950000, GetMisses: 50000, HitRatio: &hit,
		LimitMaxbytes: 64 * mib, Bytes: 10 * mib, CurrConnections: 50, TotalConnections: 5000, MaxConns: 1024,
		Threads: 4, ItemSizeMax: mib, BindingProtocol: "auto-negotiate", TCPBacklog: 1024, EvictionsEnabled: true, CASEnabled: true,
	}
}

// redisLayer is a healthy Redis on another host.
func redisLayer() *collect.Redis {
	hit := 0.9
	rdb := true
	return &collect.Redis{
		Network: "tcp", Addr: "10.0.0.6:6379", Version: "7.0.15",
		Info:      map[string]map[string]string{"memory": {"maxmemory": "1073741824"}},
		Config:    map[string]string{"maxclients": "10000", "maxmemory": "1073741824", "maxmemory-policy": "allkeys-lru", "save": "3600 1", "appendonly": "no"},
		UptimeSec: 86400, KeyspaceHits: 900000, KeyspaceMisses: 100000, HitRatio: &hit,
		ConnectedClients: 40, MaxClients: 10000, UsedMemory: 200 * mib, MaxMemory: gib, MaxMemoryPolicy: "allkeys-lru",
		Save: "3600 1", RDB: &rdb,
	}
}
