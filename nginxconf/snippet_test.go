package nginxconf

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/internal/golden"
)

// The snippet format (what changeset renders as nginx/stacktune.conf)
// is how these tests write edits; apply takes them from the change set.

// snippetHeader starts and ends the line naming a context.
const (
	headerPrefix = "# --- in "
	headerSuffix = " ---"
)

// ParseSnippet reads a snippet as advise.Emit writes it: lines
// "# --- in <context> ---" name the context of the directives below them,
// other lines starting with '#' are comments, blank lines are skipped,
// and every other line is one directive, "name args...;". Errors name
// the line.
func ParseSnippet(b []byte) ([]Edit, error) {
	var out []Edit
	context := ""
	for i, raw := range bytes.Split(b, []byte("\n")) {
		n := i + 1
		line := strings.TrimSpace(string(raw))
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, headerPrefix) && strings.HasSuffix(line, headerSuffix) && len(line) >= len(headerPrefix)+len(headerSuffix):
			c := strings.TrimSpace(line[len(headerPrefix) : len(line)-len(headerSuffix)])
			if c == "" {
				return nil, fmt.Errorf("snippet line %d: a context header names no context", n)
			}
			context = c
			continue
		case strings.HasPrefix(line, "#"):
			continue
		}
		e, err := parseDirective(line)
		if err != nil {
			return nil, fmt.Errorf("snippet line %d: %w", n, err)
		}
		if context == "" {
			return nil, fmt.Errorf("snippet line %d: %s comes before any %q line naming its context", n, e.Name, headerPrefix+"<context>"+headerSuffix)
		}
		e.Context = context
		out = append(out, e)
	}
	return out, nil
}

// parseDirective reads one line "name args...;".
func parseDirective(line string) (Edit, error) {
	lx := &lexer{data: []byte(line), file: "directive", line: 1}
	var toks []token
	for {
		t, err := lx.next()
		if err != nil {
			return Edit{}, fmt.Errorf("%q: %s", line, strings.TrimPrefix(err.Error(), "directive:1: "))
		}
		if t.kind == tokEOF {
			return Edit{}, fmt.Errorf("%q does not end with \";\"", line)
		}
		if t.kind == '{' || t.kind == '}' {
			return Edit{}, fmt.Errorf("%q: blocks are not directives a snippet can set", line)
		}
		if t.kind == ';' {
			if len(toks) == 0 {
				return Edit{}, fmt.Errorf("%q: a \";\" without a directive", line)
			}
			rest := strings.TrimSpace(line[t.end:])
			if rest != "" && !strings.HasPrefix(rest, "#") {
				return Edit{}, fmt.Errorf("%q: text after the \";\"", line)
			}
			e := Edit{Name: toks[0].text}
			if len(toks) > 1 {
				e.Args = line[toks[1].start:toks[len(toks)-1].end]
			}
			if err := e.Check(); err != nil {
				return Edit{}, err
			}
			return e, nil
		}
		toks = append(toks, t)
	}
}

// TestParseSnippetEmitted reads a snippet advise.Emit wrote (a copy of
// advise/testdata/emit/nginx/stacktune.conf).
func TestParseSnippetEmitted(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "snippet", "advise-emit.conf"))
	if err != nil {
		t.Fatal(err)
	}
	edits, err := ParseSnippet(b)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, e := range edits {
		fmt.Fprintf(&out, "%s | %s | %s\n", e.Context, e.Name, e.Args)
	}
	golden.Check(t, filepath.Join("testdata", "snippet", "advise-emit.edits.txt"), []byte(out.String()))
}

func TestParseSnippet(t *testing.T) {
	cases := []struct {
		name, text string
		want       []Edit
		err        string
	}{
		{name: "empty", text: ""},
		{name: "comments only", text: "# Written by stacktune\n\n# --- in nginx http {} ---\n# nothing\n"},
		{name: "one", text: "# --- in nginx http {} ---\n# rule: why\nserver_tokens off;\n",
			want: []Edit{{Context: "nginx http {}", Name: "server_tokens", Args: "off"}}},
		{name: "contexts switch", text: "# --- in nginx events {} ---\nworker_connections 4096;\n\n# --- in nginx upstream app {} (a b/c.conf:1) ---\nkeepalive 32;\n",
			want: []Edit{{Context: "nginx events {}", Name: "worker_connections", Args: "4096"},
				{Context: "nginx upstream app {} (a b/c.conf:1)", Name: "keepalive", Args: "32"}}},
		{name: "quotes kept raw", text: "# --- in nginx http>server>location / (x.conf:3) ---\n  proxy_set_header Connection \"\";  \nadd_header X 'a;b # c';\n",
			want: []Edit{{Context: "nginx http>server>location / (x.conf:3)", Name: "proxy_set_header", Args: `Connection ""`},
				{Context: "nginx http>server>location / (x.conf:3)", Name: "add_header", Args: `X 'a;b # c'`}}},
		{name: "no args", text: "# --- in nginx http>server>location = /x ---\nempty_gif;\n",
			want: []Edit{{Context: "nginx http>server>location = /x", Name: "empty_gif"}}},
		{name: "trailing comment", text: "# --- in nginx http {} ---\ngzip on; # why\n",
			want: []Edit{{Context: "nginx http {}", Name: "gzip", Args: "on"}}},
		{name: "crlf", text: "# --- in nginx http {} ---\r\ngzip on;\r\n",
			want: []Edit{{Context: "nginx http {}", Name: "gzip", Args: "on"}}},
		{name: "before any context", text: "# header\ngzip on;\n", err: "snippet line 2: gzip comes before any"},
		{name: "no semicolon", text: "# --- in nginx http {} ---\n\ngzip on\n", err: "snippet line 3: \"gzip on\" does not end with \";\""},
		{name: "block", text: "# --- in nginx http {} ---\nserver { listen 80; }\n", err: "snippet line 2: \"server { listen 80; }\": blocks are not"},
		{name: "two directives", text: "# --- in nginx http {} ---\ngzip on; sendfile on;\n", err: "snippet line 2: \"gzip on; sendfile on;\": text after"},
		{name: "lone semicolon", text: "# --- in nginx http {} ---\n;\n", err: "snippet line 2: \";\": a \";\" without a directive"},
		{name: "open quote", text: "# --- in nginx http {} ---\nadd_header X \"a;\n", err: "snippet line 2:"},
		{name: "empty context", text: "# --- in  ---\n", err: "snippet line 1: a context header names no context"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSnippet([]byte(tc.text))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestEditString(t *testing.T) {
	for _, tc := range []struct {
		e    Edit
		want string
	}{
		{Edit{Name: "gzip", Args: "on"}, "gzip on;"},
		{Edit{Name: "empty_gif"}, "empty_gif;"},
		{Edit{Name: "proxy_set_header", Args: ` Connection ""  `}, `proxy_set_header Connection "";`},
	} {
		if got := tc.e.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}
