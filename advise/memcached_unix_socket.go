package advise

import (
	"fmt"
	"net"
	"strconv"

	"github.com/stacktune/stacktune/changeset"
)

// memcached-unix-socket: a memcached on the web host reached over loopback
// TCP leaves a TIME_WAIT per connection and pays for the TCP stack; a unix
// socket does neither (the smartphone game backend: memcached on the web host with -s
// /var/run/memcached/memcached.sock beat a remote one).
var memcachedUnixSocket = ruleFunc{"memcached-unix-socket", LayerMemcached, checkMemcachedUnixSocket}

// memcachedSocket is the smartphone game backend's socket path.
const memcachedSocket = "/var/run/memcached/memcached.sock"

func checkMemcachedUnixSocket(c *Context) []Finding {
	m := c.Memcached
	if m == nil || m.Unix || !localAddr(m.Addr) {
		return nil
	}
	f := Finding{
		ID:       "memcached-unix-socket",
		Title:    "memcached on this host is reached over TCP (" + m.Addr + ")",
		Severity: Info,
		Evidence: []Evidence{ev("memcached address", m.Addr, "", "the collector's connection")},
		Change:   &changeset.Change{Kind: changeset.Memcached, Target: "memcached", Name: "-s", From: "", To: memcachedSocket, Direction: Set},
		Effect:   "clients on this host skip the TCP stack and leave no TIME_WAIT per connection (the smartphone game backend moved memcached to the web hosts behind a unix socket)",
		Risk:     changeset.Risk{Restart: true, Note: "with -s memcached stops listening on TCP: every client must switch to the socket (remote clients lose access); give the web server's user access with -a 0770 and the socket's group"},
		Source:   "the smartphone game backend's write-up (memcached -s /var/run/memcached/memcached.sock on the web host)",
	}
	if c.Linux != nil {
		if _, p, err := net.SplitHostPort(m.Addr); err == nil {
			if port, err := strconv.Atoi(p); err == nil {
				f.Evidence = append(f.Evidence, ev(fmt.Sprintf("TIME_WAIT sockets to port %d", port), fmt.Sprint(c.Linux.TCP.TimeWait.ByRemotePort[port]), "sockets", srcTCP))
			}
		}
	}
	return []Finding{f}
}
