package accesslog

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// maxIncludeDepth bounds include nesting, so a file including itself ends
// with an error instead of recursing forever.
const maxIncludeDepth = 32

// NginxFormatFromConfig reads the nginx configuration file confPath and the
// files it includes and returns the format of `log_format NAME ...;`: its
// quoted strings concatenated, as nginx does, ready for NewNginx. The
// escape= parameter is not part of the format (NewNginx recognises JSON
// formats by their leading '{').
//
// It follows nginx's syntax: directives end with ';', blocks are in {},
// '#' starts a comment, strings are in single or double quotes with \", \',
// \\, \t, \r and \n escapes. An include path that is not absolute is taken
// relative to the directory of confPath, as nginx takes it relative to its
// configuration prefix (the directory of the file given with -c); a glob
// pattern may match no file and skips hidden files, a plain path must
// exist. Only log_format directives in the http context count (stream {}
// has its own). "combined" is nginx's built-in Combined unless the
// configuration defines it, which nginx rejects, as does this function.
// Errors name the file and line.
func NginxFormatFromConfig(confPath, name string) (string, error) {
	c := &confReader{root: filepath.Dir(confPath), want: name}
	data, err := os.ReadFile(confPath)
	if err != nil {
		return "", fmt.Errorf("nginx configuration: %w", err)
	}
	if err := c.parse(confPath, data, nil, 0); err != nil {
		return "", err
	}
	if c.found != nil {
		if name == "combined" {
			return "", fmt.Errorf("%s:%d: duplicate log_format name \"combined\" (nginx predefines it)", c.found.file, c.found.line)
		}
		return c.found.format, nil
	}
	if name == "combined" {
		return Combined, nil
	}
	names := make([]string, 0, len(c.names))
	for n := range c.names {
		names = append(names, n)
	}
	sort.Strings(names)
	defined := "it defines none"
	if len(names) > 0 {
		defined = "it defines " + strings.Join(names, ", ") + " (and the built-in combined)"
	}
	return "", fmt.Errorf("log_format %q not found in %s or the %d files it includes; %s", name, confPath, c.files-1, defined)
}

type confFormat struct {
	format string
	file   string
	line   int
}

type confReader struct {
	noInclude bool // fuzzing: do not read the files an include names
	root      string
	want      string
	files     int
	found     *confFormat
	names     map[string]bool
}

// parse reads one configuration file whose directives are inside the
// blocks named by ctx.
func (c *confReader) parse(path string, data []byte, ctx []string, depth int) error {
	c.files++
	lx := &confLexer{data: data, file: path, line: 1}
	stack := append([]string(nil), ctx...)
	var args []confToken
	for {
		tok, kind, err := lx.next()
		if err != nil {
			return err
		}
		switch kind {
		case tokEOF:
			if len(args) > 0 || len(stack) > len(ctx) {
				return fmt.Errorf("%s:%d: unexpected end of file, expecting \";\" or \"}\"", path, lx.line)
			}
			return nil
		case tokWord:
			args = append(args, tok)
		case ';':
			if len(args) == 0 {
				return fmt.Errorf("%s:%d: unexpected \";\"", path, tok.line)
			}
			if err := c.directive(path, stack, args, depth); err != nil {
				return err
			}
			args = args[:0]
		case '{':
			if len(args) == 0 {
				return fmt.Errorf("%s:%d: unexpected \"{\"", path, tok.line)
			}
			stack = append(stack, args[0].text)
			args = args[:0]
		case '}':
			if len(args) > 0 || len(stack) == len(ctx) {
				return fmt.Errorf("%s:%d: unexpected \"}\"", path, tok.line)
			}
			stack = stack[:len(stack)-1]
		}
	}
}

func (c *confReader) directive(path string, stack []string, args []confToken, depth int) error {
	d := args[0]
	switch d.text {
	case "include":
		if len(args) != 2 {
			return fmt.Errorf("%s:%d: invalid number of arguments in \"include\" directive", path, d.line)
		}
		if c.noInclude {
			return nil
		}
		return c.include(path, d.line, args[1].text, stack, depth)
	case "log_format":
		if !(len(stack) == 0 || len(stack) == 1 && stack[0] == "http") {
			return nil
		}
		if len(args) < 3 {
			return fmt.Errorf("%s:%d: invalid number of arguments in \"log_format\" directive", path, d.line)
		}
		name := args[1].text
		if c.names == nil {
			c.names = map[string]bool{}
		}
		c.names[name] = true
		if name != c.want {
			return nil
		}
		if c.found != nil {
			return fmt.Errorf("%s:%d: duplicate log_format name %q (first defined at %s:%d)", path, d.line, name, c.found.file, c.found.line)
		}
		parts := args[2:]
		if strings.HasPrefix(parts[0].text, "escape=") {
			parts = parts[1:]
		}
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.text)
		}
		c.found = &confFormat{format: b.String(), file: path, line: d.line}
	}
	return nil
}

