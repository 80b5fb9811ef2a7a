package accesslog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	const (
		req   = `"GET /a?b=1 HTTP/1.1" 200 512 "-" "curl/8 \"x\""`
		start = `203.0.113.9 - - [` + tLocal + `] `
	)
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{"apache combined %D", []string{start + req + ` 1234`, start + req + ` 56`}, "apache combined_d"},
		{"nginx timed", []string{start + req + ` 0.012 0.010`, start + req + ` 0.000 -`, start + req + ` 1.000 0.500, 0.400`}, "nginx combined+request_time+upstream_response_time"},
		{"nginx combined + request time", []string{start + req + ` 0.012`, start + req + ` 3.250`}, "nginx combined+request_time"},
		{"nginx main + request time", []string{start + req + ` "10.0.0.1, 10.0.0.2" 0.012`}, "nginx main+request_time"},
		{"apache vhost_combined", []string{`www.example.com:443 ` + start + req}, "apache vhost_combined"},
		{"nginx main", []string{start + req + ` "-"`}, "nginx main"},
		{"combined", []string{start + req, "", start + `"HEAD / HTTP/1.0" 304 - "-" "-"`}, "combined"},
		{"apache common %D", []string{start + `"GET / HTTP/1.1" 200 5 77`}, "apache common_d"},
		{"nginx common + request time", []string{start + `"GET / HTTP/1.1" 200 5 0.077`}, "nginx common+request_time"},
		{"common", []string{start + `"GET / HTTP/1.1" 200 5`, start + `"GET / HTTP/1.1" 200 -`}, "common"},
		{"json", []string{`  {"request":"GET / HTTP/1.1","status":200}`, `{"uri":"/"}`}, "json"},
		{"ltsv", []string{"time:" + tLocal + "\treq:GET / HTTP/1.1\tstatus:200"}, "ltsv"},
		{"one junk line in twenty", append(repeat(start+req+` 0.012`, 19), start+`"\x16\x03\x01" 400 157 "-" "-" 0.001`), "nginx combined+request_time"},
		{"a TLS handshake as the first line", append([]string{"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"}, repeat(start+req+` 0.012`, 19)...), "nginx combined+request_time"},
		{"two junk lines in ten", append(repeat(start+req, 8), "junk", "more junk"), "combined"},
		{"json after an HTML error page", append([]string{"<html><body>502 Bad Gateway</body></html>"}, repeat(`{"request":"GET / HTTP/1.1","status":200}`, 9)...), "json"},
		{"ltsv after a junk line", append([]string{"junk"}, repeat("time:"+tLocal+"\treq:GET / HTTP/1.1\tstatus:200", 4)...), "ltsv"},
		{"json with a truncated line", []string{`{"request":"GET / HTTP/1.1","status":200}`, `{"request":"GET /a HTTP/1.1","sta`, `{"request":"GET /b HTTP/1.1","status":404}`}, "json"},
		{"six bad lines in twenty", append(repeat(start+req+` 0.012`, 14), repeat("junk", 6)...), "nginx combined+request_time"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var lines [][]byte
			for _, l := range tc.lines {
				lines = append(lines, []byte(l))
			}
			p, err := Detect(lines)
			if err != nil {
				t.Fatal(err)
			}
			if p.Format() != tc.want {
				t.Errorf("detected %s, want %s", p.Format(), tc.want)
			}
		})
	}

	for name, lines := range map[string][]string{
		"empty":                     {"", "\r\n", "  "},
		"seven bad lines in twenty": append(repeat(start+req+` 0.012`, 13), repeat("junk", 7)...),
		"half junk":                 append(repeat(start+req, 5), repeat("junk", 5)...),
		"one line of two":           {start + req, "junk"},
		"json with no request":      {`{"status":200}`},
		"ltsv with no request":      {"status:200\tsize:1"},
		"custom format":             {`1.2.3.4 GET /x 200`},
	} {
		var in [][]byte
		for _, l := range lines {
			in = append(in, []byte(l))
		}
		p, err := Detect(in)
		if err == nil {
			t.Errorf("%s: detected %s", name, p.Format())
			continue
		}
		if name == "custom format" {
			for _, c := range candidates {
				if !strings.Contains(err.Error(), c.name+" (line 1: ") {
					t.Errorf("error does not say why %s did not fit: %v", c.name, err)
				}
			}
		}
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestNoRequestTimeHint(t *testing.T) {
	const (
		nginxTimed = `log_format timed '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time $upstream_response_time';` + "\n" +
			`access_log /var/log/nginx/access.log timed;`
		apacheD = `LogFormat "%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %D" combined_d` + "\n" +
			`CustomLog ${APACHE_LOG_DIR}/access.log combined_d`
	)
	cases := map[string]string{
		"nginx combined":        nginxTimed,
		"nginx main":            nginxTimed,
		"apache common":         apacheD,
		"apache combined":       apacheD,
		"combined":              "# nginx, in the http {} block:\n" + nginxTimed + "\n# Apache httpd:\n" + apacheD,
		Combined:                nginxTimed,
		CombinedTimed:           "",
		`$msec ${request_time}`: "",
		`$remote_addr [$time_local] "$request" $status`: `log_format timed '$remote_addr [$time_local] "$request" $status $request_time $upstream_response_time';` + "\n" +
			`access_log /var/log/nginx/access.log timed;`,
		`{"t":"$msec","r":"$request"}`: `log_format timed escape=json '{"t":"$msec","r":"$request","request_time":$request_time,"upstream_response_time":"$upstream_response_time"}';` + "\n" +
			`access_log /var/log/nginx/access.log timed;`,
		`it's $status`:              `log_format timed 'it\'s $status $request_time $upstream_response_time';` + "\n" + `access_log /var/log/nginx/access.log timed;`,
		ApacheCombined:              apacheD,
		`%h %l %u %t \"%r\" %>s %b`: `LogFormat "%h %l %u %t \"%r\" %>s %b %D" timed` + "\n" + `CustomLog ${APACHE_LOG_DIR}/access.log timed`,
		ApacheCombinedD:             "",
		`%h "%r" %>s %{ms}T`:        "",
		"ltsv":                      "log_format ltsv '" + strings.ReplaceAll(LTSVTimed, "\t", `\t`) + "';\naccess_log /var/log/nginx/access.log ltsv;",
		"json":                      "log_format json_timed escape=json '" + JSONTimed + "';\naccess_log /var/log/nginx/access.log json_timed;",
	}
	for format, want := range cases {
		if got := NoRequestTimeHint(format); got != want {
			t.Errorf("NoRequestTimeHint(%q):\ngot  %s\nwant %s", format, got, want)
		}
	}
}

// TestHintsAcceptedByNginx puts each nginx hint into a configuration:
// nginx -t must accept it, and the format read back must parse a line
// that has a request time.
func TestHintsAcceptedByNginx(t *testing.T) {
	for _, format := range []string{"nginx combined", "ltsv", "json", `$remote_addr "$request" $status`, `{"r":"$request","s":$status}`} {
		hint := NoRequestTimeHint(format)
		dir := t.TempDir()
		name := strings.Fields(hint)[1]
		conf := "events {}\nhttp {\n" + strings.ReplaceAll(hint, "/var/log/nginx", dir) + "\n}\n"
		path := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, ok := nginxTest(t, path); !ok {
			t.Errorf("%s: nginx -t rejects the hint:\n%s\n%s", format, conf, out)
			continue
		}
		f, err := NginxFormatFromConfig(path, name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewNginx(name, f)
		if err != nil {
			t.Fatal(err)
		}
		if Fields(p)&HasRequestTime == 0 {
			t.Errorf("%s: the hint's format %q has no request time", format, f)
		}
		if format == "ltsv" {
			var r Record
			line := strings.NewReplacer("$time_local", tLocal, "$request_time", "0.250", "$request_method", "GET", "$request_uri", "/", "$request", "GET / HTTP/1.1", "$status", "200", "$body_bytes_sent", "5", "$upstream_response_time", "-").Replace(f)
			if ok, reason := NewLTSV().Parse([]byte(line), &r); !ok || r.RequestTime != 0.25 {
				t.Errorf("ltsv hint line %q: %v %s %v", line, ok, reason, r.RequestTime)
			}
		}
	}
}
