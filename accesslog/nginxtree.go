package accesslog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// NginxDirective is one directive of an nginx configuration, as read by
// ReadNginxConfig.
type NginxDirective struct {
	// Name is the directive's name: "listen", "server", "include".
	Name string
	// Args are its arguments, unquoted and unescaped as nginx does.
	Args []string
	// Block is true when the directive opens a block ("http", "server",
	// "location /api"); the directives inside it follow it in the list.
	Block bool
	// Parent is the index of the enclosing block directive in
	// NginxConfig.Directives, or -1 at the top level.
	Parent int
	// Context names the enclosing blocks, outermost first, each as its name
	// and arguments joined by spaces: ["http", "server", "location /api"].
	// It is empty at the top level.
	Context []string
	// File and Line are where the directive's name is.
	File string
	Line int
}

// NginxConfig is an nginx configuration with its includes expanded.
type NginxConfig struct {
	// Files are the files read, the main one first, then in the order they
	// were included.
	Files []string
	// Directives are every directive in the order nginx reads them: an
	// include directive is followed by the directives of the files it
	// names, a block directive by those inside it.
	Directives []NginxDirective
}

// ReadNginxConfig reads the nginx configuration file confPath and the
// files it includes into a flat list of directives, following the syntax
// and include rules described at NginxFormatFromConfig (includes relative to
// the directory of confPath, globs in lexical order skipping hidden files).
// It checks syntax only, not whether nginx knows a directive or accepts its
// arguments. Errors name the file and line.
func ReadNginxConfig(confPath string) (*NginxConfig, error) {
	data, err := os.ReadFile(confPath)
	if err != nil {
		return nil, fmt.Errorf("nginx configuration: %w", err)
	}
	return readNginxConfig(confPath, data, true)
}

// readNginxConfig reads data as the file path; includes are followed
// unless follow is false (fuzzing).
func readNginxConfig(path string, data []byte, follow bool) (*NginxConfig, error) {
	t := &treeReader{root: filepath.Dir(path), conf: &NginxConfig{}, noInclude: !follow}
	if err := t.parse(path, data, -1, nil, 0); err != nil {
		return nil, err
	}
	return t.conf, nil
}

type treeReader struct {
	root      string
	conf      *NginxConfig
	noInclude bool
}

// parse reads one file whose directives are inside the block at index
// parent (-1: top level) whose context is ctx.
func (t *treeReader) parse(path string, data []byte, parent int, ctx []string, depth int) error {
	t.conf.Files = append(t.conf.Files, path)
	lx := &confLexer{data: data, file: path, line: 1}
	type open struct {
		index int
		ctx   []string
	}
	stack := []open{{parent, ctx}}
	var args []confToken
	add := func(block bool) {
		top := stack[len(stack)-1]
		d := NginxDirective{
			Name:    args[0].text,
			Args:    make([]string, 0, len(args)-1),
			Block:   block,
			Parent:  top.index,
			Context: top.ctx,
			File:    path,
			Line:    args[0].line,
		}
		for _, a := range args[1:] {
			d.Args = append(d.Args, a.text)
		}
		t.conf.Directives = append(t.conf.Directives, d)
	}
	for {
		tok, kind, err := lx.next()
		if err != nil {
			return err
		}
		switch kind {
		case tokEOF:
			if len(args) > 0 || len(stack) > 1 {
				return fmt.Errorf("%s:%d: unexpected end of file, expecting \";\" or \"}\"", path, lx.line)
			}
			return nil
		case tokWord:
			args = append(args, tok)
		case ';':
			if len(args) == 0 {
				return fmt.Errorf("%s:%d: unexpected \";\"", path, tok.line)
			}
			add(false)
			if args[0].text == "include" && !t.noInclude {
				if len(args) != 2 {
					return fmt.Errorf("%s:%d: invalid number of arguments in \"include\" directive", path, args[0].line)
				}
				top := stack[len(stack)-1]
				if err := t.include(path, args[0].line, args[1].text, top.index, top.ctx, depth); err != nil {
					return err
				}
			}
			args = args[:0]
		case '{':
			if len(args) == 0 {
				return fmt.Errorf("%s:%d: unexpected \"{\"", path, tok.line)
			}
			add(true)
			name := args[0].text
			for _, a := range args[1:] {
				name += " " + a.text
			}
			top := stack[len(stack)-1]
			inner := append(append(make([]string, 0, len(top.ctx)+1), top.ctx...), name)
			stack = append(stack, open{len(t.conf.Directives) - 1, inner})
			args = args[:0]
		case '}':
			if len(args) > 0 || len(stack) == 1 {
				return fmt.Errorf("%s:%d: unexpected \"}\"", path, tok.line)
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// include reads the files an include directive names, as
// confReader.include does.
func (t *treeReader) include(path string, line int, pattern string, parent int, ctx []string, depth int) error {
	if depth >= maxIncludeDepth {
		return fmt.Errorf("%s:%d: include %s: includes nested deeper than %d (a cycle?)", path, line, pattern, maxIncludeDepth)
	}
	full := pattern
	if !filepath.IsAbs(full) {
		full = filepath.Join(t.root, full)
	}
	matches := []string{full}
	globbed := strings.ContainsAny(pattern, "*?[")
	if globbed {
		var err error
		if matches, err = filepath.Glob(full); err != nil {
			return fmt.Errorf("%s:%d: include %s: %w", path, line, pattern, err)
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
		data, err := os.ReadFile(m)
		if err != nil {
			return fmt.Errorf("%s:%d: include %s: %w", path, line, pattern, err)
		}
		if err := t.parse(m, data, parent, ctx, depth+1); err != nil {
			return err
		}
	}
	return nil
}
