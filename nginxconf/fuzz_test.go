package nginxconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParseSnippet(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "snippet", "advise-emit.conf")); err == nil {
		f.Add(string(b))
	}
	for _, tc := range applyCases {
		f.Add(tc.snippet)
	}
	f.Add("# --- in nginx http {} ---\nadd_header X 'a;b' \"c\\\"d\";\n")
	f.Fuzz(func(t *testing.T, text string) {
		edits, err := ParseSnippet([]byte(text))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "snippet line ") {
				t.Fatalf("error names no line: %v", err)
			}
			return
		}
		// Written back as a snippet, the edits read the same.
		var b strings.Builder
		for _, e := range edits {
			if e.Context == "" || e.Check() != nil {
				t.Fatalf("invalid edit %+v", e)
			}
			b.WriteString(headerPrefix + e.Context + headerSuffix + "\n" + e.String() + "\n")
		}
		again, err := ParseSnippet([]byte(b.String()))
		if err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		if len(again) != len(edits) {
			t.Fatalf("%d edits, then %d", len(edits), len(again))
		}
		for i := range edits {
			if again[i] != edits[i] {
				t.Fatalf("edit %d: %+v, then %+v", i, edits[i], again[i])
			}
		}
	})
}

// fuzzEdits go in every kind of context of a fuzzed configuration.
var fuzzEdits = []Edit{
	{Context: "nginx main context (top of nginx.conf)", Name: "worker_processes", Args: "auto"},
	{Context: "nginx events {}", Name: "worker_connections", Args: "1024"},
	{Context: "nginx http {}", Name: "log_format", Args: `t '$request_time'`},
	{Context: "nginx http {}", Name: "server_tokens", Args: "off"},
	{Context: "nginx http>server (nginx.conf:3)", Name: "listen", Args: "80 backlog=1024"},
	{Context: "nginx upstream app {}", Name: "server", Args: "unix:/run/app.sock"},
	{Context: "nginx http>server>location /", Name: "proxy_set_header", Args: `Connection ""`},
}

// FuzzParse: the configuration parser never panics; on what parses,
// Apply either fails or gives files that parse, and applying again to
// them changes nothing.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"debian", "isucon", "keepalive", "quirks", "minimal"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name, "nginx.conf")); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("events{}http{upstream app{server a:1;}server{listen 80;location /{}}}")
	f.Add("http {\n  server { listen 80; location / { proxy_set_header Connection close; } }\n}\n")
	f.Add("a \"b\\\"\" '${x}' ${y}z{}")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := parse("nginx.conf", []byte(text), nil)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "nginx.conf:") {
				t.Fatalf("error names no place: %v", err)
			}
			return
		}
		var walk func(n *node)
		walk = func(n *node) {
			for _, k := range n.kids {
				if k.start < 0 || k.end <= k.start || k.end > len(text) || k.line < 1 || k.last < k.line {
					t.Fatalf("directive %q at %d..%d lines %d..%d", k.name, k.start, k.end, k.line, k.last)
				}
				if k.block && (k.close < k.start || text[k.close] != '}') {
					t.Fatalf("block %q closes at %d", k.name, k.close)
				}
				walk(k)
			}
		}
		walk(c.root)
		for i := range fuzzEdits {
			edits := fuzzEdits[i : i+1]
			out, err := c.Apply(edits)
			if err != nil {
				continue
			}
			if len(out) == 0 {
				continue
			}
			if len(out) != 1 {
				t.Fatalf("%d files changed", len(out))
			}
			for _, b := range out {
				again, err := parse("nginx.conf", b, nil)
				if err != nil {
					t.Fatalf("%+v: the result does not parse: %v\n%s", edits[0], err, b)
				}
				twice, err := again.Apply(edits)
				if err != nil {
					t.Fatalf("%+v: applying again: %v\n%s", edits[0], err, b)
				}
				for _, b2 := range twice {
					t.Fatalf("%+v: applying again changes\n%s\ninto\n%s", edits[0], b, b2)
				}
			}
		}
	})
}
