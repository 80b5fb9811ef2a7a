package advise

import (
	"fmt"
	"net"
	"strconv"
)

// portSockets are this host's TCP sockets of one service port, counted
// on both sides: a connection leaves its TIME_WAIT on the side that closed
// first, which is the client (toward the port: "to :3306") when the
// application closes, and the server (on the port: ":3306") when the
// server does (nginx without upstream keepalive sends Connection: close,
// and the application closes). Counting one side only can miss all of it.
type portSockets struct {
	port int
	// twClient: TIME_WAIT toward the port (this host's clients closed
	// first); twServer: TIME_WAIT on the port (the server here closed
	// first).
	twClient, twServer   int
	estClient, estServer int
	// listening: a socket listens on the port here.
	listening bool
}

// portSockets counts the snapshot's sockets of port.
func (c *Context) portSockets(port int) portSockets {
	p := portSockets{port: port}
	if c.Linux == nil || port <= 0 {
		return p
	}
	tcp := c.Linux.TCP
	p.twClient, p.twServer = tcp.TimeWait.ByRemotePort[port], tcp.TimeWait.ByLocalPort[port]
	p.estClient, p.estServer = tcp.Established.ByRemotePort[port], tcp.Established.ByLocalPort[port]
	for _, l := range tcp.Listen {
		if l.Port == port {
			p.listening = true
		}
	}
	return p
}

// timeWait is the TIME_WAIT sockets of both sides.
func (p portSockets) timeWait() int { return p.twClient + p.twServer }

// closeRate is the connections closed per second over the last minute:
// each closed connection leaves one TIME_WAIT for 60 s (TCP_TIMEWAIT_LEN).
func (p portSockets) closeRate() float64 { return float64(p.timeWait()) / timeWaitSeconds }

// evidence is the TIME_WAIT counts of both sides and the rate they mean.
func (p portSockets) evidence() []Evidence {
	return []Evidence{
		ev(fmt.Sprintf("TIME_WAIT toward port %d (this host's clients closed first)", p.port), fmt.Sprint(p.twClient), "sockets", srcTCP),
		ev(fmt.Sprintf("TIME_WAIT on port %d (the server here closed first)", p.port), fmt.Sprint(p.twServer), "sockets", srcTCP),
		ev(fmt.Sprintf("connections to port %d closed per second", p.port), num(p.closeRate()), "connections/s", "TIME_WAIT of both sides / 60 s (TCP_TIMEWAIT_LEN)"),
	}
}

// addrPort is the TCP port of a host:port address, 0 for none.
func addrPort(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return 0
	}
	return n
}
