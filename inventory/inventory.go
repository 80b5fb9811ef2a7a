package inventory

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on what Parse reads.
const (
	// MaxBytes is the largest inventory file read.
	MaxBytes = 16 << 20
	// MaxLine is the longest line.
	MaxLine = 64 << 10
	// MaxHosts is the most hosts after range expansion.
	MaxHosts = 100_000
	// MaxGroups is the most groups.
	MaxGroups = 10_000
	// maxDepth bounds the nesting of :children.
	maxDepth = 64
	// maxExpanded bounds the names all host lines expand to, repeats
	// included, so a file of ranges over the same hosts stays cheap.
	maxExpanded = 2 * MaxHosts
	// maxErrors is how many line errors are kept (the rest are counted).
	maxErrors = 100
)

// Implicit groups, as Ansible names them.
const (
	All       = "all"
	Ungrouped = "ungrouped"
)

// Connection variables read into Host's fields.
const (
	VarHost    = "ansible_host"
	VarPort    = "ansible_port"
	VarUser    = "ansible_user"
	VarKeyFile = "ansible_ssh_private_key_file"
	// VarConnection is Ansible's connection type: stacktune reaches hosts
	// over ssh (the default) or, for "local", on this machine.
	VarConnection = "ansible_connection"
)

// Older spellings Ansible still accepts.
var aliases = map[string]string{
	"ansible_ssh_host": VarHost,
	"ansible_ssh_port": VarPort,
	"ansible_ssh_user": VarUser,
}

// Inventory is a parsed inventory.
type Inventory struct {
	// File is the path it was read from (as given).
	File string
	// Hosts are in order of first appearance.
	Hosts []Host
	// Groups are every group, "all" and "ungrouped" included, by name.
	Groups map[string]*Group
}

// Host is one host of the inventory, with its variables merged.
type Host struct {
	// Name is the inventory name (the pattern, expanded).
	Name string
	// Address is where to connect: ansible_host, else Name.
	Address string
	// Port is ansible_port or the pattern's ":port"; 0 when not set.
	Port int
	// User is ansible_user; "" when not set.
	User string
	// KeyFile is ansible_ssh_private_key_file; "" when not set.
	KeyFile string
	// Connection is ansible_connection ("ssh" when not set).
	Connection string
	// Role is the first group, in file order, that lists the host
	// directly; "ungrouped" for a host listed before any section.
	Role string
	// Groups are every group the host belongs to, sorted, "all" left out.
	Groups []string
	// Vars are all its variables, merged (see the package documentation).
	Vars map[string]string
	// Line is where the host first appears.
	Line int

	hostVars map[string]string
	direct   []string // groups listing it directly, in file order
}

// Group is a group of the inventory.
type Group struct {
	Name string
	// Hosts lists the hosts the group names directly, in order.
	Hosts []string
	// Children are its :children groups, in order.
	Children []string
	// Vars are its :vars.
	Vars map[string]string
	// Line is where the group is first named.
	Line int

	parents []string
	depth   int
}

// LineError is a line Parse could not read.
type LineError struct {
	File string
	Line int
	Msg  string
}

