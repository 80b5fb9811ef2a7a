package reqtrace

import (
	"strings"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/sqltag"
)

// nameEndpoints sets each request's Endpoint from its method and path, as
// the access-log profile groups them (package httpprof: typed segments,
// positions with many distinct values collapsed to :name), seeded with
// collapse (groups already learned from the stack's access log) and
// values (positions the scenario fills with values: httpprof's Values).
func nameEndpoints(reqs []Request, collapse, values []string) error {
	learn := httpprof.NewProfiler(httpprof.Options{Collapse: collapse, Values: values, Slowest: 1})
	var rec accesslog.Record
	for i := range reqs {
		fill(&rec, &reqs[i])
		learn.Add(&rec)
	}
	rep, err := learn.Report(httpprof.ReportOptions{})
	if err != nil {
		return err
	}
	learned := append(append([]string(nil), collapse...), rep.LearnedPatterns()...)
	cache := map[string]string{}
	for i := range reqs {
		r := &reqs[i]
		k := r.Method + " " + r.Path
		if e, ok := cache[k]; ok {
			r.Endpoint = e
			continue
		}
		one := httpprof.NewProfiler(httpprof.Options{Collapse: learned, Values: values, Slowest: 1})
		fill(&rec, r)
		one.Add(&rec)
		rep, err := one.Report(httpprof.ReportOptions{})
		if err != nil {
			return err
		}
		r.Endpoint = k
		if len(rep.Endpoints) == 1 {
			r.Endpoint = strings.TrimSpace(rep.Endpoints[0].Method + " " + rep.Endpoints[0].Path)
		}
		cache[k] = r.Endpoint
	}
	return nil
}

func fill(rec *accesslog.Record, r *Request) {
	*rec = accesslog.Record{Time: r.Start, Method: []byte(r.Method), URI: []byte(r.Path), Status: r.Status, Has: accesslog.HasTime}
}

// MatchRoute reports whether an endpoint named by tags (a route such as
// "GET /profile/{account_name}" or "/books/:id") is the access log's
// endpoint method and path ("GET", "/profile/:name"): the methods agree
// when both are known, and the paths have the same segments, where a
// route's parameter ({x}, :x, <x>, *) stands for any segment (and Go's
// {$} for the empty last segment of "/").
func MatchRoute(route, method, path string) bool {
	rm, rp := sqltag.SplitRoute(route)
	if !strings.HasPrefix(rp, "/") || !strings.HasPrefix(path, "/") {
		return false
	}
	if rm != "" && method != "" && !strings.EqualFold(rm, method) {
		return false
	}
	rp, _, _ = strings.Cut(rp, "?")
	path, _, _ = strings.Cut(path, "?")
	rs, ps := strings.Split(rp, "/"), strings.Split(path, "/")
	if len(rs) != len(ps) {
		return false
	}
	for i := range rs {
		if rs[i] == "{$}" { // Go's end-of-path marker: only "/" itself
			if ps[i] != "" {
				return false
			}
			continue
		}
		if rs[i] == ps[i] || isParam(rs[i]) {
			continue
		}
		return false
	}
	return true
}

// isParam reports whether a route segment is a parameter.
func isParam(seg string) bool {
	switch {
	case seg == "*":
		return true
	case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
		return true
	case strings.HasPrefix(seg, "<") && strings.HasSuffix(seg, ">"):
		return true
	case strings.HasPrefix(seg, ":") && len(seg) > 1:
		return true
	}
	return false
}
