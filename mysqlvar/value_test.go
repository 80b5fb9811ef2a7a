package mysqlvar

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  bool
	}{
		{in: "67108864", want: 67108864},
		{in: "64M", want: 64 << 20},
		{in: "64m", want: 64 << 20},
		{in: " 2G ", want: 2 << 30},
		{in: "512MiB", want: 512 << 20},
		{in: "1GB", want: 1 << 30},
		{in: "16k", want: 16 << 10},
		{in: "1T", want: 1 << 40},
		{in: "7E", want: 7 << 60},
		{in: "100B", want: 100},
		{in: "8E", err: true}, // beyond int64
		{in: "99999999999999999999", err: true},
		{in: "1.5G", err: true},
		{in: "-1", err: true},
		{in: "M", err: true},
		{in: "", err: true},
		{in: "lots", err: true},
		{in: "10 M", want: 10 << 20},
	} {
		got, err := ParseSize(tc.in)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"151", 151, true}, {"10.000000", 10, true}, {"18446744073709551615", 1<<63 - 1, true},
		{"-1", -1, true}, {"64M", 64 << 20, true}, {"ON", 0, false}, {"", 0, false},
	} {
		got, ok := ParseInt(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseInt(%q) = %d %v, want %d %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"ON", "on", true},
		{"ON", "1", true},
		{"TRUE", "ON", true},
		{"yes", "1", true},
		{"OFF", "0", true},
		{"OFF", "1", false},
		{"64M", "67108864", true},
		{"64m", "64M", true},
		{"1G", "1073741824", true},
		{"10", "10.000000", true},
		{"0.5", "0.500000", true},
		{"16384", "16385", false}, // exact: rounding is Meta's business
		{"O_DIRECT", "o_direct", true},
		{"32768   60999", "32768\t60999", true},
		{"READ-COMMITTED", "READ-COMMITTED", true},
		{"", "0", false},
		{"abc", "abd", false},
		{"1e3", "1000", false},
	} {
		if got := Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("Equal(%q, %q) = %v", tc.a, tc.b, got)
		}
		if got := Equal(tc.b, tc.a); got != tc.want {
			t.Errorf("Equal(%q, %q) = %v (reversed)", tc.b, tc.a, got)
		}
	}
}

func TestSetGlobal(t *testing.T) {
	for _, tc := range []struct {
		name, value, want, err string
	}{
		{name: "tmp_table_size", value: "64M", want: "SET GLOBAL tmp_table_size = 67108864"},
		{name: "max-connections", value: "200", want: "SET GLOBAL max_connections = 200"},
		{name: "slow_query_log", value: "on", want: "SET GLOBAL slow_query_log = ON"},
		{name: "long_query_time", value: "0.5", want: "SET GLOBAL long_query_time = 0.5"},
		{name: "innodb_flush_method", value: "O_DIRECT", want: "SET GLOBAL innodb_flush_method = 'O_DIRECT'"},
		{name: "tx_isolation", value: "READ-COMMITTED", want: "SET GLOBAL tx_isolation = 'READ-COMMITTED'"},
		{name: "init_connect", value: "SET NAMES 'utf8'", want: "SET GLOBAL init_connect = 'SET NAMES ''utf8'''"},
		{name: "sql_mode", value: "default", want: "SET GLOBAL sql_mode = DEFAULT"},
		{name: "validate_password.length", value: "8", want: "SET GLOBAL validate_password.length = 8"},
		{name: "max_connections = 1; DROP TABLE x; --", value: "1", err: "not a variable name"},
		{name: "secure_file_priv", value: `C:\tmp`, err: "backslash"},
		{name: "init_connect", value: "a\x1b[2J", err: "control character"},
	} {
		got, err := SetGlobal(tc.name, tc.value)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("SetGlobal(%q, %q) = %q, %v; want an error about %s", tc.name, tc.value, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("SetGlobal(%q, %q) = %q, %v; want %q", tc.name, tc.value, got, err, tc.want)
		}
	}
}

func FuzzValues(f *testing.F) {
	for _, s := range []string{"64M", "ON", "0.5", "O_DIRECT", "'", "\\", "99999999999999999999999", "1e9", "-0", "8E"} {
		f.Add(s, "67108864")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if Equal(a, b) != Equal(b, a) {
			t.Errorf("Equal is not symmetric on %q %q", a, b)
		}
		if !Equal(a, a) {
			t.Errorf("Equal(%q, itself) is false", a)
		}
		if lit, err := Literal(a); err == nil {
			if strings.ContainsAny(lit, "\\\x00\n\r") {
				t.Errorf("Literal(%q) = %q", a, lit)
			}
			if strings.HasPrefix(lit, "'") && strings.Count(lit, "'")%2 != 0 {
				t.Errorf("Literal(%q) = %q: unbalanced quotes", a, lit)
			}
		}
		_, _ = ParseSize(a)
		_, _ = ParseInt(a)
	})
}
