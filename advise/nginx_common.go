package advise

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
)

// Helpers of the nginx rules.

// nginx change targets: where a directive goes.
const (
	nginxMain   = "nginx main context (top of nginx.conf)"
	nginxEvents = "nginx events {}"
	nginxHTTP   = "nginx http {}"
)

// nginxSetting returns a main/events/http-level setting and where it is.
func (c *Context) nginxSetting(name string) (collect.NginxSetting, string) {
	s := c.Nginx.Settings[name]
	if s.Default || s.File == "" {
		return s, "nginx default"
	}
	return s, place(s.File, s.Line)
}

// place is "file:line".
func place(file string, line int) string {
	if file == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", file, line)
}

// nginxEv is the evidence of a setting.
func (c *Context) nginxEv(name string) Evidence {
	s, src := c.nginxSetting(name)
	return ev(name, s.Value, "", src)
}

// nginxChange builds the change of an nginx directive.
func nginxChange(target, name, current, value, direction string) *changeset.Change {
	return &changeset.Change{Kind: changeset.Nginx, Target: target, Name: name, From: current, To: value, Direction: direction}
}

// staticLocations are the locations that serve files.
func (c *Context) staticLocations() []collect.NginxLocation {
	var out []collect.NginxLocation
	for _, l := range c.Nginx.Locations {
		if l.Kind == "static" {
			out = append(out, l)
		}
	}
	return out
}

// locationsEv summarises locations as evidence: the first few places.
func locationsEv(what string, ls []collect.NginxLocation) Evidence {
	var ps []string
	for i, l := range ls {
		if i == 5 {
			ps = append(ps, fmt.Sprintf("and %d more", len(ls)-5))
			break
		}
		ps = append(ps, fmt.Sprintf("location %s (%s)", l.Match, place(filepath.Base(l.File), l.Line)))
	}
	return ev(what, fmt.Sprint(len(ls)), "locations: "+strings.Join(ps, ", "), "nginx configuration")
}

// nginxProcesses are the nginx processes of the host.
func (c *Context) nginxProcesses() []collect.Process { return c.Processes("nginx") }
