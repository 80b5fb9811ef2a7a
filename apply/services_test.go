package apply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/changeset"
)

func TestUnifiedDiff(t *testing.T) {
	old := []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n")
	cases := []struct {
		name     string
		old, new string
		exists   bool
		want     string
	}{
		{name: "equal", old: "x\n", new: "x\n", exists: true, want: ""},
		{name: "new file", new: "x = 1\ny = 2\n", want: "--- /dev/null\n+++ /f\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"},
		{name: "one line changed, context", old: string(old), new: strings.Replace(string(old), "e\n", "E\n", 1), exists: true,
			want: "--- /f\n+++ /f\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"},
		{name: "two hunks", old: string(old), new: strings.Replace(strings.Replace(string(old), "a\n", "A\n", 1), "j\n", "j\nk\n", 1), exists: true,
			want: "--- /f\n+++ /f\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n@@ -8,3 +8,4 @@\n h\n i\n j\n+k\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnifiedDiff("/f", []byte(tc.old), []byte(tc.new), tc.exists); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestCommandCheckStrict(t *testing.T) {
	ctx := context.Background()
	if err := CommandCheckStrict("sh", "-c", "echo fine; echo '[Warning] meh' >&2")(ctx); err != nil {
		t.Errorf("a clean run fails: %v", err)
	}
	for name, script := range map[string]string{
		"exit status":     "echo broken >&2; exit 3",
		"[ERROR] line":    "echo '2024-01-01 0 [ERROR] InnoDB: invalid value' >&2; echo '[Warning] x' >&2",
		"error: line":     "echo 'error: Found option without preceding group' >&2",
		"on stdout":       "echo '[ERROR] printed on stdout'",
		"unknown option:": "echo \"mariadbd: unknown option '--bogus'\" >&2",
	} {
		err := CommandCheckStrict("sh", "-c", script)(ctx)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if name != "exit status" && !strings.Contains(err.Error(), "errors reported") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := CommandCheck("sh", "-c", "echo '[ERROR] x' >&2")(ctx); err != nil {
		t.Errorf("CommandCheck changed: %v", err)
	}
}

func TestFromChangeSet(t *testing.T) {
	set := &changeset.Set{Format: 1, Changes: []changeset.Change{
		{Kind: changeset.Sysctl, Target: "/etc/sysctl.d", Name: "vm.swappiness", From: "60", To: "10"},
		{Kind: changeset.Systemd, Target: "mariadb.service", Name: "LimitNOFILE", From: "1024", To: "65536"},
		{Kind: changeset.Memcached, Target: "memcached", Name: "-c", To: "4096"},
		{Kind: changeset.Redis, Target: "redis", Name: "maxmemory", To: "1gb"},
		{Kind: changeset.App, Target: "app", Name: "N+1", To: "one query"},
	}}
	x := t.TempDir()
	ts, notes, err := FromChangeSet(set, Services{SysctlConf: filepath.Join(x, "sysctl.conf"), SystemdDir: filepath.Join(x, "system"), ProcRoot: "/x/proc"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range ts {
		names = append(names, tg.Name())
		if !isHostWide(tg) {
			t.Errorf("%s is not host-wide", tg.Name())
		}
	}
	if strings.Join(names, ",") != "sysctl,systemd mariadb.service" {
		t.Errorf("targets %v", names)
	}
	if f := filesOf(ts[1])[0].Path; f != filepath.Join(x, "system/mariadb.service.d/stacktune.conf") {
		t.Errorf("drop-in path %s", f)
	}
	if p := ts[0].(*Sysctl).ProcRoot; p != "/x/proc" {
		t.Errorf("ProcRoot %s", p)
	}
	all := strings.Join(notes, "\n")
	for _, w := range []string{"not applied: memcached-flag -c", "not applied: redis-config maxmemory", "not applied: code N+1"} {
		if !strings.Contains(all, w) {
			t.Errorf("notes lack %q:\n%s", w, all)
		}
	}
	set.Changes = append(set.Changes, changeset.Change{Kind: changeset.MySQLVariable, Target: "mysqld", Name: "max_connections", To: "10"})
	if !NeedsDB(set) {
		t.Error("NeedsDB")
	}
	if _, _, err := FromChangeSet(set, Services{}); err == nil || !strings.Contains(err.Error(), "need the server") {
		t.Errorf("mysql without a DB: %v", err)
	}
}

// TestDropInsAccumulate: a second transaction edits the drop-in the first
// wrote, setting by setting, so the first's settings stay in the file a
// restart reads; the rollback of the second gives back the first's file.
func TestDropInsAccumulate(t *testing.T) {
	proc := t.TempDir()
	for k, v := range map[string]string{"vm/swappiness": "60", "net/core/somaxconn": "128"} {
		os.MkdirAll(filepath.Dir(filepath.Join(proc, k)), 0o755)
		os.WriteFile(filepath.Join(proc, k), []byte(v+"\n"), 0o644)
	}
	conf := filepath.Join(t.TempDir(), "99-stacktune.conf")
	opt := Options{StateDir: t.TempDir(), HostWide: true}
	ctx := context.Background()
	apply := func(cs ...changeset.Change) {
		t.Helper()
		s, err := NewSysctl(conf, cs)
		if err != nil {
			t.Fatal(err)
		}
		s.ProcRoot = proc
		if _, err := Run(ctx, []Target{s}, opt); err != nil {
			t.Fatal(err)
		}
	}
	apply(changeset.Change{Kind: changeset.Sysctl, Name: "vm.swappiness", From: "60", To: "10", Finding: "linux-swappiness", Title: "swap"})
	first, _ := os.ReadFile(conf)
	apply(changeset.Change{Kind: changeset.Sysctl, Name: "net.core.somaxconn", From: "128", To: "4096", Finding: "linux-somaxconn", Title: "queue"},
		changeset.Change{Kind: changeset.Sysctl, Name: "vm.swappiness", From: "10", To: "1", Finding: "linux-swappiness", Title: "swap"})
	b, _ := os.ReadFile(conf)
	vals := changeset.Values(must(changeset.SysctlD.Parse(b)))
	if vals["vm.swappiness"] != "1" || vals["net.core.somaxconn"] != "4096" || strings.Count(string(b), "vm.swappiness") != 1 {
		t.Errorf("drop-in after two transactions:\n%s", b)
	}
	ts, err := RollbackTargets(opt.StateDir, Services{ProcRoot: proc, HostWide: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Rollback(ctx, ts, opt); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(conf); string(b) != string(first) {
		t.Errorf("after rolling back the second:\n%s\nwant\n%s", b, first)
	}
	if b, _ := os.ReadFile(filepath.Join(proc, "vm/swappiness")); strings.TrimSpace(string(b)) != "10" {
		t.Errorf("swappiness %q", b)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestRollbackTargets rebuilds a sysctl target from its journal, only
// when host-wide changes are allowed.
func TestRollbackTargets(t *testing.T) {
	proc := t.TempDir()
	knob := filepath.Join(proc, "vm", "swappiness")
	os.MkdirAll(filepath.Dir(knob), 0o755)
	os.WriteFile(knob, []byte("60\n"), 0o644)
	conf := filepath.Join(t.TempDir(), "99-stacktune.conf")
	s, err := NewSysctl(conf, []changeset.Change{{Kind: changeset.Sysctl, Name: "vm.swappiness", From: "60", To: "10"}})
	if err != nil {
		t.Fatal(err)
	}
	s.ProcRoot = proc
	ctx := context.Background()
	opt := Options{StateDir: t.TempDir(), HostWide: true}
	if _, err := Run(ctx, []Target{s}, opt); err != nil {
		t.Fatal(err)
	}
	a, err := LastApplied(opt.StateDir)
	if err != nil || a == nil || strings.Join(a.Targets, ",") != "sysctl" || a.Files[0] != conf {
		t.Fatalf("LastApplied: %+v %v", a, err)
	}
	if ts, err := RollbackTargets(opt.StateDir, Services{ProcRoot: proc}); err != nil || len(ts) != 0 {
		t.Errorf("without HostWide: %v %v", ts, err)
	}
	ts, err := RollbackTargets(opt.StateDir, Services{ProcRoot: proc, HostWide: true})
	if err != nil || len(ts) != 1 {
		t.Fatalf("%v %v", ts, err)
	}
	if _, err := Rollback(ctx, ts, opt); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(knob); strings.TrimSpace(string(b)) != "60" {
		t.Errorf("swappiness = %q", b)
	}
	if a, err := LastApplied(opt.StateDir); a != nil || err != nil {
		t.Errorf("after the rollback: %+v %v", a, err)
	}
}

func TestSplitIndexKey(t *testing.T) {
	for k, ok := range map[string]bool{"s.t.i": true, ".t.i": true, "t.i": false, "s.t.": false, "a.b.c.d": false} {
		if _, _, _, got := splitIndexKey(k); got != ok {
			t.Errorf("%q: %v", k, got)
		}
	}
}
