package changeset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostile is, per kind, a change that its producers make (the base) and
// values an attacker or a careless edit puts in one of its fields.
var hostile = []struct {
	kind  Kind
	base  Change
	cases []struct{ name, field, value string }
}{
	{Index, Change{Kind: Index, Target: "victim.t", Name: "ix", From: Absent, To: "(`a`)"}, []struct{ name, field, value string }{
		{"SQL after the column list", "to", "(a), DROP COLUMN b"},
		{"SQL after the closing parenthesis", "to", "(a); DROP TABLE t"},
		{"a comment after the list", "to", "(a) -- x"},
		{"a comment inside the list", "to", "(a /* x */)"},
		{"a backquote closed early", "to", "(`a`), DROP COLUMN `b`"},
		{"a doubled backquote", "to", "(`a``b`)"},
		{"an expression", "to", "((a + 1))"},
		{"a function", "to", "(md5(a))"},
		{"a string", "to", "('a')"},
		{"a number as a column", "to", "(1)"},
		{"no parentheses", "to", "a"},
		{"empty list", "to", "()"},
		{"a zero prefix", "to", "(a(0))"},
		{"a word after the column", "to", "(a USING BTREE)"},
		{"a newline", "to", "(a)\nDROP COLUMN b"},
		{"a NUL", "to", "(a)\x00"},
		{"a backquote in the name", "name", "ix` , DROP COLUMN `b"},
		{"a backquote in the table", "target", "victim.t` DROP COLUMN b, ADD INDEX `x"},
		{"no table", "target", "victim"},
		{"from is SQL", "from", "(a), DROP COLUMN b"},
		{"a word after ignored", "to", "(a) ignored; DROP TABLE t"},
		{"another word for ignored", "to", "(a) invisible"},
		{"ignored twice", "to", "(a) ignored ignored"},
		{"ignored without a blank", "to", "(a)ignored"},
		{"ignored in capitals", "to", "(a) IGNORED"},
		{"absent with a blank", "to", "absent "},
		{"absent in capitals", "to", "ABSENT"},
		{"added as ignored", "to", "(a) ignored"},
	}},
	// A drop: what it starts from is part of the change.
	{Index, Change{Kind: Index, Target: "victim.t", Name: "ix_dup", From: "(`a`)", To: Absent}, []struct{ name, field, value string }{
		{"a drop of the primary key", "name", "PRIMARY"},
		{"a drop of the primary key in lower case", "name", "primary"},
		{"a drop from nowhere", "from", ""},
		{"a drop of nothing", "from", Absent},
		{"from is SQL", "from", "(a); DROP TABLE t"},
		{"from with a comment", "from", "(a) -- x"},
		{"from ignored twice", "from", "(a) ignored ignored"},
		{"to is SQL", "to", "absent; DROP TABLE t"},
		{"a name that ends the statement", "name", "ix` ; DROP TABLE `t"},
	}},
	// An ignore: the same key parts, ignored.
	{Index, Change{Kind: Index, Target: "victim.t", Name: "ix_dup", From: "(`a`)", To: "(`a`) ignored"}, []struct{ name, field, value string }{
		{"ignoring the primary key", "name", "PRIMARY"},
		{"other key parts", "to", "(`b`) ignored"},
		{"an ignore from nowhere", "from", ""},
		{"SQL after ignored", "to", "(`a`) ignored, DROP COLUMN a"},
		{"a newline after ignored", "to", "(`a`) ignored\nDROP TABLE t"},
	}},
	{Systemd, Change{Kind: Systemd, Target: "mariadb.service", Name: "LimitNOFILE", From: "1024", To: "65536"}, []struct{ name, field, value string }{
		{"ExecStartPre", "name", "ExecStartPre"},
		{"ExecStart", "name", "ExecStart"},
		{"User", "name", "User"},
		{"an unknown directive", "name", "LimitEverything"},
		{"a command as the value", "to", "65536\nExecStartPre=/bin/touch /tmp/pwned"},
		{"a blank in the value", "to", "65536 /bin/sh"},
		{"a section in the value", "to", "1]\n[Service"},
		{"a word as a count", "to", "lots"},
		{"a unit on a count", "to", "64K"},
		{"a comment", "to", "65536 # x"},
		{"a preload of anything", "name", "Environment"},
		{"a unit that is no service", "target", "mariadb.socket"},
		{"a path as the unit", "target", "../../etc/x.service"},
	}},
	{MySQLVariable, Change{Kind: MySQLVariable, Target: "mysqld", Name: "max_connections", To: "500"}, []struct{ name, field, value string }{
		{"a statement after the value", "to", "500; DROP TABLE t"},
		{"a newline and a section", "to", "500\n[client]"},
		{"a comment", "to", "500 # x"},
		{"a quote", "to", "'500'"},
		{"a word for a number", "to", "many"},
		{"a backquote", "to", "`500`"},
		{"a name with a blank", "name", "max connections"},
		{"a name that is a statement", "name", "x=1; DROP"},
		{"an option as the value", "to", "--init-file=/tmp/x"},
		{"another target", "target", "client"},
	}},
	{MySQLOption, Change{Kind: MySQLOption, Target: "mysqld", Name: "performance-schema-consumer-events-statements-history", To: "ON"}, []struct{ name, field, value string }{
		{"two words", "to", "ON init-file=/tmp/x"},
		{"a quote", "to", `"ON"`},
	}},
	{Sysctl, Change{Kind: Sysctl, Target: "/etc/sysctl.d", Name: "net.core.somaxconn", To: "4096"}, []struct{ name, field, value string }{
		{"a path as the name", "name", "../../etc/passwd"},
		{"a comment", "to", "4096 # x"},
		{"a newline", "to", "4096\nkernel.core_pattern = |/bin/sh"},
		{"a pipe", "to", "|/bin/sh"},
		{"two blanks", "to", "1  2"},
	}},
	{Nginx, Change{Kind: Nginx, Target: "nginx http {}", Name: "keepalive_requests", To: "2000"}, []struct{ name, field, value string }{
		{"a second directive", "to", "2000; include /tmp/x.conf"},
		{"a block", "to", "2000 { }"},
		{"a comment", "to", "2000 # x"},
		{"include", "name", "include"},
		{"load_module", "name", "load_module"},
		{"perl", "name", "perl_modules"},
		{"lua", "name", "content_by_lua_block"},
		{"a name with a brace", "name", "x{"},
		{"an upper-case name", "name", "Keepalive"},
	}},
	{PHPFPM, Change{Kind: PHPFPM, Target: "php-fpm pool www", Name: "pm.max_children", To: "8"}, []struct{ name, field, value string }{
		{"a prepended file", "name", "php_admin_value[auto_prepend_file]"},
		{"the user", "name", "user"},
		{"listen", "name", "listen"},
		{"a comment", "to", "8 ; x"},
		{"a blank", "to", "8 9"},
		{"a section", "target", "php-fpm pool www]\n[x"},
	}},
	{Memcached, Change{Kind: Memcached, Target: "memcached", Name: "-c", To: "4096"}, []struct{ name, field, value string }{
		{"an unknown flag", "name", "-X"},
		{"a flag as the value", "to", "-d"},
		{"a blank", "to", "4096 -d"},
	}},
	{Redis, Change{Kind: Redis, Target: "redis", Name: "maxmemory", To: "100mb"}, []struct{ name, field, value string }{
		{"dir", "name", "dir"},
		{"dbfilename", "name", "dbfilename"},
		{"a blank", "to", "100mb dir /etc"},
	}},
	{Mount, Change{Kind: Mount, Target: "/var/lib/mysql", Name: "options", To: "noatime"}, []struct{ name, field, value string }{
		{"a blank", "to", "noatime exec"},
		{"no mount point", "target", "var"},
	}},
	{App, Change{Kind: App, Target: "app", Name: "n-plus-one", From: "a loop", To: "one query", Activation: Manual}, []struct{ name, field, value string }{
		{"a newline", "to", "one query\nrm -rf /"},
	}},
}

