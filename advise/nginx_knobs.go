package advise

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/nginxconf"
)

// nginx settings the smartphone game backend set (keepalive_requests 2000,
// client_body_temp_path under /dev/shm, sendfile_max_chunk 512k, listen
// ... fastopen=N), each where the evidence shows it matters:
//
//   - nginx-keepalive-requests: a client connection is closed after
//     keepalive_requests requests (100 before nginx 1.19.10): a busy
//     client opens a new one that often.
//   - nginx-client-body-temp: request bodies larger than
//     client_body_buffer_size are written to client_body_temp_path;
//     when the access log's $request_length shows such requests (at
//     least bufferedShare of all) and that path is on a disk, tmpfs
//     saves the writes, in a directory of this nginx's own. Without
//     $request_length it only says what to log: POST bodies of tens of
//     bytes are never written anywhere.
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
	// bodyShare is the share of requests with a body from which the rule
	// asks for $request_length when the log has none.
	bodyShare = 0.1
	// bufferedShare is the share of requests whose bodies nginx wrote to
	// disk from which a tmpfs path is advised.
	bufferedShare = 0.01
	// headerAllowance is what $request_length may hold besides the body
	// (request line and headers): a request longer than
	// client_body_buffer_size by this much wrote its body to disk.
	headerAllowance = 4 << 10
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
		Source:   "the smartphone game backend's write-up (keepalive_requests 2000); nginx docs (keepalive_requests, default 1000 since 1.19.10)",
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
	path := n.ClientBodyTempPath
	buf, _ := c.nginxSetting("client_body_buffer_size")
	size, err := nginxconf.ParseSize(buf.Value)
	if path == "" || c.onTmpfs(path) || err != nil {
		return nil
	}
	src := "nginx docs (client_body_buffer_size: a larger body is written to a temporary file; client_body_temp_path; $request_length)"
	l := h.RequestLengths
	if l == nil || l.Requests == 0 {
		var bodies int64
		for _, e := range h.Endpoints {
			if e.Method == "POST" || e.Method == "PUT" || e.Method == "PATCH" {
				bodies += e.Count
			}
		}
		share := float64(bodies) / float64(h.Requests)
		if share < bodyShare {
			return nil
		}
		return []Finding{{
			ID:       "nginx-client-body-temp",
			Title:    fmt.Sprintf("%s of requests carry a body; whether nginx writes any to %s on disk is unknown: the access log has no $request_length", pct(share), path),
			Severity: Info,
			Evidence: []Evidence{ev("POST, PUT and PATCH requests", fmt.Sprintf("%d of %d", bodies, h.Requests), "", "access log ("+h.Window+")"),
				c.nginxEv("client_body_temp_path"), c.nginxEv("client_body_buffer_size")},
			Effect: fmt.Sprintf("none yet: only a body larger than client_body_buffer_size (%s) is written to disk, and small ones (a form, a JSON call) never are; "+
				"add $request_length to the access log's log_format and audit again to see whether any is", buf.Value),
			Source: src,
		}}
	}
	over := l.Over(size + headerAllowance)
	if over == 0 || float64(over) < bufferedShare*float64(h.Requests) {
		return nil
	}
	f := Finding{
		ID: "nginx-client-body-temp",
		Title: fmt.Sprintf("At least %d of %d requests with a body were longer than client_body_buffer_size (%s): nginx wrote their bodies to %s on disk",
			over, l.Requests, buf.Value, path),
		Severity: Info,
		Evidence: []Evidence{
			ev(fmt.Sprintf("requests longer than %s (client_body_buffer_size and %s of request line and headers)", fmtBytes(size+headerAllowance), fmtBytes(headerAllowance)),
				fmt.Sprintf("at least %d of %d", over, l.Requests), "requests with a body", "access log's $request_length ("+h.Window+")"),
			ev("longest request", fmtBytes(l.Max), "", "access log's $request_length ("+h.Window+")"),
			c.nginxEv("client_body_temp_path"), c.nginxEv("client_body_buffer_size")},
		Effect: "a request body larger than the buffer is written to memory (tmpfs) instead of the disk",
		Risk:   changeset.Risk{Memory: "bodies in flight live in RAM, up to client_max_body_size each"},
		Source: src,
	}
	dir, from := clientBodyTempDir(n)
	if dir == "" {
		f.Effect = "none until the path is chosen: the snapshot names neither this nginx's configuration nor its pid file, so no directory of its own under /dev/shm can be named; " + f.Effect
		return []Finding{f}
	}
	s, _ := c.nginxSetting("client_body_temp_path")
	f.Evidence = append(f.Evidence, ev("the directory's name", dir, "", from))
	f.Change = nginxChange(nginxHTTP, "client_body_temp_path", s.Value, dir+" 1 2", Set)
	f.Risk.Note = fmt.Sprintf("%s is this nginx's own, named from %s, so another nginx on the host (with another configuration) never shares its temporary files; "+
		"nginx creates it (owned by its worker user) at start, but not a parent directory, so it is one level under /dev/shm; /dev/shm is emptied at boot", dir, from)
	return []Finding{f}
}

// clientBodyTempDir is a client_body_temp_path under /dev/shm that is
// this nginx's own: /dev/shm/nginx-HASH-client_body, HASH the first 8 hex
// digits of the SHA-256 of its configuration's path (or else its pid
// file's), and what it was named from; "" when the snapshot has neither.
func clientBodyTempDir(n *collect.Nginx) (dir, from string) {
	key, from := n.ConfPath, "the SHA-256 of its configuration's path "+n.ConfPath
	if key == "" {
		for _, d := range n.Directives {
			if args := d.Args(); d.Name() == "pid" && d.Parent().Parent() == nil && len(args) == 1 {
				key, from = args[0], "the SHA-256 of its pid file's path "+args[0]
			}
		}
	}
	if key == "" {
		return "", ""
	}
	sum := sha256.Sum256([]byte(key))
	return "/dev/shm/nginx-" + hex.EncodeToString(sum[:4]) + "-client_body", from
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
		Source:   "the smartphone game backend's write-up (sendfile_max_chunk 512k); nginx docs (sendfile_max_chunk)",
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
		Source: "the smartphone game backend's write-up (listen 80 backlog=32768 fastopen=32768); nginx docs (listen fastopen); Linux ip-sysctl.txt (tcp_fastopen)",
	}
	if v, ok := c.SysctlInt("net.ipv4.tcp_fastopen"); ok && v&2 == 0 {
		f.Evidence = append(f.Evidence, ev("net.ipv4.tcp_fastopen", fmt.Sprint(v), "", sysctlSource("net.ipv4.tcp_fastopen")))
		f.Also = []changeset.Change{*c.SysctlChange("net.ipv4.tcp_fastopen", fmt.Sprint(v|3), Set)}
	}
	return []Finding{f}
}
