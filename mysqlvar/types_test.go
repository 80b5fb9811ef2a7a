package mysqlvar

import (
	"strings"
	"testing"
)

// Every variable of the version table has a value type, so a change to
// one of them is checked against its own grammar, not the generic one.
func TestEveryVariableHasAType(t *testing.T) {
	for _, f := range versionTable {
		if _, ok := valueTypes[f.name]; !ok {
			t.Errorf("%s: no value type in valueTypes", f.name)
		}
	}
	for n := range valueTypes {
		if _, ok := versionIndex[n]; !ok {
			t.Errorf("%s: a value type for a variable the version table does not have", n)
		}
	}
}

func TestCheckValue(t *testing.T) {
	for _, tc := range []struct {
		name, variable, value string
		ok                    bool
	}{
		{"size", "innodb_buffer_pool_size", "134217728", true},
		{"size with suffix", "innodb-buffer-pool-size", "1G", true},
		{"size negative", "innodb_buffer_pool_size", "-1", false},
		{"size fraction", "tmp_table_size", "1.5G", false},
		{"integer", "max_connections", "500", true},
		{"integer with suffix", "max_connections", "1K", true},
		{"integer word", "max_connections", "many", false},
		{"decimal", "long_query_time", "0.5", true},
		{"decimal exponent", "long_query_time", "1e3", false},
		{"bool on", "slow_query_log", "ON", true},
		{"bool 0", "slow_query_log", "0", true},
		{"bool word", "slow_query_log", "maybe", false},
		{"enum any case", "binlog_format", "row", true},
		{"enum unknown", "binlog_format", "ROWS", false},
		{"enum with bool words", "innodb_doublewrite", "OFF", true},
		{"enum of option name", "transaction-isolation", "READ-COMMITTED", true},
		{"renamed variable", "tx_isolation", "READ-COMMITTED", true},
		{"unknown variable token", "innodb_sort_buffer_size", "1048576", true},
		{"unknown variable path", "tmpdir", "/var/tmp", true},
		{"space then statement", "max_connections", "500; DROP TABLE t", false},
		{"token with space", "tmpdir", "/var/tmp /etc", false},
		{"token with quote", "tmpdir", "'/x'", false},
		{"token with comment", "tmpdir", "/x#y", false},
		{"token with backslash", "tmpdir", `\x`, false},
		{"token with newline", "tmpdir", "x\n[client]", false},
		{"token like an option", "tmpdir", "--skip-grant-tables", false},
		{"leading blank", "max_connections", " 500", false},
		{"empty", "max_connections", "", false},
		{"too long", "tmpdir", "/" + strings.Repeat("a", 600), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckValue(tc.variable, tc.value)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckValue(%q, %q) = %v, want ok=%v", tc.variable, tc.value, err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), Norm(tc.variable)) {
				t.Errorf("error %q does not name the variable", err)
			}
		})
	}
}

func FuzzCheckValue(f *testing.F) {
	for _, s := range []string{"1G", "ON", "READ-COMMITTED", "/var/tmp", "0.5", "x\ny", "500; DROP"} {
		f.Add("max_connections", s)
		f.Add("tmpdir", s)
		f.Add("binlog_format", s)
	}
	f.Fuzz(func(t *testing.T, name, v string) {
		if CheckValue(name, v) != nil {
			return
		}
		// What passes is one word that SET GLOBAL takes as one literal.
		if strings.ContainsAny(v, " \t\r\n\x00'\"`#;\\=") {
			t.Fatalf("CheckValue(%q, %q) passed a value holding a separator", name, v)
		}
		if _, err := Literal(v); err != nil {
			t.Fatalf("CheckValue passed %q, Literal refuses it: %v", v, err)
		}
	})
}
