package accesslog

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/internal/skip"
)

// recordText renders every field of a Record on one line, "-" for the
// absent ones, for table cases and golden files.
func recordText(r *Record) string {
	opt := func(has Field, s string) string {
		if r.Has&has == 0 {
			return "-"
		}
		return s
	}
	s := fmt.Sprintf("time=%s method=%q uri=%q status=%s bytes=%s rt=%s ut=%s",
		opt(HasTime, r.Time.Format("2006-01-02T15:04:05.999999999Z07:00")), r.Method, r.URI,
		opt(HasStatus, strconv.Itoa(r.Status)), opt(HasBytes, strconv.FormatInt(r.BodyBytes, 10)),
		opt(HasRequestTime, strconv.FormatFloat(r.RequestTime, 'g', -1, 64)),
		opt(HasUpstreamTime, strconv.FormatFloat(r.UpstreamTime, 'g', -1, 64)))
	if r.Has&HasRequestLength != 0 || r.RequestLength != 0 {
		// Only formats that log it say it, so the other goldens stand.
		s += " rl=" + opt(HasRequestLength, strconv.FormatInt(r.RequestLength, 10))
	}
	return s
}

func mustNginx(t testing.TB, format string) Parser {
	t.Helper()
	p, err := NewNginx("test", format)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustApache(t testing.TB, format string) Parser {
	t.Helper()
	p, err := NewApache(format)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type lineCase struct {
	name   string
	line   string
	want   string      // recordText of the record, when the line parses
	reason skip.Reason // the reason, when it does not
}

func runLineCases(t *testing.T, p Parser, cases []lineCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Record{Offset: 42}
			ok, reason := p.Parse([]byte(tc.line), &r)
			if r.Offset != 42 {
				t.Errorf("Offset changed to %d", r.Offset)
			}
			switch {
			case !tc.reason.IsZero():
				if ok || reason != tc.reason {
					t.Errorf("got ok=%v reason %q, want reason %q (%s)", ok, reason, tc.reason, recordText(&r))
				}
			case !ok:
				t.Errorf("rejected: %s", reason)
			default:
				if got := recordText(&r); got != tc.want {
					t.Errorf("got  %s\nwant %s", got, tc.want)
				}
			}
		})
	}
}

const (
	ua      = `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36`
	tLocal  = `10/Oct/2023:13:55:36 -0700`
	tWant   = `2023-10-10T13:55:36-07:00`
	okBasic = `time=` + tWant + ` method="GET" uri="/index.html?x=1" status=200 bytes=2326`
)