func (e *LineError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Errors are every problem of an inventory; Dropped counts those past the
// first maxErrors.
type Errors struct {
	List    []*LineError
	Dropped int
}

func (e *Errors) Error() string {
	var b strings.Builder
	for i, l := range e.List {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(l.Error())
	}
	if e.Dropped > 0 {
		fmt.Fprintf(&b, "\n(and %d more)", e.Dropped)
	}
	return b.String()
}

// ErrTooLarge is wrapped when the file or its expansion passes a bound.
var ErrTooLarge = errors.New("inventory too large")

// Load reads and parses the inventory file at path.
func Load(path string) (*Inventory, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("inventory: %s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("inventory: %s: %w", path, err)
	}
	return Parse(path, b)
}

// Parse parses an inventory held in memory; name is used in messages.
func Parse(name string, src []byte) (*Inventory, error) {
	if len(src) > MaxBytes {
		return nil, fmt.Errorf("inventory: %s: more than %d bytes: %w", name, MaxBytes, ErrTooLarge)
	}
	p := &parser{file: name, inv: &Inventory{File: name, Groups: map[string]*Group{}}, hostIdx: map[string]int{}}
	p.group(All, 0)
	p.group(Ungrouped, 0)
	if looksYAML(src) {
		return nil, &Errors{List: []*LineError{{File: name, Line: 1, Msg: "this is a YAML inventory: stacktune reads the INI form (ansible-inventory -i FILE --list shows the hosts; write them as INI)"}}}
	}
	if err := p.lines(src); err != nil {
		return nil, err
	}
	if p.tooMany {
		return nil, fmt.Errorf("inventory: %s: more than %d hosts after expanding ranges: %w", name, MaxHosts, ErrTooLarge)
	}
	p.finish()
	if len(p.errs.List) > 0 {
		return nil, &p.errs
	}
	return p.inv, nil
}

// looksYAML reports a file whose first meaningful line is YAML's.
func looksYAML(src []byte) bool {
	for _, l := range bytes.Split(src, []byte("\n")) {
		s := strings.TrimSpace(string(l))
		if s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		return s == "---" || (strings.HasSuffix(s, ":") && !strings.ContainsAny(s, "[= "))
	}
	return false
}

type sectionKind int

const (
	secHosts sectionKind = iota
	secVars
	secChildren
)

type parser struct {
	file    string
	inv     *Inventory
	hostIdx map[string]int
	errs    Errors
	tooMany bool
	// expanded counts the names host lines expanded to.
	expanded int
	// children edges to check once every group is known.
	edges []edge
}

type edge struct {
	parent, child string
	line          int
}

func (p *parser) errf(line int, format string, args ...any) {
	if len(p.errs.List) >= maxErrors {
		p.errs.Dropped++
		return
	}
	p.errs.List = append(p.errs.List, &LineError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) group(name string, line int) *Group {
	if g, ok := p.inv.Groups[name]; ok {
		return g
	}
	if len(p.inv.Groups) >= MaxGroups+2 {
		return nil
	}
	g := &Group{Name: name, Vars: map[string]string{}, Line: line}
	p.inv.Groups[name] = g
	return g
}

func (p *parser) lines(src []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	kind, cur := secHosts, Ungrouped
	n := 0
	for sc.Scan() {
		n++
		raw := sc.Bytes()
		if !utf8.Valid(raw) || bytes.IndexByte(raw, 0) >= 0 {
			p.errf(n, "not text (invalid UTF-8 or a NUL byte)")
			continue
		}
		line := strings.TrimSpace(string(raw))
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' && !isHostLine(line) {
			k, name, ok := p.section(line, n)
			if !ok {
				// Lines up to the next good section go nowhere.
				kind, cur = -1, ""
				continue
			}
			kind, cur = k, name
			continue
		}
		if p.tooMany {
			continue
		}
		switch kind {
		case secHosts:
			p.hostLine(line, cur, n)
		case secVars:
			k, v, ok := p.varLine(line, n)
			if ok {
				p.inv.Groups[cur].Vars[k] = v
			}
		case secChildren:
			name := stripComment(line)
			if !validGroup(name) {
				p.errf(n, "%q is not a group name", name)
				continue
			}
			if p.group(name, n) == nil {
				p.errf(n, "more than %d groups", MaxGroups)
				continue
			}
			p.edges = append(p.edges, edge{parent: cur, child: name, line: n})
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			p.errf(n+1, "line longer than %d bytes", MaxLine)
			return &p.errs
		}
		return fmt.Errorf("inventory: %s: %w", p.file, err)
	}
	return nil
}

// isHostLine tells a host pattern that starts with a range ("[01:10].web")
// from a section header.
func isHostLine(line string) bool {
	end := strings.IndexByte(line, ']')
	return end >= 0 && end+1 < len(line) && line[end+1] != ' ' && line[end+1] != '\t' && line[end+1] != '#' && line[end+1] != ';'
}

func (p *parser) section(line string, n int) (sectionKind, string, bool) {
	line = stripComment(line)
	if !strings.HasSuffix(line, "]") {
		p.errf(n, "section header without its closing ]")
		return 0, "", false
	}
	inner := strings.TrimSpace(line[1 : len(line)-1])
	name, suffix, _ := strings.Cut(inner, ":")
	var k sectionKind
	switch suffix {
	case "":
		k = secHosts
	case "vars":
		k = secVars
	case "children":
		k = secChildren
	default:
		p.errf(n, "[%s]: a section is [group], [group:vars] or [group:children]", inner)
		return 0, "", false
	}
	if !validGroup(name) {
		p.errf(n, "[%s]: %q is not a group name (letters, digits, _ and -)", inner, name)
		return 0, "", false
	}
	if k == secHosts && name == All {
		// Ansible files hosts listed under [all] as ungrouped.
		name = Ungrouped
	}
	if p.group(name, n) == nil {
		p.errf(n, "more than %d groups", MaxGroups)
		return 0, "", false
	}
	return k, name, true
}

func validGroup(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

// stripComment removes a " #..." or " ;..." comment.
func stripComment(s string) string {
	for i := 1; i < len(s); i++ {
		if (s[i] == '#' || s[i] == ';') && (s[i-1] == ' ' || s[i-1] == '\t') {
			return strings.TrimSpace(s[:i])
		}
	}
	return strings.TrimSpace(s)
}

func (p *parser) varLine(line string, n int) (string, string, bool) {
	k, v, ok := strings.Cut(line, "=")
	if !ok {
		p.errf(n, "%q: a :vars section holds NAME=VALUE lines", short(line))
		return "", "", false
	}
	k = strings.TrimSpace(k)
	if !validVar(k) {
		p.errf(n, "%q is not a variable name", short(k))
		return "", "", false
	}
	words, err := split(strings.TrimSpace(v))
	switch {
	case err != nil:
		p.errf(n, "%s: %v", k, err)
		return "", "", false
	case len(words) == 0:
		return canon(k), "", true
	}
	return canon(k), strings.Join(words, " "), true
}

func canon(k string) string {
	if a, ok := aliases[k]; ok {
		return a
	}
	return k
}

func validVar(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for i, r := range s {
		if !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

func short(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

func (p *parser) hostLine(line, group string, n int) {
	words, err := split(line)
	if err != nil {
		p.errf(n, "%v", err)
		return
	}
	if len(words) == 0 {
		return
	}
	vars := map[string]string{}
	for _, w := range words[1:] {
		k, v, ok := strings.Cut(w, "=")
		if !ok || !validVar(k) {
			p.errf(n, "%q: after the host, variables are NAME=VALUE", short(w))
			return
		}
		vars[canon(k)] = v
	}
	pattern, port := words[0], ""
	if i := strings.LastIndexByte(pattern, ':'); i > 0 && strings.Count(pattern, ":") == 1 && !strings.Contains(pattern[i:], "]") {
		pattern, port = pattern[:i], pattern[i+1:]
		if _, err := strconv.Atoi(port); err != nil {
			p.errf(n, "%q: the port after ':' must be a number", short(words[0]))
			return
		}
	}
	names, err := expand(pattern, min(maxExpanded-p.expanded, MaxHosts))
	p.expanded += len(names)
	if errors.Is(err, ErrTooLarge) {
		p.tooMany = true
		return
	}
	if err != nil {
		p.errf(n, "%s: %v", short(words[0]), err)
		return
	}
	for _, name := range names {
		if !validHost(name) {
			p.errf(n, "%q is not a host name or address", short(name))
			continue
		}
		i, ok := p.hostIdx[name]
		if !ok {
			if len(p.inv.Hosts) >= MaxHosts {
				p.tooMany = true
				return
			}
			i = len(p.inv.Hosts)
			p.hostIdx[name] = i
			p.inv.Hosts = append(p.inv.Hosts, Host{Name: name, Line: n, hostVars: map[string]string{}})
		}
		h := &p.inv.Hosts[i]
		for k, v := range vars {
			h.hostVars[k] = v
		}
		if port != "" {
			h.hostVars[VarPort] = port
		}
		if !slices.Contains(h.direct, group) {
			h.direct = append(h.direct, group)
		}
		g := p.inv.Groups[group]
		if !slices.Contains(g.Hosts, name) {
			g.Hosts = append(g.Hosts, name)
		}
	}
}

func validHost(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`"'=[]\/`, r) {
			return false
		}
	}
	return true
}

// split cuts a line into words as a shell does (Ansible uses shlex):
// blanks separate, '...' and "..." quote, a word starting with # or ;
// starts a comment.
func split(s string) ([]string, error) {
	var words []string
	var b strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			switch {
			case c == quote:
				quote = 0
			case c == '\\' && quote == '"' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\'):
				i++
				b.WriteByte(s[i])
			default:
				b.WriteByte(c)
			}
		case c == ' ' || c == '\t':
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		case (c == '#' || c == ';') && !in:
			return words, nil
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			in = true
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote", quote)
	}
	if in {
		words = append(words, b.String())
	}
	return words, nil
}

// expand expands the ranges of a host pattern, at most limit names.
func expand(pattern string, limit int) ([]string, error) {
	i := strings.IndexByte(pattern, '[')
	if i < 0 {
		if strings.IndexByte(pattern, ']') >= 0 {
			return nil, errors.New("']' without '['")
		}
		return []string{pattern}, nil
	}
	j := strings.IndexByte(pattern[i:], ']')
	if j < 0 {
		return nil, errors.New("range without its closing ]")
	}
	j += i
	vals, err := rangeValues(pattern[i+1:j], limit)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range vals {
		rest, err := expand(pattern[j+1:], limit/max(len(vals), 1)+1)
		if err != nil {
			return nil, err
		}
		for _, r := range rest {
			if len(out) >= limit {
				return nil, ErrTooLarge
			}
			out = append(out, pattern[:i]+v+r)
		}
	}
	return out, nil
}

// rangeValues are the values of "01:10", "a:f" or "0:10:2".
func rangeValues(spec string, limit int) ([]string, error) {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("[%s]: a range is [START:END] or [START:END:STEP]", spec)
	}
	step := 1
	if len(parts) == 3 {
		s, err := strconv.Atoi(parts[2])
		if err != nil || s < 1 {
			return nil, fmt.Errorf("[%s]: the step must be a positive integer", spec)
		}
		step = s
	}
	lo, hi := parts[0], parts[1]
	if isLetter(lo) && isLetter(hi) {
		if lo[0] > hi[0] {
			return nil, fmt.Errorf("[%s]: start after end", spec)
		}
		var out []string
		for c := int(lo[0]); c <= int(hi[0]); c += step {
			out = append(out, string(rune(c)))
		}
		return out, nil
	}
	if lo == "" {
		lo = "0"
	}
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || a < 0 || b < 0 {
		return nil, fmt.Errorf("[%s]: want numbers or single letters", spec)
	}
	if a > b {
		return nil, fmt.Errorf("[%s]: start after end", spec)
	}
	if (b-a)/step+1 > limit {
		return nil, ErrTooLarge
	}
	width := 0
	if len(lo) > 1 && lo[0] == '0' {
		width = len(lo)
	}
	var out []string
	for v := a; v <= b; v += step {
		out = append(out, fmt.Sprintf("%0*d", width, v))
	}
	return out, nil
}

func isLetter(s string) bool {
	return len(s) == 1 && ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))
}

