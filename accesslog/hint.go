package accesslog

import (
	"strings"
)

// Formats NoRequestTimeHint proposes for LTSV and JSON logs.
const (
	// LTSVTimed is an nginx LTSV format with the labels alp reads.
	LTSVTimed = "time:$time_local\thost:$remote_addr\treq:$request\tmethod:$request_method\turi:$request_uri\tstatus:$status\tsize:$body_bytes_sent\treferer:$http_referer\tua:$http_user_agent\treqtime:$request_time\tapptime:$upstream_response_time"
	// JSONTimed is an nginx escape=json format with the keys NewJSON reads.
	JSONTimed = `{"time":"$time_iso8601","remote_addr":"$remote_addr","request":"$request","status":$status,"body_bytes_sent":$body_bytes_sent,"request_time":$request_time,"upstream_response_time":"$upstream_response_time","http_referer":"$http_referer","http_user_agent":"$http_user_agent"}`
)

const (
	nginxAccessLog  = "/var/log/nginx/access.log"
	apacheCustomLog = "${APACHE_LOG_DIR}/access.log"
)

// NoRequestTimeHint says how to make a server log the request time. format
// is a Parser's Format() ("nginx combined", "apache common", "combined",
// "ltsv", "json", ...) or a log format string (nginx variables or Apache %
// directives). It returns the configuration lines to add: for nginx a
// log_format line and the access_log line that uses it, for Apache a
// LogFormat line and its CustomLog line, and both, each after a '#'
// comment naming the server, when the format name fits either ("combined",
// "common"). A format string is extended with the request time (and
// nginx's upstream time); a format string that already has a request time
// gives "". A Format() name always gives the hint: the caller knows that
// its log had no request times.
func NoRequestTimeHint(format string) string {
	f := strings.TrimSpace(format)
	if h, ok := labelHint(f); ok {
		return h
	}
	switch {
	case f == "":
		return hintEither
	case strings.HasPrefix(f, "apache "):
		return hintApache
	case strings.HasPrefix(f, "nginx "):
		return hintNginx
	case strings.Contains(f, "$"):
		if strings.Contains(strings.ToLower(f), "$request_time") || strings.Contains(f, "${request_time}") {
			return ""
		}
		if strings.HasPrefix(f, "{") && strings.HasSuffix(f, "}") {
			timed := strings.TrimSuffix(f, "}") + `,"request_time":$request_time,"upstream_response_time":"$upstream_response_time"}`
			return nginxHint("timed", timed, true)
		}
		return nginxHint("timed", f+` $request_time $upstream_response_time`, false)
	case strings.Contains(f, "%"):
		a := unescapeApache(f)
		if items, err := compileApache(a); err == nil {
			for _, it := range items {
				switch it.role {
				case rMicros, rMillis, rSecondsInt:
					return ""
				}
			}
		}
		if a == ApacheCombined {
			return hintApache
		}
		return apacheHint("timed", a+" %D")
	}
	return hintNginx
}

// nginxHint renders a log_format directive in single quotes and the
// access_log directive using it.
func nginxHint(name, format string, json bool) string {
	q := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\t", `\t`).Replace(format)
	esc := ""
	if json {
		esc = "escape=json "
	}
	return "log_format " + name + " " + esc + "'" + q + "';\n" +
		"access_log " + nginxAccessLog + " " + name + ";"
}

// apacheHint renders a LogFormat directive and the CustomLog using it.
func apacheHint(name, format string) string {
	q := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\t", `\t`).Replace(format)
	return `LogFormat "` + q + `" ` + name + "\n" +
		"CustomLog " + apacheCustomLog + " " + name
}
