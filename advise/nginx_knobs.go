package advise

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// nginx settings seed 004 set (keepalive_requests 2000,
// client_body_temp_path under /dev/shm, sendfile_max_chunk 512k, listen
// ... fastopen=N), each where the evidence shows it matters:
//
//   - nginx-keepalive-requests: a client connection is closed after
//     keepalive_requests requests (100 before nginx 1.19.10): a busy
//     client opens a new one that often.
//   - nginx-client-body-temp: request bodies larger than
//     client_body_buffer_size are written to client_body_temp_path;
//     with a real share of POST/PUT requests in the access log and that
//     path on a disk, tmpfs saves the writes.
//   - nginx-sendfile-max-chunk: with sendfile and no chunk limit (nginx
//     before 1.21.4), one large static file occupies a worker until sent.
//   - nginx-fastopen: many new client connections a second; TCP Fast
//     Open sends the first request with the SYN.
var (
	nginxKeepaliveRequests = ruleFunc{"nginx-keepalive-requests", LayerNginx, checkNginxKeepaliveRequests}
	nginxClientBodyTemp    = ruleFunc{"nginx-client-body-temp", LayerNginx, checkNginxClientBodyTemp}
	nginxSendfileMaxChunk  = ruleFunc{"nginx-sendfile-max-chunk", LayerNginx, checkNginxSendfileMaxChunk}
	nginxFastopen          = ruleFunc{"nginx-fastopen", LayerNginx, checkNginxFastopen}
)

const (
	// keepaliveRequestsMin is nginx's default since 1.19.10.
	keepaliveRequestsMin = 1000
	// bodyShare is the share of requests with a body from which their
	// temporary files matter.
	bodyShare = 0.1
	// fastopenRate is the new connections per second from which a
	// handshake saved per connection shows.
	fastopenRate = 100
)

