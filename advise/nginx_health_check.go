package advise

import (
	"fmt"
	"path"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
)

// nginx-health-check: a load balancer that checks a heavy page (the top
// page, an endpoint that queries the database) at a fixed pace costs what
// every such request costs, for nothing a visitor sees; the smartphone game backend served
// its health checks with `location = /healthcheck { empty_gif; access_log
// off; }`. From the access log over the interval (--http-log): a client
// asking one URL at a steady pace (a poller) whose user agent is a load
// balancer's, or whose URL is a health or the top page, that takes a
// visible share of the request time or is heavy on its own.
var nginxHealthCheck = ruleFunc{"nginx-health-check", LayerNginx, checkNginxHealthCheck}

const (
	// healthShare is the share of all request time a poller must take.
	healthShare = 0.01
	// healthHeavy is the mean time of a request that is heavy in itself.
	healthHeavy = 0.02
)

// probeAgents are the user agents of health checkers (lower case
// substrings).
var probeAgents = []string{"elb-healthchecker", "googlehc", "kube-probe", "haproxy", "route53-health-check", "consul health", "health", "uptime", "pingdom", "nagios", "zabbix", "monitor"}

// healthPaths are URLs a health check asks (path.Match patterns, lower
// case).
var healthPaths = []string{"/", "/health*", "/healthz", "/ping", "/status", "/alive", "/ready*", "/livez", "/readyz", "/index.*"}

// isProbe reports whether a poller looks like a health check.
func isProbe(p collect.HTTPPoller) bool {
	ua := strings.ToLower(p.UserAgent)
	for _, a := range probeAgents {
		if strings.Contains(ua, a) {
			return true
		}
	}
	lp := strings.ToLower(p.Path)
	for _, pat := range healthPaths {
		if ok, _ := path.Match(pat, lp); ok {
			return true
		}
	}
	return false
}

func checkNginxHealthCheck(c *Context) []Finding {
	h := c.HTTPLog
	if h == nil || h.TimeTotal <= 0 {
		return nil
	}
	var out []Finding
	for _, p := range h.Pollers {
		if !isProbe(p) || p.Count == 0 {
			continue
		}
		share, avg := p.TimeTotal/h.TimeTotal, p.TimeTotal/float64(p.Count)
		if share < healthShare && avg < healthHeavy {
			continue
		}
		if c.Nginx != nil && servesProbe(c.Nginx, p.Path) {
			continue
		}
		src := fmt.Sprintf("access log (%s), %s", strings.Join(h.Files, ", "), h.Window)
		f := Finding{
			ID:       "nginx-health-check",
			Severity: Info,
			Title:    fmt.Sprintf("%s asks %s every %s s and it takes %s of the request time (%s each)", clientName(p), p.Path, num(p.Every), pct(share), fmtMS(avg)),
			Evidence: []Evidence{
				ev("poller", fmt.Sprintf("%s %s from %s, User-Agent %q", p.Method, p.Path, p.Client, p.UserAgent), "", src),
				ev("requests", fmt.Sprint(p.Count), "", src),
				ev("every", num(p.Every), "s", fmt.Sprintf("mean gap between its requests (spread %s)", pct(p.Spread))),
				ev("its request time", num(p.TimeTotal), "s", src),
				ev("share of all request time", pct(share), "", fmt.Sprintf("of %s s over %d requests", num(h.TimeTotal), h.Requests)),
			},
			Change: &changeset.Change{Kind: changeset.App, Target: "load balancer health check", Name: "health check URL",
				From: p.Path, To: "/healthcheck, answered by nginx: location = /healthcheck { empty_gif; access_log off; } in the server block", Direction: Set},
			Effect: "the check costs nginx a few microseconds instead of a page's work, and stops filling the access log",
			Risk:   changeset.Risk{Note: "a check nginx answers alone no longer proves the application is up: keep one that reaches the application (a cheap endpoint that touches no database) if the load balancer must notice an application failure; stacktune apply does not add nginx blocks, add the location by hand"},
			Source: "the smartphone game backend's write-up (location = /healthcheck { empty_gif; access_log off; })",
		}
		if share >= 0.1 {
			f.Severity = Warning
		}
		out = append(out, f)
	}
	return out
}

// clientName names a poller: its user agent's product, else its address.
func clientName(p collect.HTTPPoller) string {
	if p.UserAgent != "" {
		name, _, _ := strings.Cut(p.UserAgent, " ")
		return name
	}
	return p.Client
}

// servesProbe reports whether nginx answers the path itself (a location
// = path returning or serving empty_gif).
func servesProbe(n *collect.Nginx, p string) bool {
	for _, l := range n.Locations {
		if strings.TrimSpace(strings.TrimPrefix(l.Match, "=")) == p && (l.Kind == "return" || l.Kind == "empty_gif") {
			return true
		}
	}
	return false
}
