package httpprof

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/stacktune/stacktune/internal/skip"
)

// Report is a finished profile: the shape of `stacktune http --format json`.
type Report struct {
	Format        string         `json:"format"`
	Overall       Overall        `json:"overall"`
	Endpoints     []Endpoint     `json:"endpoints"`
	GroupsLearned []LearnedGroup `json:"groups_learned"`
	Slowest       []SlowRequest  `json:"slowest"`
	Skipped       Skipped        `json:"skipped"`
	Notes         []string       `json:"notes,omitempty"`
}

// Overall summarises every request kept.
type Overall struct {
	Inputs         []string `json:"inputs"`
	Bytes          int64    `json:"bytes"`
	Requests       int64    `json:"requests"`
	Filtered       int64    `json:"filtered"`
	Endpoints      int      `json:"endpoints"`
	EndpointsShown int      `json:"endpoints_shown"`
	Timed          int64    `json:"timed"`
	TimeTotal      float64  `json:"time_total_s"`
	// ClientClosed is the requests the client closed (status 499), over
	// every endpoint.
	ClientClosed int64      `json:"client_closed"`
	FirstSeen    *time.Time `json:"first_seen,omitempty"`
	LastSeen     *time.Time `json:"last_seen,omitempty"`
	Rate         float64    `json:"requests_per_s,omitempty"`
	Static       Share      `json:"static"`
	Dynamic      Share      `json:"dynamic"`
}

// Share is the part of requests and of request time in a category.
type Share struct {
	Requests  int64   `json:"requests"`
	TimeTotal float64 `json:"time_total_s"`
	// RequestShare and TimeShare are 0..1.
	RequestShare float64 `json:"request_share"`
	TimeShare    float64 `json:"time_share"`
}

// Skipped counts unusable lines by reason (skip codes).
type Skipped struct {
	Count   int64       `json:"count"`
	Reasons skip.Counts `json:"reasons"`
}

// StatusClientClosed is nginx's 499: the client closed the connection
// before the response (a bench run ending, a user leaving). It is counted
// apart (StatusCounts.ClientClosed), neither a 4xx nor a server error.
const StatusClientClosed = 499

// StatusCounts are requests per status class. S4xx does not include 499,
// counted in ClientClosed.
type StatusCounts struct {
	S1xx         int64 `json:"1xx"`
	S2xx         int64 `json:"2xx"`
	S3xx         int64 `json:"3xx"`
	S4xx         int64 `json:"4xx"`
	S5xx         int64 `json:"5xx"`
	ClientClosed int64 `json:"499"`
	Other        int64 `json:"other,omitempty"`
}

// UpstreamTimes summarise $upstream_response_time.
type UpstreamTimes struct {
	Count int64   `json:"count"`
	Total float64 `json:"total_s"`
	Avg   float64 `json:"avg_s"`
	P99   float64 `json:"p99_s"`
	Max   float64 `json:"max_s"`
}

// Endpoint is one row of the profile. Times are seconds over the requests
// that logged a request time (Timed).
type Endpoint struct {
	Rank       int            `json:"rank"`
	Method     string         `json:"method"`
	Path       string         `json:"path"`
	Count      int64          `json:"count"`
	Timed      int64          `json:"timed"`
	Share      float64        `json:"time_share"`
	TimeTotal  float64        `json:"time_total_s"`
	TimeAvg    float64        `json:"time_avg_s"`
	TimeMin    float64        `json:"time_min_s"`
	TimeP50    float64        `json:"time_p50_s"`
	TimeP90    float64        `json:"time_p90_s"`
	TimeP95    float64        `json:"time_p95_s"`
	TimeP99    float64        `json:"time_p99_s"`
	TimeMax    float64        `json:"time_max_s"`
	Status     StatusCounts   `json:"status"`
	BytesTotal int64          `json:"bytes_total"`
	BytesAvg   float64        `json:"bytes_avg"`
	Upstream   *UpstreamTimes `json:"upstream,omitempty"`
	// Static is true when most of the endpoint's requests were for static
	// files (by extension); StaticRequests and StaticTimeTotal count them.
	Static          bool    `json:"static"`
	StaticRequests  int64   `json:"static_requests"`
	StaticTimeTotal float64 `json:"static_time_total_s"`
}

// LearnedGroup is a path position stacktune collapsed into :name.
type LearnedGroup struct {
	Pattern string `json:"pattern"`
	// Distinct is the number of distinct values seen there: exact up to
	// 32, estimated (within about 20%) above. 0 for a position collapsed
	// only because another profile had learned it (diff).
	Distinct int      `json:"distinct_values"`
	Examples []string `json:"examples"`
}

// SortKeys are the columns Endpoints can be sorted by.
var SortKeys = []string{"total", "count", "avg", "min", "p50", "p90", "p95", "p99", "max", "bytes", "bytes-avg",
	"2xx", "3xx", "4xx", "5xx", "499", "upstream", "path"}

// ReportOptions selects and orders endpoints.
type ReportOptions struct {
	Sort  string // one of SortKeys; "" means total
	Limit int    // 0 means all
}

// Validate checks the options.
func (o ReportOptions) Validate() error {
	if o.Sort != "" && !contains(SortKeys, o.Sort) {
		return fmt.Errorf("unknown sort key %q: use one of %s", o.Sort, strings.Join(SortKeys, ", "))
	}
	if o.Limit < 0 {
		return fmt.Errorf("limit %d is negative: use 0 for all endpoints", o.Limit)
	}
	return nil
}

