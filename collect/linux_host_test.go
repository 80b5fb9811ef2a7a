package collect

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	cases := []struct {
		line string
		want Mount
		ok   bool
	}{
		{"36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue", Mount{Point: "/mnt2", Device: "98:0", FSType: "ext3", Source: "/dev/root", Options: "rw,noatime,rw,errors=continue"}, true},
		{"29 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw", Mount{Point: "/", Device: "8:1", FSType: "ext4", Source: "/dev/sda1", Options: "rw,relatime,rw"}, true},
		{`40 29 8:2 / /var/lib/my\040data rw,relatime - xfs /dev/sdb1 rw`, Mount{Point: "/var/lib/my data", Device: "8:2", FSType: "xfs", Source: "/dev/sdb1", Options: "rw,relatime,rw"}, true},
		{"garbage", Mount{}, false},
		{"1 2 3 4 5 6 -", Mount{}, false},
	}
	for _, tc := range cases {
		got, ok := parseMountinfo(tc.line)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.line, got, ok, tc.want)
		}
	}
	l := &Linux{Mounts: []Mount{{Point: "/"}, {Point: "/var/lib/mysql"}, {Point: "/var"}}}
	for path, want := range map[string]string{"/var/lib/mysql/ib_logfile0": "/var/lib/mysql", "/var/log": "/var", "/home": "/", "/var/lib/mysqlx": "/var"} {
		if m := l.MountOf(path); m == nil || m.Point != want {
			t.Errorf("MountOf(%s) = %+v, want %s", path, m, want)
		}
	}
}

func TestNUMAAndAllocator(t *testing.T) {
	sys := t.TempDir()
	for _, d := range []string{"node0", "node1", "power", "has_cpu"} {
		if err := os.MkdirAll(filepath.Join(sys, "devices", "system", "node", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if n := countNUMANodes(sys); n != 2 {
		t.Errorf("%d nodes", n)
	}
	if n := countNUMANodes(t.TempDir()); n != 0 {
		t.Errorf("%d nodes without sysfs", n)
	}
	dir := t.TempDir()
	maps := "55d0 r--p 00000000 08:01 1 /usr/sbin/mariadbd\n7f10 r-xp 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n"
	if err := os.WriteFile(filepath.Join(dir, "maps"), []byte(maps), 0o644); err != nil {
		t.Fatal(err)
	}
	if a := processAllocator(dir); a != "jemalloc" {
		t.Errorf("allocator %q", a)
	}
	if a := processAllocator(t.TempDir()); a != "" {
		t.Errorf("allocator %q without maps", a)
	}
	// This host: mounts read, / among them.
	s := &Snapshot{}
	if err := NewLinux(LinuxOptions{Processes: []string{"none-such"}}).Collect(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if m := s.Linux.MountOf("/"); m == nil || m.FSType == "" {
		t.Errorf("mounts %+v", s.Linux.Mounts)
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue")
	f.Add(`1 2 3 4 /a\040b\ c - x y z`)
	f.Fuzz(func(t *testing.T, line string) {
		m, ok := parseMountinfo(line)
		if ok && m.Point == "" && m.FSType == "" {
			t.Fatalf("%q: %+v", line, m)
		}
	})
}
