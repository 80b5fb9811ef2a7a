package diagnose

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/sqltag"
)

// Ranking bounds.
const (
	// oncePerRequest: an N+1 class whose endpoint runs it fewer times
	// per request is one query per page.
	oncePerRequest = 1.5
	rankEndpoints  = 20
	hotspotsPer    = 5
)

// rank fills the result's ranked tables and its hotspots from what the
// run found.
func (r *Result) rank() {
	likely := map[string]ClassAttribution{}
	if r.Attribution != nil {
		for _, ca := range r.Attribution.Classes {
			likely[ca.ID] = ca
		}
	}
	r.Classes = classTimes(r.Digest, r.Indexes, likely, r.CapacityS, r.Requests)
	r.Endpoints = endpointTimes(r.HTTP, r.Classes, r.CapacityS, r.Requests)
	r.NPlusOne = nPlusOnes(r.Indexes, r.Digest, likely, r.Endpoints)
	if r.Requests != nil {
		r.NPlusOne = withCutEstimates(measuredNPlusOne(r.Requests, newDigestIndex(r.Digest)), r.NPlusOne, r.Requests)
	}
	r.Hotspots = hotspots(r.Endpoints, r.Classes, r.NPlusOne)
}

// digestIndex looks a digest's classes up by ID.
type digestIndex map[string]digest.Class

func newDigestIndex(d *digest.Report) digestIndex {
	out := digestIndex{}
	if d != nil {
		for _, c := range d.Classes {
			out[c.ID] = c
		}
	}
	return out
}

// class returns a class's calls, rows sent and total time.
func (x digestIndex) class(id string) (int64, float64, float64, bool) {
	c, ok := x[id]
	return c.Count, float64(c.RowsSentTotal), c.TimeTotal, ok
}

func classTimes(d *digest.Report, ix *indexadv.Result, likely map[string]ClassAttribution, capacity float64, measured *reqtrace.Report) []ClassTime {
	out := []ClassTime{}
	if d == nil {
		return out
	}
	proven := map[string][]string{}
	problems := map[string]indexadv.QueryReport{}
	if ix != nil {
		for _, p := range ix.Proposals {
			for _, q := range p.Queries {
				proven[q] = append(proven[q], p.DDL)
			}
		}
		for _, q := range ix.Queries {
			problems[q.ID] = q
		}
	}
	for _, c := range d.Classes {
		ct := ClassTime{Rank: c.Rank, ID: c.ID, Fingerprint: c.Fingerprint, Count: c.Count, TimeS: c.TimeTotal, Share: c.Share,
			CapacityShare: share(c.TimeTotal, capacity), AvgS: c.TimeAvg, RowsExaminedPerSent: c.RowsExaminedPerSent, Indexes: proven[c.ID]}
		if q, ok := problems[c.ID]; ok {
			ct.Problems = q.Problems
			ct.NPlusOne = q.NPlusOne != nil
		}
		if measured != nil {
			mc, ok := measuredClass(measured, c.ID, c.Fingerprint)
			if cut, cok := cutTop(mc); ok && cok && !slices.ContainsFunc(mc.Endpoints, func(e reqtrace.ClassEndpoint) bool { return e.Endpoint == cut.Endpoint }) {
				// Most of its calls in requests the end of the run cut:
				// their endpoint, and a lower bound per request (an
				// endpoint that also has counted requests is measured).
				ct.Endpoint, ct.EndpointShare, ct.CallsPerRequest, ct.EndpointSource = cut.Endpoint, cut.Share, cut.PerRequestMin, EndpointCutRequests
			} else if ok && len(mc.Endpoints) > 0 {
				top := mc.Endpoints[0]
				ct.Endpoint, ct.EndpointShare, ct.CallsPerRequest, ct.EndpointSource = top.Endpoint, top.Share, top.PerRequest, EndpointMeasured
			}
		} else if ca, ok := likely[c.ID]; ok && len(ca.Endpoints) > 0 && ca.Confident {
			top := ca.Endpoints[0]
			ct.Endpoint, ct.EndpointShare, ct.CallsPerRequest, ct.EndpointSource = top.Endpoint, top.Share, top.CallsPerRequest, EndpointEstimated
		} else if ok && ca.Note == "" {
			ct.EndpointSource = EndpointUnknown
		}
		out = append(out, ct)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].TimeS > out[j].TimeS })
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

