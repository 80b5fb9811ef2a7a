package nginxconf

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestDirectives: the flat list in nginx's reading order, an included
// file's directives in the block of its include, a file included twice
// listed twice in Paths and once in Files.
func TestDirectives(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"nginx.conf":  "user www;\nhttp {\n  include x.conf;\n  server {\n    location '/a b' { return 204; }\n  }\n  include x.conf;\n}\n",
		"x.conf":      "\nlog_format f \"a\\\"b\" $x;\ninclude sub/*.conf;\n",
		"sub/1.conf":  "gzip on;",
		"sub/.h.conf": "hidden on;",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	main, x, sub := filepath.Join(dir, "nginx.conf"), filepath.Join(dir, "x.conf"), filepath.Join(dir, "sub", "1.conf")
	c, err := Load(main)
	if err != nil {
		t.Fatal(err)
	}
	http := []string{"http"}
	want := []Directive{
		{Name: "user", Args: []string{"www"}, Parent: -1, File: main, Line: 1},
		{Name: "http", Args: []string{}, Block: true, Parent: -1, File: main, Line: 2},
		{Name: "include", Args: []string{"x.conf"}, Parent: 1, Context: http, File: main, Line: 3},
		{Name: "log_format", Args: []string{"f", `a"b`, "$x"}, Parent: 1, Context: http, File: x, Line: 2},
		{Name: "include", Args: []string{"sub/*.conf"}, Parent: 1, Context: http, File: x, Line: 3},
		{Name: "gzip", Args: []string{"on"}, Parent: 1, Context: http, File: sub, Line: 1},
		{Name: "server", Args: []string{}, Block: true, Parent: 1, Context: http, File: main, Line: 4},
		{Name: "location", Args: []string{"/a b"}, Block: true, Parent: 6, Context: []string{"http", "server"}, File: main, Line: 5},
		{Name: "return", Args: []string{"204"}, Parent: 7, Context: []string{"http", "server", "location /a b"}, File: main, Line: 5},
		{Name: "include", Args: []string{"x.conf"}, Parent: 1, Context: http, File: main, Line: 7},
		{Name: "log_format", Args: []string{"f", `a"b`, "$x"}, Parent: 1, Context: http, File: x, Line: 2},
		{Name: "include", Args: []string{"sub/*.conf"}, Parent: 1, Context: http, File: x, Line: 3},
		{Name: "gzip", Args: []string{"on"}, Parent: 1, Context: http, File: sub, Line: 1},
	}
	if got := c.Directives(); !reflect.DeepEqual(got, want) {
		t.Errorf("Directives:\n got %+v\nwant %+v", got, want)
	}
	if got, want := c.Paths(), []string{main, x, sub, x, sub}; !reflect.DeepEqual(got, want) {
		t.Errorf("Paths: got %q, want %q", got, want)
	}
	if got := c.Files(); len(got) != 3 {
		t.Errorf("Files: got %q, want 3", got)
	}

	// Without includes followed, an include is a plain directive.
	p, err := Parse("x.conf", []byte("include nowhere/*.conf;\nhttp { include missing.conf; }"), false)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Directives(); len(d) != 3 || d[2].Name != "include" || d[2].Parent != 1 || !reflect.DeepEqual(p.Paths(), []string{"x.conf"}) {
		t.Errorf("Parse without includes: %+v, %q", d, p.Paths())
	}
	if _, err := Parse(main, []byte("include missing.conf;"), true); err == nil {
		t.Error("Parse with includes: a missing include is no error")
	}
}
