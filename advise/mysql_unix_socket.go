package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-unix-socket: an application on the database host that connects
// over loopback TCP pays for the TCP stack and leaves a TIME_WAIT per
// connection; the server's unix socket does neither (seed 000: +13% from
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
	est := c.Linux.TCP.Established
	in, out := est.ByLocalPort[int(port)], est.ByRemotePort[int(port)]
	local := min(in, out) // both ends on this host: clients here over TCP
	if local == 0 {
		return nil
	}
	socket, _ := c.Var("socket")
	return []Finding{{
		ID:       "mysql-unix-socket",
		Title:    fmt.Sprintf("%d connections reach MySQL from this host over TCP port %d", local, port),
		Severity: Info,
		Evidence: []Evidence{ev(fmt.Sprintf("established connections to local port %d", port), fmt.Sprint(in), "sockets", srcTCP),
			ev(fmt.Sprintf("established connections from this host to port %d", port), fmt.Sprint(out), "sockets", srcTCP),
			c.varEv("socket", "")},
		Change: &changeset.Change{Kind: changeset.App, Target: "application database connection", Name: "address",
			From: fmt.Sprintf("tcp(127.0.0.1:%d)", port), To: "unix(" + socket + ")", Direction: Set},
		Effect: "queries skip the TCP stack and connections leave no TIME_WAIT (seed 000 measured +13% for this change)",
		Risk:   changeset.Risk{Note: "the application's connection setting (DSN, host=localhost with a socket path); the socket's directory must be readable by the application's user"},
		Source: "seed 000 (unix sockets app → MySQL: +13%)",
	}}
}
