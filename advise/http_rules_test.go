package advise

import (
	"testing"

	"github.com/stacktune/stacktune/collect"
)

// withHTTPLog sets the http_log layer.
func withHTTPLog(h collect.HTTPLog) func(s *collect.Snapshot) {
	return func(s *collect.Snapshot) {
		if h.Files == nil {
			h.Files, h.Window = []string{"/var/log/nginx/access.log"}, "interval"
		}
		if err := s.SetLayer("http_log", h); err != nil {
			panic(err)
		}
	}
}

func TestNginxHealthCheck(t *testing.T) {
	// 600 s of traffic, 1000 s of request time; the load balancer asks
	// the top page every 10 s: 60 requests of 0.5 s, 30 s, 3%.
	elb := collect.HTTPPoller{Method: "GET", Path: "/", Client: "10.0.0.2", UserAgent: "ELB-HealthChecker/2.0", Count: 60, TimeTotal: 30, Every: 10, Spread: 0.02}
	cheap := elb
	cheap.Path, cheap.TimeTotal = "/health", 0.06
	visitor := elb
	visitor.UserAgent, visitor.Path = "Mozilla/5.0", "/feed/latest"
	log := func(ps ...collect.HTTPPoller) collect.HTTPLog {
		return collect.HTTPLog{Requests: 100000, Timed: 100000, TimeTotal: 1000, Seconds: 600, Pollers: ps}
	}
	runRuleCases(t, nginxHealthCheck, []ruleCase{
		{name: "no access log: silent", fires: false},
		{name: "the smartphone game backend: the load balancer checks the top page", setup: withHTTPLog(log(elb)), fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Info)
			wantText(t, fs[0].Title, "ELB-HealthChecker/2.0 asks / every 10 s and it takes 3% of the request time (500 ms each)")
			wantText(t, fs[0].Change.To, "location = /healthcheck { empty_gif; access_log off; }")
		}},
		{name: "a cheap health page: silent", setup: withHTTPLog(log(cheap)), fires: false},
		{name: "a steady visitor of another page is no health check: silent", setup: withHTTPLog(log(visitor)), fires: false},
		{name: "a third of the time: warning", setup: withHTTPLog(collect.HTTPLog{Requests: 200, TimeTotal: 80, Pollers: []collect.HTTPPoller{elb}}), fires: true,
			check: func(t *testing.T, fs []Finding) { wantSeverity(t, fs, Warning) }},
		{name: "nginx answers the path itself already: silent", snap: web("isucon"), setup: func(s *collect.Snapshot) {
			s.Nginx.Locations = append(s.Nginx.Locations, collect.NginxLocation{Match: "= /", Kind: "return"})
			withHTTPLog(log(elb))(s)
		}, fires: false},
	})
}

func TestNginxProxyOverhead(t *testing.T) {
	oneApp := func(s *collect.Snapshot) {
		s.Nginx = &collect.Nginx{ConfPath: "/etc/nginx/nginx.conf", Locations: []collect.NginxLocation{{Match: "/", Kind: "proxy", Pass: "http://127.0.0.1:8080"}}}
	}
	// 5000 requests, all proxied: 10 s of request time of which nginx
	// added 0.5 s (0.1 ms each).
	proxied := collect.HTTPLog{Requests: 5000, Timed: 5000, TimeTotal: 10, Seconds: 60, Upstream: 5000, UpstreamTotal: 9.5, UpstreamRequestTotal: 10}
	runRuleCases(t, nginxProxyOverhead, []ruleCase{
		{name: "no access log: silent", setup: oneApp, fires: false},
		{name: "the ISUCON5 runner-up: no static traffic, one upstream: say what nginx costs", setup: both(oneApp, withHTTPLog(proxied), func(s *collect.Snapshot) {
			withCPU(s, 0.5, map[string]float64{"nginx": 0.2})
		}), fires: true, check: func(t *testing.T, fs []Finding) {
			wantText(t, fs[0].Title, "adds 0.1 ms to each (5% of the request time)")
			wantText(t, describe(fs), "nginx → http://127.0.0.1:8080")
			wantText(t, fs[0].Risk.Note, "buffers slow clients")
			found := false
			for _, e := range fs[0].Evidence {
				found = found || e.What == "nginx CPU per request"
			}
			if !found {
				t.Errorf("no CPU per request: %+v", fs[0].Evidence)
			}
		}},
		{name: "static files served: silent", setup: both(oneApp, withHTTPLog(collect.HTTPLog{Requests: 5000, Upstream: 4000, UpstreamTotal: 9, UpstreamRequestTotal: 10, StaticRequests: 1000})), fires: false},
		{name: "two upstream servers: nginx balances, silent", setup: func(s *collect.Snapshot) {
			s.Nginx = &collect.Nginx{Locations: []collect.NginxLocation{{Match: "/", Kind: "proxy", Upstream: "app"}},
				Upstreams: []collect.NginxUpstream{{Name: "app", Servers: []collect.NginxUpstreamServer{{Address: "10.0.0.1:80"}, {Address: "10.0.0.2:80"}}}}}
			withHTTPLog(proxied)(s)
		}, fires: false},
		{name: "a location serving files: silent", setup: func(s *collect.Snapshot) {
			oneApp(s)
			s.Nginx.Locations = append(s.Nginx.Locations, collect.NginxLocation{Match: "/static/", Kind: "static"})
			withHTTPLog(proxied)(s)
		}, fires: false},
	})
}
