package accesslog

import (
	"fmt"
	"strings"
)

// A Format is one access-log format stacktune knows: a user names it (the
// --log-format of stacktune http, the --http-log-format of collect and
// diagnose), detection tries it, or both. Every known format is one entry
// of the registry below, so the commands' flags, their messages, detection
// and the request-time hints read one list: a new format is an entry here
// (and its parser, when no existing one reads it).
type Format struct {
	// Name is how a user names the format; "" for a format detection
	// tries but nobody names.
	Name string
	// Label is the name its parser reports (Parser.Format()), the name
	// detection and the reports give it.
	Label string
	// Detect says detection tries it; it tries the formats in the
	// registry's order, so a more specific layout comes before the one it
	// extends.
	Detect bool
	// New returns a fresh parser of the format.
	New func() (Parser, error)
	// Hint is the configuration that makes the server log the request
	// time in this format (NoRequestTimeHint of its Label).
	Hint string
}

// Request-time hints: the configuration lines for nginx, for Apache, and
// for a layout either writes.
var (
	hintNginx  = nginxHint("timed", CombinedTimed, false)
	hintApache = apacheHint("combined_d", ApacheCombinedD)
	hintEither = "# nginx, in the http {} block:\n" + hintNginx + "\n# Apache httpd:\n" + hintApache
)

// registry holds every format, detected ones in the order detection tries
// them: the first that reads every sampled line wins. An Apache %D is an
// integer (microseconds) and nginx's $request_time always has three
// decimals; the detected layouts insist on that to tell them apart. The
// plain combined and common layouts are the same in nginx and Apache, so
// detection names them without a server and reads them as Apache does (a
// "-" size is 0). The named formats keep the order users read them in
// (Names).
var registry = []Format{
	{Name: "combined", Label: "nginx combined", New: nginx("combined", Combined), Hint: hintNginx},
	{Name: "common", Label: "nginx common", New: nginx("common", Common), Hint: hintNginx},
	{Name: "ltsv", Label: "ltsv", Detect: true, New: func() (Parser, error) { return NewLTSV(), nil }, Hint: nginxHint("ltsv", LTSVTimed, false)},
	{Name: "json", Label: "json", Detect: true, New: func() (Parser, error) { return NewJSON(), nil }, Hint: nginxHint("json_timed", JSONTimed, true)},
	{Name: "apache-common", Label: "apache common", New: apache(ApacheCommon), Hint: hintApache},
	{Name: "apache-combined", Label: "apache combined", New: apache(ApacheCombined), Hint: hintApache},
	{Name: "apache-combined-d", Label: "apache combined_d", New: apache(ApacheCombinedD), Hint: hintApache},

	detected("apache combined_d", true, ApacheCombinedD, hintApache),
	detected("nginx combined+request_time+upstream_response_time", false, CombinedTimed, hintNginx),
	detected("nginx combined+request_time", false, Combined+` $request_time`, hintNginx),
	detected("nginx main+request_time", false, Main+` $request_time`, hintNginx),
	detected("apache vhost_combined", true, ApacheVhostCombined, hintApache),
	detected("nginx main", false, Main, hintNginx),
	detected("combined", true, ApacheCombined, hintEither),
	detected("apache common_d", true, ApacheCommon+` %D`, hintApache),
	detected("nginx common+request_time", false, Common+` $request_time`, hintNginx),
	detected("common", true, ApacheCommon, hintEither),
}

// detectOrder is the order detection tries the formats in: JSON lines
// and LTSV first (a line of one is never a line of the other or of a
// layout), then the layouts in the registry's order.
var detectOrder = func() []Format {
	var first, rest []Format
	for _, name := range []string{"json", "ltsv"} {
		f, _ := Lookup(name)
		first = append(first, f)
	}
	for _, f := range registry {
		if f.Detect && f.Name != "json" && f.Name != "ltsv" {
			rest = append(rest, f)
		}
	}
	return append(first, rest...)
}()

func nginx(name, format string) func() (Parser, error) {
	return func() (Parser, error) { return NewNginx(name, format) }
}

func apache(format string) func() (Parser, error) {
	return func() (Parser, error) { return NewApache(format) }
}

// detected is a layout detection tries under the name label: an nginx
// $request_time must have its three decimals.
func detected(label string, isApache bool, format, hint string) Format {
	return Format{Label: label, Detect: true, Hint: hint, New: func() (Parser, error) {
		var p Parser
		var err error
		if isApache {
			p, err = NewApache(format)
		} else {
			p, err = NewNginx(label, format)
		}
		if err != nil {
			return nil, err
		}
		s := p.(*seqParser)
		s.name = label
		for i := range s.items {
			if s.items[i].role == rSeconds {
				// nginx writes $request_time as seconds with three
				// decimals; an integer is Apache's %D.
				s.items[i].flags |= fMillis
			}
		}
		return p, nil
	}}
}

// Formats are the registered formats, in the registry's order.
func Formats() []Format { return append([]Format(nil), registry...) }

// FormatNames are the formats Named knows, as a user names them: "auto"
// (detection) is the caller's.
var FormatNames = func() []string {
	var out []string
	for _, f := range registry {
		if f.Name != "" {
			out = append(out, f.Name)
		}
	}
	return out
}()

// NameList is FormatNames as a message or a flag's help lists them.
func NameList() string { return strings.Join(FormatNames, ", ") }

// Lookup returns the format a user names.
func Lookup(name string) (Format, bool) {
	for _, f := range registry {
		if f.Name != "" && f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// Named returns the parser of a format named by one of FormatNames.
func Named(name string) (Parser, error) {
	if f, ok := Lookup(name); ok {
		return f.New()
	}
	return nil, fmt.Errorf("accesslog: unknown log format %q: use %s", name, NameList())
}

// labelHint is the request-time hint of the registered format whose
// parser reports label.
func labelHint(label string) (string, bool) {
	for _, f := range registry {
		if f.Label == label && f.Hint != "" {
			return f.Hint, true
		}
	}
	return "", false
}
