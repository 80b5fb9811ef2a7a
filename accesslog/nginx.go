package accesslog

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/nginxconf"
)

// nginx's predefined format and the NCSA common format.
const (
	// Combined is nginx's built-in "combined" log_format, the default of
	// access_log.
	Combined = nginxconf.CombinedLogFormat
	// Common is the NCSA common log format written with nginx variables.
	Common = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent`
	// CombinedTimed is Combined with the request and upstream times, the
	// format NoRequestTimeHint proposes.
	CombinedTimed = Combined + ` $request_time $upstream_response_time`
)

// nginxRoles maps the nginx variables that fill Record fields.
var nginxRoles = map[string]role{
	"time_local":             rTimeLocal,
	"time_iso8601":           rTimeISO,
	"msec":                   rEpoch,
	"request":                rRequest,
	"request_method":         rMethod,
	"request_uri":            rURI,
	"status":                 rStatus,
	"body_bytes_sent":        rBytes,
	"bytes_sent":             rBytes,
	"request_time":           rSeconds,
	"upstream_response_time": rUpstream,
	"remote_addr":            rClient,
	"http_user_agent":        rAgent,
	"request_length":         rReqLength,
}

// NewNginx compiles an nginx log_format string (the concatenated quoted
// strings of the directive, as NginxFormatFromConfig returns it) into a
// Parser named "nginx NAME". Variables nginx does not use for a Record
// field are consumed and ignored. A format that begins with '{' is taken to
// be written with escape=json: its values are JSON-unescaped.
func NewNginx(name, format string) (Parser, error) {
	items, err := compileNginx(format)
	if err != nil {
		return nil, fmt.Errorf("accesslog: nginx log_format %s: %w", name, err)
	}
	json := strings.HasPrefix(strings.TrimLeft(format, " \t"), "{")
	return finish("nginx "+name, items, json), nil
}

// nginxVar is one variable of a format being compiled.
type nginxVar struct {
	name string
	at   int
}

// compileNginx splits a format into literals and variables, as nginx's
// ngx_http_log_compile_format does: "$name" or "${name}", where a name is
// letters, digits and '_' and is not case-sensitive.
func compileNginx(format string) ([]item, error) {
	if strings.ContainsAny(format, "\n\r") {
		return nil, fmt.Errorf("the format contains a line break; only one-line records can be read")
	}
	var items []item
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			items = append(items, item{role: rLit, lit: lit})
			lit = nil
		}
	}
	var vars []string
	for i := 0; i < len(format); {
		c := format[i]
		if c != '$' {
			lit = append(lit, c)
			i++
			continue
		}
		start := i
		i++
		braced := i < len(format) && format[i] == '{'
		if braced {
			i++
		}
		j := i
		for j < len(format) && isVarChar(format[j]) {
			j++
		}
		if j == i {
			return nil, fmt.Errorf("'$' at offset %d is not followed by a variable name", start)
		}
		name := strings.ToLower(format[i:j])
		if braced {
			if j >= len(format) || format[j] != '}' {
				return nil, fmt.Errorf("missing '}' after variable ${%s at offset %d", format[i:j], start)
			}
			j++
		}
		i = j
		flush()
		vars = append(vars, name)
		items = append(items, nginxItem(name))
	}
	flush()
	if len(vars) == 0 {
		return nil, fmt.Errorf("the format has no variables")
	}
	return mergePathArgs(items, "uri", "args", "is_args"), nil
}

func isVarChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// nginxItem is the item for variable name.
func nginxItem(name string) item {
	it := item{role: rSkip, lit: []byte(name)}
	if r, ok := nginxRoles[name]; ok {
		it.role = r
	}
	switch name {
	case "time_local":
		it.shape = sLocal
	case "bytes_sent":
		it.weak = true
	case "uri", "document_uri":
		it.lit = []byte("uri")
	case "query_string":
		it.lit = []byte("args")
	}
	if strings.HasPrefix(name, "upstream_") && !strings.HasPrefix(name, "upstream_http_") &&
		!strings.HasPrefix(name, "upstream_cookie_") && !strings.HasPrefix(name, "upstream_trailer_") {
		it.shape = sList
	}
	return it
}

// mergePathArgs turns a path variable followed by its query string
// ("$uri?$args", "$uri$is_args$args", Apache's "%U%q") into one rPathArgs
// item, and a path variable alone into a weak rURI. Variable items carry
// their name in lit until then; path, args and isArgs are those names.
func mergePathArgs(items []item, path, args, isArgs string) []item {
	isVar := func(i int, name string) bool {
		return i < len(items) && items[i].role != rLit && string(items[i].lit) == name
	}
	var out []item
	for i := 0; i < len(items); i++ {
		it := items[i]
		if !isVar(i, path) {
			out = append(out, it)
			continue
		}
		switch {
		case i+2 < len(items) && items[i+1].role == rLit && string(items[i+1].lit) == "?" && isVar(i+2, args):
			out = append(out, item{role: rPathArgs, flags: fArgsQ})
			i += 2
		case isArgs != "" && isVar(i+1, isArgs) && isVar(i+2, args):
			out = append(out, item{role: rPathArgs, flags: fIsArgs})
			i += 2
		case isArgs == "" && isVar(i+1, args):
			out = append(out, item{role: rPathArgs})
			i++
		default:
			out = append(out, item{role: rURI, weak: true})
		}
	}
	// Variables no longer need their names.
	for i := range out {
		if out[i].role != rLit {
			out[i].lit = nil
		}
	}
	return out
}
