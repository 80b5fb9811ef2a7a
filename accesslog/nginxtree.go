package accesslog

import "github.com/stacktune/stacktune/nginxconf"

// NginxDirective is one directive of an nginx configuration, as read by
// ReadNginxConfig: its name, arguments (unquoted and unescaped as nginx
// does), whether it opens a block, the index of its enclosing block in
// NginxConfig.Directives (-1 at the top level), its context (the enclosing
// blocks outermost first, each "name args"), file and line.
type NginxDirective = nginxconf.Directive

// NginxConfig is an nginx configuration with its includes expanded.
type NginxConfig struct {
	// Files are the files read, the main one first, then in the order they
	// were included.
	Files []string
	// Directives are every directive in the order nginx reads them: an
	// include directive is followed by the directives of the files it
	// names, a block directive by those inside it.
	Directives []NginxDirective
}

// ReadNginxConfig reads the nginx configuration file confPath and the
// files it includes into a flat list of directives, following the syntax
// and include rules described at NginxFormatFromConfig (includes relative to
// the directory of confPath, globs in lexical order skipping hidden files).
// It checks syntax only, not whether nginx knows a directive or accepts its
// arguments. Errors name the file and line. The reader is nginxconf's
// (nginxconf.Load), the one that also edits configurations.
func ReadNginxConfig(confPath string) (*NginxConfig, error) {
	c, err := nginxconf.Load(confPath)
	if err != nil {
		return nil, err
	}
	return fromNginxconf(c), nil
}

// fromNginxconf is the flat form of c.
func fromNginxconf(c *nginxconf.Config) *NginxConfig {
	return &NginxConfig{Files: c.Paths(), Directives: c.Directives()}
}
