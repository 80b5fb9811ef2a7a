package advise

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/nginxconf"
)

// web returns a snapshot builder for one of the nginx fixtures.
func web(name string) func(t testing.TB) *collect.Snapshot {
	return func(t testing.TB) *collect.Snapshot { return webSnap(t, name) }
}

func TestNginxWorkerProcesses(t *testing.T) {
	runRuleCases(t, nginxWorkerProcesses, []ruleCase{
		{name: "auto: silent", snap: web("debian"), fires: false},
		{name: "1 worker (default) on 8 cores: auto", snap: web("minimal"), fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "worker_processes", "auto")
			wantSeverity(t, fs, Info)
		}},
		{name: "16 workers on 8 cores: decrease", snap: web("minimal"), setup: func(s *collect.Snapshot) {
			s.Nginx.Workers = 16
			st := s.Nginx.Settings["worker_processes"]
			st.Value, st.Default = "16", false
			s.Nginx.Settings["worker_processes"] = st
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Warning)
			if fs[0].Change.Direction != Decrease {
				t.Error("decrease")
			}
		}},
	})
}

func TestNginxWorkerConnections(t *testing.T) {
	runRuleCases(t, nginxWorkerConnections, []ruleCase{
		{name: "idle: silent", snap: web("isucon"), fires: false},
		{name: "busy: 4 workers × 4096 / 2 with 7000 clients", snap: web("isucon"), setup: func(s *collect.Snapshot) {
			s.Linux.TCP.Established.ByLocalPort[80] = 7000
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "worker_connections", "8192") }},
	})
}

func TestNginxWorkerRlimitNofile(t *testing.T) {
	runRuleCases(t, nginxWorkerRlimitNofile, []ruleCase{
		{name: "65535 for 4096: silent", snap: web("isucon"), fires: false},
		{name: "too low", snap: web("isucon"), setup: func(s *collect.Snapshot) { s.Nginx.WorkerRlimitNofile = 4096 }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "worker_rlimit_nofile", "9216") }},
	})
}

func TestNginxSendfile(t *testing.T) {
	runRuleCases(t, nginxSendfile, []ruleCase{
		{name: "Debian: sendfile and tcp_nopush on: silent", snap: web("debian"), fires: false},
		{name: "ISUCON: tcp_nopush off with static files", snap: web("isucon"), fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "tcp_nopush", "on")
			if change(fs, "sendfile") != nil {
				t.Error("sendfile is on")
			}
		}},
		{name: "minimal: sendfile off", snap: web("minimal"), fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "sendfile", "on")
			wantChange(t, fs, "tcp_nopush", "on")
		}},
	})
}

func TestNginxOpenFileCache(t *testing.T) {
	runRuleCases(t, nginxOpenFileCache, []ruleCase{
		{name: "on (the smartphone game backend's values): silent", snap: web("keepalive"), fires: false},
		{name: "off with static files: the smartphone game backend's values", snap: web("debian"), fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "open_file_cache", "max=100000 inactive=20s")
			wantChange(t, fs, "open_file_cache_min_uses", "2")
		}},
	})
}

func TestNginxUpstreamKeepalive(t *testing.T) {
	runRuleCases(t, nginxUpstreamKeepalive, []ruleCase{
		{name: "ISUCON: no keepalive, HTTP/1.0", snap: web("isucon"), fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "keepalive", "32")
			wantChange(t, fs, "proxy_http_version", "1.1")
			wantChange(t, fs, "proxy_set_header", `Connection ""`)
			if !strings.Contains(fs[0].Change.Target, "upstream app") {
				t.Errorf("target %q", fs[0].Change.Target)
			}
		}},
		{name: "keepalive 64 but /admin/ and /ws/ close: fix those places", snap: web("keepalive"), fires: true, check: func(t *testing.T, fs []Finding) {
			if change(fs, "keepalive") != nil {
				t.Error("the upstream has keepalive")
			}
			n := 0
			for _, ch := range fs[0].Changes() {
				if ch.Name == "proxy_set_header" {
					n++
				}
			}
			if n != 2 || len(fs) != 1 {
				t.Errorf("want Connection cleared in 2 places of 1 upstream:%s", describe(fs))
			}
		}},
		{name: "TIME_WAIT toward a TCP upstream is evidence", snap: web("keepalive"), setup: func(s *collect.Snapshot) {
			s.Linux.TCP.TimeWait.ByRemotePort[8080] = 5000
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			found := false
			for _, e := range fs[0].Evidence {
				found = found || e.Value == "5000"
			}
			if !found {
				t.Errorf("evidence %+v", fs[0].Evidence)
			}
		}},
		// Issue 17: the app on this host closes first (nginx sends
		// Connection: close), so its side holds the TIME_WAIT: 621 on the
		// app's port, 9 on nginx's side toward it.
		{name: "TIME_WAIT on both sides counted", snap: web("keepalive"), setup: func(s *collect.Snapshot) {
			s.Linux.TCP.TimeWait.ByRemotePort[8080] = 9
			s.Linux.TCP.TimeWait.ByLocalPort[8080] = 621
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			found := false
			for _, e := range fs[0].Evidence {
				found = found || (e.Value == "630" && strings.Contains(e.Unit, "9 on nginx's side, 621 on the application's"))
			}
			if !found {
				t.Errorf("evidence %+v", fs[0].Evidence)
			}
		}},
		{name: "no upstreams: silent", snap: web("minimal"), fires: false},
	})
}

