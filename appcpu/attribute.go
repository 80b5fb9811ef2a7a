package appcpu

import (
	"sort"
	"strings"
	"time"

	"github.com/stacktune/stacktune/internal/skip"
)

// Request is one request of the trace run: its endpoint, its trace ID
// (for pprof's labels) and its time.
type Request struct {
	Endpoint, Trace string
	Start, End      time.Time
}

// Profile is the app's CPU over a trace run, per endpoint.
type Profile struct {
	// Sampler is "perf" or "pprof"; Symbols one of the Symbols* codes.
	Sampler string `json:"sampler"`
	Symbols string `json:"symbols"`
	PIDs    []int  `json:"pids,omitempty"`
	// Samples were taken, Attributed fell in a request (shared by
	// window for unlabelled pprof samples: Shared of them), Outside
	// between requests (the app's background work, the sampler's start
	// and end) or in a request left out (cut by the run's end),
	// Ambiguous within several requests' times.
	Samples    int64 `json:"samples"`
	Attributed int64 `json:"attributed"`
	Shared     int64 `json:"shared,omitempty"`
	Outside    int64 `json:"outside"`
	Ambiguous  int64 `json:"ambiguous,omitempty"`
	// CPUMs is the app's CPU time sampled, OutsideMs its part between
	// requests.
	CPUMs     float64 `json:"cpu_ms"`
	OutsideMs float64 `json:"outside_ms"`
	// Endpoints are the endpoints, the most app CPU in the run first.
	Endpoints []Usage     `json:"endpoints,omitempty"`
	Skipped   skip.Counts `json:"skipped,omitempty"`
	Notes     []string    `json:"notes,omitempty"`
}

// Usage is one endpoint's time per request: the app's CPU, the
// database's, the rest; its top functions and its stacks.
type Usage struct {
	Endpoint string `json:"endpoint,omitempty"`
	// ProfiledRequests are the requests its figures are over.
	ProfiledRequests int64 `json:"profiled_requests"`
	// RequestMsPerRequest is the mean request time (wall), the sum of
	// the three parts when none is negative: AppCPU (the samples in its
	// requests), DB (its statements' time, from the trace run) and
	// Other, the rest (waiting: network, locks, sleeps; 0 when the CPU
	// and DB time exceed the request's, as a multi-threaded request's
	// can).
	RequestMsPerRequest float64 `json:"request_ms_per_request"`
	AppCPUMsPerRequest  float64 `json:"app_cpu_ms_per_request"`
	DBMsPerRequest      float64 `json:"db_ms_per_request"`
	OtherMsPerRequest   float64 `json:"other_ms_per_request"`
	// CPUSamples are the samples in its requests.
	CPUSamples float64 `json:"cpu_samples"`
	// TopFunctions are the functions with the most CPU of their own
	// (self), the most first: Share is their self time over the
	// endpoint's CPU, TotalShare their inclusive time (their callees'
	// too).
	TopFunctions []Function `json:"top_functions"`
	// FlameGraph is the path of its flame graph (SVG), once written.
	FlameGraph string `json:"flame_graph,omitempty"`
	// Stacks are its on-CPU stacks (root first) with their CPU time in
	// the run, the heaviest first, at most MaxStacks (the rest as one
	// OtherStacks stack): the flame graph's data and Diff's.
	Stacks []Stack `json:"stacks,omitempty"`
}

// Function is one function's part of an endpoint's CPU.
type Function struct {
	Name       string  `json:"name"`
	Share      float64 `json:"share"`
	TotalShare float64 `json:"total_share"`
}

// Stack is one stack's CPU time.
type Stack struct {
	Frames []string `json:"frames"`
	Ms     float64  `json:"ms"`
}

// EndpointTimes are an endpoint's DB time per request (from the trace
// run's statements).
type EndpointTimes struct {
	DBMsPerRequest float64
}

