package nginxconf

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
	f.Add("a 'b c' \"d\\\ne\" f\\ g 'h'x;")
	f.Add(strings.Repeat("location / {\n", MaxBlockDepth+1) + strings.Repeat("}\n", MaxBlockDepth+1))
	f.Add(strings.Repeat("a{", MaxBlockDepth) + "b;" + strings.Repeat("}", MaxBlockDepth))
	f.Add(strings.Repeat("a{b{c;}d{e{f;}}}", 50))
	f.Fuzz(func(t *testing.T, text string) {
		checkTokens(t, text)
		c, err := parse("nginx.conf", []byte(text), nil)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "nginx.conf:") {
				t.Fatalf("error names no place: %v", err)
			}
			return
		}
		checkDirectives(t, c)
		// Each block is found by its path, and only by it.
		for _, b := range c.blocks() {
			var labels []string
			for n := b; n.parent != nil; n = n.parent {
				labels = append([]string{n.label()}, labels...)
			}
			path := strings.Join(labels, ">")
			if !b.pathIs(path) {
				t.Fatalf("block %q: pathIs is false on its own path", path)
			}
			for _, p := range []string{path + ">x", "x>" + path, path + "x", "x" + path, path[:len(path)/2], text} {
				if b.pathIs(p) != refPathIs(b, p) {
					t.Fatalf("block %q: pathIs(%q) is %v", path, p, b.pathIs(p))
				}
			}
		}
		var walk func(n *Directive)
		walk = func(n *Directive) {
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

// checkDirectives: Directives lists every directive once, each after
// its block; Parent, Children, Within and Path agree with the tree, and
// Path is the block's labels from the top.
func checkDirectives(t *testing.T, c *Config) {
	t.Helper()
	d := c.Directives()
	nodes := 0
	var count func(n *Directive)
	count = func(n *Directive) {
		for _, k := range n.kids {
			nodes++
			count(k)
		}
	}
	count(c.root)
	if len(d) != nodes || nodes > MaxDirectives {
		t.Fatalf("Directives lists %d of %d directives", len(d), nodes)
	}
	index := map[*Directive]int{c.Main(): -1}
	paths := map[*Directive]string{c.Main(): ""}
	for i, x := range d {
		index[x] = i
		p := x.Parent()
		pi, ok := index[p]
		if !ok || pi >= i || !p.IsBlock() || !slices.Contains(p.Children(), x) || !x.Within(p) || x.Within(x) {
			t.Fatalf("directive %d %q: parent %d", i, x.Label(), pi)
		}
		label := strings.Join(append([]string{x.Name()}, x.Args()...), " ")
		if x.Label() != label {
			t.Fatalf("directive %d: label %q, want %q", i, x.Label(), label)
		}
		want := label
		if paths[p] != "" {
			want = paths[p] + ">" + label
		}
		if x.IsBlock() {
			if got := x.Path(); got != want {
				t.Fatalf("directive %d: path %q, want %q", i, got, want)
			}
			paths[x] = want
		}
		depth := 0
		for b := p; b != c.Main(); b = b.Parent() {
			depth++
		}
		if depth > MaxBlockDepth {
			t.Fatalf("directive %d is %d blocks deep", i, depth)
		}
	}
	// Appending to arguments or children changes nothing in c.
	before := make([]string, len(d))
	for i, x := range d {
		before[i] = fmt.Sprint(x.Label(), len(x.Children()))
	}
	for _, x := range d {
		_ = append(x.Args(), "x")
		_ = append(x.Children(), nil)
	}
	for i, x := range c.Directives() {
		if x != d[i] || fmt.Sprint(x.Label(), len(x.Children())) != before[i] || len(x.kids) != len(x.Children()) {
			t.Fatalf("directive %d: appending changed it", i)
		}
	}
}

// refNext is the lexer before it read plain words as one string: the
// tokens (and errors) must be the same.
func refNext(lx *lexer) (token, error) {
	for lx.pos < len(lx.data) {
		c := lx.data[lx.pos]
		if c == '\n' {
			lx.line++
		} else if c == '#' {
			for lx.pos < len(lx.data) && lx.data[lx.pos] != '\n' {
				lx.pos++
			}
			continue
		} else if !isSpace(c) {
			break
		}
		lx.pos++
	}
	start, line := lx.pos, lx.line
	if lx.pos >= len(lx.data) {
		return token{kind: tokEOF, start: start, end: start, line: line}, nil
	}
	switch c := lx.data[lx.pos]; c {
	case ';', '{', '}':
		lx.pos++
		return token{kind: c, start: start, end: lx.pos, line: line}, nil
	case '"', '\'':
		lx.pos++
		var b []byte
		for {
			if lx.pos >= len(lx.data) {
				return token{}, fmt.Errorf("%s:%d: unexpected end of file in a string that starts here", lx.file, line)
			}
			ch := lx.data[lx.pos]
			lx.pos++
			switch {
			case ch == c:
				if lx.pos < len(lx.data) {
					if n := lx.data[lx.pos]; !isSpace(n) && n != ';' && n != '{' && n != ')' {
						return token{}, fmt.Errorf("%s:%d: unexpected %q after a quoted string", lx.file, lx.line, n)
					}
				}
				return token{kind: tokWord, text: string(b), start: start, end: lx.pos, line: line}, nil
			case ch == '\\' && lx.pos < len(lx.data):
				if lx.data[lx.pos] == '\n' {
					lx.line++
				}
				b = appendEscape(b, lx.data[lx.pos])
				lx.pos++
			default:
				if ch == '\n' {
					lx.line++
				}
				b = append(b, ch)
			}
		}
	}
	var b []byte
	variable := false
	for lx.pos < len(lx.data) {
		ch := lx.data[lx.pos]
		if ch == '{' && variable {
			b = append(b, ch)
			lx.pos++
			variable = false
			continue
		}
		variable = false
		if isSpace(ch) || ch == ';' || ch == '{' {
			break
		}
		lx.pos++
		switch ch {
		case '\\':
			if lx.pos < len(lx.data) {
				if lx.data[lx.pos] == '\n' {
					lx.line++
				}
				b = appendEscape(b, lx.data[lx.pos])
				lx.pos++
			}
			continue
		case '$':
			variable = true
		}
		b = append(b, ch)
	}
	return token{kind: tokWord, text: string(b), start: start, end: lx.pos, line: line}, nil
}

// checkTokens: the lexer gives the tokens and errors of refNext.
func checkTokens(t *testing.T, text string) {
	t.Helper()
	a := &lexer{data: []byte(text), file: "f", line: 1}
	b := &lexer{data: []byte(text), file: "f", line: 1}
	for {
		ta, errA := a.next()
		tb, errB := refNext(b)
		if ta != tb || fmt.Sprint(errA) != fmt.Sprint(errB) || a.pos != b.pos || a.line != b.line {
			t.Fatalf("lexer %+v %v at %d line %d, before %+v %v at %d line %d", ta, errA, a.pos, a.line, tb, errB, b.pos, b.line)
		}
		if errA != nil || ta.kind == tokEOF {
			return
		}
	}
}

// placeRE is the start of an error that names a file of the fuzzed
// configuration and a line.
var placeRE = regexp.MustCompile(`^[^:]+\.conf:[1-9][0-9]*: `)

// FuzzLoad: Load follows includes (plain, glob, into themselves) and
// deep nesting within the bounds: it never panics, every error names a
// file and line, and what loads lists its directives consistently.
// nginx.conf is main inside nest blocks "n {"; a.conf is inc; sub/b.conf
// is main again, so "include sub/*.conf;" includes a file that includes
// itself.
func FuzzLoad(f *testing.F) {
	f.Add("include a.conf;", "gzip on;", uint8(0))
	f.Add("include a.conf;\ninclude a.conf;", "include sub/*.conf;", uint8(1))
	f.Add("include a.conf;", "include a.conf;", uint8(0))
	f.Add("include sub/*.conf;", "", uint8(0))
	f.Add("include sub/b.conf;", "", uint8(2))
	f.Add("http { include a.conf; }", "server { location / { include a.conf; } }", uint8(90))
	f.Add("server { include a.conf; }", strings.Repeat("location / {\n", 20)+strings.Repeat("}\n", 20), uint8(MaxBlockDepth-21))
	f.Add("include *.conf;", "include a.conf; x;", uint8(0))
	f.Add("include sub;", "", uint8(0))
	f.Add("include a.conf sub;", "", uint8(0))
	f.Add("include [;", "", uint8(0))
	f.Add("include \"a.conf\";", "'unterminated", uint8(3))
	f.Fuzz(func(t *testing.T, main, inc string, nest uint8) {
		dir := t.TempDir()
		text := strings.Repeat("n {\n", int(nest)) + main + "\n" + strings.Repeat("}\n", int(nest))
		path := write(t, dir, "nginx.conf", text)
		write(t, dir, "a.conf", inc)
		write(t, dir, "sub/b.conf", main)
		// Load's reader, kept to the files of dir.
		inside := func(p string, limit int64) ([]byte, error) {
			if abs, err := filepath.Abs(p); err != nil || !strings.HasPrefix(abs, dir+string(filepath.Separator)) {
				return nil, fmt.Errorf("%s is outside the fuzzed configuration", p)
			}
			return readFile(p, limit)
		}
		c, err := load(path, inside)
		if err != nil {
			if !placeRE.MatchString(err.Error()) {
				t.Fatalf("error names no file and line: %v", err)
			}
			return
		}
		if len(c.Paths()) > MaxIncludeReads+1 {
			t.Fatalf("%d files read", len(c.Paths()))
		}
		checkDirectives(t, c)
	})
}

// write writes text into dir/name, making its directory.
func write(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// refPathIs is pathIs as it was, building each label.
func refPathIs(n *Directive, want string) bool {
	for ; n.parent != nil; n = n.parent {
		l := n.label()
		if n.parent.parent == nil {
			return want == l
		}
		if !strings.HasSuffix(want, ">"+l) {
			return false
		}
		want = want[:len(want)-len(l)-1]
	}
	return false
}

// FuzzListingJSON feeds arbitrary JSON to a Listing: it reads a tree or
// returns an error, never panics, and what it reads writes back and
// reads again to the same JSON.
func FuzzListingJSON(f *testing.F) {
	f.Add([]byte(`[{"name":"http","args":[],"context":"","file":"a","line":1,"block":true,"parent":-1},{"name":"listen","args":["80"],"context":"http","file":"a","line":2,"parent":0}]`))
	f.Add([]byte(`[{"name":"x","parent":0}]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var l Listing
		if json.Unmarshal(data, &l) != nil {
			return
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("a listing read from JSON does not write: %v", err)
		}
		var again Listing
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("written %s, not read back: %v", b, err)
		}
		if b2, _ := json.Marshal(again); string(b2) != string(b) {
			t.Fatalf("written twice differently:\n%s\n%s", b, b2)
		}
	})
}

// FuzzParseListen: any listen arguments read without panicking, and the
// address is read one way (listenKey agrees with ParseListen).
func FuzzParseListen(f *testing.F) {
	for _, a := range []string{"80", "[::]:443", "unix:/run/a.sock", "0.0.0.0:8080", "localhost", "[::1", ":81", "a:b:c"} {
		f.Add(a, "backlog=10")
	}
	f.Fuzz(func(t *testing.T, addr, param string) {
		l, ok := ParseListen([]string{addr, param})
		if !ok {
			t.Fatal("two arguments not read")
		}
		if l.Unix {
			if listenKey(addr) != addr {
				t.Fatalf("unix key %q of %q", listenKey(addr), addr)
			}
			return
		}
		host, port, _ := splitListen(addr)
		if port == "" && l.Port != 80 || port != "" && l.Port != atoiOr0(port) {
			t.Fatalf("%q: port %d", addr, l.Port)
		}
		if l.Address != host {
			t.Fatalf("%q: address %q, key host %q", addr, l.Address, host)
		}
	})
}

// atoiOr0 is strconv.Atoi's value, its error ignored (the largest int
// for a port too large for one), as ParseListen reads numbers.
func atoiOr0(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// FuzzParseSeconds: any text is a time or refused, never a panic, and a
// time is never negative.
func FuzzParseSeconds(f *testing.F) {
	for _, s := range []string{"65", "75s", "1m", "500ms", "1h30m", "1y", "10x", "", "99999999999999999999d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, ok := ParseSeconds(s); ok && (v < 0 || v != v) {
			t.Fatalf("ParseSeconds(%q) = %v", s, v)
		}
	})
}

// FuzzPassTarget: any *_pass argument splits without panicking, into a
// host without a URI, or a unix socket without a host.
func FuzzPassTarget(f *testing.F) {
	for _, s := range []string{"http://app", "https://127.0.0.1:8443/x", "http://unix:/run/a.sock:/uri", "unix:/run/php.sock", "php", "://", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		host, unix := PassTarget(arg)
		if strings.Contains(host, "/") || unix && host != "" {
			t.Fatalf("PassTarget(%q) = %q, %v", arg, host, unix)
		}
	})
}
