package nginxconf

import (
	"bytes"
	"fmt"
	"strings"
)

// Edit is one directive of a snippet: put "Name Args;" in the context
// Context, replacing the directive of the same name there (see the
// package comment for which ones count as the same).
type Edit struct {
	// Context is where the directive goes, as the audit names it:
	// "nginx http {}", "nginx upstream app {} (FILE:LINE)",
	// "nginx http>server>location / (FILE:LINE)".
	Context string
	// Name is the directive's name: "keepalive".
	Name string
	// Args is the raw argument text without the ';': `Connection ""`.
	Args string
}

// String is the directive as written into a file.
func (e Edit) String() string {
	args := trimArgs(e.Args)
	if args == "" {
		return e.Name + ";"
	}
	return e.Name + " " + args + ";"
}

// trimArgs trims white space around arguments, except a blank that a
// backslash escapes ("a\ " ends with an escaped space).
func trimArgs(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	i := len(s)
	for i > 0 && isSpace(s[i-1]) {
		i--
	}
	bs := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		bs++
	}
	if bs%2 == 1 && i < len(s) {
		i++
	}
	return s[:i]
}

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

// Check validates an edit's name and arguments.
func (e Edit) Check() error {
	if e.Name == "" || strings.ContainsAny(e.Name, " \t\r\n;{}\"'#\\$") {
		return fmt.Errorf("%q is not a directive name", e.Name)
	}
	if _, err := words(e.Args); err != nil {
		return fmt.Errorf("%s: arguments %q: %w", e.Name, e.Args, err)
	}
	return nil
}