func endpointTimes(h *httpprof.Report, classes []ClassTime, capacity float64, measured *reqtrace.Report) []EndpointTime {
	out := []EndpointTime{}
	if h == nil {
		return out
	}
	eps := append([]httpprof.Endpoint(nil), h.Endpoints...)
	timed := h.Overall.Timed > 0
	sort.SliceStable(eps, func(i, j int) bool {
		if timed && eps[i].TimeTotal != eps[j].TimeTotal {
			return eps[i].TimeTotal > eps[j].TimeTotal
		}
		return eps[i].Count > eps[j].Count
	})
	for i, e := range eps {
		if i >= rankEndpoints {
			break
		}
		et := EndpointTime{Rank: i + 1, Method: e.Method, Path: e.Path, Count: e.Count, TimeS: e.TimeTotal, Share: e.Share,
			CapacityShare: share(e.TimeTotal, capacity), AvgS: e.TimeAvg, P99S: e.TimeP99, Errors5xx: e.Status.S5xx}
		key := endpointKey(e.Method, e.Path)
		if measured != nil {
			ids := map[string]bool{}
			for _, c := range classes {
				ids[c.ID] = true
			}
			et.Classes = measuredEndpointClasses(measured, e.Method, e.Path, ids)
		} else {
			for _, c := range classes {
				if c.Endpoint == key {
					et.Classes = append(et.Classes, c.ID)
				}
			}
		}
		out = append(out, et)
	}
	return out
}

func nPlusOnes(ix *indexadv.Result, d *digest.Report, likely map[string]ClassAttribution, eps []EndpointTime) []nplusone.Pattern {
	out := []nplusone.Pattern{}
	if ix == nil {
		return out
	}
	times := map[string]float64{}
	if d != nil {
		for _, c := range d.Classes {
			times[c.ID] = c.TimeTotal
		}
	}
	for _, q := range ix.Queries {
		if q.NPlusOne == nil {
			continue
		}
		n := *q.NPlusOne
		n.ID, n.Fingerprint, n.Sample, n.TimeS, n.Source = q.ID, q.Fingerprint, q.Sample, times[q.ID], EndpointEstimated
		if p, ep, ok := parentOf(q.ID, d, eps); ok {
			// The N+1's own signature: it runs once per row another
			// class returned, and that class once per request of one
			// endpoint. Counts, not a fit: sure where the fit is not.
			n.Parent = p.Fingerprint
			n.Endpoint, n.PerRequest, n.EndpointShare = endpointKey(ep.Method, ep.Path), float64(n.Calls)/float64(ep.Count), 1
			n.Note = fmt.Sprintf("runs once per row of %q (%d rows in %d calls), which runs once per request of %s (%d requests)",
				p.Fingerprint, p.RowsSentTotal, p.Count, n.Endpoint, ep.Count)
		} else if ca, ok := likely[q.ID]; ok && len(ca.Endpoints) > 0 && ca.Confident {
			top := ca.Endpoints[0]
			n.Endpoint, n.PerRequest, n.EndpointShare = top.Endpoint, top.CallsPerRequest, top.Share
			if top.CallsPerRequest < oncePerRequest && top.Share >= 0.5 && ca.R2 >= 0.5 {
				n.Note = fmt.Sprintf("about %.1f call per request of %s (estimated): one query per page rather than a loop over rows", top.CallsPerRequest, top.Endpoint)
			}
		}
		if n.Endpoint == "" {
			n.Source = EndpointUnknown
			if route := sqltag.Parse([]byte(q.Sample)).Endpoint(); route != "" {
				n.Endpoint, n.Source = routeEndpoint(route, eps), EndpointTaggedSample
				n.Note = strings.TrimPrefix(n.Note+"; its sampled statement's tag names the route "+route+" (other endpoints may run it too); its calls per request are not counted", "; ")
			}
		}
		out = append(out, n)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].TimeS > out[j].TimeS })
	return out
}

// routeEndpoint names a route tag ("GET /{$}") as the access log names
// the one endpoint it matches ("GET /"), so that one endpoint reads one
// way in the report; the route itself when it matches none or several.
func routeEndpoint(route string, eps []EndpointTime) string {
	name := ""
	for _, e := range eps {
		if sameEndpoint(route, e.Method, e.Path) {
			if name != "" {
				return route
			}
			name = endpointKey(e.Method, e.Path)
		}
	}
	return cmp.Or(name, route)
}