func TestNginxCombined(t *testing.T) {
	runLineCases(t, mustNginx(t, Combined), []lineCase{
		{name: "basic", line: `127.0.0.1 - frank [` + tLocal + `] "GET /index.html?x=1 HTTP/1.1" 200 2326 "http://example.com/start.html" "` + ua + `"`,
			want: okBasic + ` rt=- ut=-`},
		{name: "IPv6 client, dashes", line: `2001:db8::1 - - [` + tLocal + `] "POST /api/v1/orders HTTP/2.0" 201 0 "-" "-"`,
			want: `time=` + tWant + ` method="POST" uri="/api/v1/orders" status=201 bytes=0 rt=- ut=-`},
		{name: "nginx-escaped quote in user agent", line: `10.0.0.1 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "curl \x22quoted\x22 \x5C"`,
			want: `time=` + tWant + ` method="GET" uri="/" status=200 bytes=5 rt=- ut=-`},
		{name: "escaped quote in request", line: `10.0.0.1 - - [` + tLocal + `] "GET /a\x22b HTTP/1.1" 404 5 "-" "x"`,
			want: `time=` + tWant + ` method="GET" uri="/a\\x22b" status=404 bytes=5 rt=- ut=-`},
		{name: "HTTP/0.9 request without protocol", line: `10.0.0.1 - - [` + tLocal + `] "GET /" 200 5 "-" "x"`,
			want: `time=` + tWant + ` method="GET" uri="/" status=200 bytes=5 rt=- ut=-`},
		{name: "absolute URI", line: `10.0.0.1 - - [` + tLocal + `] "GET http://example.com/x HTTP/1.1" 200 5 "-" "x"`,
			want: `time=` + tWant + ` method="GET" uri="http://example.com/x" status=200 bytes=5 rt=- ut=-`},
		{name: "crlf", line: `10.0.0.1 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "x"` + "\r",
			want: `time=` + tWant + ` method="GET" uri="/" status=200 bytes=5 rt=- ut=-`},
		{name: "user with a space", line: `10.0.0.1 - john doe [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "x"`,
			want: `time=` + tWant + ` method="GET" uri="/" status=200 bytes=5 rt=- ut=-`},
		{name: "request line that is a dash", line: `10.0.0.1 - - [` + tLocal + `] "-" 400 0 "-" "-"`, reason: ReasonRequest},
		{name: "empty request line", line: `10.0.0.1 - - [` + tLocal + `] "" 400 0 "-" "-"`, reason: ReasonRequest},
		{name: "TLS handshake on HTTP port", line: `10.0.0.1 - - [` + tLocal + `] "\x16\x03\x01\x02\x00\x01\x00\x01\xFC\x03\x03" 400 157 "-" "-"`, reason: ReasonRequest},
		{name: "bad status", line: `10.0.0.1 - - [` + tLocal + `] "GET / HTTP/1.1" 2x0 5 "-" "x"`, reason: ReasonStatus},
		{name: "four digit status", line: `10.0.0.1 - - [` + tLocal + `] "GET / HTTP/1.1" 2000 5 "-" "x"`, reason: ReasonStatus},
		{name: "bad bytes", line: `10.0.0.1 - - [` + tLocal + `] "GET / HTTP/1.1" 200 -5 "-" "x"`, reason: ReasonBytes},
		{name: "bad month", line: `10.0.0.1 - - [10/Foo/2023:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-" "x"`, reason: ReasonTime},
		{name: "February 30", line: `10.0.0.1 - - [30/Feb/2023:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-" "x"`, reason: ReasonTime},
		{name: "truncated in user agent", line: `10.0.0.1 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "Mozilla/5.0 (X11`, reason: ReasonTruncated},
		{name: "truncated in time", line: `10.0.0.1 - - [10/Oct/2023:13:5`, reason: ReasonTruncated},
		{name: "extra field after user agent", line: `10.0.0.1 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "x" 0.123`, reason: ReasonMismatch},
		{name: "extra quoted field", line: `10.0.0.1 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "x" "1.2.3.4"`, reason: ReasonMismatch},
		{name: "not a log line", line: `hello world`, reason: ReasonMismatch},
		{name: "NUL byte", line: "10.0.0.1 - - [" + tLocal + "] \"GET /\x00 HTTP/1.1\" 200 5 \"-\" \"x\"", reason: ReasonBinary},
		{name: "empty", line: ``, reason: ReasonEmpty},
	})
}

