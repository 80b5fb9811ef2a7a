package accesslog

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stacktune/stacktune/internal/skip"
	"github.com/stacktune/stacktune/nginxconf"
)

var knownReasons = func() map[skip.Reason]bool {
	m := map[skip.Reason]bool{}
	for _, r := range Reasons {
		m[r] = true
	}
	return m
}()

// checkParse parses line with p and checks what holds for any input: no
// panic, a known reason exactly when the line is rejected, sane field
// values, the caller's Offset kept, and the same result from a fresh clone
// (so the time cache never leaks from one line into the next).
func checkParse(t *testing.T, p Parser, line []byte) {
	t.Helper()
	r := Record{Offset: 7}
	ok, reason := p.Parse(line, &r)
	if r.Offset != 7 {
		t.Fatalf("%s: Offset changed to %d", p.Format(), r.Offset)
	}
	if ok != reason.IsZero() || !ok && !knownReasons[reason] {
		t.Fatalf("%s: ok=%v reason %q", p.Format(), ok, reason)
	}
	if ok {
		switch {
		case r.Has&^(HasTime|HasStatus|HasBytes|HasRequestTime|HasUpstreamTime|HasRequestLength) != 0:
			t.Fatalf("%s: Has %b", p.Format(), r.Has)
		case r.Has&HasStatus != 0 && (r.Status < 0 || r.Status > 999):
			t.Fatalf("%s: status %d", p.Format(), r.Status)
		case r.BodyBytes < 0 || r.RequestLength < 0 || r.Has&HasRequestLength == 0 && r.RequestLength != 0:
			t.Fatalf("%s: bytes %d", p.Format(), r.BodyBytes)
		case badSeconds(r.RequestTime) || badSeconds(r.UpstreamTime):
			t.Fatalf("%s: times %v %v", p.Format(), r.RequestTime, r.UpstreamTime)
		case r.Has&HasTime != 0 && (r.Time.Year() < -1 || r.Time.Year() > 10000):
			t.Fatalf("%s: time %v", p.Format(), r.Time)
		case r.Has&HasTime == 0 && !r.Time.IsZero():
			t.Fatalf("%s: time %v without HasTime", p.Format(), r.Time)
		}
	}
	text := recordText(&r)
	c := p.Clone()
	r2 := Record{Offset: 7}
	ok2, reason2 := c.Parse(line, &r2)
	if ok2 != ok || reason2 != reason || recordText(&r2) != text {
		t.Fatalf("%s: a clone parses %q differently:\n%v %q %s\n%v %q %s", p.Format(), line, ok, reason, text, ok2, reason2, recordText(&r2))
	}
	// Once more with p, its caches now warm with this very line.
	ok3, reason3 := p.Parse(line, &r2)
	if ok3 != ok || reason3 != reason || recordText(&r2) != text {
		t.Fatalf("%s: a second parse of %q differs", p.Format(), line)
	}
}

func badSeconds(f float64) bool { return f < 0 || math.IsNaN(f) || math.IsInf(f, 0) }

// sampleLines returns the lines of a sample log, for fuzz seeds.
func sampleLines(f *testing.F, file string) [][]byte {
	data, err := os.ReadFile(filepath.Join("testdata", "logs", file))
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > 12 {
		lines = lines[:12]
	}
	return lines
}

// warm parses a valid line first, so the fuzzed one meets a parser whose
// time cache holds another second.
func warm(p Parser, line string) Parser {
	var r Record
	p.Parse([]byte(line), &r)
	return p
}

func FuzzNginx(f *testing.F) {
	for _, l := range sampleLines(f, "nginx-timed.log") {
		f.Add(CombinedTimed, l)
	}
	for _, l := range sampleLines(f, "nginx-upstream-time.log") {
		f.Add(`$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" rt=$request_time uct="$upstream_connect_time" uht="$upstream_header_time" urt="$upstream_response_time"`, l)
	}
	for _, l := range sampleLines(f, "nginx-json.log") {
		f.Add(`{"time_local":"$time_local","remote_addr":"$remote_addr","remote_user":"$remote_user","request":"$request","status": "$status","body_bytes_sent":"$body_bytes_sent","request_time":"$request_time","upstream_response_time":"$upstream_response_time","http_referrer":"$http_referer","http_user_agent":"$http_user_agent"}`, l)
	}
	f.Add(`$request_method $uri$is_args$args $status $msec $time_iso8601 $bytes_sent`, []byte(`GET /a?b 200 1700000000.123 2023-10-10T13:55:36+02:00 512`))
	f.Add(`$time_local $request_time $host$request_uri $upstream_addr|$upstream_response_time`, []byte(tLocal+` 0.010 example.com/x 10.0.0.1:80, 10.0.0.2:80|0.004, 0.005`))
	f.Add(`${status}$body_bytes_sent`, []byte(`200 12`))
	f.Add(`$request $status $request_length`, []byte(`POST /up HTTP/1.1 201 70312`))
	timed := mustNginx(f, CombinedTimed)
	f.Fuzz(func(t *testing.T, format string, line []byte) {
		checkParse(t, warm(timed.Clone(), `1.2.3.4 - - [`+tLocal+`] "GET / HTTP/1.1" 200 1 "-" "-" 0.001 -`), line)
		p, err := NewNginx("fuzz", format)
		if err != nil {
			return
		}
		checkParse(t, p, line)
	})
}

