package accesslog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/nginxconf"
)

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
	c, err := nginxconf.Load(confPath)
	if err != nil {
		return "", err
	}
	return NginxFormat(c, name)
}

// NginxFormat returns the format text of the http-level log_format name
// of the configuration c, with the rules and errors described at
// NginxFormatFromConfig.
func NginxFormat(c *nginxconf.Config, name string) (string, error) {
	var found *nginxconf.Directive
	names := map[string]bool{}
	for _, d := range httpLogFormats(c) {
		args := d.Args()
		if len(args) < 2 {
			return "", fmt.Errorf("%s:%d: invalid number of arguments in \"log_format\" directive", d.File(), d.Line())
		}
		names[args[0]] = true
		if args[0] != name {
			continue
		}
		if name == "combined" {
			return "", fmt.Errorf("%s:%d: duplicate log_format name \"combined\" (nginx predefines it)", d.File(), d.Line())
		}
		if found != nil {
			return "", fmt.Errorf("%s:%d: duplicate log_format name %q (first defined at %s:%d)", d.File(), d.Line(), name, found.File(), found.Line())
		}
		found = d
	}
	if found != nil {
		parts := found.Args()[1:]
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
	files := c.Paths()
	return "", fmt.Errorf("log_format %q not found in %s or the %d files it includes; %s", name, files[0], len(files)-1, defined)
}

// httpLogFormats are the log_format directives of the http context in
// reading order: those of the top-level http {} block, and those at the
// top of a file read on its own (a snippet). stream {} has log formats
// of its own.
func httpLogFormats(c *nginxconf.Config) []*nginxconf.Directive {
	var out []*nginxconf.Directive
	for _, d := range c.Main().Children() {
		switch {
		case d.Name() == "log_format":
			out = append(out, d)
		case d.Name() == "http" && d.IsBlock() && len(d.Args()) == 0:
			out = append(out, d.ChildrenNamed("log_format")...)
		}
	}
	return out
}