func TestNginxCustom(t *testing.T) {
	timed := mustNginx(t, CombinedTimed)
	runLineCases(t, timed, []lineCase{
		{name: "request and upstream time", line: `10.0.0.1 - - [` + tLocal + `] "GET /index.html?x=1 HTTP/1.1" 200 2326 "-" "x" 0.012 0.010`,
			want: okBasic + ` rt=0.012 ut=0.01`},
		{name: "several upstreams", line: `10.0.0.1 - - [` + tLocal + `] "GET /index.html?x=1 HTTP/1.1" 200 2326 "-" "x" 1.500 0.500, 0.250 : 0.125`,
			want: okBasic + ` rt=1.5 ut=0.875`},
		{name: "upstream that did not answer", line: `10.0.0.1 - - [` + tLocal + `] "GET /index.html?x=1 HTTP/1.1" 200 2326 "-" "x" 0.012 -, 0.010`,
			want: okBasic + ` rt=0.012 ut=0.01`},
		{name: "no upstream", line: `10.0.0.1 - - [` + tLocal + `] "GET /index.html?x=1 HTTP/1.1" 200 2326 "-" "x" 0.000 -`,
			want: okBasic + ` rt=0 ut=-`},
		{name: "bad request time", line: `10.0.0.1 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "x" fast -`, reason: ReasonRequestTime},
		{name: "bad upstream time", line: `10.0.0.1 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "x" 0.1 soon`, reason: ReasonUpstreamTime},
		{name: "missing request time", line: `10.0.0.1 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "x"`, reason: ReasonTruncated},
	})

	t.Run("upstream list in the middle", func(t *testing.T) {
		p := mustNginx(t, `$remote_addr [$time_local] "$request" $status $upstream_response_time $request_time $upstream_addr end`)
		runLineCases(t, p, []lineCase{
			{name: "list", line: `1.2.3.4 [` + tLocal + `] "GET / HTTP/1.1" 502 0.010, 0.020 : 0.030 0.061 10.0.0.1:80, 10.0.0.2:80 end`,
				want: `time=` + tWant + ` method="GET" uri="/" status=502 bytes=- rt=0.061 ut=0.06`},
		})
	})
	t.Run("time_local followed by a space", func(t *testing.T) {
		p := mustNginx(t, `$time_local $status $request_time "$request"`)
		runLineCases(t, p, []lineCase{
			{name: "ok", line: tLocal + ` 304 0.001 "HEAD /x HTTP/1.0"`,
				want: `time=` + tWant + ` method="HEAD" uri="/x" status=304 bytes=- rt=0.001 ut=-`},
		})
	})
	t.Run("iso8601, msec, method, uri, bytes_sent", func(t *testing.T) {
		p := mustNginx(t, `$time_iso8601 $msec $request_method $scheme://$host$request_uri $status $bytes_sent $request_time`)
		runLineCases(t, p, []lineCase{
			{name: "msec wins", line: `2023-10-10T13:55:36-07:00 1696971336.123 DELETE https://example.com/a/b?c=d 204 157 0.004`,
				want: `time=2023-10-10T20:55:36.123Z method="DELETE" uri="/a/b?c=d" status=204 bytes=157 rt=0.004 ut=-`},
		})
	})
	t.Run("iso8601 only", func(t *testing.T) {
		p := mustNginx(t, `[$time_iso8601] "$request" $status`)
		runLineCases(t, p, []lineCase{
			{name: "offset", line: `[2023-10-10T13:55:36+02:00] "GET / HTTP/1.1" 200`,
				want: `time=2023-10-10T13:55:36+02:00 method="GET" uri="/" status=200 bytes=- rt=- ut=-`},
			{name: "utc", line: `[2023-10-10T13:55:36+00:00] "GET / HTTP/1.1" 200`,
				want: `time=2023-10-10T13:55:36Z method="GET" uri="/" status=200 bytes=- rt=- ut=-`},
			{name: "bad", line: `[2023-13-10T13:55:36+00:00] "GET / HTTP/1.1" 200`, reason: ReasonTime},
		})
	})
	t.Run("uri and args", func(t *testing.T) {
		for _, f := range []string{`$request_method $uri?$args $status`, `$request_method $uri$is_args$args $status`} {
			p := mustNginx(t, f)
			runLineCases(t, p, []lineCase{
				{name: f + " with args", line: `GET /search?q=go 200`, want: `time=- method="GET" uri="/search?q=go" status=200 bytes=- rt=- ut=-`},
			})
		}
		runLineCases(t, mustNginx(t, `$request_method $uri?$args $status`), []lineCase{
			{name: "no args", line: `GET /search?- 200`, want: `time=- method="GET" uri="/search" status=200 bytes=- rt=- ut=-`},
		})
		runLineCases(t, mustNginx(t, `$request_method $uri$is_args$args $status`), []lineCase{
			{name: "no args", line: `GET /search- 200`, want: `time=- method="GET" uri="/search" status=200 bytes=- rt=- ut=-`},
		})
		runLineCases(t, mustNginx(t, `"$request" $uri $status`), []lineCase{
			{name: "request target beats bare uri", line: `"GET /a/../b?x=1 HTTP/1.1" /b 200`, want: `time=- method="GET" uri="/a/../b?x=1" status=200 bytes=- rt=- ut=-`},
		})
	})
	t.Run("braced variables and unknown variables", func(t *testing.T) {
		p := mustNginx(t, `${remote_addr}|${STATUS}|$ssl_protocol/$ssl_cipher|${request_time}s`)
		runLineCases(t, p, []lineCase{
			{name: "ok", line: `::1|503|TLSv1.3/TLS_AES_256_GCM_SHA384|1.250s`, want: `time=- method="" uri="" status=503 bytes=- rt=1.25 ut=-`},
		})
	})
}

