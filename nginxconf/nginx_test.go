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
