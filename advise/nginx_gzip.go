package advise

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// nginx-gzip: text responses (HTML, CSS, JavaScript, JSON) shrink several
// times with gzip; nginx compresses only text/html unless gzip_types
// names more (the smartphone game backend compressed at the CDN; a CDN in front makes this
// moot).
var nginxGzip = ruleFunc{"nginx-gzip", LayerNginx, checkNginxGzip}

// gzipTextTypes are the text types worth compressing; the rule speaks
// when one of the first three (what a web application mostly serves) is
// left out.
var gzipTextTypes = []string{"text/css", "application/javascript", "application/json", "image/svg+xml", "text/plain", "text/xml"}

const gzipEssential = 3

func checkNginxGzip(c *Context) []Finding {
	if c.Nginx == nil || len(c.Nginx.Locations) == 0 {
		return nil
	}
	n := c.Nginx
	var missing []string
	essential := false
	for i, t := range gzipTextTypes {
		if !nginxHas(n.GzipTypes, t) && !nginxHas(n.GzipTypes, "*") {
			missing = append(missing, t)
			essential = essential || i < gzipEssential
		}
	}
	if n.Gzip && !essential {
		return nil
	}
	f := Finding{
		ID:       "nginx-gzip",
		Severity: Info,
		Evidence: []Evidence{c.nginxEv("gzip"), c.nginxEv("gzip_types")},
		Effect:   "text responses shrink several times on the wire, at a little CPU (gzip_comp_level 1-5)",
		Risk:     changeset.Risk{Note: "skip it when a CDN or load balancer in front already compresses (the smartphone game backend)"},
		Source:   "the smartphone game backend's write-up (gzip for text assets, at its CDN); nginx docs (gzip, gzip_types)",
	}
	types := strings.Join(append(nginxKeep(n.GzipTypes), missing...), " ")
	typesCh := nginxChange(nginxHTTP, "gzip_types", strings.Join(n.GzipTypes, " "), types, Set)
	if !n.Gzip {
		f.Title = "nginx does not compress responses (gzip off)"
		f.Change = nginxChange(nginxHTTP, "gzip", "off", "on", Set)
		f.Also = []changeset.Change{*typesCh}
	} else {
		f.Title = fmt.Sprintf("gzip compresses only %s", strings.Join(n.GzipTypes, " "))
		f.Change = typesCh
	}
	return []Finding{f}
}

// nginxKeep drops text/html, which nginx always compresses and warns
// about when listed.
func nginxKeep(types []string) []string {
	var out []string
	for _, t := range types {
		if t != "text/html" {
			out = append(out, t)
		}
	}
	return out
}

func nginxHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