func TestNginxJSONFormat(t *testing.T) {
	p := mustNginx(t, `{"time":"$time_iso8601","request":"$request","status":$status,"bytes":$body_bytes_sent,"rt":$request_time,"urt":"$upstream_response_time","ua":"$http_user_agent"}`)
	runLineCases(t, p, []lineCase{
		{name: "ok", line: `{"time":"2023-10-10T13:55:36-07:00","request":"GET /index.html?x=1 HTTP/1.1","status":200,"bytes":2326,"rt":0.012,"urt":"0.010","ua":"curl/8"}`,
			want: okBasic + ` rt=0.012 ut=0.01`},
		{name: "escapes decoded, empty upstream", line: `{"time":"2023-10-10T13:55:36-07:00","request":"GET /a\"b\\c\u00e9 HTTP/1.1","status":200,"bytes":1,"rt":0.001,"urt":"","ua":"say \"hi\""}`,
			want: `time=` + tWant + ` method="GET" uri="/a\"b\\cé" status=200 bytes=1 rt=0.001 ut=-`},
	})
}

func TestApache(t *testing.T) {
	runLineCases(t, mustApache(t, `%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %D`), []lineCase{
		{name: "combined with %D", line: `127.0.0.1 - frank [` + tLocal + `] "GET /index.html?x=1 HTTP/1.1" 200 2326 "http://example.com/" "` + ua + `" 12345`,
			want: okBasic + ` rt=0.012345 ut=-`},
		{name: "escaped quotes and backslash", line: `127.0.0.1 - - [` + tLocal + `] "GET /index.html?x=1 HTTP/1.1" 200 2326 "-" "evil \"agent\" \\" 1`,
			want: okBasic + ` rt=1e-06 ut=-`},
		{name: "dash bytes are zero", line: `::1 - - [` + tLocal + `] "HEAD / HTTP/1.1" 304 - "-" "-" 85`,
			want: `time=` + tWant + ` method="HEAD" uri="/" status=304 bytes=0 rt=8.5e-05 ut=-`},
		{name: "timeout without request", line: `::1 - - [` + tLocal + `] "-" 408 - "-" "-" 20000071`, reason: ReasonRequest},
		{name: "decimal %D", line: `::1 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "-" 0.5`, reason: ReasonRequestTime},
		{name: "no brackets on time", line: `::1 - - ` + tLocal + ` "GET / HTTP/1.1" 200 5 "-" "-" 5`, reason: ReasonTime},
	})
	t.Run("%T units and %U%q", func(t *testing.T) {
		runLineCases(t, mustApache(t, `%m %U%q %s %T %{ms}T %{us}T %B`), []lineCase{
			{name: "ok", line: `GET /p?a=1 200 2 2345 2345678 0`, want: `time=- method="GET" uri="/p?a=1" status=200 bytes=0 rt=2.345678 ut=-`},
		})
		runLineCases(t, mustApache(t, `%m %U%q %s %T`), []lineCase{
			{name: "seconds", line: `GET /p 200 3`, want: `time=- method="GET" uri="/p" status=200 bytes=- rt=3 ut=-`},
		})
	})
	t.Run("epoch times and vhost", func(t *testing.T) {
		runLineCases(t, mustApache(t, `%v:%p %{msec}t %{end:usec}t "%r" %>s %O`), []lineCase{
			{name: "msec wins over usec? first best", line: `example.com:443 1696971336123 1696971336123456 "GET / HTTP/1.1" 200 512`,
				want: `time=2023-10-10T20:55:36.123Z method="GET" uri="/" status=200 bytes=512 rt=- ut=-`},
		})
	})
}

