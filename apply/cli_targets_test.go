package apply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

func TestFromEmitDir(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := FromEmitDir(dir, EmitTargets{}); err == nil || !strings.Contains(err.Error(), "none of the files") {
		t.Errorf("empty dir: %v", err)
	}
	write("sysctl/99-stacktune.conf", "vm.swappiness = 10\n")
	write("systemd/mariadb.service.d/stacktune.conf", "[Service]\nLimitNOFILE=65536\n")
	write("memcached/options", "-c 4096\n")
	write("redis/stacktune.conf", "maxmemory 1gb\n")
	write("notes.txt", "hello\n")
	ts, notes, err := FromEmitDir(dir, EmitTargets{SysctlConf: "/x/sysctl.conf", SystemdDir: "/x/system", ProcRoot: "/x/proc"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range ts {
		names = append(names, tg.Name())
		if !tg.HostWide() {
			t.Errorf("%s is not host-wide", tg.Name())
		}
	}
	if strings.Join(names, ",") != "sysctl,systemd mariadb.service" {
		t.Errorf("targets %v", names)
	}
	if f := ts[1].Files()[0].Path; f != "/x/system/mariadb.service.d/stacktune.conf" {
		t.Errorf("drop-in path %s", f)
	}
	if p := ts[0].(*Sysctl).ProcRoot; p != "/x/proc" {
		t.Errorf("ProcRoot %s", p)
	}
	all := strings.Join(notes, "\n")
	for _, w := range []string{"memcached/options: not applied", "redis/stacktune.conf: not applied", "notes.txt: not applied"} {
		if !strings.Contains(all, w) {
			t.Errorf("notes lack %q:\n%s", w, all)
		}
	}

	write("mysql/99-stacktune.cnf", "[mysqld]\nmax_connections = 10\n")
	if !EmitHasMySQL(dir) {
		t.Error("EmitHasMySQL")
	}
	if _, _, err := FromEmitDir(dir, EmitTargets{}); err == nil || !strings.Contains(err.Error(), "needs the server") {
		t.Errorf("mysql without a DB: %v", err)
	}
}

// TestRollbackTargets rebuilds a sysctl target from its journal, only
// when host-wide changes are allowed.
func TestRollbackTargets(t *testing.T) {
	proc := t.TempDir()
	knob := filepath.Join(proc, "vm", "swappiness")
	os.MkdirAll(filepath.Dir(knob), 0o755)
	os.WriteFile(knob, []byte("60\n"), 0o644)
	conf := filepath.Join(t.TempDir(), "99-stacktune.conf")
	s, err := NewSysctl(conf, []byte("vm.swappiness = 10\n"))
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
	if ts, err := RollbackTargets(opt.StateDir, EmitTargets{ProcRoot: proc}); err != nil || len(ts) != 0 {
		t.Errorf("without HostWide: %v %v", ts, err)
	}
	ts, err := RollbackTargets(opt.StateDir, EmitTargets{ProcRoot: proc, HostWide: true})
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

func TestIndexFromKey(t *testing.T) {
	for k, ok := range map[string]bool{"s.t.i": true, ".t.i": true, "t.i": false, "s.t.": false, "a.b.c.d": false} {
		if _, got := indexFromKey(k); got != ok {
			t.Errorf("%q: %v", k, got)
		}
	}
}