// hotspots merge the top endpoints and the top classes into one list by
// total time.
func hotspots(eps []EndpointTime, classes []ClassTime, n1 []nplusone.Pattern) []Hotspot {
	out := []Hotspot{}
	nplus := map[string]nplusone.Pattern{}
	for _, n := range n1 {
		nplus[n.ID] = n
	}
	fp := map[string]string{}
	perRequest := map[string]float64{} // endpoint and class → measured calls per request
	for _, c := range classes {
		fp[c.ID] = c.Fingerprint
	}
	for _, n := range n1 {
		if n.Source == EndpointMeasured {
			perRequest[n.Endpoint+"\x00"+n.ID] = n.PerRequest
		}
	}
	for _, c := range classes {
		if c.EndpointSource == EndpointMeasured {
			perRequest[c.Endpoint+"\x00"+c.ID] = c.CallsPerRequest
		}
	}
	for i, e := range eps {
		if i >= hotspotsPer {
			break
		}
		h := Hotspot{Layer: LayerHTTP, What: endpointKey(e.Method, e.Path), TimeS: e.TimeS, CapacityShare: e.CapacityShare, Count: e.Count, Details: []string{}}
		h.Details = append(h.Details, fmt.Sprintf("%d requests, avg %s, p99 %s", e.Count, seconds(e.AvgS), seconds(e.P99S)))
		for j, id := range e.Classes {
			if j >= 3 {
				break
			}
			if perReq, ok := perRequest[endpointKey(e.Method, e.Path)+"\x00"+id]; ok {
				h.Details = append(h.Details, fmt.Sprintf("runs %s %s times per request (class %s, measured)", fp[id], trimNum(perReq), shortID(id)))
			} else {
				h.Details = append(h.Details, fmt.Sprintf("likely runs %s (class %s, estimated)", fp[id], shortID(id)))
			}
		}
		out = append(out, h)
	}
	for i, c := range classes {
		if i >= hotspotsPer {
			break
		}
		h := Hotspot{Layer: LayerMySQL, What: c.Fingerprint, ID: c.ID, TimeS: c.TimeS, CapacityShare: c.CapacityShare, Count: c.Count, Details: []string{}}
		h.Details = append(h.Details, fmt.Sprintf("%d calls, avg %s, %.0f rows examined per row sent", c.Count, seconds(c.AvgS), c.RowsExaminedPerSent))
		switch {
		case c.Endpoint != "" && c.EndpointSource == EndpointMeasured:
			h.Details = append(h.Details, fmt.Sprintf("from %s (measured: %.0f%% of its calls, %s per request)", c.Endpoint, 100*c.EndpointShare, trimNum(c.CallsPerRequest)))
		case c.Endpoint != "" && c.EndpointSource == EndpointCutRequests:
			h.Details = append(h.Details, fmt.Sprintf("from %s (in its requests the end of the trace run cut: %.0f%% of its calls, at least %s per request)",
				c.Endpoint, 100*c.EndpointShare, trimNum(c.CallsPerRequest)))
		case c.Endpoint != "":
			h.Details = append(h.Details, fmt.Sprintf("likely from %s (estimated: %.0f%% of its calls, %.1f per request)", c.Endpoint, 100*c.EndpointShare, c.CallsPerRequest))
		}
		for _, ddl := range c.Indexes {
			h.Details = append(h.Details, "proven index: "+ddl)
		}
		if n, ok := nplus[c.ID]; ok {
			switch {
			case n.Source == EndpointMeasured:
				h.Details = append(h.Details, "N+1: "+n.Problem)
			case n.Source == EndpointCutRequests:
				h.Details = append(h.Details, "N+1 of "+n.Endpoint+": "+n.Note)
			case n.Note != "":
				h.Details = append(h.Details, "flagged as N+1 by its calls, but "+n.Note)
			default:
				h.Details = append(h.Details, n.Problem)
			}
		}
		out = append(out, h)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].TimeS > out[j].TimeS })
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

// share is part over whole, 0 when whole is 0.
func share(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return round(part/whole, 4)
}

// seconds formats a time for a detail line: 812µs, 12.3ms, 4.56s.
func seconds(s float64) string {
	switch {
	case s <= 0:
		return "0"
	case s < 1e-3:
		return fmt.Sprintf("%.0fµs", s*1e6)
	case s < 1:
		return threeDigits(s*1e3) + "ms"
	}
	return threeDigits(s) + "s"
}