func TestLTSV(t *testing.T) {
	p := NewLTSV()
	runLineCases(t, p, []lineCase{
		{name: "alp nginx example", line: "time:" + tLocal + "\thost:10.0.0.1\tforwardedfor:-\treq:GET /index.html?x=1 HTTP/1.1\tmethod:GET\turi:/index.html?x=1\tstatus:200\tsize:2326\treferer:-\tua:" + ua + "\treqtime:0.012\truntime:-\tapptime:0.010\tcache:-\tvhost:example.com",
			want: okBasic + ` rt=0.012 ut=0.01`},
		{name: "apache ltsv.org example", line: "host:10.0.0.1\tident:-\tuser:-\ttime:[" + tLocal + "]\treq:GET /index.html?x=1 HTTP/1.1\tstatus:200\tsize:2326\treferer:-\tua:-\treqtime_microsec:12000\tcache:-\truntime:-\tvhost:-",
			want: okBasic + ` rt=0.012 ut=-`},
		{name: "iso time and aliases", line: "time_iso8601:2023-10-10T13:55:36-07:00\trequest_method:GET\trequest_uri:/index.html?x=1\tstatus:200\tbody_bytes:2326\trequest_time:0.012\tupstream_response_time:0.005, 0.005",
			want: okBasic + ` rt=0.012 ut=0.01`},
		{name: "dashes", line: "time:-\treq:GET / HTTP/1.1\tstatus:-\tsize:-\treqtime:-\tapptime:-",
			want: `time=- method="GET" uri="/" status=- bytes=- rt=- ut=-`},
		{name: "no request", line: "time:" + tLocal + "\tstatus:200", reason: ReasonMissingField},
		{name: "dash request", line: "req:-\tstatus:400", reason: ReasonRequest},
		{name: "bad status", line: "uri:/\tstatus:abc", reason: ReasonStatus},
		{name: "bad time", line: "uri:/\ttime:yesterday", reason: ReasonTime},
		{name: "bad reqtime", line: "uri:/\treqtime:1.2.3", reason: ReasonRequestTime},
		{name: "no labels", line: "just some text", reason: ReasonNotLTSV},
		{name: "binary", line: "uri:/\x00", reason: ReasonBinary},
	})
}

func TestJSON(t *testing.T) {
	p := NewJSON()
	runLineCases(t, p, []lineCase{
		{name: "nginx escape=json", line: `{"time_local":"` + tLocal + `","remote_addr":"10.0.0.1","request":"GET /index.html?x=1 HTTP/1.1","status":"200","body_bytes_sent":"2326","request_time":"0.012","upstream_response_time":"0.010","http_user_agent":"` + ua + `"}`,
			want: okBasic + ` rt=0.012 ut=0.01`},
		{name: "numbers and method+uri", line: ` { "time_iso8601" : "2023-10-10T13:55:36-07:00" , "method":"GET", "uri":"/index.html", "args":"x=1", "status":200, "bytes":2326, "reqtime":1.2e-2, "apptime":0.01 } `,
			want: okBasic + ` rt=0.012 ut=0.01`},
		{name: "msec number", line: `{"msec":1696971336.5,"request_uri":"/","status":200}`,
			want: `time=2023-10-10T20:55:36.5Z method="" uri="/" status=200 bytes=- rt=- ut=-`},
		{name: "@timestamp with fraction and Z", line: `{"@timestamp":"2023-10-10T20:55:36.250Z","request":"GET / HTTP/1.1"}`,
			want: `time=2023-10-10T20:55:36.25Z method="GET" uri="/" status=- bytes=- rt=- ut=-`},
		{name: "escapes, nested values, nulls", line: `{"nested":{"a":[1,{"b":"}]\""}],"c":null},"request":"GET /caf\u00e9/\ud83d\ude00?q=\"x\" HTTP/1.1","status":null,"request_time":"-","upstream_response_time":"","x":true,"y":false,"z":-0.5e+3}`,
			want: `time=- method="GET" uri="/café/😀?q=\"x\"" status=- bytes=- rt=- ut=-`},
		{name: "escaped key", line: `{"st\u0061tus":404,"uri":"/x"}`,
			want: `time=- method="" uri="/x" status=404 bytes=- rt=- ut=-`},
		{name: "lone surrogate", line: `{"uri":"/\ud800x"}`,
			want: `time=- method="" uri="/�x" status=- bytes=- rt=- ut=-`},
		{name: "truncated", line: `{"request":"GET / HTTP/1.1","status":200,"request_ti`, reason: ReasonTruncated},
		{name: "truncated after value", line: `{"request":"GET / HTTP/1.1","status":200`, reason: ReasonTruncated},
		{name: "truncated in escape", line: `{"request":"GET / HTTP/1.1","ua":"\u00`, reason: ReasonTruncated},
		{name: "invalid escape", line: `{"request":"GET /\q HTTP/1.1"}`, reason: ReasonNotJSON},
		{name: "not an object", line: `["GET / HTTP/1.1"]`, reason: ReasonNotJSON},
		{name: "plain text", line: `GET / HTTP/1.1`, reason: ReasonNotJSON},
		{name: "trailing garbage", line: `{"uri":"/"} x`, reason: ReasonNotJSON},
		{name: "missing colon", line: `{"uri" "/"}`, reason: ReasonNotJSON},
		{name: "bad number", line: `{"uri":"/","status":01}`, reason: ReasonNotJSON},
		{name: "no request", line: `{"status":200,"request_time":0.1}`, reason: ReasonMissingField},
		{name: "status as bool", line: `{"uri":"/","status":true}`, reason: ReasonStatus},
		{name: "negative request time", line: `{"uri":"/","request_time":-1}`, reason: ReasonRequestTime},
		{name: "bad time", line: `{"uri":"/","time":"noon"}`, reason: ReasonTime},
		{name: "NUL", line: "{\"uri\":\"/\x00\"}", reason: ReasonBinary},
		{name: "empty object", line: `{}`, reason: ReasonMissingField},
	})
}

