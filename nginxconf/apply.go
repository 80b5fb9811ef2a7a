package nginxconf

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// targetKind is what an edit's context names.
type targetKind int

const (
	targetMain targetKind = iota
	targetEvents
	targetHTTP
	targetUpstream
	targetPath
)

// target is a parsed edit context.
type target struct {
	kind targetKind
	name string // upstream name, or the block path
	file string // FILE of "(FILE:LINE)", "" without one
	line int
}

// parseTarget reads an advise target: "nginx main context (top of
// nginx.conf)", "nginx events {}", "nginx http {}", "nginx upstream NAME
// {} (FILE:LINE)", "nginx http>server>location / (FILE:LINE)".
func parseTarget(s string) (target, error) {
	var t target
	rest := strings.TrimSpace(s)
	rest = strings.TrimSpace(strings.TrimPrefix(rest, "nginx "))
	if strings.HasSuffix(rest, ")") {
		if i := strings.LastIndex(rest, " ("); i >= 0 {
			inner := rest[i+2 : len(rest)-1]
			if j := strings.LastIndexByte(inner, ':'); j > 0 {
				if n, err := strconv.Atoi(inner[j+1:]); err == nil && n > 0 {
					t.file, t.line = inner[:j], n
					rest = strings.TrimSpace(rest[:i])
				}
			}
		}
	}
	rest = strings.Join(strings.Fields(rest), " ")
	switch {
	case rest == "main" || strings.HasPrefix(rest, "main context"):
		t.kind = targetMain
	case rest == "events" || rest == "events {}":
		t.kind = targetEvents
	case rest == "http" || rest == "http {}":
		t.kind = targetHTTP
	case strings.HasPrefix(rest, "upstream "):
		name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(rest, "upstream "), "{}"))
		if name == "" || strings.Contains(name, " ") || strings.Contains(name, ">") {
			return t, fmt.Errorf("context %q: not an upstream name", s)
		}
		t.kind, t.name = targetUpstream, name
	default:
		t.kind, t.name = targetPath, strings.TrimSpace(strings.TrimSuffix(rest, "{}"))
		if t.name == "" {
			return t, fmt.Errorf("context %q names no block", s)
		}
	}
	return t, nil
}

// samePath reports whether the path a target names is the file f.
func samePath(name string, f *file) bool {
	if filepath.Clean(name) == filepath.Clean(f.path) {
		return true
	}
	if abs, err := filepath.Abs(name); err == nil && abs == f.abs {
		return true
	}
	a, errA := os.Stat(name)
	b, errB := os.Stat(f.abs)
	return errA == nil && errB == nil && os.SameFile(a, b)
}

// blocks returns every block directive, depth first.
func (c *Config) blocks() []*Directive {
	var out []*Directive
	var walk func(n *Directive)
	walk = func(n *Directive) {
		for _, k := range n.kids {
			if k.block {
				out = append(out, k)
				walk(k)
			}
		}
	}
	walk(c.root)
	return out
}

// resolve finds the block an edit context names.
func (c *Config) resolve(context string) (*Directive, error) {
	t, err := parseTarget(context)
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case targetMain:
		return c.root, nil
	case targetEvents, targetHTTP:
		name := "events"
		if t.kind == targetHTTP {
			name = "http"
		}
		for _, k := range c.root.kids {
			if k.block && k.name == name {
				return k, nil
			}
		}
		return nil, fmt.Errorf("context %q: the configuration has no %s block", context, name)
	case targetUpstream:
		var found []*Directive
		for _, b := range c.blocks() {
			if b.name == "upstream" && len(b.args) == 1 && b.args[0] == t.name {
				found = append(found, b)
			}
		}
		if len(found) > 1 && t.file != "" {
			for _, b := range found {
				if b.line == t.line && samePath(t.file, b.f) {
					return b, nil
				}
			}
		}
		switch len(found) {
		case 0:
			return nil, fmt.Errorf("context %q: no upstream %s {} in the configuration", context, t.name)
		case 1:
			return found[0], nil
		}
		return nil, fmt.Errorf("context %q: %d upstream blocks named %s", context, len(found), t.name)
	}
	var cands []*Directive
	for _, b := range c.blocks() {
		if b.pathIs(t.name) {
			cands = append(cands, b)
		}
	}
	if t.file != "" {
		// The block that starts on that line, or holds the directive
		// there (a listen or access_log the audit points at).
		for _, b := range cands {
			if b.line == t.line && samePath(t.file, b.f) {
				return b, nil
			}
		}
		for _, b := range cands {
			for _, k := range b.kids {
				if k.line == t.line && samePath(t.file, k.f) {
					return b, nil
				}
			}
		}
		// The line moved (an earlier edit added or removed lines): the
		// block of that path in that file that spans the line, else the
		// one starting nearest to it.
		var inFile []*Directive
		for _, b := range cands {
			if samePath(t.file, b.f) {
				inFile = append(inFile, b)
			}
		}
		var spanning *Directive
		for _, b := range inFile {
			if b.line <= t.line && t.line <= b.last {
				spanning = b // blocks are depth first: the innermost wins
			}
		}
		if spanning != nil {
			return spanning, nil
		}
		var nearest *Directive
		tie := false
		dist := func(b *Directive) int { return max(b.line-t.line, t.line-b.line) }
		for _, b := range inFile {
			switch {
			case nearest == nil || dist(b) < dist(nearest):
				nearest, tie = b, false
			case dist(b) == dist(nearest):
				tie = true
			}
		}
		if nearest != nil && !tie {
			return nearest, nil
		}
		if len(inFile) > 1 {
			return nil, fmt.Errorf("context %q: %d blocks %s in %s, none at line %d and two as near", context, len(inFile), t.name, t.file, t.line)
		}
	}
	switch len(cands) {
	case 0:
		return nil, fmt.Errorf("context %q: no block %s in the configuration", context, t.name)
	case 1:
		return cands[0], nil
	}
	return nil, fmt.Errorf("context %q: %d blocks %s in the configuration; name the file and line", context, len(cands), t.name)
}

