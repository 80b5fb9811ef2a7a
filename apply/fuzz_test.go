package apply

import (
	"bytes"
	"strings"
	"testing"
)

// The settings-file parsers take what audit --emit wrote, or a hand-edited
// copy: anything must give settings or an error naming the line, never a
// panic, and every setting must come from a line of the input.
func FuzzSettingsFiles(f *testing.F) {
	for _, seed := range []string{
		"[mysqld]\nmax_connections = 77\n# c\ntmp_table_size=64M\n",
		"[client]\nx=1\n[mysqld]\nskip-name-resolve\n!includedir /etc\n",
		"net.core.somaxconn = 4096\n-vm.swappiness=1\n; c\n",
		"[Service]\nLimitNOFILE=65536\n",
		"[mysqld\nk = v\n", "\x00\xff=\n", strings.Repeat("k=v\n", 100),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte("\n")) + 1
		check := func(what string, ss []Setting, err error) {
			if err != nil {
				if !strings.Contains(err.Error(), "line ") && !strings.Contains(err.Error(), "token too long") {
					t.Errorf("%s: error without a line: %v", what, err)
				}
				return
			}
			for _, s := range ss {
				if s.Key == "" || s.Line < 1 || s.Line > lines {
					t.Errorf("%s: setting %+v from %d lines", what, s, lines)
				}
			}
		}
		ss, err := ParseMyCnf(data)
		check("my.cnf", ss, err)
		if sy, err := NewSysctl("/x", data); err == nil {
			check("sysctl", sy.settings, nil)
		} else {
			check("sysctl", nil, err)
		}
		if d, err := NewSystemdDropIn("u.service", "/x", data); err == nil {
			check("systemd", d.settings, nil)
		} else {
			check("systemd", nil, err)
		}
	})
}

// FuzzParseIndexDDL: any text gives indexes with a table and a name, or
// an error; never a panic.
func FuzzParseIndexDDL(f *testing.F) {
	for _, seed := range []string{
		"ALTER TABLE `s`.`t` ADD INDEX `a` (`x`, `y` DESC), ALGORITHM=INPLACE, LOCK=NONE;",
		"CREATE INDEX i ON t (c(10)); ALTER TABLE t ADD KEY k (a)",
		"ALTER TABLE t DROP INDEX i", "DELETE FROM t", "ALTER TABLE ((", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		ixs, err := ParseIndexDDL(sql, "db")
		if err != nil {
			return
		}
		for _, ix := range ixs {
			if ix.Table == "" || ix.Name == "" || ix.Spec == "" {
				t.Errorf("index %+v from %q", ix, sql)
			}
		}
	})
}
