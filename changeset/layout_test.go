package changeset

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/internal/golden"
)

// sample is a change set with one change of every kind.
func sample() *Set {
	return &Set{Source: "stacktune audit", Host: "db1", Taken: time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC), Server: "MariaDB 10.11.19",
		Changes: []Change{
			{Kind: MySQLVariable, Target: "mysqld", Name: "tmp_table_size", From: "16777216", To: "67108864", Direction: "increase", Activation: Dynamic,
				Apply: "SET GLOBAL tmp_table_size = 67108864", Finding: "mysql-tmp-table-size", Title: "Temporary tables go to disk"},
			{Kind: MySQLVariable, Target: "mysqld", Name: "max_heap_table_size", From: "16777216", To: "67108864", Activation: Dynamic, Finding: "mysql-tmp-table-size", Title: "Temporary tables go to disk"},
			{Kind: MySQLVariable, Target: "mysqld", Name: "innodb_flush_log_at_trx_commit", From: "1", To: "2", Activation: Dynamic, Finding: "mysql-flush-log-at-trx-commit", Title: "Every commit is flushed",
				Risk: &Risk{Durability: "a crash of the OS loses up to a second of commits"}},
			{Kind: MySQLVariable, Target: "mysqld", Name: "tx_isolation", Option: "transaction_isolation", From: "REPEATABLE-READ", To: "READ-COMMITTED", Activation: Dynamic, Finding: "x", Title: "y"},
			{Kind: Sysctl, Target: "/etc/sysctl.d", Name: "net.core.somaxconn", From: "128", To: "4096", Activation: Dynamic, Finding: "linux-somaxconn", Title: "Short listen queue"},
			{Kind: Nginx, Target: "nginx http {}", Name: "server_tokens", From: "on", To: "off", Activation: Reload, Finding: "nginx-server-tokens", Title: "Version shown"},
			{Kind: Nginx, Target: "nginx upstream app {} (/etc/nginx/nginx.conf:30)", Name: "keepalive", From: "", To: "32", Activation: Reload, Finding: "nginx-upstream-keepalive", Title: "No upstream keepalive"},
			{Kind: Systemd, Target: "mariadb.service", Name: "LimitNOFILE", From: "16384", To: "32768", Activation: Restart, Finding: "linux-mysqld-nofile", Title: "Few files"},
			{Kind: Memcached, Target: "memcached", Name: "-c", From: "1024", To: "4096", Activation: Restart, Finding: "memcached-connections", Title: "Connections"},
			{Kind: Redis, Target: "redis", Name: "maxmemory", From: "0", To: "1073741824", Activation: Dynamic, Finding: "redis-maxmemory", Title: "No limit"},
			{Kind: PHPFPM, Target: PHPFPMTarget("www"), Name: "pm.max_children", From: "50", To: "20", Direction: "decrease", Activation: Reload, Finding: "app-workers", Title: "More workers than the cores serve"},
			{Kind: PHPFPM, Target: PHPFPMTarget("www"), Name: "pm.max_requests", From: "0", To: "2000", Activation: Reload, Finding: "app-worker-recycling", Title: "Workers never recycled"},
			{Kind: Mount, Target: "/var/lib/mysql", Name: "options", From: "rw,relatime", To: "noatime", Activation: Manual, Finding: "linux-noatime", Title: "atime updates"},
			{Kind: Index, Target: "app.relations", Name: "ix_one_created_at", From: Absent, To: "(`one`, `created_at`)", Activation: Dynamic, Finding: "index", Title: "relations (one, created_at)"},
			{Kind: App, Target: "app", Name: "N+1", From: "one query per row", To: "one IN (...) query", Activation: Manual, Finding: "n-plus-one", Title: "N+1"},
		}}
}

