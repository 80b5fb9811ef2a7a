package accesslog

import (
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
// exist. The format is looked up by nginxconf's Config.LogFormat: only
// log_format directives in the http context count (stream {} has its
// own; a snippet's top level is the http context), "combined" is nginx's
// built-in Combined, and a name defined twice, "combined" included, is an
// error, as nginx refuses it. Errors name the file and line.
func NginxFormatFromConfig(confPath, name string) (string, error) {
	c, err := nginxconf.Load(confPath)
	if err != nil {
		return "", err
	}
	return c.LogFormat(name)
}