// Attribute gives each of c's samples to the request it was taken in
// (requests: the trace run's, those its end cut left out) and sums them
// per endpoint; db gives each endpoint's DB time per request.
func Attribute(c *Capture, reqs []Request, db map[string]EndpointTimes) *Profile {
	p := &Profile{Sampler: c.Sampler, Symbols: c.Symbols, PIDs: c.PIDs, Skipped: skip.Counts{}, Notes: append([]string(nil), c.Notes...)}
	p.Skipped.Merge(c.Skipped)
	rs := append([]Request(nil), reqs...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
	byTrace := make(map[string]int, len(rs))
	type acc struct {
		requests int64
		wall     time.Duration
		samples  float64
		ms       float64
		stacks   map[string]*stackAcc
	}
	eps := map[string]*acc{}
	get := func(name string) *acc {
		a := eps[name]
		if a == nil {
			a = &acc{stacks: map[string]*stackAcc{}}
			eps[name] = a
		}
		return a
	}
	for i, r := range rs {
		if r.Trace != "" {
			byTrace[r.Trace] = i
		}
		a := get(r.Endpoint)
		a.requests++
		a.wall += r.End.Sub(r.Start)
	}
	add := func(ep string, s *Sample, frac float64) {
		a := get(ep)
		ms := float64(s.Weight) / 1e6 * frac
		a.samples += frac
		a.ms += ms
		k := stackKey(s.Stack)
		sa := a.stacks[k]
		if sa == nil {
			sa = &stackAcc{ids: s.Stack}
			a.stacks[k] = sa
		}
		sa.ms += ms
	}
	for i := range c.Samples {
		s := &c.Samples[i]
		p.Samples++
		ms := float64(s.Weight) / 1e6
		p.CPUMs += ms
		switch {
		case s.Trace != "":
			if j, ok := byTrace[s.Trace]; ok {
				add(rs[j].Endpoint, s, 1)
				p.Attributed++
			} else { // a request left out: cut by the run's end
				p.Outside++
				p.OutsideMs += ms
			}
			continue
		case s.Route != "":
			if _, ok := eps[s.Route]; ok {
				add(s.Route, s, 1)
				p.Attributed++
				continue
			}
		}
		if s.Time.IsZero() {
			if !s.WindowEnd.After(s.WindowStart) {
				p.Outside++
				p.OutsideMs += ms
				continue
			}
			shares := overlaps(rs, s.WindowStart, s.WindowEnd)
			in := 0.0
			for ep, f := range shares {
				add(ep, s, f)
				in += f
			}
			if in > 0 {
				p.Attributed++
				p.Shared++
			} else {
				p.Outside++
			}
			p.OutsideMs += ms * (1 - in)
			continue
		}
		switch j, n := within(rs, s.Time); n {
		case 1:
			add(rs[j].Endpoint, s, 1)
			p.Attributed++
		case 0:
			p.Outside++
			p.OutsideMs += ms
		default:
			p.Ambiguous++
		}
	}
	for name, a := range eps {
		if a.requests == 0 {
			continue // a route label naming no request of the run
		}
		n := float64(a.requests)
		u := Usage{Endpoint: name, ProfiledRequests: a.requests, CPUSamples: a.samples,
			RequestMsPerRequest: float64(a.wall) / 1e6 / n, AppCPUMsPerRequest: a.ms / n,
			DBMsPerRequest: db[name].DBMsPerRequest}
		u.OtherMsPerRequest = max(0, u.RequestMsPerRequest-u.AppCPUMsPerRequest-u.DBMsPerRequest)
		u.Stacks = stacksOf(c.Frames, a.stacks)
		u.TopFunctions = TopOf(u.Stacks, TopFunctions)
		p.Endpoints = append(p.Endpoints, u)
	}
	sort.Slice(p.Endpoints, func(i, j int) bool {
		a, b := p.Endpoints[i], p.Endpoints[j]
		ta, tb := a.AppCPUMsPerRequest*float64(a.ProfiledRequests), b.AppCPUMsPerRequest*float64(b.ProfiledRequests)
		if ta != tb {
			return ta > tb
		}
		return a.Endpoint < b.Endpoint
	})
	if p.Shared > 0 {
		p.Notes = append(p.Notes, "samples without a request label carry only their profile's window: they are shared among the endpoints whose requests overlap it, by their time in it (exact when one endpoint's requests fill a window; label each request with pprof.Do and a trace_id label for exact figures)")
	}
	if c.Symbols == SymbolsInterpreter {
		p.Notes = append(p.Notes, "the app runs in an interpreter that publishes no perf map: its functions show as the interpreter's own frames (execute_ex, zend_*, _PyEval_*), not the script's; a runtime's perf map names them (Node --perf-basic-prof, PHP's JIT with opcache.jit_debug)")
	}
	if p.Samples == 0 {
		p.Notes = append(p.Notes, "no sample was taken: is the app on this host, are the processes its, and did the trace run send it requests?")
	}
	return p
}

type stackAcc struct {
	ids []int32
	ms  float64
}

func stackKey(ids []int32) string {
	var b strings.Builder
	b.Grow(len(ids) * 4)
	for _, id := range ids {
		b.WriteByte(byte(id))
		b.WriteByte(byte(id >> 8))
		b.WriteByte(byte(id >> 16))
		b.WriteByte(byte(id >> 24))
	}
	return b.String()
}

// stacksOf names an endpoint's stacks, the heaviest first, at most
// MaxStacks.
func stacksOf(frames []string, m map[string]*stackAcc) []Stack {
	all := make([]*stackAcc, 0, len(m))
	for _, s := range m {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].ms != all[j].ms {
			return all[i].ms > all[j].ms
		}
		return stackKey(all[i].ids) < stackKey(all[j].ids)
	})
	out := make([]Stack, 0, min(len(all), MaxStacks))
	var rest float64
	for i, s := range all {
		if i >= MaxStacks-1 && len(all) > MaxStacks {
			rest += s.ms
			continue
		}
		names := make([]string, len(s.ids))
		for k, id := range s.ids {
			if int(id) < len(frames) && id >= 0 {
				names[k] = frames[id]
			} else {
				names[k] = "[unknown]"
			}
		}
		out = append(out, Stack{Frames: names, Ms: s.ms})
	}
	if rest > 0 {
		out = append(out, Stack{Frames: []string{OtherStacks}, Ms: rest})
	}
	return out
}

