package nginxconf

import (
	"fmt"
	"sort"
	"strings"
)

// CombinedLogFormat is nginx's predefined "combined" log_format, the
// format of an access_log that names none.
const CombinedLogFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`

// LogFormat returns the text of the http context's log_format name: its
// quoted strings concatenated, as nginx does, without the escape=
// parameter. It is the one lookup of a log format: the audit's snapshot
// (package collect), the access-log profiler (package accesslog) and the
// diagnosis all ask it, so they read one format from one configuration.
//
// The rules are nginx's own:
//
//   - the http context's log_format directives are those of the top-level
//     http {} block and, for a file read on its own (a snippet, which
//     nginx includes inside http {}), those at its top; stream {} has
//     formats of its own, which do not count;
//   - "combined" is predefined (CombinedLogFormat), and nginx refuses a
//     log_format that defines a name again, "combined" included
//     (ngx_http_log_module: duplicate "log_format" name): a configuration
//     that defines a name twice is an error here too, whichever name is
//     asked for, never the first or the last definition;
//   - a log_format without a format is an error (nginx: invalid number
//     of arguments).
//
// Errors name the file and line; a name not defined names the formats
// that are.
func (c *Config) LogFormat(name string) (string, error) {
	formats, err := c.logFormats()
	if err != nil {
		return "", err
	}
	if f, ok := formats[name]; ok {
		return f, nil
	}
	list := make([]string, 0, len(formats))
	for n := range formats {
		if n != "combined" {
			list = append(list, n)
		}
	}
	sort.Strings(list)
	defined := "it defines none"
	if len(list) > 0 {
		defined = "it defines " + strings.Join(list, ", ") + " (and the built-in combined)"
	}
	files := c.Paths()
	return "", fmt.Errorf("log_format %q not found in %s or the %d files it includes; %s", name, files[0], len(files)-1, defined)
}

// logFormats are the http context's formats by name, the predefined
// combined among them, under LogFormat's rules.
func (c *Config) logFormats() (map[string]string, error) {
	formats := map[string]string{}
	where := map[string]*Directive{}
	for _, d := range c.httpLogFormats() {
		args := d.args
		if len(args) < 2 {
			return nil, fmt.Errorf("%s:%d: invalid number of arguments in \"log_format\" directive", d.File(), d.Line())
		}
		name := args[0]
		if name == "combined" {
			return nil, fmt.Errorf("%s:%d: duplicate log_format name \"combined\" (nginx predefines it)", d.File(), d.Line())
		}
		if first, ok := where[name]; ok {
			return nil, fmt.Errorf("%s:%d: duplicate log_format name %q (first defined at %s:%d)", d.File(), d.Line(), name, first.File(), first.Line())
		}
		parts := args[1:]
		if strings.HasPrefix(parts[0], "escape=") {
			parts = parts[1:]
		}
		formats[name], where[name] = strings.Join(parts, ""), d
	}
	formats["combined"] = CombinedLogFormat
	return formats, nil
}

// httpLogFormats are the log_format directives of the http context in
// reading order: those of the top-level http {} block, and those at the
// top of a file read on its own (a snippet).
func (c *Config) httpLogFormats() []*Directive {
	var out []*Directive
	for _, d := range c.root.kids {
		switch {
		case d.name == "log_format":
			out = append(out, d)
		case d.name == "http" && d.block && len(d.args) == 0:
			out = append(out, d.ChildrenNamed("log_format")...)
		}
	}
	return out
}

// UsesVariable reports whether a log_format text (or any value with
// variables) uses the variable name, as $name or ${name}: $name_x is
// another variable.
func UsesVariable(format, name string) bool {
	if strings.Contains(format, "${"+name+"}") {
		return true
	}
	for rest := format; ; {
		i := strings.Index(rest, "$"+name)
		if i < 0 {
			return false
		}
		rest = rest[i+1+len(name):]
		if rest == "" || !varByte(rest[0]) {
			return true
		}
	}
}

func varByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