// finish links :children, checks for cycles, computes depths and merges
// every host's variables.
func (p *parser) finish() {
	inv := p.inv
	for _, e := range p.edges {
		parent, child := inv.Groups[e.parent], inv.Groups[e.child]
		if child.Name == All {
			p.errf(e.line, "all cannot be a child group")
			continue
		}
		if !slices.Contains(parent.Children, child.Name) {
			parent.Children = append(parent.Children, child.Name)
			child.parents = append(child.parents, parent.Name)
		}
	}
	// Depth: all is 0, a group without parents 1, else 1 + its deepest parent.
	state := map[string]int{} // 0 new, 1 visiting, 2 done
	var depth func(g *Group, n int) int
	depth = func(g *Group, n int) int {
		switch {
		case g.Name == All:
			return 0
		case state[g.Name] == 2:
			return g.depth
		case state[g.Name] == 1 || n > maxDepth:
			p.errf(g.Line, "group %s is its own ancestor through :children (or nests more than %d deep)", g.Name, maxDepth)
			state[g.Name] = 2
			g.depth = 1
			return 1
		}
		state[g.Name] = 1
		d := 1
		for _, par := range g.parents {
			d = max(d, depth(inv.Groups[par], n+1)+1)
		}
		g.depth, state[g.Name] = d, 2
		return d
	}
	for _, name := range sortedKeys(inv.Groups) {
		depth(inv.Groups[name], 0)
	}
	for i := range inv.Hosts {
		p.finishHost(&inv.Hosts[i])
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (p *parser) finishHost(h *Host) {
	inv := p.inv
	// Every group the host is in, through parents.
	in := map[string]bool{}
	var up func(name string, n int)
	up = func(name string, n int) {
		if in[name] || n > maxDepth {
			return
		}
		in[name] = true
		for _, par := range inv.Groups[name].parents {
			up(par, n+1)
		}
	}
	for _, g := range h.direct {
		up(g, 0)
	}
	groups := make([]*Group, 0, len(in))
	for name := range in {
		groups = append(groups, inv.Groups[name])
	}
	// Ansible's order: by depth, then by name; all first, host vars last.
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].depth != groups[j].depth {
			return groups[i].depth < groups[j].depth
		}
		return groups[i].Name < groups[j].Name
	})
	h.Vars = map[string]string{}
	for k, v := range inv.Groups[All].Vars {
		h.Vars[k] = v
	}
	for _, g := range groups {
		for k, v := range g.Vars {
			h.Vars[k] = v
		}
		h.Groups = append(h.Groups, g.Name)
	}
	for k, v := range h.hostVars {
		h.Vars[k] = v
	}
	sort.Strings(h.Groups)
	h.Role = h.direct[0]
	h.Address = h.Name
	if v := h.Vars[VarHost]; v != "" {
		h.Address = v
	}
	if v := h.Vars[VarPort]; v != "" {
		port, err := strconv.Atoi(v)
		if err != nil || port < 1 || port > 65535 {
			p.errf(h.Line, "%s: %s=%q is not a port", h.Name, VarPort, v)
		}
		h.Port = port
	}
	h.User = h.Vars[VarUser]
	h.KeyFile = h.Vars[VarKeyFile]
	h.Connection = h.Vars[VarConnection]
	if h.Connection == "" {
		h.Connection = "ssh"
	}
}

