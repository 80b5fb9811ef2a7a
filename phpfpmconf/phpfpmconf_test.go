package phpfpmconf

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLoadDebian(t *testing.T) {
	c, err := Load("testdata/debian/php-fpm.conf")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 3 || len(c.Pools) != 2 {
		t.Fatalf("files %v, pools %d", c.Files, len(c.Pools))
	}
	www, api := c.Pool("www"), c.Pool("api")
	if www == nil || api == nil {
		t.Fatal("pools www and api")
	}
	cases := []struct {
		pool *Pool
		key  string
		want string
		ok   bool
	}{
		{www, "pm", "dynamic", true},
		{www, "pm.max_children", "5", true},
		{www, "listen", "/run/php/php8.2-fpm.sock", true},
		{www, "pm.max_requests", "0", true}, // commented out: the default
		{www, "request_terminate_timeout", "0", true},
		{www, "pm.status_path", "", true},
		{www, "no.such.key", "", false},
		{api, "pm.max_children", "50", true}, // a trailing comment dropped
		{api, "request_terminate_timeout", "30s", true},
		{api, "php_admin_value[memory_limit]", "256M", true}, // quotes dropped
		{api, "slowlog", "/var/log/php-fpm/api.slow.log", true},
	}
	for _, tc := range cases {
		got, ok := tc.pool.Value(tc.key)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s %s = %q %v, want %q %v", tc.pool.Name, tc.key, got, ok, tc.want, tc.ok)
		}
	}
	if d, ok := api.Seconds("request_terminate_timeout"); !ok || d != 30*time.Second {
		t.Errorf("30s = %v %v", d, ok)
	}
	if n, a, ok := www.Listen(); n != "unix" || a != "/run/php/php8.2-fpm.sock" || !ok {
		t.Errorf("www listens on %s %s", n, a)
	}
	if n, a, ok := api.Listen(); n != "tcp" || a != "127.0.0.1:9001" || !ok {
		t.Errorf("api listens on %s %s", n, a)
	}
	if s := api.Settings["pm.max_children"]; !strings.HasSuffix(s.File, "api.conf") || s.Line != 7 {
		t.Errorf("place %+v", s)
	}
}

func TestListen(t *testing.T) {
	for in, want := range map[string]string{
		"9000": "tcp 127.0.0.1:9000", "0.0.0.0:9000": "tcp 127.0.0.1:9000", "[::]:9000": "tcp [::1]:9000", "[::1]:9000": "tcp [::1]:9000",
		"10.0.0.1:9000": "tcp 10.0.0.1:9000", "/run/x.sock": "unix /run/x.sock", "host:": " ", "nonsense": " ",
	} {
		p := &Pool{Name: "x", Settings: map[string]Setting{"listen": {Value: in}}}
		n, a, _ := p.Listen()
		if n+" "+a != want {
			t.Errorf("listen %q: %s %s, want %s", in, n, a, want)
		}
	}
}

func TestSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{"30": 30 * time.Second, "30s": 30 * time.Second, "5m": 5 * time.Minute, "1h": time.Hour, "2d": 48 * time.Hour, "0": 0} {
		if d, ok := ParseSeconds(in); !ok || d != want {
			t.Errorf("%q: %v %v", in, d, ok)
		}
	}
	for _, bad := range []string{"", "x", "-1", "5y", "99999999999999d"} {
		if _, ok := ParseSeconds(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestApply edits a copy of the Debian files: a key the pool sets is
// replaced on its line, one it does not is added after the pool's last
// line; every other byte is kept.
func TestApply(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "testdata/debian", dir)
	c, err := Load(filepath.Join(dir, "php-fpm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Apply([]Edit{{"www", "pm.max_children", "20"}, {"www", "pm.max_requests", "2000"}, {"api", "pm.max_children", "20"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Fatalf("%d files changed", len(out))
	}
	for path, b := range out {
		old := c.Content(path)
		oldLines, newLines := strings.Split(string(old), "\n"), strings.Split(string(b), "\n")
		changed := 0
		for i, j := 0, 0; i < len(oldLines) && j < len(newLines); i, j = i+1, j+1 {
			if oldLines[i] != newLines[j] {
				changed++
				if strings.HasPrefix(newLines[j], "pm.max_requests = 2000") {
					i-- // an added line
				}
			}
		}
		if changed == 0 || changed > 2 {
			t.Errorf("%s: %d lines differ", path, changed)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c2, err := Load(filepath.Join(dir, "php-fpm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Edit{{"www", "pm.max_children", "20"}, {"www", "pm.max_requests", "2000"}, {"api", "pm.max_children", "20"}} {
		if v, _ := c2.Pool(e.Pool).Value(e.Key); v != e.Value {
			t.Errorf("%s %s = %q after the edit", e.Pool, e.Key, v)
		}
	}
	if v, _ := c2.Pool("api").Value("pm.max_requests"); v != "2000" {
		t.Errorf("another pool's setting changed: %q", v)
	}
	for _, bad := range []Edit{{"nope", "pm", "static"}, {"global", "pm", "x"}, {"www", "bad key", "1"}, {"www", "pm", "a\nb"}, {"www", "pm", "x;y"}} {
		if _, err := c.Apply([]Edit{bad}); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestLoadBad(t *testing.T) {
	dir := t.TempDir()
	w := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo.conf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := w("big.conf", "[x]\n"+strings.Repeat("; padding\n", MaxFileBytes/10+1))
	cases := []struct{ name, main, want string }{
		{"no such file", filepath.Join(dir, "none.conf"), "no such file"},
		{"a directory", dir, "not a regular file"},
		{"a FIFO included", w("fifo-inc.conf", "[global]\ninclude = "+fifo+"\n"), "not a regular file"},
		{"/dev/zero included", w("zero-inc.conf", "include = /dev/zero\n"), "not a regular file"},
		{"too large", big, "larger than"},
		{"an include loop", w("loop.conf", "include = loop.conf\n"), "included twice"},
		{"not key = value", w("junk.conf", "[www]\npm dynamic\n"), `"pm dynamic" is not key = value`},
		{"bad header", w("hdr.conf", "[www\n"), "without ']'"},
		{"NUL", w("nul.conf", "[www]\npm = a\x00b\n"), "NUL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.main)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/debian/pool.d/api.conf"); err == nil {
		f.Add(string(b), "api", "pm.max_children", "20")
	}
	f.Add("[www]\npm = dynamic\r\n", "www", "pm", "static")
	f.Add("[a]\n[a]\nx=\"1\"", "a", "y", "2")
	f.Fuzz(func(t *testing.T, in, pool, key, value string) {
		c, err := Parse("f.conf", []byte(in))
		if err != nil {
			return
		}
		e := Edit{pool, key, value}
		out, err := c.Apply([]Edit{e})
		if err != nil {
			return
		}
		c2, err := Parse("f.conf", out["f.conf"])
		if err != nil {
			t.Fatalf("the edited file does not parse: %v\n%q", err, out["f.conf"])
		}
		p := c2.Pool(pool)
		if got := p.Settings[key].Value; strings.TrimSpace(value) != got && unquote(stripComment(strings.TrimSpace(value))) != got {
			t.Fatalf("%+v: got %q in %q", e, got, out["f.conf"])
		}
	})
}