// TopOf are the n functions with the most self time in stacks.
func TopOf(stacks []Stack, n int) []Function {
	self, total := map[string]float64{}, map[string]float64{}
	var all float64
	for _, s := range stacks {
		if len(s.Frames) == 0 {
			continue
		}
		all += s.Ms
		self[s.Frames[len(s.Frames)-1]] += s.Ms
		seen := map[string]bool{}
		for _, f := range s.Frames {
			if !seen[f] {
				seen[f] = true
				total[f] += s.Ms
			}
		}
	}
	if all <= 0 {
		return []Function{}
	}
	out := make([]Function, 0, len(self))
	for name, v := range self {
		out = append(out, Function{Name: name, Share: v / all, TotalShare: total[name] / all})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Share != out[j].Share {
			return out[i].Share > out[j].Share
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// within finds the requests whose time holds t: the index of one and how
// many (rs sorted by start; at most 64 earlier starts are looked at, the
// concurrency of a trace run being small).
func within(rs []Request, t time.Time) (int, int) {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Start.After(t) })
	found, n := -1, 0
	for j := i - 1; j >= 0 && j >= i-64; j-- {
		if !rs[j].End.Before(t) {
			found = j
			n++
		}
	}
	return found, n
}

// overlaps are each endpoint's share of the window [ws, we]: its
// requests' time in it over its length.
func overlaps(rs []Request, ws, we time.Time) map[string]float64 {
	out := map[string]float64{}
	span := float64(we.Sub(ws))
	i := sort.Search(len(rs), func(i int) bool { return !rs[i].Start.Before(we) })
	for j := i - 1; j >= 0; j-- {
		r := rs[j]
		s, e := maxT(r.Start, ws), minT(r.End, we)
		if e.After(s) {
			out[r.Endpoint] += float64(e.Sub(s)) / span
		}
		if r.End.Before(ws) && ws.Sub(r.Start) > time.Minute {
			break
		}
	}
	var sum float64
	for _, v := range out {
		sum += v
	}
	if sum > 1 { // overlapping requests: scale to the window
		for k := range out {
			out[k] /= sum
		}
	}
	return out
}

func maxT(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minT(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
