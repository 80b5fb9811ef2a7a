package advise

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/changeset"
)

// nginx-access-log-request-time: an access log without $request_time
// cannot say which endpoints are slow (the ISUCON5 runner-up added it to log_format to
// profile with ngxtop; stacktune http needs it). The change is the exact
// log_format line (accesslog.NoRequestTimeHint: the same format with
// $request_time and $upstream_response_time added) and the access_log
// that uses it.
var nginxAccessLogRequestTime = ruleFunc{"nginx-access-log-request-time", LayerNginx, checkNginxAccessLogRequestTime}

func checkNginxAccessLogRequestTime(c *Context) []Finding {
	if c.Nginx == nil {
		return nil
	}
	var out []Finding
	for _, l := range c.Nginx.AccessLogs {
		if l.Off || l.RequestTime || l.Syslog {
			continue
		}
		format := l.FormatText
		if format == "" {
			format = "nginx " + l.Format
		}
		hint := accesslog.NoRequestTimeHint(format)
		logFormat, _, ok := strings.Cut(hint, "\n")
		if !ok || !strings.HasPrefix(logFormat, "log_format ") {
			continue
		}
		logFormat = strings.TrimSuffix(strings.TrimPrefix(logFormat, "log_format "), ";")
		name, _, _ := strings.Cut(logFormat, " ")
		where := place(l.File, l.Line)
		src := where
		if l.Default {
			src = "nginx default (access_log logs/access.log combined)"
		}
		path := l.Path
		if path == "" {
			path = "logs/access.log"
		}
		args := path + " " + name
		if l.Buffer != "" {
			args += " buffer=" + l.Buffer
		}
		// From is the directive as written: what apply finds in the file.
		current := strings.Join(l.Args, " ")
		target := nginxHTTP
		if l.Context != "" && l.Context != "http" {
			target = "nginx " + l.Context
		}
		if where != "" {
			target += " (" + where + ")"
		}
		out = append(out, Finding{
			ID:       "nginx-access-log-request-time",
			Title:    fmt.Sprintf("The access log %s does not record $request_time", path),
			Severity: Info,
			Evidence: []Evidence{ev("access_log", strings.TrimSpace(l.Path+" "+l.Format), "", src), ev("log_format "+l.Format, l.FormatText, "", "nginx configuration")},
			Change:   nginxChange(nginxHTTP, "log_format", "", logFormat, Set),
			Also:     []changeset.Change{*nginxChange(target, "access_log", current, args, Set)},
			Effect:   "every request's time is logged, so stacktune http can rank endpoints by total time (the ISUCON5 runner-up profiled with ngxtop this way)",
			Risk:     changeset.Risk{Note: "tools that parse the old format need the new one (stacktune http reads it as is)"},
			Source:   "the ISUCON5 runner-up's write-up ($request_time in log_format for ngxtop); nginx docs (log_format)",
		})
	}
	return out
}