func checkNginxKeepaliveRequests(c *Context) []Finding {
	n := c.Nginx
	if n == nil || n.KeepaliveTimeoutSec == 0 || n.KeepaliveRequests <= 0 || n.KeepaliveRequests >= keepaliveRequestsMin {
		return nil
	}
	s, _ := c.nginxSetting("keepalive_requests")
	return []Finding{{
		ID:       "nginx-keepalive-requests",
		Title:    fmt.Sprintf("nginx closes a client's connection after %d requests", n.KeepaliveRequests),
		Severity: Info,
		Evidence: []Evidence{c.nginxEv("keepalive_requests"), ev("nginx version", orUnknown(n.Version), "", "nginx -v")},
		Change:   nginxChange(nginxHTTP, "keepalive_requests", s.Value, "2000", Increase),
		Effect:   "a busy client (a load balancer, a benchmark, a page with many assets) keeps its connection 20 times longer: fewer handshakes and TIME_WAIT sockets",
		Risk:     changeset.Risk{Note: "nginx frees a connection's per-connection memory when it closes it: 1000 is nginx's default since 1.19.10"},
		Source:   "seed 004 (keepalive_requests 2000); nginx docs (keepalive_requests, default 1000 since 1.19.10)",
	}}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// onTmpfs reports whether path is on a tmpfs, from the host's mounts
// (paths under /dev/shm and /run are, on every Debian).
func (c *Context) onTmpfs(path string) bool {
	if strings.HasPrefix(path, "/dev/shm/") || strings.HasPrefix(path, "/run/") {
		return true
	}
	if c.Linux != nil {
		if m := c.Linux.MountOf(path); m != nil {
			return m.FSType == "tmpfs"
		}
	}
	return false
}

func checkNginxClientBodyTemp(c *Context) []Finding {
	n, h := c.Nginx, c.HTTPLog
	if n == nil || h == nil || h.Requests == 0 {
		return nil
	}
	var bodies int64
	for _, e := range h.Endpoints {
		if e.Method == "POST" || e.Method == "PUT" || e.Method == "PATCH" {
			bodies += e.Count
		}
	}
	share := float64(bodies) / float64(h.Requests)
	path := n.ClientBodyTempPath
	if share < bodyShare || path == "" || c.onTmpfs(path) {
		return nil
	}
	s, _ := c.nginxSetting("client_body_temp_path")
	return []Finding{{
		ID:       "nginx-client-body-temp",
		Title:    fmt.Sprintf("%s of requests carry a body, and bodies past client_body_buffer_size are written to %s on disk", pct(share), path),
		Severity: Info,
		Evidence: []Evidence{ev("POST, PUT and PATCH requests", fmt.Sprintf("%d of %d", bodies, h.Requests), "", "access log ("+h.Window+")"),
			c.nginxEv("client_body_temp_path"), c.nginxEv("client_body_buffer_size")},
		Change: nginxChange(nginxHTTP, "client_body_temp_path", s.Value, "/dev/shm/nginx_client_body 1 2", Set),
		Effect: "a request body larger than the buffer is written to memory (tmpfs) instead of the disk",
		Risk:   changeset.Risk{Memory: "bodies in flight live in RAM, up to client_max_body_size each", Note: "nginx creates the directory (owned by its worker user) at start; /dev/shm is emptied at boot"},
		Source: "seed 004 (client_body_temp_path /dev/shm/...)",
	}}
}

func checkNginxSendfileMaxChunk(c *Context) []Finding {
	n := c.Nginx
	if n == nil || !n.Sendfile {
		return nil
	}
	s, _ := c.nginxSetting("sendfile_max_chunk")
	if strings.TrimSpace(s.Value) != "0" {
		return nil
	}
	if h := c.HTTPLog; h != nil && h.Requests > 0 && float64(h.StaticRequests)/float64(h.Requests) < 0.01 {
		return nil // no static traffic to speak of
	}
	return []Finding{{
		ID:       "nginx-sendfile-max-chunk",
		Title:    "sendfile is on with no limit per call (sendfile_max_chunk 0)",
		Severity: Info,
		Evidence: []Evidence{c.nginxEv("sendfile"), c.nginxEv("sendfile_max_chunk"), ev("nginx version", orUnknown(n.Version), "", "nginx -v")},
		Change:   nginxChange(nginxHTTP, "sendfile_max_chunk", "0", "512k", Set),
		Effect:   "a worker sending a large file to a fast client returns to its other connections every 512 KiB instead of sending the whole file in one call (nginx's default since 1.21.4 is 2m)",
		Source:   "seed 004 (sendfile_max_chunk 512k); nginx docs (sendfile_max_chunk)",
	}}
}

func checkNginxFastopen(c *Context) []Finding {
	n, l := c.Nginx, c.Linux
	if n == nil || l == nil || l.NetDeltas == nil || l.IntervalSeconds <= 0 {
		return nil
	}
	c.usesRates(LayerLinux)
	rate := l.NetDeltas["Tcp.PassiveOpens"] / l.IntervalSeconds
	if rate < fastopenRate {
		return nil
	}
	var target, args string
	var port int
	for _, ls := range n.Listens {
		if ls.Unix || ls.Implicit || ls.Port == 0 || ls.SSL {
			continue
		}
		if ls.Fastopen > 0 {
			return nil
		}
		if a := listenArgs(c, ls.File, ls.Line); a != "" && target == "" {
			target, args, port = fmt.Sprintf("nginx %s (%s)", ls.Context, place(ls.File, ls.Line)), a, ls.Port
		}
	}
	if target == "" {
		return nil
	}
	f := Finding{
		ID:       "nginx-fastopen",
		Title:    fmt.Sprintf("This host accepted %s new TCP connections a second; nginx's port %d takes no TCP Fast Open", num(rate), port),
		Severity: Info,
		Evidence: []Evidence{ev("connections accepted (Tcp.PassiveOpens)", num(rate), "per second", fmt.Sprintf("/proc/net/snmp, delta over %s s", num(l.IntervalSeconds))),
			ev("listen", args, "", target)},
		Change: nginxChange(target, "listen", args, args+" fastopen=256", Set),
		Effect: "a returning client that supports it sends its request with the SYN: a round trip less per new connection",
		Risk: changeset.Risk{Restart: true, Note: "few clients use it (browsers turned it off; curl, wrk and some HTTP libraries do), middleboxes may drop such SYNs, and a request can be replayed: " +
			"keep-alive (nginx-keepalive-requests, persistent connections) saves more; the listening socket changes with a restart"},
		Source: "seed 004 (listen 80 backlog=32768 fastopen=32768); nginx docs (listen fastopen); Linux ip-sysctl.txt (tcp_fastopen)",
	}
	if v, ok := c.SysctlInt("net.ipv4.tcp_fastopen"); ok && v&2 == 0 {
		f.Evidence = append(f.Evidence, ev("net.ipv4.tcp_fastopen", fmt.Sprint(v), "", sysctlSource("net.ipv4.tcp_fastopen")))
		f.Also = []changeset.Change{*c.SysctlChange("net.ipv4.tcp_fastopen", fmt.Sprint(v|3), Set)}
	}
	return []Finding{f}
}