// Role returns the hosts of a role, in order.
func (inv *Inventory) Role(role string) []Host {
	var out []Host
	for _, h := range inv.Hosts {
		if h.Role == role {
			out = append(out, h)
		}
	}
	return out
}

// Roles returns the roles of the hosts, in order of first appearance.
func (inv *Inventory) Roles() []string {
	var out []string
	for _, h := range inv.Hosts {
		if !slices.Contains(out, h.Role) {
			out = append(out, h.Role)
		}
	}
	return out
}

// Select keeps the hosts that are in one of the groups (or named), in
// order; an empty list keeps every host. A name that is neither a group nor
// a host is an error.
func (inv *Inventory) Select(names []string) ([]Host, error) {
	if len(names) == 0 {
		return slices.Clone(inv.Hosts), nil
	}
	for _, n := range names {
		_, isGroup := inv.Groups[n]
		isHost := slices.ContainsFunc(inv.Hosts, func(h Host) bool { return h.Name == n })
		if !isGroup && !isHost {
			return nil, fmt.Errorf("inventory %s has no group or host %q", inv.File, n)
		}
	}
	var out []Host
	for _, h := range inv.Hosts {
		if slices.Contains(names, h.Name) || slices.Contains(names, All) || slices.ContainsFunc(h.Groups, func(g string) bool { return slices.Contains(names, g) }) {
			out = append(out, h)
		}
	}
	return out, nil
}
