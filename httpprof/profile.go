package httpprof

import (
	"bytes"
	"container/heap"
	"fmt"
	"regexp"
	"sort"
	"time"

	"github.com/stacktune/stacktune/accesslog"
)

// Defaults for Options.
const (
	DefaultGroupThreshold = 20
	DefaultMaxEndpoints   = 10000
	DefaultSlowest        = 10
	// MaxDepth bounds the segments of a path; deeper ones are cut into
	// one trailing "/...".
	MaxDepth = 32
)

// Options configures a Profiler. The zero value uses the defaults.
type Options struct {
	// GroupThreshold is how many distinct literal segments a position may
	// have before they collapse into :name.
	GroupThreshold int
	// Groups are user patterns (regular expressions matched against the
	// path without query string) that take precedence over learning.
	Groups []*regexp.Regexp
	// QueryKeys groups query strings by their sorted keys instead of
	// dropping them.
	QueryKeys bool
	// Since and Until keep requests in [Since, Until) when set; requests
	// without a time are kept.
	Since, Until time.Time
	MaxEndpoints int
	Slowest      int // how many single slowest requests to keep
	// Collapse lists positions to treat as learned from the start
	// ("/profile/:name"), so a second profile groups like a first one.
	Collapse []string
	// Values lists positions known to hold values ("/diary/:name", from
	// the scenario's templates: ShapePatterns): a literal there collapses
	// the position at once, as a learned group, however few distinct
	// values a short run sees; numbers and other typed segments there
	// keep their type until a literal comes.
	Values []string
}

