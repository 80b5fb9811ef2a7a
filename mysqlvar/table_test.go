package mysqlvar

import (
	"fmt"
	"testing"
)

func pv(s string) Version {
	var v Version
	fmt.Sscanf(s, "%d.%d.%d", &v.Major, &v.Minor, &v.Patch)
	return v
}

func TestParseVersion(t *testing.T) {
	cases := []struct {
		name, version, comment string
		flavor                 string
		want                   Version
	}{
		{"MariaDB Debian", "10.11.19-MariaDB-0+deb12u1", "Debian 12", "mariadb", Version{10, 11, 19}},
		{"MariaDB with log", "11.4.2-MariaDB-log", "mariadb.org binary distribution", "mariadb", Version{11, 4, 2}},
		{"MariaDB replication prefix", "5.5.5-10.6.16-MariaDB", "MariaDB Server", "mariadb", Version{10, 6, 16}},
		{"MySQL 8.0", "8.0.36", "MySQL Community Server - GPL", "mysql", Version{8, 0, 36}},
		{"MySQL 5.7 log", "5.7.44-log", "MySQL Community Server (GPL)", "mysql", Version{5, 7, 44}},
		{"Percona Server", "8.0.35-27", "Percona Server (GPL), Release 27, Revision 2f8eeab2", "percona", Version{8, 0, 35}},
		{"Percona XtraDB Cluster", "8.0.33-25.1", "Percona XtraDB Cluster (GPL), Release rel25, Revision 0c56202, WSREP version 26.1.4.3", "percona", Version{8, 0, 33}},
		{"Aurora", "8.0.mysql_aurora.3.04.0", "Source distribution", "mysql", Version{8, 0, 0}},
		{"garbage", "unknown", "", "mysql", Version{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, v := ParseVersion(tc.version, tc.comment)
			if f != tc.flavor || v != tc.want {
				t.Errorf("ParseVersion(%q, %q) = %s %v, want %s %v", tc.version, tc.comment, f, v, tc.flavor, tc.want)
			}
		})
	}
	if !(Version{8, 0, 30}).AtLeast(8, 0, 30) || (Version{8, 0, 29}).AtLeast(8, 0, 30) || !(Version{10, 5, 0}).AtLeast(8, 4, 9) {
		t.Error("AtLeast")
	}
}

// TestVersionFacts: version facts as the rules need them.
func TestVersionFacts(t *testing.T) {
	for _, tc := range []struct {
		flavor, version, name string
		present, dynamic      bool
	}{
		{"mysql", "8.0.36", "query_cache_type", false, false},
		{"mysql", "5.7.44", "query_cache_type", true, true},
		{"mariadb", "10.11.19", "query_cache_type", true, true},
		{"mysql", "8.0.36", "tx_isolation", false, false},
		{"mysql", "8.0.36", "transaction_isolation", true, true},
		{"mariadb", "10.11.19", "tx_isolation", true, true},
		{"mariadb", "10.11.19", "transaction_isolation", false, false},
		{"mariadb", "11.4.4", "transaction_isolation", true, true},
		{"mysql", "8.0.29", "innodb_redo_log_capacity", false, false},
		{"mysql", "8.0.30", "innodb_redo_log_capacity", true, true},
		{"mariadb", "10.11.19", "innodb_redo_log_capacity", false, false},
		{"mariadb", "10.5.20", "innodb_buffer_pool_instances", true, false},
		{"mariadb", "10.6.0", "innodb_buffer_pool_instances", false, false},
		{"mysql", "8.4.3", "innodb_buffer_pool_instances", true, false},
		{"mysql", "5.7.44", "innodb_support_xa", true, false},
		{"mysql", "8.0.0", "innodb_support_xa", false, false},
		{"mariadb", "10.2.40", "innodb_support_xa", true, false},
		{"mariadb", "10.3.0", "innodb_support_xa", false, false},
		{"mariadb", "10.8.8", "innodb_log_file_size", true, false},
		{"mariadb", "10.11.19", "innodb_log_file_size", true, true},
		{"mysql", "8.4.3", "innodb_log_file_size", true, false},
		{"mariadb", "10.11.19", "innodb_data_file_buffering", false, false},
		{"mariadb", "11.0.1", "innodb_data_file_buffering", true, true},
		{"percona", "8.0.36", "temptable_max_ram", true, true},
		{"mariadb", "10.11.19", "temptable_max_ram", false, false},
	} {
		v := pv(tc.version)
		p, known := Available(tc.flavor, v, tc.name)
		d, _ := Dynamic(tc.flavor, v, tc.name)
		if !known || p != tc.present || d != tc.dynamic {
			t.Errorf("%s %s %s: present %v dynamic %v (known %v), want %v %v", tc.flavor, tc.version, tc.name, p, d, known, tc.present, tc.dynamic)
		}
	}
	for _, tc := range []struct{ flavor, version, want string }{
		{"mysql", "8.0.29", "innodb_log_file_size"},
		{"mysql", "8.0.30", "innodb_redo_log_capacity"},
		{"mysql", "8.4.3", "innodb_redo_log_capacity"},
		{"mariadb", "11.4.4", "innodb_log_file_size"},
	} {
		if got := RedoCapacityVariable(tc.flavor, pv(tc.version)); got != tc.want {
			t.Errorf("%s %s redo: %s, want %s", tc.flavor, tc.version, got, tc.want)
		}
	}
	if OptionName("tx_isolation") != "transaction_isolation" || OptionName("max_connections") != "max_connections" {
		t.Error("option names")
	}
}

// TestVersionTableShape: every row well formed.
func TestVersionTableShape(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range versionTable {
		if seen[f.name] {
			t.Errorf("%s listed twice", f.name)
		}
		seen[f.name] = true
		if f.source == "" || (f.mysql == nil && f.mariadb == nil) {
			t.Errorf("%s: no source or no flavour", f.name)
		}
		for _, pair := range [][2][]span{{f.mysql, f.dynMySQL}, {f.mariadb, f.dynMariaDB}} {
			for _, d := range pair[1] {
				if !inSpans(pair[0], d.from) {
					t.Errorf("%s is dynamic from %s where it does not exist", f.name, d.from)
				}
			}
			for _, s := range pair[0] {
				if s.until != (Version{}) && !s.until.AtLeast(s.from.Major, s.from.Minor, s.from.Patch) {
					t.Errorf("%s: span %v", f.name, s)
				}
			}
		}
	}
}

func TestConflicts(t *testing.T) {
	maria := Server{Flavor: MariaDB, Version: V(10, 11, 19)}
	old := Server{Flavor: MariaDB, Version: V(10, 6, 0)}
	for _, tc := range []struct {
		name   string
		srv    Server
		values map[string]string
		want   int
	}{
		{"log file below log buffer", maria, map[string]string{"innodb_log_file_size": "8388608", "innodb_log_buffer_size": "16M"}, 1},
		{"equal is fine", maria, map[string]string{"innodb_log_file_size": "16M", "innodb_log_buffer_size": "16777216"}, 0},
		{"only one known", maria, map[string]string{"innodb_log_file_size": "8M"}, 0},
		{"not set at run time before 10.9", old, map[string]string{"innodb_log_file_size": "8M", "innodb_log_buffer_size": "16M"}, 0},
	} {
		if got := Conflicts(tc.srv, tc.values); len(got) != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}
