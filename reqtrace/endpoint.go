package reqtrace

import (
	"strings"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/httpprof"
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
