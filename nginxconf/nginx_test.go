package nginxconf

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/collect"
)

// nginxBinary finds nginx, or skips the test saying why.
func nginxBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nginx", "/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"} {
		if bin, err := exec.LookPath(p); err == nil {
			return bin
		}
	}
	t.Skip("nginx is not installed (Debian: apt-get install nginx-core): results are not checked with nginx -t")
	return ""
}

// copyConf copies testdata/NAME into a new directory, with logs/ and
// tmp/ for the paths the configurations name, and returns it.
func copyConf(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dst, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// nginxT runs nginx -t on DIR/nginx.conf with DIR as the prefix, the
// error log and (when the configuration names none) the pid file inside
// DIR, and returns its output and whether the test passed.
func nginxT(t *testing.T, bin, dir string) (string, bool) {
	t.Helper()
	conf := filepath.Join(dir, "nginx.conf")
	args := []string{"-t", "-p", dir + "/", "-c", conf, "-e", filepath.Join(dir, "error.log")}
	c, err := Load(conf)
	if err != nil {
		t.Fatal(err)
	}
	hasPid := false
	for _, k := range c.root.kids {
		hasPid = hasPid || k.name == "pid"
	}
	if !hasPid {
		args = append(args, "-g", "pid "+filepath.Join(dir, "nginx.pid")+";")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err == nil
}

// writeOut writes Apply's result, made for the configuration under
// testdata/NAME, into its copy dir.
func writeOut(t *testing.T, name, dir string, out map[string][]byte) {
	t.Helper()
	base, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	for p, b := range out {
		rel, err := filepath.Rel(base, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("%s is outside %s", p, base)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestApplyNginxT: every result of TestApply's cases passes the real
// nginx -t (and so do the configurations before, except quirks, whose
// duplicate server_tokens only the edit removes).
func TestApplyNginxT(t *testing.T) {
	bin := nginxBinary(t)
	for _, name := range []string{"debian", "isucon", "keepalive"} {
		if out, ok := nginxT(t, bin, copyConf(t, name)); !ok {
			t.Fatalf("the unedited %s fails nginx -t (the harness is wrong):\n%s", name, out)
		}
	}
	if out, ok := nginxT(t, bin, copyConf(t, "quirks")); ok || !strings.Contains(out, `"server_tokens" directive is duplicate`) {
		t.Errorf("the unedited quirks should fail nginx -t on its duplicate server_tokens:\n%s", out)
	}
	for _, tc := range applyCases {
		t.Run(tc.name, func(t *testing.T) {
			edits, err := ParseSnippet([]byte(tc.snippet))
			if err != nil {
				t.Fatal(err)
			}
			res, err := loadConf(t, tc.conf).Apply(edits)
			if err != nil {
				t.Fatal(err)
			}
			dir := copyConf(t, tc.conf)
			writeOut(t, tc.conf, dir, res)
			out, ok := nginxT(t, bin, dir)
			if tc.name == "inline-blocks-and-shared-lines" {
				// It leaves the duplicate server_tokens of quirks.
				if ok || !strings.Contains(out, `"server_tokens" directive is duplicate`) {
					t.Errorf("want only the duplicate server_tokens error:\n%s", out)
				}
				return
			}
			if !ok {
				t.Errorf("nginx -t fails on the result:\n%s", out)
			}
		})
	}
}

// TestEmitApplyNginxT is the whole path: collect a configuration, audit
// it, emit the snippet, apply it to the configuration, and nginx -t the
// result; applying the snippet again changes nothing.
func TestEmitApplyNginxT(t *testing.T) {
	bin := nginxBinary(t)
	for _, name := range []string{"debian", "isucon", "keepalive"} {
		t.Run(name, func(t *testing.T) {
			dir := copyConf(t, name)
			conf := filepath.Join(dir, "nginx.conf")
			snap := &collect.Snapshot{Host: "web1", Taken: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
			// A full accept queue on port 80, so the listen backlog rule
			// speaks too.
			snap.Linux = &collect.Linux{
				Sysctls: map[string]string{"net.core.somaxconn": "65535"},
				TCP:     collect.TCP{Listen: []collect.ListenSocket{{Address: "0.0.0.0", Port: 80, AcceptQueue: 60000}}},
			}
			if err := collect.NewNginx(conf).Collect(context.Background(), snap); err != nil {
				t.Fatal(err)
			}
			res := advise.Audit(snap, advise.Options{})
			emitted, err := advise.Emit(filepath.Join(t.TempDir(), "emit"), res)
			if err != nil {
				t.Fatal(err)
			}
			var snippet []byte
			for _, p := range emitted {
				if strings.HasSuffix(filepath.ToSlash(p), advise.EmitNginx) {
					if snippet, err = os.ReadFile(p); err != nil {
						t.Fatal(err)
					}
				}
			}
			if snippet == nil {
				t.Fatalf("no nginx snippet among %q", emitted)
			}
			edits, err := ParseSnippet(snippet)
			if err != nil {
				t.Fatalf("%v\n%s", err, snippet)
			}
			contexts := map[string]bool{}
			for _, e := range edits {
				contexts[e.Context] = true
			}
			t.Logf("%d edits in %d contexts:\n%s", len(edits), len(contexts), snippet)
			c, err := Load(conf)
			if err != nil {
				t.Fatal(err)
			}
			out, err := c.Apply(edits)
			if err != nil {
				t.Fatalf("%v\n%s", err, snippet)
			}
			if len(out) == 0 {
				t.Fatal("the snippet changed nothing")
			}
			for p, b := range out {
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if msg, ok := nginxT(t, bin, dir); !ok {
				t.Fatalf("nginx -t fails on the result:\n%s\nsnippet:\n%s", msg, snippet)
			}
			again, err := Load(conf)
			if err != nil {
				t.Fatal(err)
			}
			if twice, err := again.Apply(edits); err != nil || len(twice) != 0 {
				t.Errorf("applying the snippet again: %d files changed, %v", len(twice), err)
			}
		})
	}
}
