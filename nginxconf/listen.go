package nginxconf

import (
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/internal/bytesconv"
)

// DefaultBacklog is the listen queue nginx asks for when listen sets no
// backlog= (NGX_LISTEN_BACKLOG on Linux).
const DefaultBacklog = 511

// Listen is a listen directive's arguments as nginx reads them: the
// address (its host and port; the path of a unix socket) and the
// parameters stacktune's rules look at.
type Listen struct {
	// Address is "*" (a port alone), the host as written ("127.0.0.1",
	// "[::]", "localhost", "" for ":80"), or the socket's path (Unix).
	Address string
	Port    int // 80 when not given; 0 for a unix socket
	Unix    bool
	// Backlog is the listen queue asked for; BacklogDefault is true when
	// it is nginx's default (DefaultBacklog).
	Backlog        int
	BacklogDefault bool
	Reuseport      bool
	HTTP2          bool // the http2 parameter (not `http2 on` in the server)
	SSL            bool
	Fastopen       int
	DefaultServer  bool // default_server (or the old default)
	Deferred       bool
}

// ParseListen reads the arguments of a listen directive; ok is false
// when there are none. A parameter it does not know is skipped; a number
// it cannot read is 0 (a backlog it cannot read leaves the default).
func ParseListen(args []string) (l Listen, ok bool) {
	if len(args) == 0 {
		return Listen{}, false
	}
	l = Listen{Backlog: DefaultBacklog, BacklogDefault: true}
	host, port, unix := splitListen(args[0])
	switch {
	case unix:
		l.Address, l.Unix = strings.TrimPrefix(host, "unix:"), true
	default:
		l.Address, l.Port = host, 80
		if port != "" {
			l.Port, _ = strconv.Atoi(port)
		}
	}
	for _, p := range args[1:] {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "backlog":
			if b, err := strconv.Atoi(v); err == nil {
				l.Backlog, l.BacklogDefault = b, false
			}
		case "reuseport":
			l.Reuseport = true
		case "http2":
			l.HTTP2 = true
		case "ssl":
			l.SSL = true
		case "fastopen":
			l.Fastopen, _ = strconv.Atoi(v)
		case "default_server", "default":
			l.DefaultServer = true
		case "deferred":
			l.Deferred = true
		}
	}
	return l, true
}

// splitListen splits a listen address into its host and port as
// written: a port alone is host "*"; "[v6]" or "[v6]:port"; "host:port"
// at the last colon; anything else is a host without a port. A unix
// socket ("unix:PATH") is returned whole as host, with unix true.
func splitListen(a string) (host, port string, unix bool) {
	switch {
	case strings.HasPrefix(a, "unix:"):
		return a, "", true
	case bytesconv.IsDigits(a):
		return "*", a, false
	case strings.HasPrefix(a, "["):
		if i := strings.IndexByte(a, ']'); i >= 0 {
			return a[:i+1], strings.TrimPrefix(a[i+1:], ":"), false
		}
		return a, "", false
	}
	if i := strings.LastIndexByte(a, ':'); i >= 0 {
		return a[:i], a[i+1:], false
	}
	return a, "", false
}

// listenKey is a listen address as nginx binds it, for telling two
// listen directives of a server apart: "*:80", "[::]:443",
// "127.0.0.1:8080", "unix:/run/a.sock" ("80", "*:80" and "0.0.0.0:80"
// are one).
func listenKey(a string) string {
	host, port, unix := splitListen(a)
	if unix {
		return host
	}
	if host == "" || host == "0.0.0.0" {
		host = "*"
	}
	if port == "" {
		port = "80"
	}
	return strings.ToLower(host) + ":" + port
}

// AccessLog is an access_log directive's arguments as nginx reads them:
// off, or a path with its log_format (combined when none is named) and
// parameters.
type AccessLog struct {
	Off    bool
	Path   string
	Syslog bool   // the path is syslog:...
	Format string // the log_format's name
	Buffer string // buffer=
	Gzip   bool   // gzip or gzip=level
	If     string // if=
}

// ParseAccessLog reads the arguments of an access_log directive; ok is
// false when there are none. The second argument is the format's name
// unless it is a parameter (name=value).
func ParseAccessLog(args []string) (l AccessLog, ok bool) {
	if len(args) == 0 {
		return AccessLog{}, false
	}
	if args[0] == "off" {
		return AccessLog{Off: true}, true
	}
	l = AccessLog{Path: args[0], Syslog: strings.HasPrefix(args[0], "syslog:"), Format: "combined"}
	for j, a := range args[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch {
		case j == 0 && !strings.Contains(a, "="):
			l.Format = a
		case k == "buffer":
			l.Buffer = v
		case k == "gzip":
			l.Gzip = true
		case k == "if":
			l.If = v
		}
	}
	return l, true
}
