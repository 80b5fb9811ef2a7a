package accesslog

import "testing"

// TestClientAndAgent: the client's address and User-Agent, read where a
// format logs them (what tells a load balancer's health check from a
// visitor), and left empty for "-".
func TestClientAndAgent(t *testing.T) {
	combined, _ := NewNginx("combined", Combined)
	apache, err := NewApache(`%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"`)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name          string
		p             Parser
		line          string
		client, agent string
	}{
		{"nginx combined", combined, `10.0.0.9 - - [22/Nov/2026:10:00:00 +0000] "GET /health HTTP/1.1" 200 2 "-" "ELB-HealthChecker/2.0"`, "10.0.0.9", "ELB-HealthChecker/2.0"},
		{"nginx, no agent", combined, `10.0.0.9 - - [22/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 2 "-" "-"`, "10.0.0.9", ""},
		{"Apache", apache, `192.0.2.1 - - [22/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "kube-probe/1.29"`, "192.0.2.1", "kube-probe/1.29"},
		{"LTSV", NewLTSV(), "time:22/Nov/2026:10:00:00 +0000\thost:203.0.113.4\treq:GET /ping HTTP/1.1\tstatus:200\tua:GoogleHC/1.0", "203.0.113.4", "GoogleHC/1.0"},
		{"JSON", NewJSON(), `{"time_local":"22/Nov/2026:10:00:00 +0000","remote_addr":"198.51.100.7","request":"GET / HTTP/1.1","status":200,"http_user_agent":"Amazon-Route53-Health-Check-Service"}`, "198.51.100.7", "Amazon-Route53-Health-Check-Service"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r Record
			if ok, why := tc.p.Parse([]byte(tc.line), &r); !ok {
				t.Fatalf("not parsed: %s", why)
			}
			if string(r.Client) != tc.client || string(r.UserAgent) != tc.agent {
				t.Errorf("client %q agent %q, want %q %q", r.Client, r.UserAgent, tc.client, tc.agent)
			}
		})
	}
}
