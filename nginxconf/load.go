package nginxconf

import (
	"errors"
	"fmt"
	"github.com/stacktune/stacktune/input"
	"path/filepath"
	"slices"
	"strings"
)

// Config is an nginx configuration read with its includes, every
// directive with the byte offsets of its text, ready for Apply.
type Config struct {
	main  *file
	files []*file          // in the order first read
	reads []*file          // in the order read, once per read
	byAbs map[string]*file // by absolute path
	root  *Directive       // the main context
	count int              // directives
}

// file is one file of a configuration.
type file struct {
	path  string // as read: the main path, or the include resolved against the prefix
	abs   string
	data  []byte
	reads int // how many times includes read it (1 for most)
}

// Directive is one directive of a configuration, a simple one ending
// with ';' or a block, in its place in the tree: the one type stacktune
// reads nginx directives with. Its methods give its name, arguments, file
// and line, the block around it (Parent) and, for a block, the
// directives inside it (Children), those of included files in the place
// of their include. The main context is a Directive too (Config.Main): a
// block without a name or a parent. A Directive belongs to its Config and
// is read only; Effective gives the directives nginx applies in a block.
type Directive struct {
	name  string
	args  []string
	f     *file
	line  int
	start int // offset of the name
	end   int // offset after ';', or after '}' for a block
	block bool
	close int // offset of the block's '}'
	last  int // line of the ';' or the '}'
	// parent is the enclosing block (the root for a top-level
	// directive, nil for the root), kids the directives inside a block,
	// those of included files included, in order.
	parent *Directive
	kids   []*Directive
}

// label is the directive as a context names it: name and arguments.
func (n *Directive) label() string {
	if len(n.args) == 0 {
		return n.name
	}
	return n.name + " " + strings.Join(n.args, " ")
}

// pathIs reports whether the block's path, its labels from the top
// joined with '>' ("http>server>location /"), is want. It compares from
// the block up, without building the path or the labels (deep nesting
// stays linear).
func (n *Directive) pathIs(want string) bool {
	for ; n.parent != nil; n = n.parent {
		rest, ok := n.trimLabel(want)
		if !ok {
			return false
		}
		if n.parent.parent == nil {
			return rest == ""
		}
		if !strings.HasSuffix(rest, ">") {
			return false
		}
		want = rest[:len(rest)-1]
	}
	return false
}

// trimLabel removes the block's label from the end of s: ok is false
// when s does not end with it.
func (n *Directive) trimLabel(s string) (rest string, ok bool) {
	for i := len(n.args) - 1; i >= 0; i-- {
		if s, ok = strings.CutSuffix(s, n.args[i]); !ok {
			return "", false
		}
		if s, ok = strings.CutSuffix(s, " "); !ok {
			return "", false
		}
	}
	return strings.CutSuffix(s, n.name)
}

// Load reads the nginx configuration file mainPath and every file it
// includes. An include path that is not absolute is resolved against the
// directory of mainPath, nginx's prefix when it runs with -p DIR -c
// DIR/nginx.conf; globs are expanded in lexical order, skipping hidden
// files, and may match nothing; a plain path must exist. Only regular
// files are read (not a device, FIFO, socket or directory, also where a
// glob matches one), within the bounds MaxFileBytes, MaxTotalBytes,
// MaxBlockDepth, MaxIncludeDepth, MaxIncludeReads, MaxDirectives, MaxWords
// and MaxContextEntries. Errors name the file and line.
func Load(mainPath string) (*Config, error) {
	return load(mainPath, readFile)
}

// load is Load reading files with read.
func load(mainPath string, read readFunc) (*Config, error) {
	data, err := read(mainPath, MaxFileBytes)
	if err != nil {
		var tl *input.TooLargeError
		if errors.As(err, &tl) {
			return nil, fmt.Errorf("nginx configuration: %w, the most nginxconf reads of one file (MaxFileBytes)", err)
		}
		return nil, fmt.Errorf("nginx configuration: %w", err)
	}
	return parse(mainPath, data, read)
}

// parse reads data as the main file at path; includes are read with
// read, or are plain directives when read is nil.
func parse(path string, data []byte, read readFunc) (*Config, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than %s, the most nginxconf reads of one file (MaxFileBytes)", path, len(data), input.SizeText(MaxFileBytes))
	}
	c := &Config{byAbs: map[string]*file{}}
	c.root = &Directive{block: true, close: -1}
	p := &parser{c: c, root: filepath.Dir(path), read: read, total: int64(len(data))}
	f, err := c.addFile(path, data)
	if err != nil {
		return nil, err
	}
	c.main = f
	c.root.f = f
	if err := p.parseFile(f, c.root, 0, 0); err != nil {
		return nil, err
	}
	c.count = p.count
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

// parser reads the files of one configuration and keeps the counts the
// bounds limit.
type parser struct {
	c        *Config
	root     string
	read     readFunc // nil: do not follow includes
	total    int64    // bytes parsed, a file each time it is read
	includes int      // files include directives read
	count    int      // directives
	words    int      // directive names and arguments
	entries  int      // Directives' context entries: a block's depth once it holds a directive
}

