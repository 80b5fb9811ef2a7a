package main

import (
	"strings"
	"testing"
)

// TestParseTuner: MySQLTuner 1.9's lines, as its source prints them,
// made into settings; the ones with no value, diagnostics only or for a
// variable the server lacks left out with the reason.
func TestParseTuner(t *testing.T) {
	running := map[string]string{
		"innodb_buffer_pool_size": "134217728", "innodb_log_file_size": "100663296", "join_buffer_size": "262144",
		"tmp_table_size": "16777216", "max_heap_table_size": "16777216", "thread_cache_size": "151", "table_definition_cache": "400",
		"key_buffer_size": "134217728", "wait_timeout": "28800", "query_cache_size": "1048576", "query_cache_type": "OFF",
		"innodb_log_buffer_size": "16777216", "performance_schema": "OFF", "binlog_cache_size": "32768", "thread_pool_size": "2",
		"innodb_flush_log_at_trx_commit": "1",
	}
	lines := []string{
		"innodb_buffer_pool_size (>= 1.1G) if possible.",
		"innodb_log_file_size should be (=256M) if possible, so InnoDB total log file size equals 25% of buffer pool size.",
		"join_buffer_size (> 256.0K, or always use indexes with JOINs)",
		"tmp_table_size (> 16M)",
		"thread_cache_size (start at 4)",
		"table_definition_cache(400) > 523 or -1 (autosizing if supported)",
		"wait_timeout (< 28800)",
		"query_cache_size (=0)",
		"innodb_log_buffer_size (> 16M)",
		"performance_schema=ON",
		"innodb_buffer_pool_instances(=1)",
		"binlog_cache_size (48.0M)",
		"thread_pool_size between 16 and 36 for InnoDB usage",
		"innodb_flush_log_at_trx_commit (=2)",
		"DON'T APPLY SETTINGS BECAUSE THERE ARE TOO MANY PROCESSES RUNNING ON THIS SERVER. OOM KILL CAN OCCUR!",
	}
	a := parseTuner(lines, running, map[string]string{"innodb_flush_log_at_trx_commit": "1"})
	want := map[string]string{
		"innodb_buffer_pool_size": "1207959552", // 1.1G rounded up to 128 MiB chunks
		"innodb_log_file_size":    "268435456",
		"join_buffer_size":        "524288",
		"tmp_table_size":          "33554432",
		"thread_cache_size":       "4",
		"table_definition_cache":  "523",
		"wait_timeout":            "14400",
		"query_cache_size":        "0",
		"innodb_log_buffer_size":  "33554432",
		"binlog_cache_size":       "50331648",
		"thread_pool_size":        "16",
	}
	for k, v := range want {
		if a.Config[k] != v {
			t.Errorf("%s = %q, want %q", k, a.Config[k], v)
		}
	}
	if len(a.Config) != len(want) {
		t.Errorf("config %v", a.Config)
	}
	left := map[string]string{}
	for _, l := range a.Left {
		left[l.Name+"|"+l.Line] = l.Why
	}
	for _, c := range []struct{ name, why string }{
		{"performance_schema", "observability, not speed (left out, as from the audit's configuration)"},
		{"innodb_buffer_pool_instances", "this server has no such variable"},
		{"innodb_flush_log_at_trx_commit", "fixed by the contest's rules"},
		{"", "not a setting"},
	} {
		found := false
		for k, why := range left {
			if len(k) >= len(c.name) && k[:len(c.name)] == c.name && why == c.why {
				found = true
			}
		}
		if !found {
			t.Errorf("%q not left out for %q: %v", c.name, c.why, left)
		}
	}
	if len(a.Taken)+len(a.Left) != len(lines) {
		t.Errorf("%d taken + %d left for %d lines", len(a.Taken), len(a.Left), len(lines))
	}
}

// FuzzParseTuner: any line gives a setting or a reason, never a panic;
// a value taken is a number or a word, one line.
func FuzzParseTuner(f *testing.F) {
	for _, s := range []string{"innodb_buffer_pool_size (>= 1.1G) if possible.", "join_buffer_size (> 256.0K, or always use indexes with JOINs)",
		"table_definition_cache(400) > 523 or -1 (autosizing if supported)", "wait_timeout (< 28800)", "performance_schema=ON",
		"x (>= 99999999999999999999999G)", "x (> 1e308M)", "(=)", ""} {
		f.Add(s)
	}
	running := map[string]string{"x": "100", "innodb_buffer_pool_size": "134217728", "join_buffer_size": "262144", "wait_timeout": "28800", "table_definition_cache": "400", "performance_schema": "OFF"}
	f.Fuzz(func(t *testing.T, line string) {
		a := parseTuner([]string{line}, running, nil)
		if len(a.Taken)+len(a.Left) != 1 {
			t.Fatalf("%q: %d taken, %d left", line, len(a.Taken), len(a.Left))
		}
		for k, v := range a.Config {
			if k == "" || v == "" || strings.ContainsAny(v, "\n\r\x00 ") {
				t.Fatalf("%q gave %q = %q", line, k, v)
			}
		}
	})
}
