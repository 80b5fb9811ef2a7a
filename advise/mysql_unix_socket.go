package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-unix-socket: an application on the database host that connects
// over loopback TCP pays for the TCP stack and leaves a TIME_WAIT per
// connection; the server's unix socket does neither (the ISUCON5 qualifier write-up: +13% from
// the app → MySQL socket alone).
var mysqlUnixSocket = ruleFunc{"mysql-unix-socket", LayerMySQL, checkMySQLUnixSocket}

func checkMySQLUnixSocket(c *Context) []Finding {
	if c.Linux == nil || c.My == nil {
		return nil
	}
	port, ok := c.Int("port")
	if !ok || port <= 0 {
		return nil
	}
	ps := c.portSockets(int(port))
	open := min(ps.estClient, ps.estServer) // both ends on this host: clients here over TCP
	// TIME_WAIT toward the port from this host, while the server listens
	// here: clients on this host that connected over TCP and closed
	// first (a connection per request leaves one each).
	closed := 0
	if ps.listening {
		closed = ps.twClient
	}
	if open == 0 && closed == 0 {
		return nil
	}
	socket, _ := c.Var("socket")
	f := Finding{
		ID:       "mysql-unix-socket",
		Severity: Info,
		Evidence: []Evidence{ev(fmt.Sprintf("established connections to local port %d", port), fmt.Sprint(ps.estServer), "sockets", srcTCP),
			ev(fmt.Sprintf("established connections from this host to port %d", port), fmt.Sprint(ps.estClient), "sockets", srcTCP)},
		Change: &changeset.Change{Kind: changeset.App, Target: "application database connection", Name: "address",
			From: fmt.Sprintf("tcp(127.0.0.1:%d)", port), To: "unix(" + socket + ")", Direction: Set},
		Effect: "queries skip the TCP stack and connections leave no TIME_WAIT (the ISUCON5 qualifier write-up measured +13% for this change)",
		Risk:   changeset.Risk{Note: "the application's connection setting (DSN, host=localhost with a socket path); the socket's directory must be readable by the application's user"},
		Source: "the ISUCON5 qualifier write-up (unix sockets app → MySQL: +13%); the PHP + MySQL TIME_WAIT write-up (a TIME_WAIT per connection)",
	}
	f.Evidence = append(f.Evidence, ps.evidence()...)
	rate := float64(closed) / timeWaitSeconds
	if r, ok := c.Rate("Connections"); ok {
		f.Evidence = append(f.Evidence, c.deltaEv("Connections"))
		rate = max(rate, r)
	}
	f.Evidence = append(f.Evidence, c.varEv("socket", ""))
	switch {
	case open > 0 && closed > 0:
		f.Title = fmt.Sprintf("Clients on this host reach MySQL over TCP port %d: %d connections open, %d closed in the last minute (%s/s)", port, open, closed, num(float64(closed)/timeWaitSeconds))
	case open > 0:
		f.Title = fmt.Sprintf("%d connections reach MySQL from this host over TCP port %d", open, port)
	default:
		f.Title = fmt.Sprintf("Clients on this host connect to MySQL over TCP port %d and close: %d TIME_WAIT in the last minute (%s/s)", port, closed, num(float64(closed)/timeWaitSeconds))
	}
	if rate >= churnWarnRate {
		f.Severity = Warning
	}
	return []Finding{f}
}
