package nginxconf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxIncludeDepth bounds include nesting, so a file including itself ends
// with an error instead of recursing forever.
const maxIncludeDepth = 32

// Config is an nginx configuration read with its includes, every
// directive with the byte offsets of its text, ready for Apply.
type Config struct {
	main  *file
	files []*file          // in the order first read
	reads []*file          // in the order read, once per read
	byAbs map[string]*file // by absolute path
	root  *node            // the main context
}

// file is one file of a configuration.
type file struct {
	path  string // as read: the main path, or the include resolved against the prefix
	abs   string
	data  []byte
	reads int // how many times includes read it (1 for most)
}

// node is a directive: a simple one ending with ';' or a block.
type node struct {
	name  string
	args  []string
	f     *file
	line  int
	start int // offset of the name
	end   int // offset after ';', or after '}' for a block
	block bool
	close int // offset of the block's '}'
	last  int // line of the ';' or the '}'
	// parent is the enclosing block (the root for the main context),
	// kids the directives inside a block, those of included files
	// included, in order.
	parent *node
	kids   []*node
}

// label is the block as the collector names it: name and arguments.
func (n *node) label() string {
	if len(n.args) == 0 {
		return n.name
	}
	return n.name + " " + strings.Join(n.args, " ")
}

// pathIs reports whether the block's path, its labels from the top
// joined with '>' ("http>server>location /"), is want. It compares from
// the block up, without building the path (deep nesting stays linear).
func (n *node) pathIs(want string) bool {
	for ; n.parent != nil; n = n.parent {
		l := n.label()
		if n.parent.parent == nil {
			return want == l
		}
		if !strings.HasSuffix(want, ">"+l) {
			return false
		}
		want = want[:len(want)-len(l)-1]
	}
	return false
}

// Load reads the nginx configuration file mainPath and every file it
// includes. An include path that is not absolute is resolved against the
// directory of mainPath, nginx's prefix when it runs with -p DIR -c
// DIR/nginx.conf; globs are expanded in lexical order, skipping hidden
// files, and may match nothing; a plain path must exist. Errors name the
// file and line.
func Load(mainPath string) (*Config, error) {
	return load(mainPath, os.ReadFile)
}

// load is Load reading files with read.
func load(mainPath string, read func(string) ([]byte, error)) (*Config, error) {
	data, err := read(mainPath)
	if err != nil {
		return nil, fmt.Errorf("nginx configuration: %w", err)
	}
	return parse(mainPath, data, read)
}

// parse reads data as the main file at path; includes are read with
// read, or are plain directives when read is nil.
func parse(path string, data []byte, read func(string) ([]byte, error)) (*Config, error) {
	c := &Config{byAbs: map[string]*file{}}
	c.root = &node{block: true, close: -1}
	p := &parser{c: c, root: filepath.Dir(path), read: read}
	f, err := c.addFile(path, data)
	if err != nil {
		return nil, err
	}
	c.main = f
	c.root.f = f
	if err := p.parseFile(f, c.root, 0); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) addFile(path string, data []byte) (*file, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("nginx configuration: %w", err)
	}
	if f := c.byAbs[abs]; f != nil {
		f.reads++
		return f, nil
	}
	f := &file{path: path, abs: abs, data: data, reads: 1}
	c.byAbs[abs] = f
	c.files = append(c.files, f)
	return f, nil
}

// Files returns the absolute paths of the files read, the main one
// first, then in the order they were first included.
func (c *Config) Files() []string {
	out := make([]string, len(c.files))
	for i, f := range c.files {
		out[i] = f.abs
	}
	return out
}

type parser struct {
	c    *Config
	root string
	read func(string) ([]byte, error) // nil: do not follow includes
}

// parseFile reads the directives of f into the block parent.
func (p *parser) parseFile(f *file, parent *node, depth int) error {
	p.c.reads = append(p.c.reads, f)
	lx := &lexer{data: f.data, file: f.path, line: 1}
	stack := []*node{parent}
	var args []token
	add := func(end token, block bool) *node {
		top := stack[len(stack)-1]
		n := &node{name: args[0].text, f: f, line: args[0].line, start: args[0].start, end: end.end, block: block, last: end.line, parent: top}
		for _, a := range args[1:] {
			n.args = append(n.args, a.text)
		}
		top.kids = append(top.kids, n)
		return n
	}
	for {
		t, err := lx.next()
		if err != nil {
			return err
		}
		switch t.kind {
		case tokEOF:
			if len(args) > 0 || len(stack) > 1 {
				return fmt.Errorf("%s:%d: unexpected end of file, expecting \";\" or \"}\"", f.path, t.line)
			}
			return nil
		case tokWord:
			args = append(args, t)
		case ';':
			if len(args) == 0 {
				return fmt.Errorf("%s:%d: unexpected \";\"", f.path, t.line)
			}
			n := add(t, false)
			if n.name == "include" && p.read != nil {
				if len(n.args) != 1 {
					return fmt.Errorf("%s:%d: invalid number of arguments in \"include\" directive", f.path, n.line)
				}
				if err := p.include(f, n, stack[len(stack)-1], depth); err != nil {
					return err
				}
			}
			args = args[:0]
		case '{':
			if len(args) == 0 {
				return fmt.Errorf("%s:%d: unexpected \"{\"", f.path, t.line)
			}
			stack = append(stack, add(t, true))
			args = args[:0]
		case '}':
			if len(args) > 0 || len(stack) == 1 {
				return fmt.Errorf("%s:%d: unexpected \"}\"", f.path, t.line)
			}
			b := stack[len(stack)-1]
			b.close, b.end, b.last = t.start, t.end, t.line
			stack = stack[:len(stack)-1]
		}
	}
}

// include reads the files an include directive names into parent.
func (p *parser) include(f *file, n, parent *node, depth int) error {
	pattern := n.args[0]
	if depth >= maxIncludeDepth {
		return fmt.Errorf("%s:%d: include %s: includes nested deeper than %d (a cycle?)", f.path, n.line, pattern, maxIncludeDepth)
	}
	full := pattern
	if !filepath.IsAbs(full) {
		full = filepath.Join(p.root, full)
	}
	matches := []string{full}
	globbed := strings.ContainsAny(pattern, "*?[")
	if globbed {
		var err error
		if matches, err = filepath.Glob(full); err != nil {
			return fmt.Errorf("%s:%d: include %s: %w", f.path, n.line, pattern, err)
		}
	}
	hiddenOK := strings.HasPrefix(filepath.Base(full), ".")
	for _, m := range matches {
		if !hiddenOK && strings.HasPrefix(filepath.Base(m), ".") {
			continue
		}
		if fi, err := os.Stat(m); err == nil && fi.IsDir() && globbed {
			continue
		}
		data, err := p.read(m)
		if err != nil {
			return fmt.Errorf("%s:%d: include %s: %w", f.path, n.line, pattern, err)
		}
		inc, err := p.c.addFile(m, data)
		if err != nil {
			return err
		}
		if err := p.parseFile(inc, parent, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// Content is a file of the configuration as it was read (nil when it is
// not one of its files), by absolute path.
func (c *Config) Content(abs string) []byte {
	if f := c.byAbs[abs]; f != nil {
		return f.data
	}
	return nil
}
