package nginxconf

import "testing"

func TestPassTarget(t *testing.T) {
	targets := []struct {
		in, host string
		unix     bool
	}{
		{"http://app", "app", false},
		{"http://app/path/", "app", false},
		{"https://127.0.0.1:8443/x", "127.0.0.1:8443", false},
		{"http://unix:/run/app.sock:/uri", "", true},
		{"unix:/run/php/php-fpm.sock", "", true},
		{"php", "php", false},
		{"grpc://backend", "backend", false},
	}
	for _, tc := range targets {
		if host, unix := PassTarget(tc.in); host != tc.host || unix != tc.unix {
			t.Errorf("PassTarget(%q) = %q, %v", tc.in, host, unix)
		}
	}
}

func TestPassKind(t *testing.T) {
	cases := []struct {
		name, kind string
		ok         bool
	}{
		{"proxy_pass", "proxy", true}, {"fastcgi_pass", "fastcgi", true}, {"grpc_pass", "grpc", true},
		{"memcached_pass", "memcached", true}, {"pass", "", false}, {"proxy_set_header", "", false},
	}
	for _, tc := range cases {
		if kind, ok := PassKind(tc.name); kind != tc.kind || ok != tc.ok {
			t.Errorf("PassKind(%q) = %q, %v", tc.name, kind, ok)
		}
	}
}
