package apply

import (
	"strings"
	"testing"
)

func TestParseCommandLine(t *testing.T) {
	cases := map[string][]string{
		`nginx -t -c /etc/nginx/nginx.conf`:  {"nginx", "-t", "-c", "/etc/nginx/nginx.conf"},
		`nginx -g 'daemon off; pid /x;'  -t`: {"nginx", "-g", "daemon off; pid /x;", "-t"},
		`a "b \"c\" d" e\ f ''`:              {"a", `b "c" d`, "e f", ""},
		`  systemctl   restart mariadb  `:    {"systemctl", "restart", "mariadb"},
		`x"y"'z'`:                            {"xyz"},
		``:                                   nil,
	}
	for in, want := range cases {
		got, err := ParseCommandLine(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("ParseCommandLine(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`a 'b`, `a "b`} {
		if _, err := ParseCommandLine(bad); err == nil {
			t.Errorf("ParseCommandLine(%q): no error", bad)
		}
	}
}
