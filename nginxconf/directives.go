package nginxconf

import (
	"iter"
	"slices"
	"strings"
)

// The tree of a configuration. Config.Main is its root, the main
// context; every Directive has a Parent (the main context for one at the
// top level, nil for the main context itself) and a block has Children,
// in nginx's reading order: an include's files in the place of the
// include, in the block that holds it. Effective and Overrides (in
// inherit.go) give the values nginx applies in a block.

// Main is the main context: the block, without a name, that holds the
// top-level directives (events, http, worker_processes...).
func (c *Config) Main() *Directive { return c.root }

// Name is the directive's name: "listen", "server", "include" ("" for
// the main context).
func (d *Directive) Name() string { return d.name }

// Args are the directive's arguments, unquoted and unescaped as nginx
// does; nil when it has none. The slice is the Config's own: read it,
// do not change it (appending to it copies).
func (d *Directive) Args() []string { return slices.Clip(d.args) }

// IsBlock reports whether the directive opens a block ("http", "server",
// "location /api"), true for the main context.
func (d *Directive) IsBlock() bool { return d.block }

// File is the path of the file the directive is in, as it was read (see
// Paths); the main file for the main context.
func (d *Directive) File() string { return d.f.path }

// Line is the line of the directive's name in File, from 1 (0 for the
// main context).
func (d *Directive) Line() int { return d.line }

// Parent is the block the directive is in: the main context for a
// top-level directive, nil for the main context.
func (d *Directive) Parent() *Directive { return d.parent }

// Children are the directives inside a block, in reading order (nil for
// a simple directive). The slice is the Config's own: read it, do not
// change it.
func (d *Directive) Children() []*Directive { return slices.Clip(d.kids) }

// ChildrenNamed are the directives named name directly inside a block,
// in reading order.
func (d *Directive) ChildrenNamed(name string) []*Directive {
	var out []*Directive
	for _, k := range d.kids {
		if k.name == name {
			out = append(out, k)
		}
	}
	return out
}

// Label is the directive as a context names it: its name and arguments
// joined by spaces ("location /api", "server").
func (d *Directive) Label() string { return d.label() }

// Path names the directive as an edit context and the audit name a
// block: the labels of the blocks around it and its own, outermost
// first, joined by '>' ("http>server>location /api"); "" for the main
// context. The context a directive is in is its Parent's Path. Paths
// are built on each call, as long as the block is deep (MaxBlockDepth).
func (d *Directive) Path() string {
	var labels []string
	for n := d; n.parent != nil; n = n.parent {
		labels = append(labels, n.label())
	}
	slices.Reverse(labels)
	return strings.Join(labels, ">")
}

// Within reports whether the directive is inside block b, at any depth
// (a directive is not within itself).
func (d *Directive) Within(b *Directive) bool {
	for p := d.parent; p != nil; p = p.parent {
		if p == b {
			return true
		}
	}
	return false
}

// Enclosing returns the nearest block named name that holds the
// directive, or the directive itself when it is such a block (the server
// of a listen, of a location, or the server itself); nil when there is
// none.
func (d *Directive) Enclosing(name string) *Directive {
	for b := d; b != nil; b = b.parent {
		if b.block && b.name == name && b.parent != nil {
			return b
		}
	}
	return nil
}

// Descendants are the directives inside a block at any depth, in
// reading order: each block before the directives inside it. The walk
// keeps its own stack, so nesting as deep as the text allows stays off
// the goroutine stack.
func (d *Directive) Descendants() iter.Seq[*Directive] {
	return func(yield func(*Directive) bool) {
		d.walk(nil, yield)
	}
}

// walk yields the directives inside d in reading order, not entering the
// blocks skip says to leave out (their directive is yielded, not what is
// inside it).
func (d *Directive) walk(skip func(*Directive) bool, yield func(*Directive) bool) {
	stack := [][]*Directive{d.kids}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(*top) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		n := (*top)[0]
		*top = (*top)[1:]
		if !yield(n) {
			return
		}
		if len(n.kids) > 0 && (skip == nil || !skip(n)) {
			stack = append(stack, n.kids)
		}
	}
}

// Parse reads data as the main configuration file at path. With
// followIncludes, the files its include directives name are read as Load
// reads them; without, an include is a plain directive and no file is
// read (for fuzzing, or text that is not on disk).
func Parse(path string, data []byte, followIncludes bool) (*Config, error) {
	var read readFunc
	if followIncludes {
		read = readFile
	}
	return parse(path, data, read)
}

// Paths returns the paths of the files as they were read, the main path
// as given to Load and each include resolved against its directory, in
// the order nginx reads them: a file included twice is there twice.
// Files returns each file once, by absolute path.
func (c *Config) Paths() []string {
	out := make([]string, len(c.reads))
	for i, f := range c.reads {
		out[i] = f.path
	}
	return out
}

// Directives returns every directive of the configuration in the order
// nginx reads them (Main's Descendants): an include directive is
// followed by the directives of the files it names (in the block that
// holds the include), a block directive by those inside it. The slice is
// new; the directives are c's own.
func (c *Config) Directives() []*Directive {
	out := make([]*Directive, 0, c.count)
	c.root.walk(nil, func(d *Directive) bool {
		out = append(out, d)
		return true
	})
	return out
}
