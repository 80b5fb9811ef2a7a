package nginxconf

// Directive is one directive of a configuration in the flat form
// Directives returns.
type Directive struct {
	// Name is the directive's name: "listen", "server", "include".
	Name string
	// Args are its arguments, unquoted and unescaped as nginx does.
	Args []string
	// Block is true when the directive opens a block ("http", "server",
	// "location /api"); the directives inside it follow it in the list.
	Block bool
	// Parent is the index of the enclosing block directive in the list,
	// or -1 at the top level.
	Parent int
	// Context names the enclosing blocks, outermost first, each as its name
	// and arguments joined by spaces: ["http", "server", "location /api"].
	// It is empty at the top level.
	Context []string
	// File and Line are where the directive's name is: the path the file
	// was read from (see Paths) and the line, from 1.
	File string
	Line int
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

// Directives returns every directive in the order nginx reads them: an
// include directive is followed by the directives of the files it names
// (in the block that holds the include), a block directive by those
// inside it. The slices are new; changing them changes nothing in c.
// Directives in one block share one Context slice (capped at its length,
// so appending to it copies), and the work and memory are linear in the
// directives: one Context per block that holds directives, as long as the
// block is deep (MaxBlockDepth, MaxContextEntries).
func (c *Config) Directives() []Directive {
	// Count first, to allocate each list once: the directives, their
	// arguments, and the context entries.
	nodes, args, entries := 0, 0, 0
	type count struct {
		kids  []*node
		depth int
	}
	walk := []count{{c.root.kids, 0}}
	for len(walk) > 0 {
		top := &walk[len(walk)-1]
		if len(top.kids) == 0 {
			walk = walk[:len(walk)-1]
			continue
		}
		n := top.kids[0]
		top.kids = top.kids[1:]
		nodes++
		args += len(n.args)
		if n.block && len(n.kids) > 0 {
			entries += top.depth + 1
			walk = append(walk, count{n.kids, top.depth + 1})
		}
	}
	out := make([]Directive, 0, nodes)
	argList := make([]string, 0, args)
	ctxList := make([]string, 0, entries)
	type level struct {
		kids   []*node // the directives of the block not yet listed
		parent int     // the block's index in out, -1 for the top level
		ctx    []string
	}
	// An explicit stack: nesting as deep as the text allows stays off
	// the goroutine stack.
	stack := []level{{c.root.kids, -1, nil}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(top.kids) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		n := top.kids[0]
		top.kids = top.kids[1:]
		parent, ctx := top.parent, top.ctx
		a := len(argList)
		argList = append(argList, n.args...)
		out = append(out, Directive{
			Name:    n.name,
			Args:    argList[a:len(argList):len(argList)],
			Block:   n.block,
			Parent:  parent,
			Context: ctx,
			File:    n.f.path,
			Line:    n.line,
		})
		if n.block && len(n.kids) > 0 {
			// The path of the block's directives: the block's own
			// path and its label, once for all of them.
			i := len(ctxList)
			ctxList = append(ctxList, ctx...)
			ctxList = append(ctxList, n.label())
			inner := ctxList[i:len(ctxList):len(ctxList)]
			stack = append(stack, level{n.kids, len(out) - 1, inner})
		}
	}
	return out
}
