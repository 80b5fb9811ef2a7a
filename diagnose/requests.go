package diagnose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/reqtrace"
)

// Trace runs of RequestOptions.Trace.
const (
	// TraceProxy records the statements with stacktune's MySQL proxy,
	// which the app's DSN points at.
	TraceProxy = "proxy"
	// TracePFS reads them from performance_schema's statement history.
	TracePFS = "pfs"
)

// Defaults of RequestOptions.
const DefaultTraceDuration = 10 * time.Second

// RequestOptions configures the per-request view (package reqtrace).
type RequestOptions struct {
	// Trace asks for a trace run after the diagnosis run: the bench's
	// requests again, TraceConnections at a time (default 1), for
	// TraceDuration (default DefaultTraceDuration), each statement tied to
	// its request by time. TraceProxy records the statements through a
	// MySQL proxy: ProxyListen, where Run starts one for the whole
	// diagnosis (the app's DSN must point there: AppRestart makes it
	// reconnect), or Tap, a proxy's the caller runs. TracePFS reads
	// performance_schema's history (no change to the app; the server runs
	// with performance_schema=ON). "" makes no trace run.
	Trace            string
	ProxyListen      string
	Tap              *reqtrace.Tap
	TraceConnections int
	TraceDuration    time.Duration
	// NoTags skips reading the captured slow log's statements for
	// sqlcommenter or marginalia tags (read by default: when they name
	// their requests, they give the per-request view without a trace
	// run, at the diagnosis run's own concurrency).
	NoTags bool
	// NPlusOne is N: a class some request runs at least N times is an
	// N+1 (default reqtrace.DefaultNPlusOne).
	NPlusOne int
	// OnRequest receives each request of the per-request view with its
	// statements (reqtrace.Options.OnRequest).
	OnRequest func(reqtrace.RequestCalls)
}

func (o *RequestOptions) check() error {
	switch o.Trace {
	case "", TracePFS:
		if o.ProxyListen != "" || o.Tap != nil {
			return errors.New("a proxy is for the trace run through the proxy (trace proxy)")
		}
	case TraceProxy:
		if (o.ProxyListen == "") == (o.Tap == nil) {
			return errors.New("the trace run through the proxy needs where the proxy listens for the app (the app's DSN points there)")
		}
	default:
		return fmt.Errorf("unknown trace run %q: use %s or %s", o.Trace, TraceProxy, TracePFS)
	}
	if o.TraceConnections < 0 || o.TraceDuration < 0 || o.NPlusOne < 0 {
		return errors.New("negative trace connections, duration or N")
	}
	return nil
}

// startProxy starts the MySQL proxy of a trace run through the proxy,
// for the whole diagnosis.
func (r *run) startProxy(ctx context.Context) error {
	o := &r.opt.Requests
	if o.Trace != TraceProxy || o.ProxyListen == "" {
		return nil
	}
	network, addr, err := mysqlproxy.Upstream(r.opt.DSN)
	if err != nil {
		return err
	}
	o.Tap = reqtrace.NewTap()
	r.proxy, err = mysqlproxy.Start(ctx, mysqlproxy.Options{Listen: o.ProxyListen, Network: network, Address: addr, OnStatement: o.Tap.Statement})
	if err != nil {
		return err
	}
	r.say("MySQL proxy listening on %s for the app (its DSN must point there), forwarding to %s", r.proxy.Addr(), addr)
	r.note("the MySQL proxy on %s ran for the diagnosis only: point the app's DSN back at the server (and restart it)", r.proxy.Addr())
	return nil
}