// TestTimes checks the hand-written time parsers against package time.
func TestTimes(t *testing.T) {
	var c timeCache
	for _, s := range []string{"01/Jan/1970:00:00:00 +0000", "29/Feb/2024:23:59:59 +0530", "31/Dec/1999:12:00:00 -1200", tLocal, tLocal, "01/Mar/2100:00:00:00 +0100"} {
		want, err := time.Parse("02/Jan/2006:15:04:05 -0700", s)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := c.local([]byte(s))
		if !ok || !got.Equal(want) || got.Format(time.RFC3339) != want.Format(time.RFC3339) {
			t.Errorf("local %s: got %v %v, want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"2023-10-10T13:55:36-07:00", "2023-10-10T13:55:36.123456789Z", "2023-10-10T13:55:36.5+01:30", "2024-02-29T00:00:00+00:00"} {
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ { // the second time from the cache
			got, ok := c.iso([]byte(s))
			if !ok || !got.Equal(want) {
				t.Errorf("iso %s: got %v %v, want %v", s, got, ok, want)
			}
		}
	}
	for _, s := range []string{"32/Jan/2023:00:00:00 +0000", "01/jan/2023:00:00:00 +0000", "01/Jan/2023:24:00:00 +0000", "01/Jan/2023:00:00:00 0000", "01/Jan/2023:00:00:00+00000"} {
		if _, ok := c.local([]byte(s)); ok {
			t.Errorf("local %s accepted", s)
		}
	}
	if got, ok := epoch([]byte("1700000000.123"), 1); !ok || got.UnixMilli() != 1700000000123 {
		t.Errorf("epoch: %v %v", got, ok)
	}
	if got, ok := epoch([]byte("1700000000123456"), 1e6); !ok || got.UnixMicro() != 1700000000123456 {
		t.Errorf("epoch us: %v %v", got, ok)
	}
}

func TestCompileErrors(t *testing.T) {
	for _, f := range []string{``, `plain text`, `$ $status`, `${status`, "$status\n"} {
		if _, err := NewNginx("bad", f); err == nil {
			t.Errorf("nginx %q compiled", f)
		} else if !strings.Contains(err.Error(), "bad") {
			t.Errorf("error %q does not name the format", err)
		}
	}
	for _, f := range []string{``, `text`, `%Z`, `%{Referer`, `%`, `%{x}T`, `%^zz`} {
		if _, err := NewApache(f); err == nil {
			t.Errorf("apache %q compiled", f)
		}
	}
}

func TestFields(t *testing.T) {
	cases := map[Parser]Field{
		mustNginx(t, Combined):                            HasTime | HasStatus | HasBytes,
		mustNginx(t, CombinedTimed):                       HasTime | HasStatus | HasBytes | HasRequestTime | HasUpstreamTime,
		mustNginx(t, `"$request" $request_time`):          HasRequestTime,
		mustApache(t, ApacheCombinedD):                    HasTime | HasStatus | HasBytes | HasRequestTime,
		mustApache(t, ApacheCommon):                       HasTime | HasStatus | HasBytes,
		NewJSON():                                         HasTime | HasStatus | HasBytes | HasRequestTime | HasUpstreamTime | HasRequestLength,
		mustApache(t, `"%r" %I`):                          HasRequestLength,
		mustNginx(t, `$time_local $msec $status`):         HasTime | HasStatus,
		mustApache(t, `%h %m %U "%{User-Agent}i" %>s %O`): HasStatus | HasBytes,
	}
	for p, want := range cases {
		if got := Fields(p); got != want {
			t.Errorf("%s: Fields %06b, want %06b", p.Format(), got, want)
		}
	}
}

func TestFormatNames(t *testing.T) {
	for want, p := range map[string]Parser{
		"nginx test":        mustNginx(t, Combined),
		"apache combined":   mustApache(t, `%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\"`),
		"apache combined_d": mustApache(t, ApacheCombinedD),
		"apache common":     mustApache(t, ApacheCommon),
		"apache custom":     mustApache(t, `%h %D`),
		"ltsv":              NewLTSV(),
		"json":              NewJSON(),
	} {
		if p.Format() != want || p.Clone().Format() != want {
			t.Errorf("Format %q / clone %q, want %q", p.Format(), p.Clone().Format(), want)
		}
	}
}

// TestNoAllocs checks that parsing a line allocates nothing, once a parser
// has seen a first line.
func TestNoAllocs(t *testing.T) {
	cases := []struct {
		p    Parser
		line string
	}{
		{mustNginx(t, CombinedTimed), `10.0.0.1 - - [` + tLocal + `] "GET /index.html?x=1 HTTP/1.1" 200 2326 "-" "` + ua + `" 0.012 0.010, 0.020`},
		{mustNginx(t, `{"t":"$time_iso8601","r":"$request","s":$status}`), `{"t":"2023-10-10T13:55:36-07:00","r":"GET /a\"b HTTP/1.1","s":200}`},
		{mustApache(t, ApacheCombinedD), `::1 - - [` + tLocal + `] "GET / HTTP/1.1" 200 - "-" "a \"b\"" 1234`},
		{NewLTSV(), "time:" + tLocal + "\treq:GET / HTTP/1.1\tstatus:200\tsize:5\treqtime:0.1\tapptime:0.05"},
		{NewJSON(), `{"time":"2023-10-10T13:55:36.5+02:00","request":"GET /caf\u00e9 HTTP/1.1","status":200,"request_time":0.012,"n":{"a":[1,2]}}`},
		{NewJSON(), `{"st\u0061tus":200,"uri":"/","args":"a=1","msec":"1700000000.123"}`},
	}
	for _, tc := range cases {
		var r Record
		line := []byte(tc.line)
		if ok, reason := tc.p.Parse(line, &r); !ok {
			t.Fatalf("%s: %s", tc.p.Format(), reason)
		}
		if n := testing.AllocsPerRun(100, func() { tc.p.Parse(line, &r) }); n != 0 {
			t.Errorf("%s: %v allocations per line", tc.p.Format(), n)
		}
	}
}

// TestHugeLines feeds lines of several MiB (a giant user agent, deep JSON
// nesting, a NUL far in, no delimiter at all) to every parser: each must
// answer in time linear in the line, without panicking.
func TestHugeLines(t *testing.T) {
	mb := 3 << 20
	big := strings.Repeat("A", mb)
	parsers := []Parser{mustNginx(t, CombinedTimed), mustApache(t, ApacheCombinedD), NewLTSV(), NewJSON()}
	cases := []struct {
		name, line string
		ok         map[string]bool // formats that read the line
	}{
		{"giant user agent", `1.2.3.4 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "` + big + `" 0.001 -`, map[string]bool{"nginx test": true}},
		{"giant apache user agent", `1.2.3.4 - - [` + tLocal + `] "GET / HTTP/1.1" 200 5 "-" "` + strings.Repeat(`\"`, mb/2) + `" 1`, map[string]bool{"apache combined_d": true}},
		{"deep json nesting", `{"uri":"/","x":` + strings.Repeat("[", mb) + strings.Repeat("]", mb) + `}`, map[string]bool{"json": true}},
		{"unclosed json nesting", `{"uri":"/","x":` + strings.Repeat("[{", mb/2), nil},
		{"long ltsv value", "uri:/" + big + "\tstatus:200", map[string]bool{"ltsv": true}},
		{"NUL at the end", big + "\x00", nil},
		{"only quotes", strings.Repeat(`"`, mb), nil},
		{"only backslashes", strings.Repeat(`\`, mb), nil},
		{"only spaces", strings.Repeat(" ", mb), nil},
		{"only tabs and colons", strings.Repeat("\t:", mb/2), nil},
	}
	for _, tc := range cases {
		for _, p := range parsers {
			start := time.Now()
			var r Record
			ok, reason := p.Parse([]byte(tc.line), &r)
			if ok != tc.ok[p.Format()] {
				t.Errorf("%s, %s: ok=%v %s", tc.name, p.Format(), ok, reason)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("%s, %s: %v", tc.name, p.Format(), d)
			}
		}
	}
}

// TestRequestLength: nginx's $request_length, Apache's %I and the labels
// request_length and reqsize fill RequestLength (the bytes received: what
// tells a request body nginx buffered to disk); "-" leaves it absent, and
// a value that is not a count rejects the line.
func TestRequestLength(t *testing.T) {
	const req = `"POST /api/upload HTTP/1.1" 201`
	const want = `time=- method="POST" uri="/api/upload" status=201 bytes=- rt=- ut=-`
	t.Run("nginx", func(t *testing.T) {
		runLineCases(t, mustNginx(t, `"$request" $status $request_length`), []lineCase{
			{name: "a large body", line: req + ` 70312`, want: want + ` rl=70312`},
			{name: "dash", line: req + ` -`, want: want},
			{name: "not a count", line: req + ` 7e4`, reason: ReasonReqLength},
			{name: "negative", line: req + ` -1`, reason: ReasonReqLength},
		})
		runLineCases(t, mustNginx(t, `{"request":"$request","status":"$status","request_length":"${request_length}"}`), []lineCase{
			{name: "escape=json", line: `{"request":"POST /api/upload HTTP/1.1","status":"201","request_length":"512"}`, want: want + ` rl=512`},
		})
	})
	t.Run("apache", func(t *testing.T) {
		runLineCases(t, mustApache(t, `"%r" %>s %I`), []lineCase{
			{name: "%I", line: req + ` 70312`, want: want + ` rl=70312`},
			{name: "not a count", line: req + ` x`, reason: ReasonReqLength},
		})
	})
	t.Run("ltsv", func(t *testing.T) {
		runLineCases(t, NewLTSV(), []lineCase{
			{name: "reqsize", line: "req:POST /api/upload HTTP/1.1\tstatus:201\treqsize:70312", want: want + ` rl=70312`},
			{name: "request_length", line: "req:POST /api/upload HTTP/1.1\tstatus:201\trequest_length:9", want: want + ` rl=9`},
			{name: "dash", line: "req:POST /api/upload HTTP/1.1\tstatus:201\treqsize:-", want: want},
			{name: "not a count", line: "req:POST /api/upload HTTP/1.1\tstatus:201\treqsize:big", reason: ReasonReqLength},
		})
	})
	t.Run("json", func(t *testing.T) {
		runLineCases(t, NewJSON(), []lineCase{
			{name: "number", line: `{"request":"POST /api/upload HTTP/1.1","status":201,"request_length":70312}`, want: want + ` rl=70312`},
			{name: "null", line: `{"request":"POST /api/upload HTTP/1.1","status":201,"request_length":null}`, want: want},
			{name: "bool", line: `{"request":"POST /api/upload HTTP/1.1","status":201,"request_length":true}`, reason: ReasonReqLength},
		})
	})
	if Fields(mustNginx(t, Combined))&HasRequestLength != 0 || Fields(mustNginx(t, `"$request" $request_length`))&HasRequestLength == 0 {
		t.Errorf("Fields: combined logs no request length, a format with $request_length does")
	}
}