// parseFile reads the directives of f into the block parent, which is
// base blocks deep, f being included depth includes deep.
func (p *parser) parseFile(f *file, parent *Directive, depth, base int) error {
	p.c.reads = append(p.c.reads, f)
	lx := &lexer{data: f.data, file: f.path, line: 1}
	stack := []*Directive{parent}
	// The directive being read: its name, and its arguments.
	var name token
	var args []string
	have := false
	add := func(end token, block bool) (*Directive, error) {
		top := stack[len(stack)-1]
		if p.count >= MaxDirectives {
			return nil, fmt.Errorf("%s:%d: more than %d directives in all (MaxDirectives)", f.path, name.line, MaxDirectives)
		}
		if len(top.kids) == 0 {
			// The block now holds a directive: Directives lists its
			// path, as many entries as it is deep.
			p.entries += base + len(stack) - 1
			if p.entries > MaxContextEntries {
				return nil, fmt.Errorf("%s:%d: the block paths of the configuration would have more than %d entries in all (MaxContextEntries: many blocks nested deep)", f.path, name.line, MaxContextEntries)
			}
		}
		p.count++
		n := &Directive{name: name.text, f: f, line: name.line, start: name.start, end: end.end, block: block, last: end.line, parent: top}
		switch {
		case cap(args) > 1024:
			// A long list is the directive's own (no second copy); the next
			// directive starts a new one.
			n.args, args = slices.Clip(args), nil
		case len(args) > 0:
			n.args = slices.Clone(args)
		}
		top.kids = append(top.kids, n)
		have, args = false, args[:0]
		return n, nil
	}
	for {
		t, err := lx.next()
		if err != nil {
			return err
		}
		switch t.kind {
		case tokEOF:
			if have || len(stack) > 1 {
				return fmt.Errorf("%s:%d: unexpected end of file, expecting \";\" or \"}\"", f.path, t.line)
			}
			return nil
		case tokWord:
			if p.words++; p.words > MaxWords {
				return fmt.Errorf("%s:%d: more than %d words in all (MaxWords)", f.path, t.line, MaxWords)
			}
			if !have {
				name, have = t, true
			} else {
				args = append(args, t.text)
			}
		case ';':
			if !have {
				return fmt.Errorf("%s:%d: unexpected \";\"", f.path, t.line)
			}
			n, err := add(t, false)
			if err != nil {
				return err
			}
			if n.name == "include" && p.read != nil {
				if len(n.args) != 1 {
					return fmt.Errorf("%s:%d: invalid number of arguments in \"include\" directive", f.path, n.line)
				}
				if err := p.include(f, n, stack[len(stack)-1], depth, base+len(stack)-1); err != nil {
					return err
				}
			}
		case '{':
			if !have {
				return fmt.Errorf("%s:%d: unexpected \"{\"", f.path, t.line)
			}
			if base+len(stack) > MaxBlockDepth {
				return fmt.Errorf("%s:%d: blocks nested more than %d deep (MaxBlockDepth)", f.path, t.line, MaxBlockDepth)
			}
			n, err := add(t, true)
			if err != nil {
				return err
			}
			stack = append(stack, n)
		case '}':
			if have || len(stack) == 1 {
				return fmt.Errorf("%s:%d: unexpected \"}\"", f.path, t.line)
			}
			b := stack[len(stack)-1]
			b.close, b.end, b.last = t.start, t.end, t.line
			stack = stack[:len(stack)-1]
		}
	}
}

// include reads the files an include directive n of f names into parent,
// which is base blocks deep, f being depth includes deep.
func (p *parser) include(f *file, n, parent *Directive, depth, base int) error {
	pattern := n.args[0]
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s:%d: include %s: %s", f.path, n.line, pattern, fmt.Sprintf(format, a...))
	}
	if depth >= MaxIncludeDepth {
		return fail("includes nested deeper than %d (MaxIncludeDepth; a cycle?)", MaxIncludeDepth)
	}
	full := pattern
	if !filepath.IsAbs(full) {
		full = filepath.Join(p.root, full)
	}
	matches := []string{full}
	if hasMeta(pattern) {
		var err error
		if matches, err = glob(full, MaxIncludeReads); err != nil {
			if errors.Is(err, errTooManyMatches) {
				return fail("matches more than %d files (MaxIncludeReads)", MaxIncludeReads)
			}
			return fail("%v", err)
		}
	}
	hiddenOK := strings.HasPrefix(filepath.Base(full), ".")
	for _, m := range matches {
		if !hiddenOK && strings.HasPrefix(filepath.Base(m), ".") {
			continue
		}
		if p.includes++; p.includes > MaxIncludeReads {
			return fail("more than %d files read by includes in all (MaxIncludeReads; a file included N times counts N times)", MaxIncludeReads)
		}
		left := MaxTotalBytes - p.total
		var data []byte
		if abs, err := filepath.Abs(m); err == nil && p.c.byAbs[abs] != nil {
			// Read before: the same text again.
			data = p.c.byAbs[abs].data
		} else {
			var err error
			if data, err = p.read(m, min(MaxFileBytes, left)); err != nil {
				var tl *input.TooLargeError
				if errors.As(err, &tl) && tl.Limit < MaxFileBytes {
					return fail("%s: the configuration would be larger than %s in all, the most nginxconf reads (MaxTotalBytes; %s read before it)", m, input.SizeText(MaxTotalBytes), input.SizeText(p.total))
				}
				if tl != nil {
					return fail("%v, the most nginxconf reads of one file (MaxFileBytes)", err)
				}
				return fail("%v", err)
			}
		}
		if int64(len(data)) > left {
			return fail("%s: the configuration would be larger than %s in all, the most nginxconf reads (MaxTotalBytes; %s read before it)", m, input.SizeText(MaxTotalBytes), input.SizeText(p.total))
		}
		if len(data) > MaxFileBytes {
			return fail("%s is larger than %s, the most nginxconf reads of one file (MaxFileBytes)", m, input.SizeText(MaxFileBytes))
		}
		p.total += int64(len(data))
		inc, err := p.c.addFile(m, data)
		if err != nil {
			return err
		}
		if err := p.parseFile(inc, parent, depth+1, base); err != nil {
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