func set(c *Change, field, v string) {
	switch field {
	case "to":
		c.To = v
	case "from":
		c.From = v
	case "name":
		c.Name = v
	case "target":
		c.Target = v
	default:
		panic(field)
	}
}

// TestHostileValues: every kind's grammar refuses what its base change
// does not need, naming the change; the base itself passes.
func TestHostileValues(t *testing.T) {
	for _, k := range hostile {
		t.Run(string(k.kind)+"/base", func(t *testing.T) {
			s := &Set{Format: 1, Changes: []Change{k.base}}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
		})
		for _, tc := range k.cases {
			t.Run(string(k.kind)+"/"+tc.name, func(t *testing.T) {
				c := k.base
				set(&c, tc.field, tc.value)
				// The hostile change second, so the message must name it.
				s := &Set{Format: 1, Changes: []Change{{Kind: App, Target: "app", Name: "ok", To: "fine"}, c}}
				err := s.Validate()
				if err == nil {
					t.Fatalf("%s %q = %q passed", tc.field, c.Name, tc.value)
				}
				want := fmt.Sprintf("change 2 (%s %s)", c.Kind, c.Name)
				if !strings.Contains(err.Error(), want) || !errors.Is(err, ErrInvalid) {
					t.Errorf("err = %v, want it to name %q", err, want)
				}
				if err := c.Check(); err == nil {
					t.Errorf("Check passed what Validate refused")
				}
			})
		}
	}
	// Every kind has its table.
	for k := range grammars {
		if !slices.ContainsFunc(hostile, func(h struct {
			kind  Kind
			base  Change
			cases []struct{ name, field, value string }
		}) bool {
			return h.kind == k
		}) {
			t.Errorf("kind %s has no hostile values", k)
		}
	}
}