func TestNginxUnixUpstream(t *testing.T) {
	runRuleCases(t, nginxUnixUpstream, []ruleCase{
		{name: "unix socket already: silent", snap: web("isucon"), fires: false},
		{name: "127.0.0.1 upstream and proxy_pass: info (the ISUCON5 qualifier write-up)", snap: web("keepalive"), fires: true, check: func(t *testing.T, fs []Finding) {
			wantNoChange(t, fs)
			if len(fs[0].Evidence) != 3 {
				t.Errorf("two servers and /legacy/: %+v", fs[0].Evidence)
			}
			wantText(t, fs[0].Effect, "+5% and +13%")
		}},
	})
}

func TestNginxAccessLogRequestTime(t *testing.T) {
	runRuleCases(t, nginxAccessLogRequestTime, []ruleCase{
		{name: "LTSV with reqtime: silent", snap: web("isucon"), fires: false},
		{name: "Debian's combined: the exact log_format line", snap: web("debian"), fires: true, check: func(t *testing.T, fs []Finding) {
			lf := change(fs, "log_format")
			if lf == nil || !strings.HasPrefix(lf.To, "timed '") || !strings.Contains(lf.To, "$request_time") {
				t.Fatalf("%+v", lf)
			}
			al := change(fs, "access_log")
			if al == nil || al.To != "logs/access.log timed" {
				t.Fatalf("%+v", al)
			}
		}},
		{name: "nginx's default log (no access_log at all)", snap: web("minimal"), fires: true},
	})
}

func TestNginxGzip(t *testing.T) {
	runRuleCases(t, nginxGzip, []ruleCase{
		{name: "text types covered: silent", snap: web("isucon"), fires: false},
		{name: "on for text/html only (Debian)", snap: web("debian"), fires: true, check: func(t *testing.T, fs []Finding) {
			ch := change(fs, "gzip_types")
			if ch == nil || strings.Contains(ch.To, "text/html") || !strings.Contains(ch.To, "application/json") {
				t.Fatalf("%+v", ch)
			}
		}},
		{name: "off", snap: web("minimal"), fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "gzip", "on") }},
	})
}

func TestNginxListenBacklog(t *testing.T) {
	runRuleCases(t, nginxListenBacklog, []ruleCase{
		{name: "empty queues: silent", snap: web("isucon"), fires: false},
		{name: "queue full on :80 at the default 511 (Debian)", snap: web("debian"), setup: func(s *collect.Snapshot) {
			s.Linux.TCP.Listen = []collect.ListenSocket{{Address: "0.0.0.0", Port: 80, AcceptQueue: 400}}
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "listen", "80 default_server backlog=4096")
		}},
		{name: "somaxconn below: raise it too", snap: web("debian"), setup: func(s *collect.Snapshot) {
			s.Linux.Sysctls["net.core.somaxconn"] = "128"
			s.Linux.TCP.Listen = []collect.ListenSocket{{Address: "0.0.0.0", Port: 80, AcceptQueue: 100}}
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "net.core.somaxconn", "4096") }},
		{name: "overflows over the interval, :80 holding connections when read", snap: web("debian"), setup: func(s *collect.Snapshot) {
			s.Linux.IntervalSeconds, s.Linux.NetDeltas = 10, map[string]float64{"TcpExt.ListenOverflows": 250}
			s.Linux.TCP.Listen = []collect.ListenSocket{{Address: "0.0.0.0", Port: 80, AcceptQueue: 3}}
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantText(t, fs[0].Title, "Listen queues overflowed 250 times")
			wantChange(t, fs, "listen", "80 default_server backlog=4096")
		}},
		{name: "overflows, but :80's queue empty: another listener's, silent", snap: web("debian"), setup: func(s *collect.Snapshot) {
			s.Linux.IntervalSeconds, s.Linux.NetDeltas = 10, map[string]float64{"TcpExt.ListenOverflows": 250}
			s.Linux.TCP.Listen = []collect.ListenSocket{{Address: "0.0.0.0", Port: 80}}
		}, fires: false},
	})
}