// Report builds the profile of everything added so far.
func (p *Profiler) Report(opt ReportOptions) (*Report, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	r := &Report{Skipped: Skipped{Reasons: skip.Counts{}}, GroupsLearned: []LearnedGroup{}, Slowest: []SlowRequest{}}
	for i := range p.groups {
		for _, m := range p.groups[i].methods {
			r.Endpoints = append(r.Endpoints, m.s.endpoint(m.method, p.groups[i].re.String()))
		}
	}
	p.trie.walk(func(pattern string, n *node) {
		for _, m := range n.methods {
			r.Endpoints = append(r.Endpoints, m.s.endpoint(m.method, pattern))
		}
		if n.collapsed {
			r.GroupsLearned = append(r.GroupsLearned, LearnedGroup{Pattern: join(strings.TrimSuffix(pattern, "/"), wildName),
				Distinct: n.values.distinct(), Examples: n.values.values()})
		}
	})
	if p.trie.other != nil {
		r.Endpoints = append(r.Endpoints, p.trie.other.endpoint("*", "(other)"))
		r.Notes = append(r.Notes, fmt.Sprintf("more than %d endpoints: the rest are counted under (other)", p.opt.MaxEndpoints))
	}
	slow := append([]SlowRequest(nil), p.slowest...)
	sort.Slice(slow, func(i, j int) bool {
		if slow[i].RequestTime != slow[j].RequestTime {
			return slow[i].RequestTime > slow[j].RequestTime
		}
		return slow[i].offset < slow[j].offset
	})
	r.Slowest = append(r.Slowest, slow...)
	o := &r.Overall
	o.Requests, o.Filtered, o.Timed = p.requests, p.filtered, p.timed
	if !p.first.IsZero() {
		f, l := p.first, p.last
		o.FirstSeen, o.LastSeen = &f, &l
		if span := l.Sub(f).Seconds(); span > 0 {
			o.Rate = float64(p.requests) / span
		}
	}
	r.Finish(opt)
	return r, nil
}

// Finish computes shares, then sorts, ranks and limits the endpoints. Diff
// and reports read back from JSON call it too.
func (r *Report) Finish(opt ReportOptions) {
	sortEndpoints(r.Endpoints, opt.Sort)
	o := &r.Overall
	o.Endpoints = len(r.Endpoints)
	o.TimeTotal, o.ClientClosed, o.Static, o.Dynamic = 0, 0, Share{}, Share{}
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		e.Rank = i + 1
		o.TimeTotal += e.TimeTotal
		o.ClientClosed += e.Status.ClientClosed
		o.Static.Requests += e.StaticRequests
		o.Static.TimeTotal += e.StaticTimeTotal
		o.Dynamic.Requests += e.Count - e.StaticRequests
		o.Dynamic.TimeTotal += e.TimeTotal - e.StaticTimeTotal
	}
	var requests int64
	for _, e := range r.Endpoints {
		requests += e.Count
	}
	for _, part := range []*Share{&o.Static, &o.Dynamic} {
		if requests > 0 {
			part.RequestShare = float64(part.Requests) / float64(requests)
		}
		if o.TimeTotal > 0 {
			part.TimeShare = part.TimeTotal / o.TimeTotal
		}
	}
	for i := range r.Endpoints {
		if o.TimeTotal > 0 {
			r.Endpoints[i].Share = r.Endpoints[i].TimeTotal / o.TimeTotal
		}
	}
	if opt.Limit > 0 && len(r.Endpoints) > opt.Limit {
		r.Endpoints = r.Endpoints[:opt.Limit]
	}
	o.EndpointsShown = len(r.Endpoints)
}

func sortValue(e *Endpoint, key string) float64 {
	switch key {
	case "count":
		return float64(e.Count)
	case "avg":
		return e.TimeAvg
	case "min":
		return e.TimeMin
	case "p50":
		return e.TimeP50
	case "p90":
		return e.TimeP90
	case "p95":
		return e.TimeP95
	case "p99":
		return e.TimeP99
	case "max":
		return e.TimeMax
	case "bytes":
		return float64(e.BytesTotal)
	case "bytes-avg":
		return e.BytesAvg
	case "2xx":
		return float64(e.Status.S2xx)
	case "3xx":
		return float64(e.Status.S3xx)
	case "4xx":
		return float64(e.Status.S4xx)
	case "5xx":
		return float64(e.Status.S5xx)
	case "499":
		return float64(e.Status.ClientClosed)
	case "upstream":
		if e.Upstream != nil {
			return e.Upstream.Total
		}
		return 0
	}
	return e.TimeTotal
}

// sortEndpoints orders by key, descending (path: ascending), ties by total
// time, count, then method and path, so the order is stable.
func sortEndpoints(es []Endpoint, key string) {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := &es[i], &es[j]
		if key == "path" {
			if a.Path != b.Path {
				return a.Path < b.Path
			}
			return a.Method < b.Method
		}
		if va, vb := sortValue(a, key), sortValue(b, key); va != vb {
			return va > vb
		}
		if a.TimeTotal != b.TimeTotal {
			return a.TimeTotal > b.TimeTotal
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Method < b.Method
	})
}