func TestRenderGolden(t *testing.T) {
	files, err := Render(sample())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rel := range files {
		names = append(names, rel)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, rel := range names {
		b.WriteString("==> " + rel + " <==\n")
		b.Write(files[rel])
	}
	golden.Check(t, "testdata/render.golden", []byte(b.String()))
}

func TestWriteRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	paths, err := Write(dir, sample())
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 10 {
		t.Errorf("wrote %d files: %v", len(paths), paths)
	}
	s, notes, err := Read(dir)
	if err != nil || len(notes) != 0 {
		t.Fatalf("Read: %v %v", err, notes)
	}
	if len(s.Changes) != len(sample().Changes) || s.Changes[2].Risk.Durability == "" || s.Format != FormatVersion {
		t.Errorf("round trip: %+v", s)
	}
	// The file alone reads the same.
	if s2, _, err := Read(filepath.Join(dir, FileName)); err != nil || len(s2.Changes) != len(s.Changes) {
		t.Errorf("Read(changes.json): %v", err)
	}

	cases := []struct {
		name   string
		break_ func(t *testing.T)
		err    string
	}{
		{"a view edited by hand", func(t *testing.T) {
			appendTo(t, filepath.Join(dir, MySQLFile), "max_connections = 20\n")
		}, MySQLFile + " was edited"},
		{"a view removed", func(t *testing.T) {
			os.Remove(filepath.Join(dir, NginxFile))
		}, NginxFile + " is missing"},
		{"a view of another change set", func(t *testing.T) {
			os.MkdirAll(filepath.Join(dir, "systemd", "nginx.service.d"), 0o755)
			os.WriteFile(filepath.Join(dir, SystemdFile("nginx.service")), []byte("[Service]\nLimitNOFILE=1\n"), 0o644)
		}, "left from another change set"},
		{"changes.json edited to hold a statement in a name", func(t *testing.T) {
			b, _ := os.ReadFile(filepath.Join(dir, FileName))
			os.WriteFile(filepath.Join(dir, FileName), []byte(strings.Replace(string(b), `"name": "tmp_table_size"`, `"name": "tmp_table_size = 1; DROP TABLE x"`, 1)), 0o644)
		}, "not a variable name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Write(dir, sample()); err != nil {
				t.Fatal(err)
			}
			tc.break_(t)
			_, _, err := Read(dir)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
	t.Run("another file is named, not applied", func(t *testing.T) {
		if _, err := Write(dir, sample()); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "NOTES.txt"), []byte("mine"), 0o644)
		_, notes, err := Read(dir)
		if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "NOTES.txt") {
			t.Fatalf("%v %v", notes, err)
		}
	})
	t.Run("a smaller change set removes the views it no longer has", func(t *testing.T) {
		small := sample()
		small.Changes = small.Changes[:1]
		if _, err := Write(dir, small); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, NginxFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the old nginx view is still there")
		}
		if _, _, err := Read(dir); err != nil {
			t.Fatal(err)
		}
	})
}

// TestWriteAllOrNothing: a write that fails half-way leaves the directory
// as it was.
func TestWriteAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	first := sample()
	first.Changes = first.Changes[:5]
	if _, err := Write(dir, first); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	// systemd/ is a file: the unit's drop-in cannot be written.
	if err := os.WriteFile(filepath.Join(dir, "systemd"), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	before["systemd"] = "in the way"
	if _, err := Write(dir, sample()); err == nil {
		t.Fatal("no error")
	}
	if after := snapshot(t, dir); !equalMaps(before, after) {
		t.Errorf("the directory changed:\nbefore %v\nafter  %v", before, after)
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in, err string }{
		{"not JSON", "hello", "invalid change set"},
		{"no format", `{"changes": []}`, "no \"format\""},
		{"newer", `{"format": 9, "changes": []}`, "newer stacktune"},
		{"trailing data", `{"format": 1, "changes": []} {}`, "data after"},
		{"unknown kind", `{"format": 1, "changes": [{"kind": "shell", "name": "rm"}]}`, "unknown kind"},
		{"sysctl path", `{"format": 1, "changes": [{"kind": "sysctl", "name": "../../etc/passwd", "to": "1"}]}`, "not a sysctl name"},
		{"two values", `{"format": 1, "changes": [{"kind": "mysql-variable", "target": "mysqld", "name": "max_connections", "to": "10"}, {"kind": "mysql-variable", "target": "mysqld", "name": "max-connections", "to": "20"}]}`, "set twice"},
		{"line break", `{"format": 1, "changes": [{"kind": "mysql-variable", "target": "mysqld", "name": "init_connect", "to": "a\n[client]"}]}`, "line break"},
		{"php-fpm: no pool", `{"format": 1, "changes": [{"kind": "php-fpm-pool", "target": "php-fpm pool ", "name": "pm.max_children", "to": "20"}]}`, "not a pool name"},
		{"php-fpm: the global section", `{"format": 1, "changes": [{"kind": "php-fpm-pool", "target": "php-fpm pool global", "name": "pm.max_children", "to": "20"}]}`, "not a pool name"},
		{"php-fpm: a comment in the value", `{"format": 1, "changes": [{"kind": "php-fpm-pool", "target": "php-fpm pool www", "name": "pm", "to": "static ; x"}]}`, "cannot be written"},
		{"php-fpm: a section in the name", `{"format": 1, "changes": [{"kind": "php-fpm-pool", "target": "php-fpm pool www", "name": "[x]", "to": "1"}]}`, "not a setting name"},
		{"too large", `{"format": 1, "changes": [` + strings.Repeat(" ", maxSetBytes) + `]}`, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	files, _ := Render(sample())
	f.Add(files[FileName])
	f.Add([]byte(`{"format":1,"changes":[{"kind":"ddl","target":".t","name":"i","to":"(a)"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Decode(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		files, err := Render(s)
		if err != nil {
			t.Fatalf("a valid set does not render: %v", err)
		}
		again, err := Decode(strings.NewReader(string(files[FileName])))
		if err != nil || len(again.Changes) != len(s.Changes) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// snapshot maps every file under dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
