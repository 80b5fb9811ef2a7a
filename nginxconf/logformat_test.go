package nginxconf

import (
	"strings"
	"testing"
)

// TestLogFormat: one rule for every reader of a log_format, nginx's: a
// name defined twice is refused, the predefined combined included; a
// snippet's top level is the http context; stream {} formats do not count.
func TestLogFormat(t *testing.T) {
	cases := []struct {
		name string
		conf string
		ask  string
		want string // the format, or
		err  string // a part of the error
	}{
		{name: "defined once", conf: "http { log_format timed '$status ' \"$request_time\"; }", ask: "timed", want: "$status $request_time"},
		{name: "escape is not part of the format", conf: "http { log_format j escape=json '{\"s\":\"$status\"}'; }", ask: "j", want: `{"s":"$status"}`},
		{name: "combined is predefined", conf: "http { log_format timed '$status'; }", ask: "combined", want: CombinedLogFormat},
		{name: "combined redefined: refused", conf: "http {\n log_format combined '$status';\n}", ask: "combined", err: `nginx.conf:2: duplicate log_format name "combined"`},
		{name: "combined redefined, another name asked: refused", conf: "http {\n log_format timed '$status';\n log_format combined '$status';\n}", ask: "timed", err: `nginx.conf:3: duplicate log_format name "combined"`},
		{name: "a name defined twice: refused", conf: "http {\n log_format f '$status';\n log_format f '$msec';\n}", ask: "f", err: `nginx.conf:3: duplicate log_format name "f" (first defined at nginx.conf:2)`},
		{name: "another name defined twice: refused", conf: "http {\n log_format f '$status';\n log_format g '$a';\n log_format g '$b';\n}", ask: "f", err: `nginx.conf:4: duplicate log_format name "g"`},
		{name: "a snippet: the top level is the http context", conf: "log_format f '$status';\nserver { access_log /l f; }", ask: "f", want: "$status"},
		{name: "a snippet redefining combined: refused", conf: "log_format combined '$status';", ask: "combined", err: `duplicate log_format name "combined"`},
		{name: "a snippet's name defined again in http: refused", conf: "log_format f '$a';\nhttp { log_format f '$b'; }", ask: "f", err: `duplicate log_format name "f"`},
		{name: "stream formats do not count", conf: "stream { log_format f '$protocol'; log_format f '$x'; }\nhttp { log_format f '$status'; }", ask: "f", want: "$status"},
		{name: "a server's log_format does not count", conf: "http { server { log_format f '$status'; } }", ask: "f", err: `log_format "f" not found`},
		{name: "no format", conf: "http { log_format f; }", ask: "f", err: `nginx.conf:1: invalid number of arguments in "log_format"`},
		{name: "not found: the defined ones named", conf: "http { log_format b '$a'; log_format a '$b'; }", ask: "f", err: `it defines a, b (and the built-in combined)`},
		{name: "not found, none defined", conf: "http { }", ask: "f", err: `log_format "f" not found in nginx.conf or the 0 files it includes; it defines none`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("nginx.conf", []byte(tc.conf), false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.LogFormat(tc.ask)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("got %q, %v; want an error with %q", got, err, tc.err)
				}
			case err != nil:
				t.Error(err)
			case got != tc.want:
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestUsesVariable(t *testing.T) {
	vars := []struct {
		format, name string
		want         bool
	}{
		{"$request_time", "request_time", true},
		{"rt=${request_time}s", "request_time", true},
		{"$request_time_x $request", "request_time", false},
		{"$upstream_response_time", "request_time", false},
		{"a $request_time_x $request_time", "request_time", true},
		{"", "request_time", false},
	}
	for _, tc := range vars {
		if got := UsesVariable(tc.format, tc.name); got != tc.want {
			t.Errorf("UsesVariable(%q, %q) = %v", tc.format, tc.name, got)
		}
	}
}