func (c *confReader) include(path string, line int, pattern string, stack []string, depth int) error {
	if depth >= maxIncludeDepth {
		return fmt.Errorf("%s:%d: include %s: includes nested deeper than %d (a cycle?)", path, line, pattern, maxIncludeDepth)
	}
	full := pattern
	if !filepath.IsAbs(full) {
		full = filepath.Join(c.root, full)
	}
	matches := []string{full}
	globbed := strings.ContainsAny(pattern, "*?[")
	if globbed {
		var err error
		if matches, err = filepath.Glob(full); err != nil {
			return fmt.Errorf("%s:%d: include %s: %w", path, line, pattern, err)
		}
	}
	hiddenOK := strings.HasPrefix(filepath.Base(full), ".")
	for _, m := range matches {
		if !hiddenOK && strings.HasPrefix(filepath.Base(m), ".") {
			continue // glob(3), which nginx uses, skips dot files
		}
		if fi, err := os.Stat(m); err == nil && fi.IsDir() && globbed {
			continue
		}
		data, err := os.ReadFile(m)
		if err != nil {
			return fmt.Errorf("%s:%d: include %s: %w", path, line, pattern, err)
		}
		if err := c.parse(m, data, stack, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// Token kinds returned by confLexer.next besides the punctuation bytes
// ';', '{' and '}'.
const (
	tokEOF  = 0
	tokWord = 'w'
)

type confToken struct {
	text string
	line int
}

// confLexer splits nginx configuration text into tokens the way nginx's
// ngx_conf_read_token does.
type confLexer struct {
	data []byte
	pos  int
	file string
	line int
}

func (lx *confLexer) next() (confToken, byte, error) {
	// Skip white space and comments.
	for lx.pos < len(lx.data) {
		c := lx.data[lx.pos]
		switch c {
		case '\n':
			lx.line++
			lx.pos++
			continue
		case ' ', '\t', '\r':
			lx.pos++
			continue
		case '#':
			for lx.pos < len(lx.data) && lx.data[lx.pos] != '\n' {
				lx.pos++
			}
			continue
		}
		break
	}
	if lx.pos >= len(lx.data) {
		return confToken{line: lx.line}, tokEOF, nil
	}
	start := lx.line
	switch c := lx.data[lx.pos]; c {
	case ';', '{', '}':
		lx.pos++
		return confToken{line: start}, c, nil
	case '"', '\'':
		lx.pos++
		var b []byte
		for {
			if lx.pos >= len(lx.data) {
				return confToken{}, 0, fmt.Errorf("%s:%d: unexpected end of file in a string that starts here", lx.file, start)
			}
			ch := lx.data[lx.pos]
			lx.pos++
			switch {
			case ch == c:
				// A quoted string must be followed by a space, ';' or '{'.
				if lx.pos < len(lx.data) {
					if n := lx.data[lx.pos]; n != ' ' && n != '\t' && n != '\r' && n != '\n' && n != ';' && n != '{' {
						return confToken{}, 0, fmt.Errorf("%s:%d: unexpected %q after a quoted string", lx.file, lx.line, n)
					}
				}
				return confToken{text: string(b), line: start}, tokWord, nil
			case ch == '\\' && lx.pos < len(lx.data):
				b = appendConfEscape(b, lx.data[lx.pos])
				if lx.data[lx.pos] == '\n' {
					lx.line++
				}
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
		if ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == ';' || ch == '{' {
			break
		}
		lx.pos++
		switch ch {
		case '\\':
			if lx.pos < len(lx.data) {
				if lx.data[lx.pos] == '\n' {
					lx.line++
				}
				b = appendConfEscape(b, lx.data[lx.pos])
				lx.pos++
			}
			continue
		case '$':
			variable = true
		}
		b = append(b, ch)
	}
	return confToken{text: string(b), line: start}, tokWord, nil
}

// appendConfEscape appends what nginx makes of backslash followed by c.
func appendConfEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\'', '\\':
		return append(b, c)
	case 't':
		return append(b, '\t')
	case 'r':
		return append(b, '\r')
	case 'n':
		return append(b, '\n')
	}
	return append(b, '\\', c)
}
