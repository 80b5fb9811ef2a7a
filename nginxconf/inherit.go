package nginxconf

// Effective applies nginx's inheritance as its documentation states it
// for proxy_set_header and add_header ("inherited from the previous
// configuration level if and only if there are no ... directives defined
// on the current level") and as its modules merge every block's settings
// with those of the block around it:
//
//  1. A directive set in a block applies in the blocks inside it (http
//     to server, server to location, a location to the locations, if {}
//     and limit_except {} blocks inside it) unless one of them sets it
//     again: the nearest block that has the directive, from the one
//     asked about out to the main context, decides.
//  2. Lists replace, they never merge: for a directive that may repeat in
//     a block (access_log, proxy_set_header, add_header, fastcgi_param,
//     error_page, ...), every one in that nearest block applies and none
//     from outside it. One proxy_set_header in a location drops all the
//     server's and http's.
//  3. For a directive that takes one value, the last of the list is the
//     value (nginx refuses a duplicate; the last is what a reader of the
//     file sees set).
//  4. root and alias are one setting: a location's alias replaces an
//     outer root and the reverse. Effective(b, "root") and
//     Effective(b, "alias") both give the last root or alias of the
//     nearest block that has one with a path (nginx refuses a root or
//     alias without one, or in the main context).
//  5. Some directives belong to the block they are in and are not
//     inherited: listen and server_name (their server's), the location,
//     server and upstream blocks, the rewrite module's return, rewrite,
//     set, break and if (run where they are written), and the content
//     handlers memcached_pass, empty_gif and stub_status (their
//     location's). proxy_pass, fastcgi_pass, uwsgi_pass, scgi_pass and
//     grpc_pass apply in their location and in the if {} and
//     limit_except {} blocks inside it, not in nested locations.
//
// Value gives the one value that applies (rule 3); Overrides lists where
// blocks inside a block set a directive again.

// ownOnly are the directives rule 5 keeps in their block.
var ownOnly = map[string]bool{
	"listen": true, "server_name": true,
	"location": true, "server": true, "upstream": true,
	"return": true, "rewrite": true, "set": true, "break": true, "if": true,
	"memcached_pass": true, "empty_gif": true, "stub_status": true,
}

// passOnly are the handlers of rule 5 that if {} and limit_except {}
// blocks take from their location.
var passOnly = map[string]bool{
	"proxy_pass": true, "fastcgi_pass": true, "uwsgi_pass": true, "scgi_pass": true, "grpc_pass": true,
}

// Effective returns the directives named name that nginx applies in
// block (a block, or the main context), following the rules above, in
// reading order; nil when none does and nginx's default applies.
func (c *Config) Effective(block *Directive, name string) []*Directive {
	switch {
	case block == nil:
		return nil
	case name == "root" || name == "alias":
		return rootOrAlias(block)
	case ownOnly[name]:
		return block.ChildrenNamed(name)
	}
	for b := block; b != nil; b = b.parent {
		if ks := b.ChildrenNamed(name); len(ks) > 0 {
			return ks
		}
		if passOnly[name] && b.name != "if" && b.name != "limit_except" {
			return nil
		}
	}
	return nil
}

// Value returns the arguments of the directive named name that nginx
// applies in block: the last of Effective (rule 3). ok is false when
// none applies and nginx's default does.
func (c *Config) Value(block *Directive, name string) (args []string, ok bool) {
	ds := c.Effective(block, name)
	if len(ds) == 0 {
		return nil, false
	}
	return ds[len(ds)-1].Args(), true
}

// rootOrAlias is rule 4: the last root or alias with a path in the
// nearest block, from b out to the http block, that has one.
func rootOrAlias(b *Directive) []*Directive {
	for ; b != nil && b.parent != nil; b = b.parent {
		for i := len(b.kids) - 1; i >= 0; i-- {
			if k := b.kids[i]; (k.name == "root" || k.name == "alias") && len(k.args) > 0 {
				return []*Directive{k}
			}
		}
	}
	return nil
}

// Overrides returns the directives named name in the blocks inside
// block, at any depth, in reading order: the places where what block
// sets (or inherits) is set again. The entries of a types {} block are
// MIME types, not directives, and are not looked at.
func (c *Config) Overrides(block *Directive, name string) []*Directive {
	if block == nil {
		return nil
	}
	var out []*Directive
	block.walk(isTypes, func(d *Directive) bool {
		if d.name == name && d.parent != block {
			out = append(out, d)
		}
		return true
	})
	return out
}

// isTypes reports whether d is a types {} block, whose entries map MIME
// types to file extensions.
func isTypes(d *Directive) bool { return d.block && d.name == "types" }
