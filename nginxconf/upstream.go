package nginxconf

import (
	"strconv"
	"strings"
)

// Upstream is an upstream block of the http context.
type Upstream struct {
	Name string
	// Block is the upstream directive (its file and line).
	Block   *Directive
	Servers []UpstreamServer
	// Keepalive is the keepalive connections cached per worker (the
	// last keepalive directive; 0 when none: connections are closed).
	Keepalive int
}

// UpstreamServer is a server of an upstream block.
type UpstreamServer struct {
	// Address as written: "127.0.0.1:8080", "unix:/run/app.sock".
	Address string
	Unix    bool
	// Params are the parameters after the address (weight=, max_fails=).
	Params []string
}

// Upstreams are the http block's upstream blocks, in order; a block
// without a name is left out (nginx refuses it).
func (c *Config) Upstreams() []Upstream {
	http := c.Block(LevelHTTP)
	if http == nil {
		return nil
	}
	var ups []Upstream
	for _, u := range http.ChildrenNamed("upstream") {
		args := u.Args()
		if !u.IsBlock() || len(args) == 0 {
			continue
		}
		up := Upstream{Name: args[0], Block: u, Servers: []UpstreamServer{}}
		for _, s := range u.ChildrenNamed("server") {
			if args := s.Args(); len(args) > 0 {
				up.Servers = append(up.Servers, UpstreamServer{Address: args[0], Unix: strings.HasPrefix(args[0], "unix:"), Params: args[1:]})
			}
		}
		if ka := u.ChildrenNamed("keepalive"); len(ka) > 0 && len(ka[len(ka)-1].Args()) > 0 {
			up.Keepalive, _ = strconv.Atoi(ka[len(ka)-1].Args()[0])
		}
		ups = append(ups, up)
	}
	return ups
}

// MapDefault is the value a header value v has for a request that lacks
// what a map reads: when v is exactly a variable a map block of the http
// context sets, that map's "" entry, else its default, else ""
// (proxy_set_header Connection $connection_upgrade is "close" for a
// request without Upgrade under the usual map). Anything else is v.
func (c *Config) MapDefault(v string) string {
	http := c.Block(LevelHTTP)
	if http == nil || !strings.HasPrefix(v, "$") || strings.ContainsAny(v[1:], "$ ") {
		return v
	}
	name := strings.Trim(v, "${}")
	for _, m := range http.ChildrenNamed("map") {
		args := m.Args()
		if !m.IsBlock() || len(args) != 2 || strings.Trim(args[1], "${}") != name {
			continue
		}
		var empty, def *Directive
		for _, e := range m.Children() {
			switch e.Name() {
			case "":
				empty = e
			case "default":
				def = e
			}
		}
		for _, e := range []*Directive{empty, def} {
			if e != nil && len(e.Args()) > 0 {
				return e.Args()[0]
			}
		}
		return ""
	}
	return v
}
