package nginxconf

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// row is a directive as the tests compare it: name, arguments, '{' for
// a block, the context it is in (its parent's Path), the index of its
// parent in the list (-1 at the top), file and line.
func row(d *Directive, index map[*Directive]int) string {
	block := ""
	if d.IsBlock() {
		block = "{"
	}
	return fmt.Sprintf("%s|%s|%s|%s|%d|%s:%d", d.Name(), strings.Join(d.Args(), ","), block, d.Parent().Path(), index[d.Parent()], filepath.Base(d.File()), d.Line())
}

// rows lists c's directives as rows.
func rows(c *Config) []string {
	index := map[*Directive]int{c.Main(): -1}
	var out []string
	for i, d := range c.Directives() {
		index[d] = i
		out = append(out, row(d, index))
	}
	return out
}

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
	want := []string{
		"user|www|||-1|nginx.conf:1",
		"http||{||-1|nginx.conf:2",
		"include|x.conf||http|1|nginx.conf:3",
		`log_format|f,a"b,$x||http|1|x.conf:2`,
		"include|sub/*.conf||http|1|x.conf:3",
		"gzip|on||http|1|1.conf:1",
		"server||{|http|1|nginx.conf:4",
		"location|/a b|{|http>server|6|nginx.conf:5",
		"return|204||http>server>location /a b|7|nginx.conf:5",
		"include|x.conf||http|1|nginx.conf:7",
		`log_format|f,a"b,$x||http|1|x.conf:2`,
		"include|sub/*.conf||http|1|x.conf:3",
		"gzip|on||http|1|1.conf:1",
	}
	if got := rows(c); !reflect.DeepEqual(got, want) {
		t.Errorf("Directives:\n got %q\nwant %q", got, want)
	}
	d := c.Directives()
	if d[3].File() != x || d[5].File() != sub || d[0].File() != main || c.Main().File() != main || c.Main().Parent() != nil || c.Main().Path() != "" {
		t.Errorf("files: %s %s %s", d[3].File(), d[5].File(), d[0].File())
	}
	if got := c.Main().Children(); len(got) != 2 || got[0] != d[0] || got[1] != d[1] {
		t.Errorf("main's children %v", got)
	}
	if got := d[1].ChildrenNamed("log_format"); len(got) != 2 || got[0] != d[3] || got[1] != d[10] {
		t.Errorf("http's log_format: %v", got)
	}
	if !d[8].Within(d[1]) || !d[8].Within(c.Main()) || d[8].Within(d[8]) || d[1].Within(d[6]) {
		t.Error("Within")
	}
	var seen []string
	for k := range d[6].Descendants() {
		seen = append(seen, k.Label())
	}
	if strings.Join(seen, ";") != "location /a b;return 204" {
		t.Errorf("server's descendants %q", seen)
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
	if d := p.Directives(); len(d) != 3 || d[2].Name() != "include" || d[2].Parent() != d[1] || !reflect.DeepEqual(p.Paths(), []string{"x.conf"}) {
		t.Errorf("Parse without includes: %q, %q", rows(p), p.Paths())
	}
	if _, err := Parse(main, []byte("include missing.conf;"), true); err == nil {
		t.Error("Parse with includes: a missing include is no error")
	}
}

// inheritConf is the configuration TestEffective asks about.
const inheritConf = `
error_log main.log;
root /main;
http {
    access_log http.log;
    proxy_set_header Host $host;
    proxy_set_header X-Real-IP $remote_addr;
    proxy_http_version 1.1;
    proxy_http_version 1.0;
    gzip on;
    root html;
    server_name ignored;
    server {
        server_name a.example b.example;
        listen 80;
        access_log off;
        gzip off;
        return 301 /x;
        location / {
            proxy_set_header Connection "";
            proxy_pass http://app;
            location /inner/ {
                alias /srv/inner/;
                location ~ \.png$ {
                    expires 1d;
                }
            }
            if ($x) {
                add_header X 1;
            }
            limit_except GET {
                deny all;
            }
        }
        location /static/ {
            root /srv;
            alias /srv/static/;
            root;
            empty_gif;
            location /static/deep/ { }
        }
        location /types/ {
            types { gzip x; text/html html; }
            gzip on;
        }
    }
    server {
        location / { }
    }
}
`

