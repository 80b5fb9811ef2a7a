package inventory

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stacktune/stacktune/input"
)

// Bounds on what Parse reads.
const (
	// MaxBytes is the largest inventory file read.
	MaxBytes = 16 << 20
	// MaxLine is the longest line.
	MaxLine = 64 << 10
	// MaxHosts is the most hosts after range expansion: a line that
	// expands past it is an error naming the line and this bound.
	MaxHosts = 100_000
	// MaxHostEntries is the most variables and group memberships of all
	// hosts together after merging (a host's Vars and Groups), so a
	// thousand group variables over a hundred thousand hosts is an error,
	// not gigabytes of maps.
	MaxHostEntries = 2_000_000
	// MaxGroups is the most groups.
	MaxGroups = 10_000
	// maxDepth bounds the nesting of :children.
	maxDepth = 64
	// maxExpanded bounds the names all host lines expand to, repeats
	// included, so a file of ranges over the same hosts stays cheap.
	maxExpanded = 2 * MaxHosts
	// maxErrors is how many line errors are kept (the rest are counted).
	maxErrors = 100
	// maxMergeWork bounds the steps of walking the hosts' :children
	// parents when merging (each distinct set of direct groups is walked
	// once).
	maxMergeWork = 20_000_000
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

	// lineVars are the variables of the lines naming the host, in file
	// order: one map per line, shared by the names it expands to.
	lineVars []map[string]string
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
	// Err is what the line matches with errors.Is (ErrTooLarge), or nil.
	Err error
}

func (e *LineError) Unwrap() error { return e.Err }

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

// Unwrap is every line's error, so errors.Is(err, ErrTooLarge) holds
// when a line passed a bound.
func (e *Errors) Unwrap() []error {
	out := make([]error, len(e.List))
	for i, l := range e.List {
		out[i] = l
	}
	return out
}

// ErrTooLarge is wrapped when the file or its expansion passes a bound.
var ErrTooLarge = errors.New("inventory too large")

// Load reads and parses the inventory file at path: a regular file (a
// FIFO is refused without blocking) of at most MaxBytes.
func Load(path string) (*Inventory, error) {
	b, err := input.ReadFile(path, MaxBytes)
	if errors.Is(err, input.ErrTooLarge) {
		return nil, fmt.Errorf("inventory: %w (inventory.MaxBytes): %w", err, ErrTooLarge)
	}
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	return Parse(path, b)
}

// Parse parses an inventory held in memory; name is used in messages.
func Parse(name string, src []byte) (*Inventory, error) {
	if len(src) > MaxBytes {
		return nil, fmt.Errorf("inventory: %s: more than %d bytes (inventory.MaxBytes): %w", name, MaxBytes, ErrTooLarge)
	}
	p := &parser{file: name, inv: &Inventory{File: name, Groups: map[string]*Group{}}, hostIdx: map[string]int{}, member: map[membership]bool{}, edgeSet: map[[2]string]bool{}}
	p.group(All, 0)
	p.group(Ungrouped, 0)
	if looksYAML(src) {
		return nil, &Errors{List: []*LineError{{File: name, Line: 1, Msg: "this is a YAML inventory: stacktune reads the INI form (ansible-inventory -i FILE --list shows the hosts; write them as INI)"}}}
	}
	if err := p.lines(src); err != nil {
		return nil, err
	}
	if !p.tooMany {
		p.finish()
	}
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
	// tooMany is set when a bound of the whole file (MaxHosts,
	// MaxHostEntries) is passed: the lines after it are not read.
	tooMany bool
	// expanded counts the names host lines expanded to.
	expanded int
	// entries counts the hosts' variables and memberships (MaxHostEntries).
	entries int
	// work counts the steps of merging (maxMergeWork).
	work int
	// member holds which host a group lists directly, so listing stays
	// linear however many hosts a group has.
	member map[membership]bool
	// children edges to check once every group is known, and the set of
	// those already linked.
	edges   []edge
	edgeSet map[[2]string]bool
}

