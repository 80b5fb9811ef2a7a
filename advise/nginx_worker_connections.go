package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// nginx-worker-connections: each worker accepts at most worker_connections
// connections, counting those to upstreams (a proxied request takes two).
// The rule compares the client connections open on nginx's ports with
// workers × worker_connections.
var nginxWorkerConnections = ruleFunc{"nginx-worker-connections", LayerNginx, checkNginxWorkerConnections}

// nginxConnBusy is the share of the connection capacity in use that is
// worth a raise.
const nginxConnBusy = 0.5

func checkNginxWorkerConnections(c *Context) []Finding {
	if c.Nginx == nil || c.Linux == nil {
		return nil
	}
	n := c.Nginx
	if n.Workers <= 0 || n.WorkerConnections <= 0 {
		return nil
	}
	ports := map[int]bool{}
	for _, l := range n.Listens {
		if !l.Unix && l.Port > 0 {
			ports[l.Port] = true
		}
	}
	clients := 0
	for p := range ports {
		clients += c.Linux.TCP.Established.ByLocalPort[p]
	}
	proxied := false
	for _, l := range n.Locations {
		switch l.Kind {
		case "proxy", "fastcgi", "uwsgi", "scgi", "grpc", "memcached":
			proxied = true
		}
	}
	per := 1
	if proxied {
		per = 2
	}
	capacity := n.Workers * n.WorkerConnections / per
	if float64(clients) < nginxConnBusy*float64(capacity) {
		return nil
	}
	value := max(n.WorkerConnections*2, 1024)
	s, src := c.nginxSetting("worker_connections")
	f := Finding{
		ID:       "nginx-worker-connections",
		Title:    fmt.Sprintf("%d client connections open against room for %d", clients, capacity),
		Severity: Warning,
		Evidence: []Evidence{ev("ESTABLISHED connections on nginx's ports", fmt.Sprint(clients), "connections", srcTCP),
			ev("worker_connections", s.Value, "per worker", src), ev("workers", fmt.Sprint(n.Workers), "workers", "worker_processes")},
		Change: nginxChange(nginxEvents, "worker_connections", s.Value, fmt.Sprint(value), Increase),
		Effect: "nginx keeps accepting at the peak instead of logging \"worker_connections are not enough\" and dropping connections",
		Risk:   changeset.Risk{Note: "each connection needs a file descriptor: worker_rlimit_nofile (or nginx's LimitNOFILE) must be at least twice worker_connections when proxying"},
		Source: "nginx docs (worker_connections counts upstream connections too); the PHP + MySQL TIME_WAIT write-up (LimitNOFILE for the web server)",
	}
	if proxied {
		f.Evidence = append(f.Evidence, ev("connections per proxied request", "2", "", "a client connection and an upstream connection"))
	}
	if clients >= capacity {
		f.Severity = Critical
	}
	return []Finding{f}
}