// CompileGroups compiles -m patterns, naming the one that fails.
func CompileGroups(patterns []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("group pattern %q: %w", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// Profiler aggregates records into endpoints.
type Profiler struct {
	opt     Options
	trie    *trie
	groups  []groupStats
	slowest slowHeap
	scratch []byte
	keys    [][]byte

	requests, filtered int64
	first, last        time.Time
	timed              int64
}

type groupStats struct {
	re      *regexp.Regexp
	methods []methodStats
}

// NewProfiler returns an empty profiler.
func NewProfiler(opt Options) *Profiler {
	if opt.GroupThreshold <= 0 {
		opt.GroupThreshold = DefaultGroupThreshold
	}
	if opt.MaxEndpoints <= 0 {
		opt.MaxEndpoints = DefaultMaxEndpoints
	}
	if opt.Slowest <= 0 {
		opt.Slowest = DefaultSlowest
	}
	p := &Profiler{opt: opt, trie: newTrie(opt.GroupThreshold, opt.MaxEndpoints)}
	for _, pat := range opt.Collapse {
		p.trie.seedCollapse(pat)
	}
	for _, pat := range opt.Values {
		p.trie.seedValues(pat)
	}
	for _, re := range opt.Groups {
		p.groups = append(p.groups, groupStats{re: re})
	}
	return p
}

// methods interns the usual HTTP methods so a map key or string field needs
// no allocation; anything else is "OTHER" (a bounded set of names).
var methods = []string{"GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS", "CONNECT", "TRACE", "PROPFIND"}

func internMethod(m []byte) string {
	for _, s := range methods {
		if string(m) == s {
			return s
		}
	}
	if len(m) == 0 {
		return "-"
	}
	return "OTHER"
}

// Add profiles one record.
func (p *Profiler) Add(r *accesslog.Record) {
	if r.Has&accesslog.HasTime != 0 {
		if !p.opt.Since.IsZero() && r.Time.Before(p.opt.Since) || !p.opt.Until.IsZero() && !r.Time.Before(p.opt.Until) {
			p.filtered++
			return
		}
		if p.first.IsZero() || r.Time.Before(p.first) {
			p.first = r.Time
		}
		if r.Time.After(p.last) {
			p.last = r.Time
		}
	}
	p.requests++
	if r.Has&accesslog.HasRequestTime != 0 {
		p.timed++
		p.slowest.offer(r, p.opt.Slowest)
	}
	method := internMethod(r.Method)
	path, query := splitURI(r.URI)
	static := isStatic(path)
	for i := range p.groups {
		if p.groups[i].re.Match(path) {
			statsFor(&p.groups[i].methods, method).add(r, static)
			return
		}
	}
	n := &p.trie.root
	if rest := bytes.TrimPrefix(path, []byte("/")); len(rest) > 0 {
		for depth := 1; ; depth++ {
			if depth > MaxDepth {
				n = p.trie.child(n, []byte("..."), "")
				break
			}
			seg, tail, more := bytes.Cut(rest, []byte("/"))
			n = p.trie.child(n, seg, classify(seg))
			if !more {
				break
			}
			rest = tail // "" after a trailing slash: an empty last segment
		}
	}
	if p.opt.QueryKeys && len(query) > 0 {
		n = p.trie.child(n, p.queryKeys(query), "")
	}
	p.trie.stats(n, method).add(r, static)
}

// splitURI cuts the request target into path and query, dropping a
// fragment and an absolute-form scheme and host.
func splitURI(uri []byte) (path, query []byte) {
	if i := bytes.IndexByte(uri, '#'); i >= 0 {
		uri = uri[:i]
	}
	if bytes.HasPrefix(uri, []byte("http://")) || bytes.HasPrefix(uri, []byte("https://")) {
		rest := uri[bytes.IndexByte(uri, ':')+3:]
		if i := bytes.IndexByte(rest, '/'); i >= 0 {
			uri = rest[i:]
		} else {
			uri = []byte("/")
		}
	}
	if i := bytes.IndexByte(uri, '?'); i >= 0 {
		return uri[:i], uri[i+1:]
	}
	return uri, nil
}

// queryKeys renders "?a&b" from the sorted, distinct keys of a query string.
func (p *Profiler) queryKeys(q []byte) []byte {
	p.keys = p.keys[:0]
	for len(q) > 0 {
		var kv []byte
		if i := bytes.IndexByte(q, '&'); i >= 0 {
			kv, q = q[:i], q[i+1:]
		} else {
			kv, q = q, nil
		}
		if i := bytes.IndexByte(kv, '='); i >= 0 {
			kv = kv[:i]
		}
		if len(kv) > 0 && len(p.keys) < 16 {
			p.keys = append(p.keys, kv)
		}
	}
	sort.Slice(p.keys, func(i, j int) bool { return bytes.Compare(p.keys[i], p.keys[j]) < 0 })
	b := append(p.scratch[:0], '?')
	for i, k := range p.keys {
		if i > 0 && bytes.Equal(k, p.keys[i-1]) {
			continue
		}
		if len(b) > 1 {
			b = append(b, '&')
		}
		b = append(b, k...)
	}
	p.scratch = b
	return b
}

func statsFor(list *[]methodStats, method string) *stats {
	for i := range *list {
		if (*list)[i].method == method {
			return (*list)[i].s
		}
	}
	s := newStats()
	*list = append(*list, methodStats{method: method, s: s})
	return s
}

// Merge adds o into p. o must not be used afterwards.
func (p *Profiler) Merge(o *Profiler) {
	p.trie.merge(o.trie)
	for i := range o.groups {
		for _, m := range o.groups[i].methods {
			statsFor(&p.groups[i].methods, m.method).merge(m.s)
		}
	}
	for _, s := range o.slowest {
		p.slowest.push(s, p.opt.Slowest)
	}
	p.requests += o.requests
	p.filtered += o.filtered
	p.timed += o.timed
	if !o.first.IsZero() && (p.first.IsZero() || o.first.Before(p.first)) {
		p.first = o.first
	}
	if o.last.After(p.last) {
		p.last = o.last
	}
}

// SlowRequest is one of the slowest single requests.
type SlowRequest struct {
	Time        *time.Time `json:"time,omitempty"`
	Method      string     `json:"method"`
	URI         string     `json:"uri"`
	Status      int        `json:"status"`
	RequestTime float64    `json:"request_time_s"`
	offset      int64
}

// slowHeap keeps the N slowest requests (a min-heap on request time).
type slowHeap []SlowRequest

// weaker orders requests for eviction: faster first, and of equally slow
// ones the later in the input, so the kept list does not depend on how
// requests were split among workers.
func weaker(a, b *SlowRequest) bool {
	if a.RequestTime != b.RequestTime {
		return a.RequestTime < b.RequestTime
	}
	return a.offset > b.offset
}

func (h slowHeap) Len() int           { return len(h) }
func (h slowHeap) Less(i, j int) bool { return weaker(&h[i], &h[j]) }
func (h slowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *slowHeap) Push(x any)        { *h = append(*h, x.(SlowRequest)) }
func (h *slowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer considers a record, copying it only when it makes the list.
func (h *slowHeap) offer(r *accesslog.Record, n int) {
	if len(*h) >= n && !weaker(&(*h)[0], &SlowRequest{RequestTime: r.RequestTime, offset: r.Offset}) {
		return
	}
	s := SlowRequest{Method: internMethod(r.Method), URI: string(r.URI), Status: r.Status, RequestTime: r.RequestTime, offset: r.Offset}
	if r.Has&accesslog.HasTime != 0 {
		t := r.Time
		s.Time = &t
	}
	h.push(s, n)
}

func (h *slowHeap) push(s SlowRequest, n int) {
	if len(*h) < n {
		heap.Push(h, s)
		return
	}
	if weaker(&(*h)[0], &s) {
		(*h)[0] = s
		heap.Fix(h, 0)
	}
}
