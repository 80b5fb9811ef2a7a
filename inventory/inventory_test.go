package inventory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const sample = `# a fleet as an Ansible user keeps it
bastion ansible_host=192.0.2.1

[web]
web[01:03].example.com ansible_user=deploy
web09.example.com:2222 ansible_host=192.0.2.9   # the odd one

[db]
db1 ansible_host=192.0.2.20 ansible_ssh_user=mysql ansible_ssh_private_key_file="~/.ssh/db key.pem"

[web:vars]
stacktune_collect_args="--nginx-conf /etc/nginx/nginx.conf"
ansible_user = www

[prod:children]
web
db

[prod:vars]
ansible_user=ops
env=prod

[all:vars]
ansible_port=22
env=none
`

func TestParse(t *testing.T) {
	inv, err := Parse("hosts.ini", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range inv.Hosts {
		names = append(names, h.Name)
	}
	want := []string{"bastion", "web01.example.com", "web02.example.com", "web03.example.com", "web09.example.com", "db1"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("hosts %v, want %v", names, want)
	}
	tests := []struct {
		name                string
		addr, user, key     string
		port                int
		role                string
		groups              []string
		env, collectArgsHas string
	}{
		{"bastion", "192.0.2.1", "", "", 22, Ungrouped, []string{Ungrouped}, "none", ""},
		// The host's own var beats web:vars, which beats prod:vars (depth).
		{"web01.example.com", "web01.example.com", "deploy", "", 22, "web", []string{"prod", "web"}, "prod", "--nginx-conf"},
		// web:vars (depth 2) beats prod:vars (depth 1).
		{"web09.example.com", "192.0.2.9", "www", "", 2222, "web", []string{"prod", "web"}, "prod", "--nginx-conf"},
		{"db1", "192.0.2.20", "mysql", "~/.ssh/db key.pem", 22, "db", []string{"db", "prod"}, "prod", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h *Host
			for i := range inv.Hosts {
				if inv.Hosts[i].Name == tc.name {
					h = &inv.Hosts[i]
				}
			}
			if h == nil {
				t.Fatal("missing")
			}
			if h.Address != tc.addr || h.User != tc.user || h.KeyFile != tc.key || h.Port != tc.port || h.Role != tc.role || h.Connection != "ssh" {
				t.Errorf("got addr %q user %q key %q port %d role %q conn %q", h.Address, h.User, h.KeyFile, h.Port, h.Role, h.Connection)
			}
			if !reflect.DeepEqual(h.Groups, tc.groups) {
				t.Errorf("groups %v, want %v", h.Groups, tc.groups)
			}
			if h.Vars["env"] != tc.env {
				t.Errorf("env %q, want %q", h.Vars["env"], tc.env)
			}
			if got := h.Vars["stacktune_collect_args"]; !strings.Contains(got, tc.collectArgsHas) || (tc.collectArgsHas == "" && got != "") {
				t.Errorf("stacktune_collect_args %q", got)
			}
		})
	}
	if got := inv.Roles(); !reflect.DeepEqual(got, []string{Ungrouped, "web", "db"}) {
		t.Errorf("roles %v", got)
	}
	sel, err := inv.Select([]string{"prod"})
	if err != nil || len(sel) != 5 {
		t.Errorf("select prod: %d hosts, %v", len(sel), err)
	}
	if _, err := inv.Select([]string{"nosuch"}); err == nil {
		t.Error("select of an unknown group: no error")
	}
}