func FuzzApache(f *testing.F) {
	for _, l := range sampleLines(f, "apache-combined-d.log") {
		f.Add(`%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %D`, l)
	}
	f.Add(`%v:%p %{msec}t %{end:usec}t "%r" %>s %O %{ms}T %T`, []byte(`example.com:443 1696971336123 1696971336123456 "GET / HTTP/1.1" 200 512 12 0`))
	f.Add(`%m %U%q %s %{%d/%b/%Y:%H:%M:%S %z}t %B %%`, []byte(`GET /p?a=1 200 `+tLocal+` 0 %`))
	f.Add(`"%r" %>s %I %O`, []byte(`"POST /up HTTP/1.1" 201 70312 120`))
	combinedD := mustApache(f, ApacheCombinedD)
	f.Fuzz(func(t *testing.T, format string, line []byte) {
		checkParse(t, warm(combinedD.Clone(), `1.2.3.4 - - [`+tLocal+`] "GET / HTTP/1.1" 200 1 "-" "-" 12`), line)
		p, err := NewApache(format)
		if err != nil {
			return
		}
		checkParse(t, p, line)
	})
}

func FuzzLTSV(f *testing.F) {
	for _, l := range sampleLines(f, "ltsv.log") {
		f.Add(l)
	}
	f.Add([]byte("time:[" + tLocal + "]\treq:GET / HTTP/1.1\treqtime_microsec:12\tsize:-"))
	f.Add([]byte("msec:1700000000.5\tmethod:GET\turi:/\targs:a=b\tstatus:200\tapptime:0.1 : 0.2"))
	f.Add([]byte("req:POST /up HTTP/1.1\tstatus:201\treqsize:70312"))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkParse(t, warm(NewLTSV(), "time:"+tLocal+"\turi:/"), line)
	})
}

// FuzzJSON checks the JSON scanner against encoding/json: a line that is a
// valid JSON object is never "not JSON" or "truncated", and any string
// encoding/json writes as a request_uri is read back exactly.
func FuzzJSON(f *testing.F) {
	for _, l := range sampleLines(f, "nginx-json.log") {
		f.Add(l)
	}
	f.Add([]byte(`{"a":[1,{"b":"}]\""}],"uri":"/\ud83d\ude00\u00e9\/","status":"200","@timestamp":"2023-10-10T13:55:36.5Z"}`))
	f.Add([]byte(`{"msec":1700000000.123,"request":"GET / HTTP/1.1","request_time":1e-3,"bytes":0}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		p := warm(NewJSON(), `{"time":"`+tLocal+`","uri":"/"}`)
		checkParse(t, p, line)
		var r Record
		_, reason := p.Parse(line, &r)
		trimmed := bytes.TrimSpace(line)
		if json.Valid(line) && len(trimmed) > 0 && trimmed[0] == '{' && bytes.IndexByte(line, 0) < 0 &&
			(reason == ReasonNotJSON || reason == ReasonTruncated) {
			t.Fatalf("valid JSON %q rejected: %s", line, reason)
		}

		s := string(line)
		enc, err := json.Marshal(map[string]string{"request_uri": s})
		if err != nil {
			t.Fatal(err)
		}
		var dec map[string]string
		if err := json.Unmarshal(enc, &dec); err != nil {
			t.Fatal(err)
		}
		want := dec["request_uri"]
		ok, reason := p.Parse(enc, &r)
		switch {
		case want == "" || want == "-":
			if ok {
				t.Fatalf("%s: absent URI accepted", enc)
			}
		case !ok:
			t.Fatalf("%s: %s", enc, reason)
		case string(r.URI) != want:
			t.Fatalf("%s: URI %q, want %q", enc, r.URI, want)
		}
	})
}

// FuzzNginxConfig feeds arbitrary text to the configuration reader, with
// includes not followed: it must return a format or an error, never panic.
func FuzzNginxConfig(f *testing.F) {
	for _, file := range []string{"nginx.conf", "conf.d/10-upstream-time.conf", "conf.d/20-json.conf", "snippets/ltsv.conf"} {
		data, err := os.ReadFile(filepath.Join("testdata", "nginx", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`http { log_format f "a\"b" 'c\'d' e\ f${x}; } # x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := nginxconf.Parse("fuzz.conf", data, false)
		if err != nil {
			return
		}
		for _, name := range []string{"f", "upstream_time", "ltsv"} {
			if format, err := c.LogFormat(name); err == nil {
				NewNginx(name, format) // may fail; must not panic
			}
		}
	})
}

// TestReasons: every reason a parser returns is registered, with a
// snake_case code and words of its own, and listed once.
func TestReasons(t *testing.T) {
	if err := skip.Check(); err != nil {
		t.Fatal(err)
	}
	if len(knownReasons) != len(Reasons) {
		t.Errorf("Reasons lists %d reasons, %d of them distinct", len(Reasons), len(knownReasons))
	}
	for _, r := range Reasons {
		t.Run(string(r.Code()), func(t *testing.T) {
			if r.IsZero() || r.Words() == string(r.Code()) {
				t.Errorf("not registered with words: %q", r.Words())
			}
		})
	}
}
