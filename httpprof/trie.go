package httpprof

import (
	"sort"
	"strings"
)

// maxExamples is how many values a learned group shows.
const maxExamples = 3

// node is one path position. Literal children are kept until there are more
// than the threshold of them; then they collapse into wild.
type node struct {
	lit       map[string]*node
	wild      *node // the :name child after a collapse
	collapsed bool
	// seeded: the position holds values (Options.Values): its first
	// literal collapses it; typed segments (numbers, hashes) stay typed
	// until then.
	seeded bool
	// distinct counts the literal children until the collapse.
	distinct int
	// values sketches every value seen at a collapsed position.
	values  sketch
	methods []methodStats
}

type methodStats struct {
	method string
	s      *stats
}

// trie groups paths. threshold is Options.GroupThreshold.
type trie struct {
	root      node
	threshold int
	endpoints int // distinct (node, method) pairs, bounded by maxEndpoints
	maxEP     int
	other     *stats // requests past the endpoint bound
}

func newTrie(threshold, maxEndpoints int) *trie {
	return &trie{threshold: threshold, maxEP: maxEndpoints}
}

// child returns the child for a segment, creating it, and collapsing n when
// it gets too many distinct literals. typed is the segment's typed wildcard
// ("" for a literal).
func (t *trie) child(n *node, seg []byte, typed string) *node {
	if n.collapsed {
		n.values.add(seg)
		return n.wild
	}
	key := typed
	if key == "" {
		if c, ok := n.lit[string(seg)]; ok {
			return c
		}
	} else if c, ok := n.lit[key]; ok {
		return c
	}
	if key == "" {
		key = string(seg)
		n.distinct++
		if n.distinct > t.threshold || n.seeded {
			t.collapse(n, key)
			return n.wild
		}
	}
	if n.lit == nil {
		n.lit = make(map[string]*node, 4)
	}
	c := &node{}
	n.lit[key] = c
	return c
}

// collapse merges every child of n into one wildcard; trigger is the value
// that crossed the threshold.
func (t *trie) collapse(n *node, trigger string) {
	if n.wild == nil {
		n.wild = &node{}
	}
	keys := make([]string, 0, len(n.lit))
	for k := range n.lit {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a deterministic merge order
	for _, k := range keys {
		if !strings.HasPrefix(k, ":") {
			n.values.add([]byte(k))
		}
		c := n.lit[k]
		t.endpoints -= c.countEndpoints() // their stats move into the wildcard
		t.mergeNode(n.wild, c)
	}
	if trigger != "" {
		n.values.add([]byte(trigger))
	}
	n.lit = nil
	n.collapsed = true
}

// countEndpoints counts the endpoints in n's subtree.
func (n *node) countEndpoints() int {
	c := len(n.methods)
	for _, ch := range n.lit {
		c += ch.countEndpoints()
	}
	if n.wild != nil {
		c += n.wild.countEndpoints()
	}
	return c
}

// stats returns the stats of method at n, or the overflow stats when the
// endpoint bound is reached.
func (t *trie) stats(n *node, method string) *stats {
	for i := range n.methods {
		if n.methods[i].method == method {
			return n.methods[i].s
		}
	}
	if t.endpoints >= t.maxEP {
		if t.other == nil {
			t.other = newStats()
		}
		return t.other
	}
	t.endpoints++
	s := newStats()
	n.methods = append(n.methods, methodStats{method: method, s: s})
	return s
}

// mergeNode adds src (from another trie or a collapsed literal) into dst.
func (t *trie) mergeNode(dst, src *node) {
	for _, m := range src.methods {
		t.stats(dst, m.method).merge(m.s)
	}
	if src.collapsed && !dst.collapsed {
		t.collapse(dst, "")
	}
	keys := make([]string, 0, len(src.lit))
	for k := range src.lit {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		typed := ""
		if strings.HasPrefix(k, ":") {
			typed = k
		}
		t.mergeNode(t.child(dst, []byte(k), typed), src.lit[k])
	}
	if src.wild != nil {
		if !dst.collapsed {
			t.collapse(dst, "")
		}
		t.mergeNode(dst.wild, src.wild)
	}
	if src.collapsed {
		dst.values.merge(&src.values)
	}
}

// merge adds another trie into t.
func (t *trie) merge(o *trie) {
	t.mergeNode(&t.root, &o.root)
	if o.other != nil {
		if t.other == nil {
			t.other = newStats()
		}
		t.other.merge(o.other)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// walk visits every node with its path pattern, children in sorted order.
func (t *trie) walk(fn func(pattern string, n *node)) {
	var rec func(prefix string, n *node)
	rec = func(prefix string, n *node) {
		p := prefix
		if p == "" {
			p = "/"
		}
		fn(p, n)
		keys := make([]string, 0, len(n.lit))
		for k := range n.lit {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			rec(join(prefix, k), n.lit[k])
		}
		if n.wild != nil {
			rec(join(prefix, wildName), n.wild)
		}
	}
	rec("", &t.root)
}

// join appends a segment; query-key groups ("?a&b") attach without a slash.
func join(prefix, seg string) string {
	if strings.HasPrefix(seg, "?") {
		if prefix == "" {
			return "/" + seg
		}
		return prefix + seg
	}
	return prefix + "/" + seg
}