func TestRanges(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
	}{
		{"a", []string{"a"}},
		{"w[1:3]", []string{"w1", "w2", "w3"}},
		{"w[08:10].x", []string{"w08.x", "w09.x", "w10.x"}},
		{"db-[a:c]", []string{"db-a", "db-b", "db-c"}},
		{"n[0:6:3]", []string{"n0", "n3", "n6"}},
		{"r[1:2]c[a:b]", []string{"r1ca", "r1cb", "r2ca", "r2cb"}},
		{"[1:2].web", []string{"1.web", "2.web"}},
		// Ansible's letters are string.ascii_letters: a-z, then A-Z.
		{"z[x:B]", []string{"zx", "zy", "zz", "zA", "zB"}},
		{"w[:2]", []string{"w0", "w1", "w2"}},
		// The step is added only while a value is left: no overflow at the top.
		{"w[18446744073709551614:18446744073709551615]", []string{"w18446744073709551614", "w18446744073709551615"}},
		{"w[9223372036854775806:9223372036854775807]", []string{"w9223372036854775806", "w9223372036854775807"}},
		{"w[a:z:9223372036854775807]", []string{"wa"}},
		{"w[1:3:18446744073709551615]", []string{"w1"}},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			got, err := expand(tc.pattern, 100)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("expand = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"yaml", "all:\n  hosts:\n    web1:\n", "YAML inventory"},
		{"bad section", "[web:nope]\nw1\n", "[web:nope]: a section is"},
		{"unclosed section", "[web\nw1\n", "closing ]"},
		{"bad var", "[web]\nw1 port\n", "variables are NAME=VALUE"},
		{"unclosed quote", "[web]\nw1 a='x\n", "unclosed ' quote"},
		{"bad range", "[web]\nw[3:1]\n", "start after end"},
		{"padding of unequal length", "[web]\nw[01:100]\n", "w[01:100]: [01:100]: a zero-padded range's start and end must be as long as each other"},
		{"bound past uint64", "[web]\nw[0:99999999999999999999]\n", "a bound past 18446744073709551615"},
		{"zero step", "[web]\nw[0:9:0]\n", "the step must be an integer from 1"},
		{"range without end", "[web]\nw[3:]\n", "the range has no end"},
		{"bad port", "w1:http\n", "must be a number"},
		{"port out of range", "w1 ansible_port=70000\n", "is not a port"},
		{"cycle", "[a:children]\nb\n[b:children]\na\n", "its own ancestor"},
		{"binary", "w1\n\x00\xff\n", "not text"},
		{"vars line", "[web:vars]\njust words\n", "NAME=VALUE lines"},
		{"child name", "[a:children]\nb c\n", "is not a group name"},
		{"all child", "[a:children]\nall\n", "all cannot be a child"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("inv", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			var es *Errors
			if errors.As(err, &es) && strings.Contains(tc.src, "\n") && es.List[0].Line == 0 {
				t.Errorf("no line number: %v", err)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	if _, err := Parse("big", []byte("[web]\nw[0:999999]\n")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a million hosts: %v", err)
	}
	if _, err := Parse("big", []byte("[web]\nw[0:999]x[0:999]\n")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("two ranges multiplying: %v", err)
	}
	long := "w1 x=" + strings.Repeat("a", MaxLine+10) + "\n"
	if _, err := Parse("long", []byte(long)); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("long line: %v", err)
	}
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	many := strings.Repeat("w1 x=\n", 10) + strings.Repeat("[\n", 200)
	_, err := Parse("many", []byte(many))
	var es *Errors
	if !errors.As(err, &es) || len(es.List) != maxErrors || es.Dropped != 100 {
		t.Errorf("200 bad lines: %v", err)
	}
	p := filepath.Join(dir, "hosts")
	if err := os.WriteFile(p, []byte("[web]\nw1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if inv, err := Load(p); err != nil || len(inv.Hosts) != 1 {
		t.Errorf("Load: %v", err)
	}
}

// TestRangeBounds: no range, however written, takes more than linear time
// or memory in what the file holds; what passes a bound is an error naming
// the line and the bound.
func TestRangeBounds(t *testing.T) {
	zeros := strings.Repeat("0", 30000)
	allVars := "[all:vars]\n"
	for i := range 30 {
		allVars += fmt.Sprintf("v%d=x\n", i)
	}
	tests := []struct {
		name, src string
		hosts     int    // when no error
		want      string // the error
	}{
		// (b-a)/step+1 overflowed an int and passed the size check.
		{"int64 range", "[web]\nweb[0:9223372036854775807]\n", 0,
			"inv:2: web[0:9223372036854775807] expands to 9223372036854775808 hosts, more than an inventory holds (inventory.MaxHosts = 100000)"},
		{"uint64 range", "[web]\nweb[0:18446744073709551615]\n", 0,
			"inv:2: web[0:18446744073709551615] expands to more than 18446744073709551615 hosts"},
		// v += step wrapped below the end and looped for ever.
		{"step past the top", "[web]\nw[9223372036854775806:9223372036854775807]\n", 2, ""},
		{"letter step past the top", "[web]\nw[a:z:9223372036854775807]\n", 1, ""},
		{"product of ranges", "[web]\nw1\na[0:99999]b[0:99999]c[0:99999]d[0:99999]\n", 0,
			"inv:3: a[0:99999]b[0:99999]c[0:99999]d[0:99999] expands to more than 18446744073709551615 hosts"},
		{"product over the cap", "[web]\nw[1:1000]x[1:1000]\n", 0, "inv:2: w[1:1000]x[1:1000] expands to 1000000 hosts"},
		// 100,000 names of 30,000 digits each were 3 GB.
		{"zero padding", "[web]\nw[" + zeros + "1:" + zeros[5:] + "100000]\n", 0,
			"]: a bound longer than a host name"},
		{"padding and prefix", "[web]\n" + strings.Repeat("x", 100) + "[" + zeros[:199] + "1:" + zeros[:195] + "10000]\n", 0,
			"its names would be up to 300 bytes long, more than a host name's 253"},
		{"long names", "[web]\n" + strings.Repeat("x", 250) + "[1:1000]\n", 0, "its names would be up to 254 bytes long"},
		{"hosts across the inventory", "[a]\na[1:40000]\n[b]\nb[1:40000]\n[c]\nc[1:40000]\n", 0,
			"inv:6: c[1:40000]: with this line the inventory has more than 100000 hosts (inventory.MaxHosts)"},
		{"repeated hosts", "[a]\nw[1:60000]\n[b]\nw[1:60000]\n[c]\nw[1:60000]\n[d]\nw[1:60000]\n", 0,
			"inv:8: w[1:60000] expands to 60000 hosts: with the lines before it, host lines name more than 200000 hosts"},
		// Each host was looked for in its group's list: 42 s on main.
		{"the cap, linear", "[web]\nweb[1:100000]\n", 100000, ""},
		{"group variables times hosts", allVars + "[web]\nweb[1:100000]\n", 0,
			"with its groups' variables the hosts have more than 2000000 variables and groups (inventory.MaxHostEntries)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			var inv *Inventory
			var err error
			go func() {
				defer close(done)
				inv, err = Parse("inv", []byte(tc.src))
			}()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("Parse did not end within 15 s")
			}
			if tc.want == "" {
				if err != nil || len(inv.Hosts) != tc.hosts {
					t.Fatalf("err %v, want %d hosts", err, tc.hosts)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %q", err, tc.want)
			}
			if strings.Contains(tc.want, "inventory.Max") && !errors.Is(err, ErrTooLarge) {
				t.Errorf("%v is not ErrTooLarge", err)
			}
		})
	}
}