// requests builds the per-request view: the trace run's when asked, else
// the capture's tags when they name requests.
func (r *run) requests(ctx context.Context) error {
	o := r.opt.Requests
	ropt := reqtrace.Options{NPlusOne: o.NPlusOne, OnRequest: o.OnRequest, RowsExaminedPerCall: map[string]float64{}}
	if d := r.res.Digest; d != nil {
		for _, c := range d.Classes {
			if c.Count > 0 {
				ropt.RowsExaminedPerCall[c.ID] = float64(c.RowsExaminedTotal) / float64(c.Count)
			}
		}
	}
	if h := r.res.HTTP; h != nil {
		ropt.Collapse = h.LearnedPatterns()
		ropt.RequestTimes = reqtrace.RequestTimesOf(h)
	}
	var tags *reqtrace.Report
	if !o.NoTags && r.opt.Source == SourceSlowLog {
		c := r.res.Capture
		f, err := os.Open(r.slow)
		if err != nil {
			return notHere(r.slow, err)
		}
		tagOpt := ropt
		if b := r.res.Bench; b != nil {
			tagOpt.DropLast = b.Connections // the run's end cuts the requests in flight
		}
		if o.Trace != "" {
			tagOpt.OnRequest = nil // the trace run's requests are the ones given
		}
		tags, err = reqtrace.SlowLogSection(ctx, f, r.slow, c.StartOffset, c.EndOffset, tagOpt)
		f.Close()
		if err != nil {
			return fmt.Errorf("reading the slow log's tags: %w", err)
		}
		if tags.Requests == 0 && len(tags.Endpoints) == 0 {
			tags = nil
		}
	}
	if o.Trace != "" {
		rep, err := r.traceRun(ctx, ropt)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			r.note("the trace run failed: %v", err)
			r.say("trace run: %v", err)
		} else {
			r.res.Requests = rep
			if tags != nil {
				r.note("the diagnosis run's statements carry request tags too (%d requests): `stacktune endpoints --slow-log` reads them at the run's own concurrency", tags.Requests)
			}
			return nil
		}
	}
	if tags != nil {
		r.res.Requests = tags
		r.say("per request from the statements' tags: %d requests, %d statements", tags.Requests, tags.Statements)
	}
	return nil
}

// traceRun makes the trace run.
func (r *run) traceRun(ctx context.Context, ropt reqtrace.Options) (*reqtrace.Report, error) {
	o := r.opt.Requests
	b := r.opt.Bench
	b.Label = "trace"
	b.Load.Connections = max(o.TraceConnections, 1)
	b.Load.Duration = o.TraceDuration
	if b.Load.Duration == 0 {
		b.Load.Duration = DefaultTraceDuration
	}
	b.Load.Requests, b.Load.Rate, b.Load.WarmUp = 0, 0, 0
	topt := reqtrace.TraceOptions{Bench: b, Options: ropt, Progress: func(l string) { r.say("%s", l) }}
	if o.Trace == TraceProxy {
		topt.Tap = o.Tap
	} else {
		topt.PFS = r.reader
	}
	if r.opt.BeforeBench != nil {
		if err := r.opt.BeforeBench(ctx); err != nil {
			return nil, fmt.Errorf("before the trace run: %w", err)
		}
	}
	rep, sum, err := reqtrace.Trace(ctx, topt)
	if err != nil {
		return nil, err
	}
	r.say("trace run: %d requests (%.1f req/s), %d statements, %d tied to a request", rep.Requests, sum.RPS, rep.Statements, rep.Attributed)
	if sum != nil && !sum.Passed {
		rep.Notes = append(rep.Notes, "the trace run did not pass its checks ("+strings.Join(sum.FailReasons, "; ")+")")
	}
	return rep, nil
}

// measuredClass finds the per-request view's class of a pt-query-digest
// class (its ID and fingerprint).
func measuredClass(rep *reqtrace.Report, id, fp string) (reqtrace.Class, bool) {
	if rep == nil {
		return reqtrace.Class{}, false
	}
	for _, c := range rep.Classes {
		for _, m := range c.IDs {
			if m == id {
				return c, true
			}
		}
	}
	// A class whose statements the digest saw but the trace run did not
	// spell the same way ("id=?" for "id = ?", no tag): the merged key
	// tells.
	merged := fingerprint.MergedID(fp)
	for _, c := range rep.Classes {
		if c.ID == merged {
			return c, true
		}
	}
	return reqtrace.Class{}, false
}