// firstArgIdentity are the directives that may repeat in a block with
// different first arguments: one replaces only the one with the same
// first argument (header names compare case-insensitively).
var firstArgIdentity = map[string]bool{
	"proxy_set_header": true, "add_header": true, "add_trailer": true, "grpc_set_header": true,
	"proxy_hide_header": true, "proxy_pass_header": true, "more_set_headers": true,
	"fastcgi_param": true, "uwsgi_param": true, "scgi_param": true,
	"set": true, "log_format": true, "map": true, "geo": true, "split_clients": true,
	"limit_req_zone": true, "limit_conn_zone": true, "proxy_cache_path": true, "fastcgi_cache_path": true,
	"env": true, "load_module": true, "include": true, "sub_filter": true, "error_page": true,
}

var caseInsensitive = map[string]bool{
	"proxy_set_header": true, "add_header": true, "add_trailer": true, "grpc_set_header": true,
	"proxy_hide_header": true, "proxy_pass_header": true, "more_set_headers": true,
}

// identity is what makes two directives of a name the same one: "" for
// most (one per block), the first argument for those that repeat, the
// address and port for listen.
func identity(name string, args []string) string {
	if len(args) == 0 {
		return ""
	}
	switch {
	case name == "listen":
		return listenKey(args[0])
	case name == "env":
		k, _, _ := strings.Cut(args[0], "=")
		return k
	case name == "limit_req_zone" || name == "limit_conn_zone" || name == "proxy_cache_path" || name == "fastcgi_cache_path":
		for _, a := range args {
			if z, ok := strings.CutPrefix(a, "keys_zone="); ok {
				z, _, _ = strings.Cut(z, ":")
				return z
			}
			if z, ok := strings.CutPrefix(a, "zone="); ok {
				z, _, _ = strings.Cut(z, ":")
				return z
			}
		}
		return args[0]
	case caseInsensitive[name]:
		return strings.ToLower(args[0])
	case firstArgIdentity[name]:
		return args[0]
	}
	return ""
}

// op replaces data[start:end] of a file with text (an insertion when
// start == end). seq keeps insertions at one offset in edit order.
type op struct {
	start, end int
	text       string
	seq        int
	why        string
}

