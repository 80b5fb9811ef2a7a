package advise

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/internal/golden"
)

// emitSnap is a host with something to change in every file Emit writes.
func emitSnap(t testing.TB) *collect.Snapshot {
	s := snapFor(serverNamed(t, "MariaDB 10.11"))
	everythingWrong(s)
	setVar(s, "innodb_flush_method", "fsync")
	phpToMySQL(s)
	s.Linux.Sysctls["net.ipv4.tcp_max_tw_buckets"] = "4096"
	s.Linux.Memory.SwapTotalBytes, s.Linux.Memory.SwapFreeBytes = 2*gib, gib
	s.Nginx = loadNginx(t, "isucon")
	s.Nginx.WorkerRlimitNofile = 0 // the workers keep nginx.service's LimitNOFILE
	s.Linux.Processes = append(s.Linux.Processes,
		collect.Process{PID: 200, Name: "nginx", Pattern: "nginx", RSSBytes: 8 * mib, Limits: map[string]collect.Limit{"nofile": {Soft: 1024, Hard: 1024}}})
	s.Memcached = memcachedLayer()
	s.Memcached.Addr = "127.0.0.1:11211"
	s.Memcached.Evictions = 86400
	s.Redis = redisLayer()
	s.Redis.MaxMemory = 0
	s.Redis.Config["maxmemory"] = "0"
	return s
}

// TestAuditGolden: the whole audit of emitSnap as JSON, reviewed.
func TestAuditGolden(t *testing.T) {
	res := Audit(emitSnap(t), Options{AllowDurabilityLoss: true, Fixed: map[string]string{"innodb_doublewrite": "1"}})
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "audit.golden.json"), append(b, '\n'))
}

// TestEmitGolden: every file Emit writes, reviewed.
func TestEmitGolden(t *testing.T) {
	res := Audit(emitSnap(t), Options{AllowDurabilityLoss: true, Fixed: map[string]string{"innodb_doublewrite": "1"}})
	dir := t.TempDir()
	paths, err := Emit(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, p := range paths {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, filepath.ToSlash(rel))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "emit", rel), b)
		if rel != changeset.FileName {
			checkCommented(t, rel, string(b))
		}
	}
	want := []string{changeset.FileName, changeset.MemcachedFile, changeset.MySQLFile, changeset.NginxFile, changeset.RedisFile, changeset.SysctlFile,
		"systemd/mariadb.service.d/stacktune.conf", "systemd/nginx.service.d/stacktune.conf"}
	if strings.Join(rels, " ") != strings.Join(want, " ") {
		t.Errorf("files %q, want %q", rels, want)
	}
	if left := listTree(t, dir); len(left) != len(want)+len(dirsOf(want)) {
		t.Errorf("left behind: %q", left)
	}
	// The doublewrite buffer is fixed: never in the file.
	b, _ := os.ReadFile(filepath.Join(dir, changeset.MySQLFile))
	if strings.Contains(string(b), "innodb_doublewrite") {
		t.Error("a fixed setting was written")
	}
	if !strings.Contains(string(b), "#   durability: ") {
		t.Error("durability-relaxing lines must carry their cost")
	}
	// What apply reads back is the audit's change set.
	set, notes, err := changeset.Read(dir)
	if err != nil || len(notes) != 0 {
		t.Fatalf("changeset.Read: %v %v", err, notes)
	}
	if got, want := len(set.Changes), len(res.ChangeSet().Changes); got != want || set.Server != "MariaDB 10.11.19" {
		t.Errorf("read back %d changes for %q, want %d", got, set.Server, want)
	}
	for _, ch := range set.Changes {
		if ch.Finding == "" || ch.Activation == "" || ch.Risk == nil {
			t.Errorf("%s: finding %q activation %q risk %v", ch.Name, ch.Finding, ch.Activation, ch.Risk)
		}
	}
}

// checkCommented: every setting line follows a "# <finding id>: " comment.
func checkCommented(t *testing.T, rel, text string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		if l == "" || strings.HasPrefix(l, "#") || l == "[mysqld]" || l == "[Service]" {
			continue
		}
		j := i - 1
		for j >= 0 && strings.HasPrefix(lines[j], "#   ") {
			j--
		}
		if j < 0 || !strings.HasPrefix(lines[j], "# ") || !strings.Contains(lines[j], ": ") {
			t.Errorf("%s:%d %q has no finding comment above it", rel, i+1, l)
			continue
		}
		id := strings.TrimPrefix(strings.SplitN(lines[j], ":", 2)[0], "# ")
		known := id == "fixed-settings"
		for _, r := range Rules {
			known = known || r.ID() == id
		}
		if !known {
			t.Errorf("%s:%d: %q is no rule id", rel, j+1, id)
		}
	}
}

func dirsOf(paths []string) map[string]bool {
	d := map[string]bool{}
	for _, p := range paths {
		for p = filepath.Dir(p); p != "."; p = filepath.Dir(p) {
			d[p] = true
		}
	}
	return d
}