type membership struct {
	host  int
	group string
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

// tooLarge records a line past a bound of the whole inventory; the lines
// after it are not read.
func (p *parser) tooLarge(line int, format string, args ...any) {
	p.tooMany = true
	l := &LineError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...), Err: ErrTooLarge}
	if len(p.errs.List) >= maxErrors {
		// The bound is the one error that must show.
		p.errs.List[len(p.errs.List)-1] = l
		p.errs.Dropped++
		return
	}
	p.errs.List = append(p.errs.List, l)
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
	pattern := words[0]
	if i := strings.LastIndexByte(pattern, ':'); i > 0 && strings.Count(pattern, ":") == 1 && !strings.Contains(pattern[i:], "]") {
		port := pattern[i+1:]
		pattern = pattern[:i]
		if _, err := strconv.Atoi(port); err != nil {
			p.errf(n, "%q: the port after ':' must be a number", short(words[0]))
			return
		}
		vars[VarPort] = port
	}
	pat, err := parsePattern(pattern)
	if err != nil {
		p.errf(n, "%s: %v", short(words[0]), err)
		return
	}
	// Both terms are at most maxExpanded: no overflow.
	budget := min(maxExpanded-p.expanded, MaxHosts)
	names, err := pat.names(budget)
	var tm *tooManyError
	if errors.As(err, &tm) {
		if budget == MaxHosts {
			p.tooLarge(n, "%s expands to %s hosts, more than an inventory holds (inventory.MaxHosts = %d)", short(words[0]), tm.countText(), MaxHosts)
		} else {
			p.tooLarge(n, "%s expands to %s hosts: with the lines before it, host lines name more than %d hosts, repeats included (2 x inventory.MaxHosts)", short(words[0]), tm.countText(), maxExpanded)
		}
		return
	}
	if err != nil {
		p.errf(n, "%s: %v", short(words[0]), err)
		return
	}
	p.expanded += len(names)
	g := p.inv.Groups[group]
	for _, name := range names {
		if !validHost(name) {
			p.errf(n, "%q is not a host name or address", short(name))
			continue
		}
		i, ok := p.hostIdx[name]
		if !ok {
			if len(p.inv.Hosts) >= MaxHosts {
				p.tooLarge(n, "%s: with this line the inventory has more than %d hosts (inventory.MaxHosts)", short(words[0]), MaxHosts)
				return
			}
			i = len(p.inv.Hosts)
			p.hostIdx[name] = i
			p.inv.Hosts = append(p.inv.Hosts, Host{Name: name, Line: n})
		}
		h := &p.inv.Hosts[i]
		if len(vars) > 0 {
			h.lineVars = append(h.lineVars, vars)
			if p.entries += len(vars); p.entries > MaxHostEntries {
				p.tooLarge(n, "%s: with this line the hosts have more than %d variables and groups (inventory.MaxHostEntries)", short(words[0]), MaxHostEntries)
				return
			}
		}
		if m := (membership{i, group}); !p.member[m] {
			p.member[m] = true
			h.direct = append(h.direct, group)
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
		if k := [2]string{parent.Name, child.Name}; !p.edgeSet[k] {
			p.edgeSet[k] = true
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
	merged := map[string]*mergedVars{}
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		key := strings.Join(h.direct, "\x00")
		m := merged[key]
		if m == nil {
			if m = p.merge(h); m == nil {
				return
			}
			merged[key] = m
		}
		if p.entries += len(m.vars) + len(m.groups); p.entries > MaxHostEntries {
			p.tooLarge(h.Line, "%s: with its groups' variables the hosts have more than %d variables and groups (inventory.MaxHostEntries)", h.Name, MaxHostEntries)
			return
		}
		p.finishHost(h, m)
	}
}

// mergedVars are the groups and group variables of the hosts listed
// directly in the same groups.
type mergedVars struct {
	groups []string
	vars   map[string]string
}

// merge walks the groups of h through their parents and merges their
// variables; nil when the walks together pass maxMergeWork.
func (p *parser) merge(h *Host) *mergedVars {
	inv := p.inv
	in := map[string]bool{}
	var up func(name string, n int) bool
	up = func(name string, n int) bool {
		if p.work++; p.work > maxMergeWork {
			return false
		}
		if in[name] || n > maxDepth {
			return true
		}
		in[name] = true
		for _, par := range inv.Groups[name].parents {
			if !up(par, n+1) {
				return false
			}
		}
		return true
	}
	for _, g := range h.direct {
		if !up(g, 0) {
			p.tooLarge(h.Line, "%s: its groups' :children parents take more than %d steps to merge, with the hosts before it", h.Name, maxMergeWork)
			return nil
		}
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
	m := &mergedVars{vars: map[string]string{}}
	for k, v := range inv.Groups[All].Vars {
		m.vars[k] = v
	}
	for _, g := range groups {
		for k, v := range g.Vars {
			m.vars[k] = v
		}
		m.groups = append(m.groups, g.Name)
	}
	sort.Strings(m.groups)
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (p *parser) finishHost(h *Host, m *mergedVars) {
	h.Vars = make(map[string]string, len(m.vars))
	for k, v := range m.vars {
		h.Vars[k] = v
	}
	for _, vars := range h.lineVars {
		for k, v := range vars {
			h.Vars[k] = v
		}
	}
	h.lineVars = nil
	h.Groups = slices.Clone(m.groups)
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
	seen := map[string]bool{}
	for _, h := range inv.Hosts {
		if !seen[h.Role] {
			seen[h.Role] = true
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
