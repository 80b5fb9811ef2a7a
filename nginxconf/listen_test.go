package nginxconf

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseListen(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want Listen
		key  string // listenKey of the address
	}{
		{"port only", []string{"80"}, Listen{Address: "*", Port: 80, Backlog: 511, BacklogDefault: true}, "*:80"},
		{"address only", []string{"127.0.0.1"}, Listen{Address: "127.0.0.1", Port: 80, Backlog: 511, BacklogDefault: true}, "127.0.0.1:80"},
		{"star", []string{"*:8080", "backlog=100"}, Listen{Address: "*", Port: 8080, Backlog: 100}, "*:8080"},
		{"any address", []string{"0.0.0.0:8080"}, Listen{Address: "0.0.0.0", Port: 8080, Backlog: 511, BacklogDefault: true}, "*:8080"},
		{"ipv6", []string{"[::]:443", "ssl", "http2", "reuseport"}, Listen{Address: "[::]", Port: 443, SSL: true, HTTP2: true, Reuseport: true, Backlog: 511, BacklogDefault: true}, "[::]:443"},
		{"ipv6 no port", []string{"[::1]"}, Listen{Address: "[::1]", Port: 80, Backlog: 511, BacklogDefault: true}, "[::1]:80"},
		{"unix", []string{"unix:/run/nginx.sock", "backlog=4096"}, Listen{Address: "/run/nginx.sock", Unix: true, Backlog: 4096}, "unix:/run/nginx.sock"},
		{"everything", []string{"localhost:80", "default", "deferred", "fastopen=256", "backlog=32768"}, Listen{Address: "localhost", Port: 80, DefaultServer: true, Deferred: true, Fastopen: 256, Backlog: 32768}, "localhost:80"},
		{"upper-case host", []string{"LOCALHOST:81"}, Listen{Address: "LOCALHOST", Port: 81, Backlog: 511, BacklogDefault: true}, "localhost:81"},
		{"bad backlog kept default", []string{"80", "backlog=x"}, Listen{Address: "*", Port: 80, Backlog: 511, BacklogDefault: true}, "*:80"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseListen(tc.args)
			if !ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			key := listenKey(tc.args[0])
			if key != tc.key {
				t.Errorf("listenKey %q, want %q", key, tc.key)
			}
			// One reading of the address: the key is the parsed one's.
			if !got.Unix {
				host := strings.ToLower(got.Address)
				if host == "0.0.0.0" || host == "" {
					host = "*"
				}
				if k := host + ":" + strconv.Itoa(got.Port); k != key {
					t.Errorf("ParseListen reads %s, listenKey %s", k, key)
				}
			}
		})
	}
	if _, ok := ParseListen(nil); ok {
		t.Error("listen without arguments accepted")
	}
}

func TestParseAccessLog(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want AccessLog
	}{
		{"off", []string{"off"}, AccessLog{Off: true}},
		{"path only: combined", []string{"/var/log/nginx/access.log"}, AccessLog{Path: "/var/log/nginx/access.log", Format: "combined"}},
		{"a named format", []string{"/l", "timed"}, AccessLog{Path: "/l", Format: "timed"}},
		{"parameters without a format", []string{"/l", "buffer=32k", "gzip=5", "if=$loggable"}, AccessLog{Path: "/l", Format: "combined", Buffer: "32k", Gzip: true, If: "$loggable"}},
		{"format and parameters", []string{"/l", "main", "gzip", "flush=5m"}, AccessLog{Path: "/l", Format: "main", Gzip: true}},
		{"a name only in second place", []string{"/l", "buffer=1k", "main"}, AccessLog{Path: "/l", Format: "combined", Buffer: "1k"}},
		{"syslog", []string{"syslog:server=unix:/dev/log", "main"}, AccessLog{Path: "syslog:server=unix:/dev/log", Syslog: true, Format: "main"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseAccessLog(tc.args)
			if !ok || got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, ok := ParseAccessLog(nil); ok {
		t.Error("access_log without arguments accepted")
	}
}