// listTree lists everything under dir, relative, sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestEmitNothing: no changes, no files.
func TestEmitNothing(t *testing.T) {
	dir := t.TempDir()
	paths, err := Emit(dir, &Result{})
	if err != nil || len(paths) != 0 || len(listTree(t, dir)) != 0 {
		t.Errorf("%v %v %v", paths, err, listTree(t, dir))
	}
	if _, err := Emit(dir, nil); err == nil {
		t.Error("nil result")
	}
}

// TestEmitReplaces: a second Emit replaces the files and leaves no backup.
func TestEmitReplaces(t *testing.T) {
	dir := t.TempDir()
	res := Audit(emitSnap(t), Options{})
	first, err := Emit(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	before := listTree(t, dir)
	second, err := Emit(dir, res)
	if err != nil || strings.Join(first, " ") != strings.Join(second, " ") {
		t.Fatalf("%v %v", second, err)
	}
	if after := listTree(t, dir); strings.Join(before, " ") != strings.Join(after, " ") {
		t.Errorf("before %q after %q", before, after)
	}
}

// TestEmitAllOrNothing: when a file cannot be written, nothing is left
// behind and a file that was there before is put back.
func TestEmitAllOrNothing(t *testing.T) {
	res := Audit(emitSnap(t), Options{})

	t.Run("directory under a regular file", func(t *testing.T) {
		tmp := t.TempDir()
		blocker := filepath.Join(tmp, "file")
		if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths, err := Emit(filepath.Join(blocker, "out"), res)
		if err == nil || paths != nil {
			t.Fatalf("Emit under a file: %v %v", paths, err)
		}
		if got := listTree(t, tmp); strings.Join(got, " ") != "file" {
			t.Errorf("left: %q", got)
		}
	})

	t.Run("fails midway: rolled back", func(t *testing.T) {
		dir := t.TempDir()
		// An old drop-in that the first file replaces, and a regular file
		// where the sysctl directory must go: mysql/ is written first,
		// then sysctl/ fails.
		old := filepath.Join(dir, changeset.MySQLFile)
		if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(old, []byte("[mysqld]\nold = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sysctl"), []byte("in the way"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := listTree(t, dir)
		paths, err := Emit(dir, res)
		if err == nil || paths != nil {
			t.Fatalf("Emit: %v %v", paths, err)
		}
		if after := listTree(t, dir); strings.Join(before, " ") != strings.Join(after, " ") {
			t.Errorf("before %q\nafter  %q", before, after)
		}
		b, _ := os.ReadFile(old)
		if string(b) != "[mysqld]\nold = 1\n" {
			t.Errorf("the old drop-in was not put back: %q", b)
		}
	})

	t.Run("unwritable directory", func(t *testing.T) {
		if os.Geteuid() == 0 {
			// Root writes through permissions; the cases above make
			// the writes fail instead.
			t.Log("running as root: permissions do not stop writes; covered by the cases above")
			return
		}
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o755)
		if paths, err := Emit(dir, res); err == nil || paths != nil {
			t.Fatalf("%v %v", paths, err)
		}
		if got := listTree(t, dir); len(got) != 0 {
			t.Errorf("left: %q", got)
		}
	})
}

// TestEmitConflict: an edited result with two values for one setting is
// refused before anything is written.
func TestEmitConflict(t *testing.T) {
	r := &Result{Findings: []Finding{
		{ID: "a", Title: "a", Change: &changeset.Change{Kind: changeset.Sysctl, Target: "/etc/sysctl.d", Name: "vm.swappiness", To: "1"}},
		{ID: "b", Title: "b", Change: &changeset.Change{Kind: changeset.Sysctl, Target: "/etc/sysctl.d", Name: "vm.swappiness", To: "10"}},
	}}
	dir := t.TempDir()
	if _, err := Emit(dir, r); err == nil {
		t.Fatal("conflict accepted")
	}
	if got := listTree(t, dir); len(got) != 0 {
		t.Errorf("left: %q", got)
	}
}

// TestEmitObservability: --emit writes performance_schema = ON and the
// slow log only when asked (Options.Observability): they cost a restart,
// memory and speed.
func TestEmitObservability(t *testing.T) {
	for _, asked := range []bool{false, true} {
		t.Run(fmt.Sprint("asked=", asked), func(t *testing.T) {
			s := snapFor(serverNamed(t, "MariaDB 10.11")) // performance_schema off, slow log off
			dir := t.TempDir()
			if _, err := Emit(dir, Audit(s, Options{Observability: asked})); err != nil {
				t.Fatal(err)
			}
			cnf, _ := os.ReadFile(filepath.Join(dir, "mysql", "99-stacktune.cnf"))
			for _, line := range []string{"performance_schema = ON", "slow_query_log = ON"} {
				if strings.Contains(string(cnf), line) != asked {
					t.Errorf("%q written = %v, want %v:\n%s", line, !asked, asked, cnf)
				}
			}
		})
	}
}
