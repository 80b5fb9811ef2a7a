package advise

import (
	"fmt"
	"net"
	"strings"

	"github.com/stacktune/stacktune/nginxconf"
)

// nginx-unix-upstream: an application on the same host reached over
// loopback TCP can take a unix socket instead: no TCP stack, no ports, no
// TIME_WAIT (the ISUCON5 qualifier write-up: +5% and +13% for the two socket changes). The
// application has to listen on the socket, so the rule only informs.
var nginxUnixUpstream = ruleFunc{"nginx-unix-upstream", LayerNginx, checkNginxUnixUpstream}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func checkNginxUnixUpstream(c *Context) []Finding {
	if c.Nginx == nil {
		return nil
	}
	var evs []Evidence
	for _, u := range c.Nginx.Upstreams {
		for _, s := range u.Servers {
			if s.Unix {
				continue
			}
			if h, _, err := net.SplitHostPort(s.Address); err == nil && isLoopback(h) {
				evs = append(evs, ev("upstream "+u.Name+" server", s.Address, "", place(u.File, u.Line)))
			}
		}
	}
	for _, l := range c.Nginx.Locations {
		if l.Upstream != "" || l.Unix || l.Pass == "" {
			continue
		}
		host, _ := nginxconf.PassTarget(l.Pass)
		if h, _, err := net.SplitHostPort(host); err == nil && isLoopback(h) {
			evs = append(evs, ev(fmt.Sprintf("location %s pass", l.Match), l.Pass, "", place(l.File, l.Line)))
		}
	}
	if len(evs) == 0 {
		return nil
	}
	return []Finding{{
		ID:       "nginx-unix-upstream",
		Title:    fmt.Sprintf("nginx reaches %d local backend(s) over loopback TCP", len(evs)),
		Severity: Info,
		Evidence: evs,
		Effect:   "a unix socket (upstream app { server unix:/run/app/app.sock; }) skips the TCP stack and leaves no TIME_WAIT; the ISUCON5 qualifier write-up measured +5% and +13% for its two socket changes. The application must listen on the socket (its directory created at boot, e.g. with tmpfiles.d)",
		Source:   "the ISUCON5 qualifier write-up (unix sockets nginx → app and app → MySQL: +5% and +13%)",
	}}
}
