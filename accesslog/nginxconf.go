package accesslog

import (
	"fmt"
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
	conf, err := ReadNginxConfig(confPath)
	if err != nil {
		return "", err
	}
	return conf.LogFormat(name)
}

// LogFormat returns the format text of the http-level log_format name,
// with the rules and errors described at NginxFormatFromConfig.
func (c *NginxConfig) LogFormat(name string) (string, error) {
	var found *NginxDirective
	names := map[string]bool{}
	for i := range c.Directives {
		d := &c.Directives[i]
		if d.Name != "log_format" || !(len(d.Context) == 0 || len(d.Context) == 1 && d.Context[0] == "http") {
			continue // stream {} has log formats of its own
		}
		if len(d.Args) < 2 {
			return "", fmt.Errorf("%s:%d: invalid number of arguments in \"log_format\" directive", d.File, d.Line)
		}
		names[d.Args[0]] = true
		if d.Args[0] != name {
			continue
		}
		if name == "combined" {
			return "", fmt.Errorf("%s:%d: duplicate log_format name \"combined\" (nginx predefines it)", d.File, d.Line)
		}
		if found != nil {
			return "", fmt.Errorf("%s:%d: duplicate log_format name %q (first defined at %s:%d)", d.File, d.Line, name, found.File, found.Line)
		}
		found = d
	}
	if found != nil {
		parts := found.Args[1:]
		if strings.HasPrefix(parts[0], "escape=") {
			parts = parts[1:]
		}
		return strings.Join(parts, ""), nil
	}
	if name == "combined" {
		return Combined, nil
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	defined := "it defines none"
	if len(list) > 0 {
		defined = "it defines " + strings.Join(list, ", ") + " (and the built-in combined)"
	}
	main := "the configuration"
	if len(c.Files) > 0 {
		main = c.Files[0]
	}
	return "", fmt.Errorf("log_format %q not found in %s or the %d files it includes; %s", name, main, len(c.Files)-1, defined)
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
