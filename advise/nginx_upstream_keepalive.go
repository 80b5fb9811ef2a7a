package advise

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
)

// nginx-upstream-keepalive: without `keepalive N` in the upstream block,
// and HTTP/1.1 with the Connection header cleared where it is used, nginx
// opens a connection to the application per request and closes it, which
// costs a handshake and leaves a TIME_WAIT on nginx's side per request
// (the ISUCON5 qualifier write-up and the smartphone game backend; nginx docs 'upstream keepalive'). For fastcgi_pass
// the switch is fastcgi_keep_conn on.
var nginxUpstreamKeepalive = ruleFunc{"nginx-upstream-keepalive", LayerNginx, checkNginxUpstreamKeepalive}

// upstreamKeepalive is the idle connections per worker proposed (nginx's
// docs use 16 and 32).
const upstreamKeepalive = 32

func checkNginxUpstreamKeepalive(c *Context) []Finding {
	if c.Nginx == nil {
		return nil
	}
	var out []Finding
	for _, u := range c.Nginx.Upstreams {
		if len(u.UsedBy) == 0 {
			continue
		}
		var notReady []collect.NginxUpstreamUse
		for _, use := range u.UsedBy {
			switch use.Directive {
			case "proxy_pass", "fastcgi_pass":
				if !use.KeepaliveReady {
					notReady = append(notReady, use)
				}
			}
		}
		if u.Keepalive > 0 && len(notReady) == 0 {
			continue
		}
		target := fmt.Sprintf("nginx upstream %s {} (%s)", u.Name, place(u.File, u.Line))
		f := Finding{
			ID:       "nginx-upstream-keepalive",
			Severity: Warning,
			Evidence: []Evidence{ev("keepalive in upstream "+u.Name, fmt.Sprint(u.Keepalive), "idle connections per worker", place(u.File, u.Line))},
			Source:   "the ISUCON5 qualifier write-up and the smartphone game backend's write-up (upstream keepalive); nginx docs (ngx_http_upstream_module keepalive: proxy_http_version 1.1 and an empty Connection header)",
		}
		var changes []changeset.Change
		if u.Keepalive == 0 {
			f.Title = fmt.Sprintf("nginx opens a new connection to upstream %s for every request", u.Name)
			changes = append(changes, *nginxChange(target, "keepalive", "", fmt.Sprint(upstreamKeepalive), Set))
		} else {
			f.Title = fmt.Sprintf("Upstream %s keeps idle connections, but %d place(s) using it close them", u.Name, len(notReady))
		}
		for _, use := range notReady {
			where := fmt.Sprintf("nginx %s (%s)", use.Context, place(use.File, use.Line))
			switch use.Directive {
			case "proxy_pass":
				f.Evidence = append(f.Evidence, ev(fmt.Sprintf("proxy_pass at %s", place(use.File, use.Line)),
					fmt.Sprintf("proxy_http_version %s, Connection %q", use.HTTPVersion, use.ConnectionValue), "", "nginx configuration (inherited values)"))
				if use.HTTPVersion != "1.1" {
					changes = append(changes, *nginxChange(where, "proxy_http_version", use.HTTPVersion, "1.1", Set))
				}
				if !use.ConnectionCleared {
					changes = append(changes, *nginxChange(where, "proxy_set_header", "Connection "+quoteNginx(use.Connection), `Connection ""`, Set))
				}
			case "fastcgi_pass":
				f.Evidence = append(f.Evidence, ev(fmt.Sprintf("fastcgi_pass at %s", place(use.File, use.Line)), "fastcgi_keep_conn off", "", "nginx configuration"))
				changes = append(changes, *nginxChange(where, "fastcgi_keep_conn", "off", "on", Set))
			}
		}
		if tw := upstreamTimeWait(c, u); tw != nil {
			f.Evidence = append(f.Evidence, *tw)
		}
		if len(changes) == 0 {
			continue
		}
		f.Change, f.Also = &changes[0], changes[1:]
		f.Effect = "requests reuse idle connections to the application: no TCP handshake per request and no TIME_WAIT left behind per request"
		f.Risk.Note = "the application must accept keep-alive connections (most do); an idle connection counts against worker_connections"
		out = append(out, f)
	}
	return out
}

// quoteNginx quotes an empty or blank value as nginx writes it.
func quoteNginx(v string) string {
	if v == "" || strings.ContainsAny(v, " \t") {
		return `"` + v + `"`
	}
	return v
}

// upstreamTimeWait counts TIME_WAIT sockets of the upstream's TCP ports,
// when the Linux layer saw them, on both sides (portSockets): nginx's side
// toward the port, and the application's on it when it runs here and
// closes first (as it does when nginx sends Connection: close).
func upstreamTimeWait(c *Context, u collect.NginxUpstream) *Evidence {
	if c.Linux == nil {
		return nil
	}
	client, server := 0, 0
	var ports []string
	seen := map[int]bool{}
	for _, s := range u.Servers {
		if s.Unix {
			continue
		}
		port := addrPort(s.Address)
		if port == 0 || seen[port] {
			continue
		}
		seen[port] = true
		ps := c.portSockets(port)
		client += ps.twClient
		server += ps.twServer
		ports = append(ports, strconv.Itoa(port))
	}
	if len(ports) == 0 {
		return nil
	}
	e := ev("TIME_WAIT sockets of port "+strings.Join(ports, ", "), fmt.Sprint(client+server),
		fmt.Sprintf("sockets (%d on nginx's side, %d on the application's; %s connections/s)", client, server, num(float64(client+server)/timeWaitSeconds)), srcTCP)
	return &e
}
