package nginxconf

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Listing is a configuration's directives as a snapshot lists them
// (package collect's Nginx.Directives): Directives, the one directive
// type, in reading order, the entries of types {} blocks (MIME types,
// usually from mime.types) left out and the types directive kept.
//
// A Listing is detached from its files: its Directives keep their name,
// arguments, file, line and place in the tree (Parent, Children, Path,
// Within, Enclosing answer as in the Config), not the text or the
// offsets Apply needs. Its top-level directives share a main context of
// their own.
//
// As JSON it is an array of {"name", "args", "context", "file", "line",
// "block", "parent"}: context is the Path of the directive's block ("" at
// the top level, "http>server>location /api"), parent the index of that
// block in the array (-1 at the top level), which tells two servers with
// one context apart. Read back, the array is a tree again, built from
// the parents (the contexts are derived, not read); a parent that is not
// an earlier block is an error.
type Listing []*Directive

// Listing lists the configuration's directives (see Listing).
func (c *Config) Listing() Listing {
	b := newListingBuilder(c.main.path)
	index := map[*Directive]int{c.root: -1} // the blocks listed
	c.root.walk(func(d *Directive) bool { return d.name == "types" }, func(d *Directive) bool {
		parent, ok := index[d.parent]
		if !ok {
			return true // inside a types {} block
		}
		if d.block {
			index[d] = len(b.out)
		}
		b.add(d.name, d.args, d.f.path, d.line, d.block, parent) // parent is listed: no error
		return true
	})
	return b.out
}

// listingBuilder builds a detached tree entry by entry.
type listingBuilder struct {
	root  *Directive
	files map[string]*file
	out   Listing
}

func newListingBuilder(mainPath string) *listingBuilder {
	f := &file{path: mainPath}
	return &listingBuilder{root: &Directive{block: true, f: f}, files: map[string]*file{mainPath: f}}
}

// add appends a directive inside the block at index parent of the
// listing (-1: the top level).
func (b *listingBuilder) add(name string, args []string, path string, line int, block bool, parent int) error {
	p := b.root
	if parent >= 0 {
		if parent >= len(b.out) || !b.out[parent].block {
			return fmt.Errorf("parent %d is not a block listed before it", parent)
		}
		p = b.out[parent]
	} else if parent != -1 {
		return fmt.Errorf("parent %d is not an index", parent)
	}
	f := b.files[path]
	if f == nil {
		f = &file{path: path}
		b.files[path] = f
	}
	d := &Directive{name: name, args: args, f: f, line: line, block: block, parent: p}
	p.kids = append(p.kids, d)
	b.out = append(b.out, d)
	return nil
}

// listed is a Listing's entry as JSON.
type listed struct {
	Name    string   `json:"name"`
	Args    []string `json:"args"`
	Context string   `json:"context"`
	File    string   `json:"file"`
	Line    int      `json:"line"`
	Block   bool     `json:"block,omitempty"`
	Parent  int      `json:"parent"`
}

// MarshalJSON writes the listing as the array described at Listing.
// Every directive's block must be listed before it, or be a main
// context (of any Config: a directive appended from another
// configuration's top level is at the top level).
func (l Listing) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("null"), nil
	}
	out := make([]listed, len(l))
	index := map[*Directive]int{}
	// Directives of one block share its context: joined once per block,
	// so deep configurations cost memory per block, not per directive.
	contexts := map[*Directive]string{}
	for i, d := range l {
		parent := -1
		if b := d.parent; b != nil && b.parent != nil {
			j, ok := index[b]
			if !ok {
				return nil, fmt.Errorf("nginxconf: listing entry %d (%s at %s:%d): its block is not listed before it", i, d.name, d.File(), d.line)
			}
			parent = j
		}
		ctx := ""
		if d.parent != nil {
			var ok bool
			if ctx, ok = contexts[d.parent]; !ok {
				ctx = d.parent.Path()
				contexts[d.parent] = ctx
			}
		}
		if d.block {
			index[d] = i
		}
		args := d.args
		if args == nil {
			args = []string{}
		}
		out[i] = listed{Name: d.name, Args: args, Context: ctx, File: d.File(), Line: d.line, Block: d.block, Parent: parent}
	}
	// HTML characters are left as they are: the encoder that called this
	// escapes them if it escapes HTML.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads the array described at Listing back into a tree.
func (l *Listing) UnmarshalJSON(data []byte) error {
	var in []listed
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	if in == nil {
		*l = nil
		return nil
	}
	main := ""
	if len(in) > 0 {
		main = in[0].File
	}
	b := newListingBuilder(main)
	for i, e := range in {
		if err := b.add(e.Name, e.Args, e.File, e.Line, e.Block, e.Parent); err != nil {
			return fmt.Errorf("nginx directive %d (%s): %w", i, e.Name, err)
		}
	}
	*l = b.out
	return nil
}