// threeDigits keeps about three significant digits.
func threeDigits(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// shortID is a class ID's last 16 digits (pt-query-digest's short form).
func shortID(id string) string {
	if len(id) > 16 {
		return id[len(id)-16:]
	}
	return id
}

// parentOf finds the query an N+1 class loops over, and its endpoint:
// another class that returned about as many rows in all as the N+1 class
// was called (within countTolerance), called fewer times, and called
// about once per request of exactly one endpoint. false when there is no
// such pair, or more than one endpoint fits.
func parentOf(id string, d *digest.Report, eps []EndpointTime) (digest.Class, EndpointTime, bool) {
	if d == nil {
		return digest.Class{}, EndpointTime{}, false
	}
	var child *digest.Class
	for i := range d.Classes {
		if d.Classes[i].ID == id {
			child = &d.Classes[i]
		}
	}
	if child == nil || child.Count == 0 {
		return digest.Class{}, EndpointTime{}, false
	}
	near := func(a, b int64) bool {
		return b > 0 && math.Abs(float64(a-b)) <= countTolerance*float64(b)
	}
	var best digest.Class
	bestErr := math.Inf(1)
	for _, c := range d.Classes {
		if c.ID == id || c.Count == 0 || c.Count*2 > child.Count || !near(c.RowsSentTotal, child.Count) {
			continue
		}
		if e := math.Abs(float64(c.RowsSentTotal-child.Count)) / float64(child.Count); e < bestErr {
			best, bestErr = c, e
		}
	}
	if math.IsInf(bestErr, 1) {
		return digest.Class{}, EndpointTime{}, false
	}
	var found []EndpointTime
	for _, e := range eps {
		if near(best.Count, e.Count) {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		return digest.Class{}, EndpointTime{}, false
	}
	return best, found[0], true
}

// countTolerance is how far two counts may differ and still be the same
// loop: the slow log and the access log of one window can each cut a
// request or a query at its edges.
const countTolerance = 0.05

// trimNum formats a count per request: 292, 2.5.
func trimNum(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// withCutEstimates is the measured N+1 patterns of the per-request view,
// and beside them the estimated ones (from the run's per-second counts)
// of classes the view neither measured nor attributed: those whose calls
// were mostly in requests the end of the run cut (a page slower than the
// run is long), which the per-request view cannot count. An estimate
// that names no endpoint (the fit too unsure, no parent query) takes the
// endpoint whose cut requests the view saw most of the class's calls in
// (cutEndpoint), with their calls per request as a lower bound, as
// source EndpointCutRequests.
func withCutEstimates(measured, estimated []nplusone.Pattern, rep *reqtrace.Report) []nplusone.Pattern {
	known := map[string]bool{}
	for _, n := range measured {
		known[fingerprint.Merged(n.Fingerprint)] = true
	}
	for _, c := range rep.Classes {
		var attributed int64
		for _, e := range c.Endpoints {
			attributed += e.Calls
		}
		if 2*attributed >= c.Calls {
			known[fingerprint.Merged(c.Fingerprint)] = true
		}
	}
	out := measured
	for _, n := range estimated {
		if known[fingerprint.Merged(n.Fingerprint)] {
			continue
		}
		note := "most of its calls were in requests the end of the run cut (they outlast the run), so its counts are the run's, estimated"
		if n.Endpoint == "" {
			if c, ce, ok := cutEndpoint(rep, n); ok {
				n.Endpoint, n.PerRequest, n.EndpointShare, n.Source = ce.Endpoint, ce.PerRequestMin, ce.Share, EndpointCutRequests
				note = fmt.Sprintf("%d of its %d calls in the trace run were in requests the end of the run cut (they outlast the run), %d requests of %s: "+
					"at least %s calls per request of it (each was cut partway); its counts are the diagnosis run's",
					ce.Calls, c.Calls, ce.CutRequests, ce.Endpoint, trimNum(ce.PerRequestMin))
			}
		}
		n.Note = strings.TrimPrefix(n.Note+"; "+note, "; ")
		out = append(out, n)
	}
	return out
}

// cutEndpoint is the per-request view's class of an estimated N+1 and
// the endpoint whose cut requests hold most of its calls (more than half
// of all its calls in the view, tied to a request or not); false when no
// endpoint does (the calls split between endpoints, or mostly outside
// any request), or the endpoint is no endpoint's name (past the bound,
// tags that name none).
func cutEndpoint(rep *reqtrace.Report, n nplusone.Pattern) (reqtrace.Class, reqtrace.CutEndpoint, bool) {
	c, ok := measuredClass(rep, n.ID, n.Fingerprint)
	if !ok {
		return c, reqtrace.CutEndpoint{}, false
	}
	top, ok := cutTop(c)
	return c, top, ok
}

// cutTop is the endpoint whose cut requests hold more than half of a
// per-request class's calls (see cutEndpoint).
func cutTop(c reqtrace.Class) (reqtrace.CutEndpoint, bool) {
	if len(c.CutEndpoints) == 0 {
		return reqtrace.CutEndpoint{}, false
	}
	top := c.CutEndpoints[0]
	if 2*top.Calls <= c.Calls || top.CutRequests <= 0 || top.Endpoint == reqtrace.OtherEndpoint || top.Endpoint == reqtrace.UnnamedEndpoint {
		return reqtrace.CutEndpoint{}, false
	}
	return top, true
}
