package accesslog

import (
	"errors"
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
			for _, c := range detectOrder {
				if !strings.Contains(err.Error(), c.Label+" (line 1: ") {
					t.Errorf("error does not say why %s did not fit: %v", c.Label, err)
				}
			}
		}
	}
}

// TestSample: the sample keeps the lines a parser reads, skipping (and
// counting) longer ones and blank ones, and says where a line that did not
// fit was; its error says what was sampled.
func TestSample(t *testing.T) {
	const line = `203.0.113.9 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "curl/8" 0.012`
	junk := strings.Repeat("x", 300)
	cases := []struct {
		name    string
		offers  []offer
		want    string // the format, or the error's text
		wantErr bool
	}{
		{"a long first line is skipped", append([]offer{{line: junk}}, offers(line, 5)...), "nginx combined+request_time", false},
		{"lines the reader dropped", append([]offer{{line: line, long: 3}}, offers(line, 3)...), "nginx combined+request_time", false},
		{"only long lines", []offer{{line: junk}, {line: junk, long: 2}}, "accesslog: cannot detect the format: no non-empty lines (4 lines longer than 200 bytes skipped)", true},
		{"nothing", nil, "accesslog: cannot detect the format: no non-empty lines", true},
		{"junk after a long line", []offer{{input: "a.log", line: junk}, {line: "junk"}, {line: "  "}, {line: "more junk"}},
			"accesslog: a.log: no known format reads these lines: 2 lines (1 line longer than 200 bytes skipped), tried json (line 2: not JSON; reads 0 of 2)", true},
		{"two inputs", []offer{{input: "a.log", line: line}, {input: "b.log", line: "junk"}, {line: "junk"}},
			"accesslog: a.log, b.log: no known format reads most of these lines (nginx combined+request_time reads 1): 3 lines, tried json (a.log line 1: not JSON; reads 0 of 3)", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := Sample{MaxLine: 200}
			for _, o := range tc.offers {
				if o.input != "" {
					s.Begin(o.input)
				}
				s.SkipLong(o.long)
				s.Add([]byte(o.line + "\r\n"))
			}
			p, err := s.Detect()
			switch {
			case tc.wantErr:
				var de *DetectError
				if !errors.As(err, &de) || !strings.HasPrefix(err.Error(), tc.want) {
					t.Fatalf("err %v, want %s...", err, tc.want)
				}
			case err != nil:
				t.Fatal(err)
			case p.Format() != tc.want:
				t.Errorf("detected %s, want %s", p.Format(), tc.want)
			}
		})
	}
	// It keeps DetectLines lines and no more, and counts long lines only
	// until then.
	s := Sample{MaxLine: 200}
	for i := 0; i < 2*DetectLines; i++ {
		s.Add([]byte(line))
	}
	s.Add([]byte(junk))
	if len(s.Lines()) != DetectLines || !s.Full() || s.Long() != 0 {
		t.Errorf("%d lines, full %v, %d long", len(s.Lines()), s.Full(), s.Long())
	}
}

// offer is a line given to a Sample in a test.
type offer struct {
	input string // Begin before the line
	line  string
	long  int64 // SkipLong before the line
}

func offers(line string, n int) []offer {
	out := make([]offer, n)
	for i := range out {
		out[i].line = line
	}
	return out
}

func TestNamed(t *testing.T) {
	for _, name := range FormatNames {
		if _, err := Named(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Named("nginx"); err == nil || !strings.Contains(err.Error(), strings.Join(FormatNames, ", ")) {
		t.Errorf("an unknown name: %v", err)
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