// Apply puts each edit's directive in the context it names and returns
// the new content of every file that changes, by absolute path. It
// changes all or nothing: a context that names no block, an edit that is
// not a directive, or a change to a file the configuration includes more
// than once is an error and no file is returned. The Config itself is not
// modified; Load the result again to apply more. The semantics are in the
// package comment.
func (c *Config) Apply(edits []Edit) (map[string][]byte, error) {
	type group struct {
		block *Directive
		name  string
		id    string
		lines []string
		ctx   string
	}
	var groups []*group
	byKey := map[string]*group{}
	blockID := map[*Directive]int{}
	for _, e := range edits {
		if err := e.Check(); err != nil {
			return nil, fmt.Errorf("edit in %q: %w", e.Context, err)
		}
		b, err := c.resolve(e.Context)
		if err != nil {
			return nil, err
		}
		args, _ := words(e.Args)
		id := identity(e.Name, args)
		if _, ok := blockID[b]; !ok {
			blockID[b] = len(blockID)
		}
		key := fmt.Sprintf("%d\x00%s\x00%s", blockID[b], e.Name, id)
		g := byKey[key]
		if g == nil {
			g = &group{block: b, name: e.Name, id: id, ctx: e.Context}
			byKey[key] = g
			groups = append(groups, g)
		}
		line := e.String()
		dup := false
		for _, l := range g.lines {
			dup = dup || l == line
		}
		if !dup {
			g.lines = append(g.lines, line)
		}
	}
	ops := map[*file][]op{}
	seq := 0
	add := func(f *file, o op) {
		seq++
		o.seq = seq
		ops[f] = append(ops[f], o)
	}
	for _, g := range groups {
		var existing []*Directive
		for _, k := range g.block.kids {
			if k.name == g.name && !k.block && identity(k.name, k.args) == g.id {
				existing = append(existing, k)
			}
		}
		if len(existing) == 0 {
			f, pos, indent, inline := c.insertPoint(g.block)
			if defineFirst[g.name] {
				f, pos, indent, inline = c.firstPoint(g.block)
			}
			for _, l := range g.lines {
				add(f, insertText(f, pos, indent, inline, l, g.ctx))
			}
			continue
		}
		first := existing[0]
		add(first.f, op{start: first.start, end: first.end, text: g.lines[0], why: g.ctx})
		if len(g.lines) > 1 {
			pos, indent, inline := after(first)
			for _, l := range g.lines[1:] {
				add(first.f, insertText(first.f, pos, indent, inline, l, g.ctx))
			}
		}
		for _, k := range existing[1:] {
			s, e := deletion(k)
			add(k.f, op{start: s, end: e, why: g.ctx})
		}
	}
	out := map[string][]byte{}
	for _, f := range c.files {
		list := ops[f]
		if len(list) == 0 {
			continue
		}
		if f.reads > 1 {
			return nil, fmt.Errorf("context %q: %s is included %d times, so a change there would change every place that includes it; edit it by hand", list[0].why, f.path, f.reads)
		}
		data, err := splice(f, list)
		if err != nil {
			return nil, err
		}
		if _, err := parse(f.path, data, nil); err != nil {
			return nil, fmt.Errorf("the edited %s would not parse (a bug in nginxconf): %w", f.path, err)
		}
		if string(data) != string(f.data) {
			out[f.abs] = data
		}
	}
	return out, nil
}

// splice applies non-overlapping ops to a file's content.
func splice(f *file, list []op) ([]byte, error) {
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if (a.start == a.end) != (b.start == b.end) {
			return a.start == a.end // insertions before a change at the same offset
		}
		return a.seq < b.seq
	})
	var b []byte
	pos := 0
	for _, o := range list {
		if o.start < pos {
			return nil, fmt.Errorf("context %q: two edits change the same text of %s", o.why, f.path)
		}
		b = append(b, f.data[pos:o.start]...)
		b = append(b, o.text...)
		pos = o.end
	}
	return append(b, f.data[pos:]...), nil
}

// insertText builds the insertion of line at pos: on a line of its own
// with indent, or inline (" line" right after a ';', else "line " before
// a '}' or a directive).
func insertText(f *file, pos int, indent string, inline bool, line, why string) op {
	if inline {
		if pos > 0 && f.data[pos-1] == ';' {
			return op{start: pos, end: pos, text: " " + line, why: why}
		}
		t := line + " "
		if pos > 0 && !isSpace(f.data[pos-1]) {
			t = " " + t
		}
		return op{start: pos, end: pos, text: t, why: why}
	}
	eol := "\n"
	if bytes.Contains(f.data, []byte("\r\n")) {
		eol = "\r\n"
	}
	t := indent + line + eol
	if pos > 0 && f.data[pos-1] != '\n' {
		t = eol + t
	}
	return op{start: pos, end: pos, text: t, why: why}
}

// lineStart is the offset where the line holding pos starts.
func lineStart(data []byte, pos int) int {
	for pos > 0 && data[pos-1] != '\n' {
		pos--
	}
	return pos
}

// indentOf is the white space before pos on its line, and whether only
// white space precedes pos there.
func indentOf(data []byte, pos int) (string, bool) {
	s := lineStart(data, pos)
	for i := s; i < pos; i++ {
		if data[i] != ' ' && data[i] != '\t' {
			return "", false
		}
	}
	return string(data[s:pos]), true
}

// restOfLine returns the offset after the newline ending the line at
// pos, and whether only white space or a comment follows pos there.
func restOfLine(data []byte, pos int) (int, bool) {
	i := pos
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r') {
		i++
	}
	clean := i >= len(data) || data[i] == '\n' || data[i] == '#'
	for i < len(data) && data[i] != '\n' {
		i++
	}
	if i < len(data) {
		i++
	}
	return i, clean
}