func TestNginxKeepaliveRequests(t *testing.T) {
	runRuleCases(t, nginxKeepaliveRequests, []ruleCase{
		{name: "2000 set (the smartphone game backend's file): silent", snap: web("keepalive"), fires: false},
		{name: "an old nginx's 100: 2000", snap: web("debian"), setup: func(s *collect.Snapshot) { s.Nginx.KeepaliveRequests = 100 }, fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "keepalive_requests", "2000") }},
		{name: "keep-alive off: silent", snap: web("debian"), setup: func(s *collect.Snapshot) { s.Nginx.KeepaliveRequests, s.Nginx.KeepaliveTimeoutSec = 100, 0 }, fires: false},
	})
}

func TestNginxClientBodyTemp(t *testing.T) {
	// posts is an access log of 1000 requests, n of them POSTs, without
	// $request_length.
	posts := func(n int64) func(s *collect.Snapshot) {
		return withHTTPLog(collect.HTTPLog{Requests: 1000, TimeTotal: 10, Endpoints: []collect.HTTPEndpoint{{Method: "POST", Path: "/api/upload", Count: n}, {Method: "GET", Path: "/", Count: 1000 - n}}})
	}
	// sized is that log with $request_length: n POSTs of small bytes and
	// big ones of large bytes.
	sized := func(n, small, big, large int64) func(s *collect.Snapshot) {
		return func(s *collect.Snapshot) {
			l := &collect.HTTPLengths{}
			for i := int64(0); i < n; i++ {
				if i < big {
					l.Add(large)
				} else {
					l.Add(small)
				}
			}
			withHTTPLog(collect.HTTPLog{Requests: 1000, TimeTotal: 10, RequestLengths: l,
				Endpoints: []collect.HTTPEndpoint{{Method: "POST", Path: "/api/upload", Count: n}, {Method: "GET", Path: "/", Count: 1000 - n}}})(s)
		}
	}
	own := func(key string) string {
		sum := sha256.Sum256([]byte(key))
		return fmt.Sprintf("/dev/shm/nginx-%x-client_body", sum[:4])
	}
	wantOwn := func(key string) func(t *testing.T, fs []Finding) {
		return func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "client_body_temp_path", own(key)+" 1 2")
			wantText(t, fs[0].Risk.Note, key)
			wantText(t, fs[0].Risk.Note, "never shares")
		}
	}
	runRuleCases(t, nginxClientBodyTemp, []ruleCase{
		{name: "no access log: silent", snap: web("debian"), fires: false},
		{name: "30% POST of tens of bytes, $request_length logged: silent", snap: web("debian"), setup: sized(300, 80, 0, 0), fires: false},
		{name: "30% POST, no $request_length: what to log, no change", snap: web("debian"), setup: posts(300), fires: true, check: func(t *testing.T, fs []Finding) {
			if len(fs[0].Changes()) != 0 {
				t.Errorf("a change without evidence of bodies on disk: %+v", fs[0].Changes())
			}
			wantText(t, fs[0].Title, "no $request_length")
			wantText(t, fs[0].Effect, "add $request_length")
		}},
		{name: "few POST, no $request_length: silent", snap: web("debian"), setup: posts(10), fires: false},
		{name: "bodies past the 16k buffer: a directory of this nginx's own under /dev/shm", snap: web("debian"), setup: sized(300, 80, 50, 200<<10),
			fires: true, check: func(t *testing.T, fs []Finding) {
				wantOwn("testdata/nginx-debian/nginx.conf")(t, fs)
				wantText(t, fs[0].Title, "At least 50 of 300 requests with a body were longer than client_body_buffer_size (16k)")
			}},
		{name: "another nginx on the host: another directory", snap: web("debian"), setup: func(s *collect.Snapshot) {
			sized(300, 80, 50, 200<<10)(s)
			s.Nginx.ConfPath = "/etc/nginx-b/nginx.conf"
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantOwn("/etc/nginx-b/nginx.conf")(t, fs)
			if own("/etc/nginx-b/nginx.conf") == own("testdata/nginx-debian/nginx.conf") {
				t.Error("two configurations, one directory")
			}
		}},
		{name: "no configuration path: named from the pid file", snap: web("debian"), setup: func(s *collect.Snapshot) {
			sized(300, 80, 50, 200<<10)(s)
			s.Nginx.ConfPath = ""
			pid, err := nginxconf.Parse("/etc/nginx-b/nginx.conf", []byte("pid /run/nginx-b.pid;"), false)
			if err != nil {
				panic(err)
			}
			s.Nginx.Directives = append(s.Nginx.Directives, pid.Listing()...)
		}, fires: true, check: wantOwn("/run/nginx-b.pid")},
		{name: "neither: no change", snap: web("debian"), setup: func(s *collect.Snapshot) {
			sized(300, 80, 50, 200<<10)(s)
			s.Nginx.ConfPath, s.Nginx.Directives = "", nil
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			if len(fs[0].Changes()) != 0 {
				t.Errorf("a shared path: %+v", fs[0].Changes())
			}
		}},
		{name: "just past the buffer, within a request line and headers: silent", snap: web("debian"), setup: sized(300, 80, 50, 17<<10), fires: false},
		{name: "under 1% of the requests buffered: silent", snap: web("debian"), setup: sized(300, 80, 5, 200<<10), fires: false},
		{name: "a 1m buffer: the same bodies fit", snap: web("debian"), setup: func(s *collect.Snapshot) {
			sized(300, 80, 50, 200<<10)(s)
			st := s.Nginx.Settings["client_body_buffer_size"]
			st.Value = "1m"
			s.Nginx.Settings["client_body_buffer_size"] = st
		}, fires: false},
		{name: "on a tmpfs already: silent", snap: web("debian"), setup: func(s *collect.Snapshot) {
			sized(300, 80, 50, 200<<10)(s)
			s.Nginx.ClientBodyTempPath = "/var/cache/nginx/body"
			s.Linux.Mounts = []collect.Mount{{Point: "/", FSType: "ext4"}, {Point: "/var/cache/nginx", FSType: "tmpfs"}}
		}, fires: false},
	})
}

