package advise

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// nginx-proxy-overhead: nginx in front of an application earns its keep
// with static files, TLS, buffering slow clients and spreading load over
// several upstreams. With negligible static traffic and a single
// upstream it is one more hop per request; the ISUCON5 runner-up measured it and
// bypassed it. The rule measures what nginx adds to each proxied request
// from the access log over the interval ($request_time less
// $upstream_response_time) and its CPU per request (the Linux collector),
// and says it can be bypassed, with what is lost.
var nginxProxyOverhead = ruleFunc{"nginx-proxy-overhead", LayerNginx, checkNginxProxyOverhead}

const (
	// proxyStaticMax is the share of requests for static files below
	// which static traffic is negligible.
	proxyStaticMax = 0.01
	// proxyMinRequests are the proxied requests the measure needs.
	proxyMinRequests = 100
)

func checkNginxProxyOverhead(c *Context) []Finding {
	h, n := c.HTTPLog, c.Nginx
	if h == nil || n == nil || h.Requests == 0 || h.Upstream < proxyMinRequests {
		return nil
	}
	staticShare := float64(h.StaticRequests) / float64(h.Requests)
	if staticShare >= proxyStaticMax {
		return nil
	}
	targets := map[string]bool{}
	for _, l := range n.Locations {
		switch l.Kind {
		case "proxy", "fastcgi", "uwsgi", "scgi", "grpc":
			key := l.Pass
			if l.Upstream != "" {
				for _, u := range n.Upstreams {
					if u.Name == l.Upstream {
						var addrs []string
						for _, s := range u.Servers {
							addrs = append(addrs, s.Address)
						}
						key = strings.Join(addrs, ",")
					}
				}
			}
			targets[key] = true
		case "static":
			if l.Match != "" && !strings.HasPrefix(l.Match, "@") {
				// A location that serves files: nginx has work of its own.
				return nil
			}
		}
	}
	if len(targets) != 1 {
		return nil
	}
	var target string
	for t := range targets {
		target = t
	}
	if strings.Contains(target, ",") {
		return nil // several servers: nginx balances the load
	}
	added := max(0, h.UpstreamRequestTotal-h.UpstreamTotal) / float64(h.Upstream)
	share := 0.0
	if h.UpstreamRequestTotal > 0 {
		share = (h.UpstreamRequestTotal - h.UpstreamTotal) / h.UpstreamRequestTotal
	}
	src := fmt.Sprintf("access log (%s), %s", strings.Join(h.Files, ", "), h.Window)
	f := Finding{
		ID:       "nginx-proxy-overhead",
		Severity: Info,
		Title:    fmt.Sprintf("nginx proxies every request to one upstream (%s) and serves no static files: it adds %s to each (%s of the request time)", target, fmtMS(added), pct(share)),
		Evidence: []Evidence{
			ev("requests for static files", fmt.Sprintf("%d of %d (%s)", h.StaticRequests, h.Requests, pct(staticShare)), "", src),
			ev("proxied requests", fmt.Sprint(h.Upstream), "", src+" (with $upstream_response_time)"),
			ev("nginx's own time per proxied request", fmtMS(added), "", "($request_time - $upstream_response_time) summed / proxied requests"),
			ev("upstream", target, "", n.ConfPath),
		},
		Change: &changeset.Change{Kind: changeset.App, Target: "the application's listener", Name: "clients' entry point", From: "nginx → " + target,
			To: "the application serves clients directly (nginx kept only where TLS, slow-client buffering or load balancing is needed)", Direction: Set},
		Effect: fmt.Sprintf("one hop less per request: about %s and nginx's CPU per request back (the ISUCON5 runner-up bypassed its proxy for negligible static traffic)", fmtMS(added)),
		Risk: changeset.Risk{Note: "nginx buffers slow clients so the application's workers are freed at once, terminates TLS, keeps client keep-alive and protects the application from malformed requests: " +
			"bypass it only when those do not matter (a benchmark, an internal service), and measure (stacktune tune)"},
		Source: "the ISUCON5 runner-up's write-up (the reverse proxy is overhead when static traffic is negligible)",
	}
	if c.Linux != nil && c.Linux.IntervalSeconds > 0 && h.Seconds > 0 {
		for _, s := range c.Linux.Services {
			if s.Name == "nginx" && s.CPUSeconds != nil {
				c.usesRates(LayerLinux)
				rate := float64(h.Requests) / h.Seconds
				per := *s.CPUSeconds / (rate * c.Linux.IntervalSeconds)
				f.Evidence = append(f.Evidence, ev("nginx CPU per request", fmtMS(per), "", fmt.Sprintf("nginx's CPU over %s s / requests per second in the access log", num(c.Linux.IntervalSeconds))))
			}
		}
	}
	return []Finding{f}
}