// TestAllowedValues: what stacktune's own producers write passes.
func TestAllowedValues(t *testing.T) {
	for _, c := range []Change{
		{Kind: Index, Target: "app.relations", Name: "ix_one_created", To: "(`one`, `created_at` DESC)"},
		{Kind: Index, Target: ".t", Name: "i", To: "( a , b(10) ASC )"},
		{Kind: Index, Target: "s.t", Name: "ix_name", To: "(`a b`, `c$`)"},
		{Kind: Index, Target: "s.t", Name: "ix_dup", From: "(`a`)", To: "absent"},
		{Kind: Index, Target: "s.t", Name: "ix_dup", From: "(`a`) ignored", To: "absent"},
		{Kind: Index, Target: "s.t", Name: "ix_dup", From: "(a, b(10))", To: "(`a`, `b`(10)) ignored"},
		{Kind: Index, Target: "s.t", Name: "ix_dup", From: "(`a`) ignored", To: "(`a`)"},
		{Kind: Systemd, Target: "nginx.service", Name: "LimitNOFILE", To: "1024:65536"},
		{Kind: Systemd, Target: "mariadb.service", Name: "LimitMEMLOCK", To: "infinity"},
		{Kind: Systemd, Target: "mysql@main.service", Name: "LimitCORE", To: "0"},
		{Kind: Systemd, Target: "mariadb.service", Name: "NUMAPolicy", To: "interleave"},
		{Kind: Systemd, Target: "mariadb.service", Name: "Environment", To: "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"},
		{Kind: MySQLVariable, Target: "mysqld", Name: "innodb_buffer_pool_size", To: "1G"},
		{Kind: MySQLVariable, Target: "mysqld", Name: "tx_isolation", Option: "transaction_isolation", To: "READ-COMMITTED"},
		{Kind: Sysctl, Target: "/etc/sysctl.d", Name: "net.ipv4.ip_local_port_range", To: "10511 65535"},
		{Kind: Nginx, Target: "nginx upstream app {} (/etc/nginx/nginx.conf:12)", Name: "keepalive", To: "16"},
		{Kind: Nginx, Target: "nginx http {}", Name: "proxy_set_header", To: `Connection ""`},
		{Kind: Nginx, Target: "nginx http {}", Name: "client_body_temp_path", To: "/dev/shm/nginx_client_body 1 2"},
		{Kind: PHPFPM, Target: "php-fpm pool www", Name: "request_terminate_timeout", To: "30s"},
		{Kind: Memcached, Target: "memcached", Name: "-C", To: ""},
		{Kind: Memcached, Target: "memcached", Name: "-s", To: "/run/memcached/memcached.sock"},
		{Kind: Redis, Target: "redis", Name: "maxmemory-policy", To: "allkeys-lru"},
	} {
		t.Run(string(c.Kind)+" "+c.Name+" "+c.To, func(t *testing.T) {
			if err := c.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestKeyParts(t *testing.T) {
	for _, tc := range []struct {
		in, out string
	}{
		{"(a)", "(`a`)"},
		{"(`one`, `created_at`)", "(`one`, `created_at`)"},
		{"( a(10) desc, b asc )", "(`a`(10) DESC, `b`)"},
		{"(`a b`)", "(`a b`)"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			ps, err := ParseKeyParts(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := FormatKeyParts(ps); got != tc.out {
				t.Fatalf("FormatKeyParts = %s, want %s", got, tc.out)
			}
			again, err := ParseKeyParts(FormatKeyParts(ps))
			if err != nil || !slices.Equal(again, ps) {
				t.Fatalf("round trip: %v %v", again, err)
			}
		})
	}
}

// fuzzKind fuzzes one kind's grammar: whatever passes Check renders, and
// its view reads back as exactly that one setting (nothing more comes
// out of the file than the change says).
func fuzzKind(f *testing.F, kind Kind) {
	for _, h := range hostile {
		if h.kind != kind {
			continue
		}
		f.Add(h.base.Target, h.base.Name, h.base.To)
		for _, c := range h.cases {
			b := h.base
			set(&b, c.field, c.value)
			f.Add(b.Target, b.Name, b.To)
		}
	}
	f.Fuzz(func(t *testing.T, target, name, to string) {
		c := Change{Kind: kind, Target: target, Name: name, From: "", To: to, Activation: Manual}
		if kind != App {
			c.Activation = ""
		}
		if c.Check() != nil {
			return
		}
		s := &Set{Format: 1, Source: "fuzz", Changes: []Change{c}}
		files, err := Render(s)
		if err != nil {
			t.Fatalf("%+v passed Check but does not render: %v", c, err)
		}
		readBack(t, c, files)
	})
}

// readBack checks that the view of a change holds that one setting.
func readBack(t *testing.T, c Change, files map[string][]byte) {
	t.Helper()
	one := func(f Format, data []byte) {
		ss, err := f.Parse(data)
		if err != nil {
			t.Fatalf("%s view does not parse: %v\n%s", f.Name, err, data)
		}
		if len(ss) != 1 || ss[0].Key != f.fold(c.FileName()) && ss[0].Key != c.FileName() {
			t.Fatalf("%s view holds %+v, not one %s\n%s", f.Name, ss, c.FileName(), data)
		}
	}
	switch c.Kind {
	case MySQLVariable, MySQLOption:
		one(MyCnf, files[MySQLFile])
	case Sysctl:
		one(SysctlD, files[SysctlFile])
	case Systemd:
		for rel, data := range files {
			if strings.HasPrefix(rel, "systemd/") {
				one(SystemdDropIn, data)
			}
		}
	case Index:
		// Package apply's FuzzIndexGrammar parses the DDL with a SQL
		// parser; here, one statement line after the comments.
		var stmts []string
		for _, l := range strings.Split(string(files[IndexFile]), "\n") {
			if l != "" && !strings.HasPrefix(l, "--") {
				stmts = append(stmts, l)
			}
		}
		if len(stmts) != 1 || !strings.HasSuffix(stmts[0], ";") {
			t.Fatalf("not one statement: %q", stmts)
		}
	}
}

func FuzzGrammarIndex(f *testing.F)     { fuzzKind(f, Index) }
func FuzzGrammarSystemd(f *testing.F)   { fuzzKind(f, Systemd) }
func FuzzGrammarMySQL(f *testing.F)     { fuzzKind(f, MySQLVariable) }
func FuzzGrammarOption(f *testing.F)    { fuzzKind(f, MySQLOption) }
func FuzzGrammarSysctl(f *testing.F)    { fuzzKind(f, Sysctl) }
func FuzzGrammarNginx(f *testing.F)     { fuzzKind(f, Nginx) }
func FuzzGrammarPHPFPM(f *testing.F)    { fuzzKind(f, PHPFPM) }
func FuzzGrammarMemcached(f *testing.F) { fuzzKind(f, Memcached) }
func FuzzGrammarRedis(f *testing.F)     { fuzzKind(f, Redis) }
func FuzzGrammarMount(f *testing.F)     { fuzzKind(f, Mount) }
func FuzzGrammarApp(f *testing.F)       { fuzzKind(f, App) }

// FuzzRead: Read end to end, on a changes.json in a directory. What it
// accepts passes every grammar, renders, and reads back the same after
// Write.
func FuzzRead(f *testing.F) {
	files, _ := Render(sample())
	f.Add(files[FileName])
	f.Add([]byte(`{"format":1,"changes":[{"kind":"ddl","target":"victim.t","name":"ix","from":"absent","to":"(a), DROP COLUMN b"}]}`))
	f.Add([]byte(`{"format":1,"changes":[{"kind":"systemd-limit","target":"x.service","name":"ExecStartPre","to":"/bin/touch /tmp/pwned"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileName), b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, _, err := Read(filepath.Join(dir, FileName))
		if err != nil {
			return
		}
		for i := range s.Changes {
			if err := s.Changes[i].Check(); err != nil {
				t.Fatalf("Read accepted change %d that fails its grammar: %v", i+1, err)
			}
		}
		out := filepath.Join(t.TempDir(), "set")
		if _, err := Write(out, s); err != nil {
			t.Fatalf("a set Read accepted does not write: %v", err)
		}
		again, _, err := Read(out)
		if err != nil || len(again.Changes) != len(s.Changes) {
			t.Fatalf("write then read: %v", err)
		}
	})
}
