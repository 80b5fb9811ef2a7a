package nginxconf

import "strings"

// passKinds are the directives handing a request to another server, with
// the kind of handler each makes.
var passKinds = map[string]string{
	"proxy_pass":     "proxy",
	"fastcgi_pass":   "fastcgi",
	"uwsgi_pass":     "uwsgi",
	"scgi_pass":      "scgi",
	"grpc_pass":      "grpc",
	"memcached_pass": "memcached",
}

// PassKind is the kind of handler a *_pass directive makes ("proxy",
// "fastcgi", "uwsgi", "scgi", "grpc", "memcached"); ok is false for any
// other directive.
func PassKind(name string) (kind string, ok bool) {
	kind, ok = passKinds[name]
	return kind, ok
}

// PassTarget splits a *_pass argument into its host part ("app",
// "127.0.0.1:8443": an upstream's name when one has it) and whether it is
// a unix socket ("unix:/run/app.sock", "http://unix:/run/app.sock:/uri";
// host "" then). A scheme and a URI are left out.
func PassTarget(arg string) (host string, unix bool) {
	rest := arg
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if strings.HasPrefix(rest, "unix:") {
		return "", true
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return rest, false
}
