package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// nginx-sendfile: for static files, sendfile copies from the page cache to
// the socket inside the kernel, tcp_nopush sends the headers and the
// file's start in full packets, and tcp_nodelay sends the last partial
// packet (and keep-alive responses) without Nagle's 40 ms delay (the smartphone game backend:
// `sendfile on; tcp_nopush on; tcp_nodelay on;`).
var nginxSendfile = ruleFunc{"nginx-sendfile", LayerNginx, checkNginxSendfile}

func checkNginxSendfile(c *Context) []Finding {
	if c.Nginx == nil {
		return nil
	}
	n := c.Nginx
	static := c.staticLocations()
	var changes []changeset.Change
	if len(static) > 0 && !n.Sendfile {
		changes = append(changes, *nginxChange(nginxHTTP, "sendfile", "off", "on", Set))
	}
	if len(static) > 0 && !n.TCPNopush {
		changes = append(changes, *nginxChange(nginxHTTP, "tcp_nopush", "off", "on", Set))
	}
	if !n.TCPNodelay {
		changes = append(changes, *nginxChange(nginxHTTP, "tcp_nodelay", "off", "on", Set))
	}
	if len(changes) == 0 {
		return nil
	}
	f := Finding{
		ID:       "nginx-sendfile",
		Title:    fmt.Sprintf("nginx http {} has %s off", changes[0].Name),
		Severity: Info,
		Evidence: []Evidence{c.nginxEv("sendfile"), c.nginxEv("tcp_nopush"), c.nginxEv("tcp_nodelay")},
		Change:   &changes[0],
		Also:     changes[1:],
		Effect:   "static files go from the page cache to the socket without a copy through nginx, in full packets, and the last packet leaves at once",
		Source:   "the smartphone game backend's write-up (sendfile on; tcp_nopush on; tcp_nodelay on;); nginx docs (sendfile, tcp_nopush, tcp_nodelay)",
	}
	if len(static) > 0 {
		f.Evidence = append(f.Evidence, locationsEv("static locations", static))
	}
	return []Finding{f}
}