// sameEndpoint reports whether the per-request view's endpoint key names
// the access log's endpoint: the same (a trace run names endpoints as the
// access log does) or a route that matches it (tags).
func sameEndpoint(key, method, path string) bool {
	return key == endpointKey(method, path) || reqtrace.MatchRoute(key, method, path)
}

// measuredNPlusOne turns the per-request view's N+1 patterns into the
// result's, with the digest's figures of the class where it has them.
func measuredNPlusOne(rep *reqtrace.Report, d digestIndex) []NPlusOne {
	out := []NPlusOne{}
	for _, np := range rep.NPlusOne {
		n := NPlusOne{ID: firstOr(np.IDs, np.ID), IDs: np.IDs, Fingerprint: np.Fingerprint, Sample: np.Sample, Endpoint: np.Endpoint,
			CallsPerRequest: np.Mean, Source: EndpointMeasured, PerRequestMax: np.Max, Requests: np.Requests, TimePerRequestS: np.TimePerRequestS,
			RequestShare: np.RequestShare, Rewrite: np.Rewrite, Problem: np.Problem()}
		var calls int64
		var rows, t float64
		for _, id := range np.IDs {
			if c, r, tm, ok := d.class(id); ok {
				calls += c
				rows += r
				t += tm
			}
		}
		if calls > 0 {
			n.Calls, n.RowsPerCall, n.TimeS = calls, round(rows/float64(calls), 2), round(t, 6)
		} else {
			n.TimeS = np.TimeS
		}
		for _, c := range rep.Classes {
			if c.ID != np.ID {
				continue
			}
			if calls == 0 {
				n.Calls = c.Calls
				if c.Calls > 0 {
					n.RowsPerCall = round(float64(c.RowsSent)/float64(c.Calls), 2)
				}
			}
			for _, e := range c.Endpoints {
				if e.Endpoint == np.Endpoint {
					n.EndpointShare = e.Share
				}
			}
		}
		out = append(out, n)
	}
	return out
}

func firstOr(ids []string, d string) string {
	if len(ids) > 0 {
		return ids[0]
	}
	return d
}

// auditNPlusOne is the audit's input of the measured N+1 patterns.
func auditNPlusOne(rep *reqtrace.Report) []advise.NPlusOne {
	if rep == nil {
		return nil
	}
	var out []advise.NPlusOne
	for _, np := range rep.NPlusOne {
		out = append(out, advise.NPlusOne{Endpoint: np.Endpoint, Fingerprint: np.Fingerprint, Sample: np.Sample, PerRequest: np.Mean, Max: np.Max,
			Requests: np.Requests, TimePerRequestS: np.TimePerRequestS, RequestShare: np.RequestShare, TimeS: np.TimeS, Rewrite: np.Rewrite,
			Source: "stacktune diagnose, " + rep.Source})
	}
	return out
}

// measuredEndpointClasses lists the digest classes an endpoint runs
// (measured), the most calls per request first.
func measuredEndpointClasses(rep *reqtrace.Report, method, path string, digestIDs map[string]bool) []string {
	type cc struct {
		id   string
		mean float64
	}
	var list []cc
	for _, e := range rep.Endpoints {
		if !sameEndpoint(e.Endpoint, method, path) {
			continue
		}
		for _, c := range e.Classes {
			for _, cl := range rep.Classes {
				if cl.ID != c.ID {
					continue
				}
				for _, id := range cl.IDs {
					if digestIDs[id] {
						list = append(list, cc{id, c.Mean})
					}
				}
			}
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].mean > list[j].mean })
	var out []string
	seen := map[string]bool{}
	for _, c := range list {
		if !seen[c.id] {
			seen[c.id] = true
			out = append(out, c.id)
		}
	}
	return out
}