func TestNginxSendfileMaxChunk(t *testing.T) {
	runRuleCases(t, nginxSendfileMaxChunk, []ruleCase{
		{name: "512k set: silent", snap: web("keepalive"), fires: false},
		{name: "sendfile on, no limit (nginx before 1.21.4): 512k", snap: web("debian"), setup: func(s *collect.Snapshot) {
			s.Nginx.Sendfile = true
			st := s.Nginx.Settings["sendfile_max_chunk"]
			st.Value = "0"
			s.Nginx.Settings["sendfile_max_chunk"] = st
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "sendfile_max_chunk", "512k") }},
	})
}

func TestNginxFastopen(t *testing.T) {
	churn := func(rate float64) func(s *collect.Snapshot) {
		return func(s *collect.Snapshot) {
			s.Linux.IntervalSeconds, s.Linux.NetDeltas = 10, map[string]float64{"Tcp.PassiveOpens": rate * 10}
			s.Linux.Sysctls["net.ipv4.tcp_fastopen"] = "1"
		}
	}
	runRuleCases(t, nginxFastopen, []ruleCase{
		{name: "few new connections: silent", snap: web("debian"), setup: churn(5), fires: false},
		{name: "500 new connections a second: fastopen with the server bit", snap: web("debian"), setup: churn(500), fires: true, check: func(t *testing.T, fs []Finding) {
			wantChange(t, fs, "listen", "80 default_server fastopen=256")
			wantChange(t, fs, "net.ipv4.tcp_fastopen", "3")
			wantText(t, fs[0].Risk.Note, "browsers")
		}},
	})
}

func TestNginxServerTokens(t *testing.T) {
	runRuleCases(t, nginxServerTokens, []ruleCase{
		{name: "off: silent", snap: web("keepalive"), fires: false},
		{name: "default on", snap: web("debian"), fires: true, check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "server_tokens", "off") }},
	})
}