func TestEffective(t *testing.T) {
	c, err := Parse("nginx.conf", []byte(inheritConf), false)
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]*Directive{"main": c.Main()}
	for d := range c.Main().Descendants() {
		if d.IsBlock() {
			key := d.Path()
			if _, ok := blocks[key]; ok {
				key += " #2"
			}
			blocks[key] = d
		}
	}
	const (
		srv    = "http>server"
		loc    = srv + ">location /"
		inner  = loc + ">location /inner/"
		png    = inner + ">location ~ \\.png$"
		static = srv + ">location /static/"
	)
	cases := []struct {
		block, name string
		want        string // the labels of the directives that apply, "|"-joined
	}{
		// Rule 1: the nearest block that sets it.
		{"http", "gzip", "gzip on"},
		{srv, "gzip", "gzip off"},
		{png, "gzip", "gzip off"},
		{srv + " #2", "gzip", "gzip on"},
		{png, "error_log", "error_log main.log"},
		{"http", "sendfile", ""},
		{"main", "gzip", ""},
		// Rule 2: lists replace as a whole.
		{"http", "proxy_set_header", "proxy_set_header Host $host|proxy_set_header X-Real-IP $remote_addr"},
		{srv, "proxy_set_header", "proxy_set_header Host $host|proxy_set_header X-Real-IP $remote_addr"},
		{loc, "proxy_set_header", "proxy_set_header Connection "},
		{png, "proxy_set_header", "proxy_set_header Connection "},
		{loc, "access_log", "access_log off"},
		{loc + " #2", "access_log", "access_log http.log"},
		{loc + " #2", "root", "root html"},
		{loc + ">if ($x)", "add_header", "add_header X 1"},
		{loc, "add_header", ""},
		// Rule 3: callers take the last of one-valued directives.
		{loc, "proxy_http_version", "proxy_http_version 1.1|proxy_http_version 1.0"},
		// Rule 4: root and alias together, a path needed.
		{loc, "root", "root html"},
		{inner, "root", "alias /srv/inner/"},
		{png, "alias", "alias /srv/inner/"},
		{static, "root", "alias /srv/static/"},
		{static + ">location /static/deep/", "root", "alias /srv/static/"},
		{"main", "root", ""},
		// Rule 5: not inherited.
		{srv, "server_name", "server_name a.example b.example"},
		{srv + " #2", "server_name", ""},
		{loc, "listen", ""},
		{loc, "return", ""},
		{static + ">location /static/deep/", "empty_gif", ""},
		{static, "empty_gif", "empty_gif"},
		{srv, "location", "location /|location /static/|location /types/"},
		{loc, "proxy_pass", "proxy_pass http://app"},
		{loc + ">if ($x)", "proxy_pass", "proxy_pass http://app"},
		{loc + ">limit_except GET", "proxy_pass", "proxy_pass http://app"},
		{inner, "proxy_pass", ""},
		{srv, "proxy_pass", ""},
	}
	for _, tc := range cases {
		t.Run(tc.block+" "+tc.name, func(t *testing.T) {
			b := blocks[tc.block]
			if b == nil {
				t.Fatalf("no block %q", tc.block)
			}
			var got []string
			for _, d := range c.Effective(b, tc.name) {
				got = append(got, d.Label())
			}
			if strings.Join(got, "|") != tc.want {
				t.Errorf("Effective(%s, %s) = %q, want %q", tc.block, tc.name, strings.Join(got, "|"), tc.want)
			}
		})
	}
	if c.Effective(nil, "gzip") != nil || c.Overrides(nil, "gzip") != nil {
		t.Error("a missing block has values")
	}

	// Overrides: the places inside a block that set it again, not the
	// block's own, not a types {} entry.
	var places []string
	for _, d := range c.Overrides(blocks["http"], "gzip") {
		places = append(places, fmt.Sprintf("%s:%d", d.Parent().Path(), d.Line()))
	}
	if want := "http>server:17|http>server>location /types/:44"; strings.Join(places, "|") != want {
		t.Errorf("Overrides(http, gzip) = %q, want %q", places, want)
	}
	if got := c.Overrides(blocks[png], "gzip"); len(got) != 0 {
		t.Errorf("Overrides in a block without inner blocks: %v", got)
	}
}