// after is where a line goes after directive n: the next line, indented
// like n, or inline after it when more follows it on its line.
func after(n *Directive) (pos int, indent string, inline bool) {
	next, clean := restOfLine(n.f.data, n.end)
	ind, alone := indentOf(n.f.data, n.start)
	if !clean {
		return n.end, "", true
	}
	if !alone {
		ind = ""
	}
	return next, ind, false
}

// deletion is the text a duplicate directive takes: its whole line(s)
// when it is alone there, else the directive and the blanks after it.
func deletion(n *Directive) (int, int) {
	data := n.f.data
	_, alone := indentOf(data, n.start)
	next, clean := restOfLine(data, n.end)
	if alone && clean {
		return lineStart(data, n.start), next
	}
	e := n.end
	for e < len(data) && (data[e] == ' ' || data[e] == '\t') {
		e++
	}
	return n.start, e
}

// insertPoint is where a new directive goes in block b: before its
// closing brace, or for the main context after the last top-level
// directive of the main file that comes before its first block.
func (c *Config) insertPoint(b *Directive) (f *file, pos int, indent string, inline bool) {
	if b == c.root {
		f = c.main
		var anchor, firstBlock *Directive
		for _, k := range b.kids {
			if k.f != f {
				continue
			}
			if k.block {
				firstBlock = k
				break
			}
			anchor = k
		}
		if anchor != nil {
			pos, indent, inline = after(anchor)
			return f, pos, indent, inline
		}
		if firstBlock != nil {
			s := lineStart(f.data, firstBlock.start)
			if _, alone := indentOf(f.data, firstBlock.start); !alone {
				s = firstBlock.start
			}
			return f, s, "", false
		}
		return f, len(f.data), "", false
	}
	f = b.f
	data := f.data
	unit := indentUnit(data)
	own, _ := indentOf(data, b.start)
	indent = own + unit
	for i := len(b.kids) - 1; i >= 0; i-- {
		if k := b.kids[i]; k.f == f {
			if ind, alone := indentOf(data, k.start); alone {
				indent = ind
			}
			break
		}
	}
	if _, alone := indentOf(data, b.close); alone {
		return f, lineStart(data, b.close), indent, false
	}
	return f, b.close, "", true
}

// defineFirst are the directives that name something later directives
// use when nginx reads them (access_log needs its log_format defined
// above it, also in the servers of included files): a new one goes first
// in its block.
var defineFirst = map[string]bool{"log_format": true}

// firstPoint is where a new directive goes first in block b: before the
// block's first directive in its own file, indented like it.
func (c *Config) firstPoint(b *Directive) (f *file, pos int, indent string, inline bool) {
	if b != c.root {
		for _, k := range b.kids {
			if k.f != b.f {
				continue
			}
			if ind, alone := indentOf(k.f.data, k.start); alone {
				return k.f, lineStart(k.f.data, k.start), ind, false
			}
			return k.f, k.start, "", true
		}
	}
	return c.insertPoint(b)
}

// indentUnit guesses a file's indentation step from its first indented
// line: a tab, or that many spaces (4 when nothing is indented).
func indentUnit(data []byte) string {
	s := string(data)
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimLeft(l, " \t")
		if t == "" || t == l || strings.HasPrefix(t, "#") {
			continue
		}
		if l[0] == '\t' {
			return "\t"
		}
		if n := len(l) - len(t); n >= 2 && n <= 8 && strings.Trim(l[:n], " ") == "" {
			return l[:n]
		}
		break
	}
	return "    "
}

// Current reads what an edit would replace: the arguments of the
// directive of the same name (and identity) in the edit's block or,
// since nginx inherits most directives, in the nearest enclosing block
// that sets it. found is false where no block sets it (nginx's default
// applies).
func (c *Config) Current(e Edit) (args []string, found bool, err error) {
	if err := e.Check(); err != nil {
		return nil, false, err
	}
	b, err := c.resolve(e.Context)
	if err != nil {
		return nil, false, err
	}
	ws, _ := words(e.Args)
	id := identity(e.Name, ws)
	for n := b; n != nil; n = n.parent {
		for _, k := range n.kids {
			if k.name == e.Name && !k.block && identity(k.name, k.args) == id {
				return k.args, true, nil
			}
		}
	}
	return nil, false, nil
}

// SplitArgs reads an edit's argument text into the values nginx sees
// (quotes and escapes resolved), to compare arguments however they are
// written.
func SplitArgs(s string) ([]string, error) { return words(s) }
