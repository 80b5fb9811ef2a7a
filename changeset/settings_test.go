package changeset

import (
	"strings"
	"testing"
)

func TestEdit(t *testing.T) {
	cnt := []string{"# mysql-x: a finding"}
	cases := []struct {
		name   string
		f      Format
		old    string
		header []string
		set    []Line
		want   string
		err    string
	}{
		{name: "new my.cnf", f: MyCnf, header: []string{"# head"},
			set:  []Line{{Key: "max_connections", Value: "200", Comments: cnt}, {Key: "tmp_table_size", Value: "64M"}},
			want: "# head\n[mysqld]\n# mysql-x: a finding\nmax_connections = 200\ntmp_table_size = 64M\n"},
		{name: "replace in place with its comments, keep the rest", f: MyCnf,
			old:  "# head\n[mysqld]\n# old reason\nmax_connections = 100\nkey_buffer_size = 8M\n\n[client]\nport = 3306\n",
			set:  []Line{{Key: "max-connections", Value: "200", Comments: cnt}, {Key: "thread_cache_size", Value: "32"}},
			want: "# head\n[mysqld]\n# mysql-x: a finding\nmax-connections = 200\nkey_buffer_size = 8M\nthread_cache_size = 32\n\n[client]\nport = 3306\n"},
		{name: "a repeated key: the later ones go", f: MyCnf,
			old:  "[mysqld]\nmax_connections = 100\n# again\nmax_connections = 150\n",
			set:  []Line{{Key: "max_connections", Value: "200"}},
			want: "[mysqld]\nmax_connections = 200\n"},
		{name: "no mysqld section yet", f: MyCnf, old: "[client]\nport = 3306\n",
			set:  []Line{{Key: "max_connections", Value: "200"}},
			want: "[client]\nport = 3306\n\n[mysqld]\nmax_connections = 200\n"},
		{name: "mariadb section counts", f: MyCnf, old: "[mariadb]\nmax_connections = 1\n",
			set:  []Line{{Key: "max_connections", Value: "200"}},
			want: "[mariadb]\nmax_connections = 200\n"},
		{name: "CRLF kept", f: SysctlD, old: "vm.swappiness = 60\r\n",
			set:  []Line{{Key: "vm.swappiness", Value: "1"}, {Key: "net.core.somaxconn", Value: "4096"}},
			want: "vm.swappiness = 1\r\nnet.core.somaxconn = 4096\r\n"},
		{name: "systemd", f: SystemdDropIn, old: "[Unit]\nDescription=x\n[Service]\nLimitNOFILE=1024\n",
			set:  []Line{{Key: "LimitNOFILE", Value: "65535"}},
			want: "[Unit]\nDescription=x\n[Service]\nLimitNOFILE=65535\n"},
		{name: "include refused", f: MyCnf, old: "!includedir /etc/x\n", set: []Line{{Key: "a", Value: "1"}}, err: "must not include"},
		{name: "sections in sysctl refused", f: SysctlD, old: "[x]\n", set: []Line{{Key: "a", Value: "1"}}, err: "no sections"},
		{name: "a line break in a value refused", f: MyCnf, set: []Line{{Key: "a", Value: "1\n[client]"}}, err: "one setting line"},
		{name: "a comment must be a comment", f: MyCnf, set: []Line{{Key: "a", Value: "1", Comments: []string{"max_connections = 1"}}}, err: "comment"},
		{name: "written twice", f: MyCnf, set: []Line{{Key: "a", Value: "1"}, {Key: "A", Value: "2"}}, err: "twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var old []byte
			if tc.old != "" {
				old = []byte(tc.old)
			}
			got, err := tc.f.Edit(old, tc.header, tc.set)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tc.want)
			}
			// Editing again with the same settings changes nothing, and
			// Parse reads what was written.
			again, err := tc.f.Edit(got, tc.header, tc.set)
			if err != nil || string(again) != string(got) {
				t.Errorf("not idempotent:\n%q", again)
			}
			ss, err := tc.f.Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			vals := Values(ss)
			for _, l := range tc.set {
				k, _ := tc.f.clean(l.Key, l.Value)
				if vals[k] != l.Value {
					t.Errorf("Parse: %s = %q, want %q", k, vals[k], l.Value)
				}
			}
		})
	}
}

func FuzzFormats(f *testing.F) {
	for _, s := range []string{"[mysqld]\nmax_connections = 1\n", "a = 1\r\nb=2", "[Service]\nLimitNOFILE=1\n", "[x\n", "!include a", "\x00\xff=\n"} {
		f.Add([]byte(s), "key", "value")
	}
	f.Fuzz(func(t *testing.T, old []byte, key, value string) {
		for _, fm := range []Format{MyCnf, SysctlD, SystemdDropIn} {
			_, perr := fm.Parse(old)
			got, err := fm.Edit(old, []string{"# h"}, []Line{{Key: key, Value: value}})
			if err != nil {
				continue
			}
			if perr != nil && len(old) > 0 {
				t.Fatalf("%s: Edit took what Parse refused: %q", fm.Name, old)
			}
			ss, err := fm.Parse(got)
			if err != nil {
				t.Fatalf("%s: Edit wrote what Parse refuses: %q -> %q: %v", fm.Name, old, got, err)
			}
			k, v := fm.clean(key, value)
			if got := Values(ss)[k]; got != v && fm.fold(k) == k {
				t.Fatalf("%s: %q = %q read back as %q from %q", fm.Name, k, v, got, got)
			}
		}
	})
}
