package reqtrace

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/internal/skip"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/sqltag"
)

// Defaults and bounds of the attribution.
const (
	// DefaultNPlusOne is N: a class run N times or more in one request is
	// flagged. Ten is past what one page runs of one statement on purpose
	// (a list and its count, the user and a friend) and below the length
	// of any list a page loops over (a page of ten books).
	DefaultNPlusOne = 10
	// MaxEndpoints is the most endpoints kept; the requests of further
	// ones are counted under OtherEndpoint.
	MaxEndpoints = 500
	// maxClassesPerRequest bounds the classes one request holds apart.
	maxClassesPerRequest = 2000
)

// OtherEndpoint names the requests of endpoints past MaxEndpoints,
// UnnamedEndpoint those of requests whose tags name no endpoint.
const (
	OtherEndpoint   = "(other endpoints)"
	UnnamedEndpoint = "(unnamed)"
)

// Options configures how statements are attributed and reported.
type Options struct {
	// NPlusOne is N (default DefaultNPlusOne).
	NPlusOne int
	// RowsExaminedPerCall, keyed by pt-query-digest class ID, estimates
	// the rows examined of statements that do not carry them (a proxy's):
	// the digest of the same stack's run gives each class's average.
	RowsExaminedPerCall map[string]float64
	// RequestTimes are endpoints' request times from an access log, for
	// tags, which give no request time: an endpoint named by a route is
	// matched to the access log's endpoints (see sqltag.MatchRoute).
	RequestTimes []RequestTime
	// Collapse seeds the grouping of a trace run's paths into endpoints
	// with groups already learned (httpprof's LearnedPatterns of the
	// stack's access log), so that a short trace run names endpoints as
	// the access log does.
	Collapse []string
	// DropLast, for tags, leaves out the requests whose statements came
	// last: the requests in flight when the run ended, which its end may
	// have cut half-way (give the run's connections). A trace run knows
	// which requests were cut and leaves them out by itself.
	DropLast int
	// OnRequest, when set, receives every request as it is finished, with
	// its statements by class (for a caller that checks or keeps single
	// requests; the report keeps only their aggregates).
	OnRequest func(RequestCalls)
}

// RequestCalls is one request's statements.
type RequestCalls struct {
	// Request names it: "GET /path (trace <id>)" for a trace run, the
	// tags' request key ("trace:<id>", "request:<id>") for tags.
	Request  string
	Endpoint string
	// Calls are its statements by merged class ID (fingerprint.MergedID),
	// Fingerprints those classes' fingerprints.
	Calls        map[string]int64
	Fingerprints map[string]string
	Statements   int64
	DBTimeS      float64
	// RequestTimeS is its time (-1: unknown).
	RequestTimeS float64
}

// RequestTime is an endpoint's requests and their total time, from an
// access log.
type RequestTime struct {
	Method, Path string
	Count        int64
	TimeTotalS   float64
}

// RequestTimesOf are an access-log profile's endpoints as RequestTimes.
func RequestTimesOf(h *httpprof.Report) []RequestTime {
	if h == nil {
		return nil
	}
	out := make([]RequestTime, 0, len(h.Endpoints))
	for _, e := range h.Endpoints {
		out = append(out, RequestTime{Method: e.Method, Path: e.Path, Count: e.Count, TimeTotalS: e.TimeTotal})
	}
	return out
}

func (o *Options) defaults() {
	if o.NPlusOne <= 0 {
		o.NPlusOne = DefaultNPlusOne
	}
}

// callAcc is one class's calls within one request.
type callAcc struct {
	n    int64
	time float64
}

// request is a request being built: its statements by class.
type request struct {
	endpoint string
	name     string  // what the report shows of it: path and trace
	reqTime  float64 // seconds; < 0 unknown
	stmts    int64
	dbTime   float64
	rowsEx   float64
	exKnown  bool
	calls    map[int32]*callAcc
}

// epClass is one class's calls over the requests of one endpoint.
type epClass struct {
	requests, calls, max, flagged int64
	time                          float64
	worst                         string
}

// epAcc accumulates an endpoint's requests.
type epAcc struct {
	key                string
	requests           int64
	reqTimeSum         float64
	reqTimeN           int64
	dbTimeSum          float64
	stmtSum, stmtMax   int64
	rowsExSum          float64
	rowsExMax          float64
	rowsExN            int64
	classes            map[int32]*epClass
	untiedCalls        map[int32]int64 // tags naming this endpoint but no request
	untiedTime         map[int32]float64
	untiedStmts        int64
	untiedDBTime       float64
	untiedRowsExamined float64
	// cutRequests are its requests the end of the run cut (or, for tags,
	// left in flight), cutCalls their calls by class: counted apart, not
	// in its requests.
	cutRequests int64
	cutCalls    map[int32]int64
}

// builder accumulates requests and their statements into a Report.
type builder struct {
	opt          Options
	classes      *classTable
	endpoints    map[string]*epAcc
	stmts        int64
	attributed   int64
	unattributed int64
	ambiguous    int64
	requests     int64
	exMeasured   bool
	exEstimated  bool
	skipped      skip.Counts
	notes        []string
	unattrByCls  map[int32]int64
}

func newBuilder(opt Options) *builder {
	opt.defaults()
	return &builder{opt: opt, classes: newClassTable(), endpoints: map[string]*epAcc{}, skipped: skip.Counts{}, unattrByCls: map[int32]int64{}}
}

func (b *builder) skip(reason skip.Reason, n int64) { b.skipped.Add(reason, n) }

func (b *builder) note(format string, a ...any) { b.notes = append(b.notes, fmt.Sprintf(format, a...)) }

// stmt is one statement to attribute.
type stmt struct {
	class    int32
	dur      float64 // seconds
	rowsSent int64
	rowsEx   int64
	exKnown  bool
}

// record counts a statement in its class (every statement, attributed or
// not).
func (b *builder) record(s stmt) {
	c := b.classes.list[s.class]
	c.calls++
	c.time += s.dur
	c.rowsSent += s.rowsSent
	if s.exKnown {
		c.rowsEx += s.rowsEx
		c.exKnown++
	}
	b.stmts++
}

// unattributedStmt counts a statement tied to no request.
func (b *builder) unattributedStmt(s stmt) {
	b.record(s)
	b.unattributed++
	b.unattrByCls[s.class]++
}

// newRequest starts a request of an endpoint.
func (b *builder) newRequest(endpoint, name string, reqTime float64) *request {
	return &request{endpoint: endpoint, name: name, reqTime: reqTime, calls: map[int32]*callAcc{}, exKnown: true}
}

// add ties a statement to a request.
func (b *builder) add(r *request, s stmt) {
	b.record(s)
	b.attributed++
	r.stmts++
	r.dbTime += s.dur
	switch {
	case s.exKnown:
		r.rowsEx += float64(s.rowsEx)
		b.exMeasured = true
	case b.estimate(s.class) >= 0:
		r.rowsEx += b.estimate(s.class)
		b.exEstimated = true
	default:
		r.exKnown = false
	}
	b.addCall(r, s)
}

// addCall adds s to its request's calls by class (bounded: a request's
// classes past maxClassesPerRequest are skipped and counted).
func (b *builder) addCall(r *request, s stmt) {
	a, ok := r.calls[s.class]
	if !ok {
		if len(r.calls) >= maxClassesPerRequest {
			b.skip(ReasonClassesPastBound, 1)
			return
		}
		a = &callAcc{}
		r.calls[s.class] = a
	}
	a.n++
	a.time += s.dur
}

// cutStmt counts a statement of a request the end of the run cut: tied
// to no counted request, but kept in the request's calls by class, which
// cut gives its endpoint.
func (b *builder) cutStmt(r *request, s stmt) {
	b.unattributedStmt(s)
	b.addCall(r, s)
}

// cut folds a request the end of the run cut into its endpoint's cut
// requests and their calls by class (Class.CutEndpoints), not into its
// requests: a cut request ran only part of its statements.
func (b *builder) cut(r *request) {
	e := b.endpoint(r.endpoint)
	e.cutRequests++
	for cls, a := range r.calls {
		e.cutCalls[cls] += a.n
	}
}

// estimate is a class's rows examined per call from
// Options.RowsExaminedPerCall (its members' averages weighted by calls),
// -1 when unknown.
func (b *builder) estimate(class int32) float64 {
	if len(b.opt.RowsExaminedPerCall) == 0 {
		return -1
	}
	c := b.classes.list[class]
	var sum float64
	var n int64
	for id, calls := range c.members {
		if v, ok := b.opt.RowsExaminedPerCall[id]; ok {
			sum += v * float64(calls)
			n += calls
		}
	}
	if n == 0 {
		return -1
	}
	return sum / float64(n)
}

// endpoint returns the accumulator of an endpoint key.
func (b *builder) endpoint(key string) *epAcc {
	if key == "" {
		key = UnnamedEndpoint
	}
	e, ok := b.endpoints[key]
	if !ok {
		if len(b.endpoints) >= MaxEndpoints {
			key = OtherEndpoint
			if e, ok = b.endpoints[key]; ok {
				return e
			}
		}
		e = &epAcc{key: key, classes: map[int32]*epClass{}, untiedCalls: map[int32]int64{}, untiedTime: map[int32]float64{}, cutCalls: map[int32]int64{}}
		b.endpoints[key] = e
	}
	return e
}

// finish folds a finished request into its endpoint.
func (b *builder) finish(r *request) {
	if b.opt.OnRequest != nil {
		rc := RequestCalls{Request: r.name, Endpoint: r.endpoint, Calls: map[string]int64{}, Fingerprints: map[string]string{},
			Statements: r.stmts, DBTimeS: r.dbTime, RequestTimeS: r.reqTime}
		for cls, a := range r.calls {
			c := b.classes.list[cls]
			rc.Calls[c.mergedID] += a.n
			rc.Fingerprints[c.mergedID] = c.display()
		}
		b.opt.OnRequest(rc)
	}
	b.requests++
	e := b.endpoint(r.endpoint)
	e.requests++
	if r.reqTime >= 0 {
		e.reqTimeSum += r.reqTime
		e.reqTimeN++
	}
	e.dbTimeSum += r.dbTime
	e.stmtSum += r.stmts
	e.stmtMax = max(e.stmtMax, r.stmts)
	if r.exKnown {
		e.rowsExSum += r.rowsEx
		e.rowsExMax = math.Max(e.rowsExMax, r.rowsEx)
		e.rowsExN++
	}
	for cls, a := range r.calls {
		ec, ok := e.classes[cls]
		if !ok {
			ec = &epClass{}
			e.classes[cls] = ec
		}
		ec.requests++
		ec.calls += a.n
		ec.time += a.time
		if a.n > ec.max {
			ec.max, ec.worst = a.n, r.name
		}
		if a.n >= int64(b.opt.NPlusOne) {
			ec.flagged++
		}
	}
}

// untied counts a statement whose tags name an endpoint but no request.
func (b *builder) untied(endpoint string, s stmt) {
	b.record(s)
	b.unattributed++
	e := b.endpoint(endpoint)
	e.untiedStmts++
	e.untiedDBTime += s.dur
	e.untiedCalls[s.class]++
	e.untiedTime[s.class] += s.dur
	if s.exKnown {
		e.untiedRowsExamined += float64(s.rowsEx)
	}
}

// report builds the Report.
func (b *builder) report(source, method string) *Report {
	rep := &Report{Source: source, Method: method, NPlusOneMin: b.opt.NPlusOne, Requests: b.requests, Statements: b.stmts,
		Attributed: b.attributed, Unattributed: b.unattributed, Ambiguous: b.ambiguous,
		Endpoints: []Endpoint{}, Classes: []Class{}, NPlusOne: []nplusone.Pattern{}, Skipped: b.skipped, Notes: []string{}}
	switch {
	case b.exMeasured && b.exEstimated:
		rep.RowsExamined = "measured where the source records it, else estimated from the digest's average per call"
	case b.exMeasured:
		rep.RowsExamined = "measured"
	case b.exEstimated:
		rep.RowsExamined = "estimated"
	}
	classEps := map[int32][]ClassEndpoint{}
	cutEps := map[int32][]CutEndpoint{}
	var untiedNotes []string
	for _, e := range b.endpoints {
		for cls, n := range e.cutCalls {
			cutEps[cls] = append(cutEps[cls], CutEndpoint{Endpoint: e.key, Calls: n, CutRequests: e.cutRequests,
				PerRequestMin: round(float64(n)/float64(e.cutRequests), 2)})
		}
		reqTime := 0.0
		if e.reqTimeN > 0 {
			reqTime = e.reqTimeSum / float64(e.reqTimeN)
		} else if rt, ok := b.matchRequestTime(e.key); ok {
			reqTime = rt.TimeTotalS / float64(rt.Count)
			if e.requests == 0 && rt.Count > 0 && e.untiedStmts > 0 {
				// Tags naming the endpoint but no request: per request
				// by the access log's count of its requests.
				e.requests = rt.Count
				e.dbTimeSum, e.stmtSum, e.rowsExSum, e.rowsExN = e.untiedDBTime, e.untiedStmts, e.untiedRowsExamined, 0
				for cls, n := range e.untiedCalls {
					e.classes[cls] = &epClass{calls: n, time: e.untiedTime[cls], requests: -1}
				}
				untiedNotes = append(untiedNotes, e.key)
			}
		}
		if e.requests == 0 {
			continue
		}
		n := float64(e.requests)
		ep := Endpoint{Endpoint: e.key, Requests: e.requests, RequestTimeS: round(reqTime, 6), DBTimeS: round(e.dbTimeSum/n, 6),
			QueriesMean: round(float64(e.stmtSum)/n, 2), QueriesMax: e.stmtMax, Classes: []EndpointClass{}}
		if reqTime > 0 {
			ep.DBShare = round(e.dbTimeSum/n/reqTime, 4)
		}
		if e.rowsExN > 0 {
			ep.RowsExaminedMean, ep.RowsExaminedMax = round(e.rowsExSum/float64(e.rowsExN), 1), int64(math.Round(e.rowsExMax))
		}
		for cls, ec := range e.classes {
			c := b.classes.list[cls]
			mean := float64(ec.calls) / n
			ep.Classes = append(ep.Classes, EndpointClass{ID: c.mergedID, Fingerprint: c.display(), Mean: round(mean, 2), Max: ec.max,
				Requests: max(ec.requests, 0), TimePerRequestS: round(ec.time/n, 6)})
			classEps[cls] = append(classEps[cls], ClassEndpoint{Endpoint: e.key, Calls: ec.calls, PerRequest: round(mean, 2)})
			if ec.flagged > 0 || (ec.requests < 0 && mean >= float64(b.opt.NPlusOne)) {
				rep.NPlusOne = append(rep.NPlusOne, b.nPlusOne(e, ep, c, ec))
			}
		}
		sort.Slice(ep.Classes, func(i, j int) bool {
			if ep.Classes[i].Mean != ep.Classes[j].Mean {
				return ep.Classes[i].Mean > ep.Classes[j].Mean
			}
			return ep.Classes[i].ID < ep.Classes[j].ID
		})
		rep.Endpoints = append(rep.Endpoints, ep)
	}
	sort.Slice(rep.Endpoints, func(i, j int) bool {
		a, b := rep.Endpoints[i], rep.Endpoints[j]
		if ta, tb := a.DBTimeS*float64(a.Requests), b.DBTimeS*float64(b.Requests); ta != tb {
			return ta > tb
		}
		return a.Endpoint < b.Endpoint
	})
	for i, c := range b.classes.list {
		if c.calls == 0 {
			continue
		}
		cl := Class{ID: c.mergedID, Fingerprint: c.display(), IDs: c.memberIDs(), Sample: c.sample, Calls: c.calls, TimeS: round(c.time, 6),
			RowsSent: c.rowsSent, RowsExamined: c.rowsEx, Endpoints: classEps[int32(i)], Unattributed: b.unattrByCls[int32(i)]}
		if cl.Endpoints == nil {
			cl.Endpoints = []ClassEndpoint{}
		}
		for k := range cl.Endpoints {
			cl.Endpoints[k].Share = round(float64(cl.Endpoints[k].Calls)/float64(c.calls), 4)
		}
		sort.Slice(cl.Endpoints, func(i, j int) bool {
			if cl.Endpoints[i].Calls != cl.Endpoints[j].Calls {
				return cl.Endpoints[i].Calls > cl.Endpoints[j].Calls
			}
			return cl.Endpoints[i].Endpoint < cl.Endpoints[j].Endpoint
		})
		if ce := cutEps[int32(i)]; len(ce) > 0 {
			for k := range ce {
				ce[k].Share = round(float64(ce[k].Calls)/float64(c.calls), 4)
			}
			sort.Slice(ce, func(i, j int) bool {
				if ce[i].Calls != ce[j].Calls {
					return ce[i].Calls > ce[j].Calls
				}
				return ce[i].Endpoint < ce[j].Endpoint
			})
			cl.CutEndpoints = ce
		}
		rep.Classes = append(rep.Classes, cl)
	}
	sort.Slice(rep.Classes, func(i, j int) bool {
		if rep.Classes[i].TimeS != rep.Classes[j].TimeS {
			return rep.Classes[i].TimeS > rep.Classes[j].TimeS
		}
		return rep.Classes[i].ID < rep.Classes[j].ID
	})
	sort.Slice(rep.NPlusOne, func(i, j int) bool {
		a, b := rep.NPlusOne[i], rep.NPlusOne[j]
		if a.TimeS != b.TimeS {
			return a.TimeS > b.TimeS
		}
		if a.PerRequest != b.PerRequest {
			return a.PerRequest > b.PerRequest
		}
		return a.Endpoint+a.ID < b.Endpoint+b.ID
	})
	if len(untiedNotes) > 0 {
		sort.Strings(untiedNotes)
		b.note("the tags of %s name no request (no traceparent or request_id): their calls per request are the calls over the access log's count of its requests, and the most in one request is not known", strings.Join(untiedNotes, ", "))
	}
	rep.Notes = append(rep.Notes, b.notes...)
	return rep
}

// nPlusOne describes a flagged class of an endpoint, measured.
func (b *builder) nPlusOne(e *epAcc, ep Endpoint, c *classInfo, ec *epClass) nplusone.Pattern {
	n := float64(e.requests)
	np := nplusone.Pattern{Endpoint: e.key, ID: c.mergedID, Fingerprint: c.display(), IDs: c.memberIDs(), Sample: c.sample, Source: nplusone.Measured, Requests: e.requests,
		Flagged: ec.flagged, N: b.opt.NPlusOne, PerRequest: round(float64(ec.calls)/n, 2), Max: ec.max, TimePerRequestS: round(ec.time/n, 6), TimeS: round(ec.time, 6), Worst: ec.worst}
	if ec.requests < 0 {
		np.Flagged, np.Max = -1, -1
	}
	if ep.RequestTimeS > 0 {
		np.RequestShare = round(np.TimePerRequestS/ep.RequestTimeS, 4)
	}
	np.Rewrite = Rewrite(c.display(), c.sample)
	np.Problem = problemLine(np)
	return np
}

// display is the class's fingerprint as the report shows it: its member
// with the most calls.
func (c *classInfo) display() string {
	if ids := c.memberIDs(); len(ids) > 0 {
		return c.memberFP[ids[0]]
	}
	return c.fingerprint
}

// matchRequestTime finds an endpoint's request times in
// Options.RequestTimes: the access-log endpoints its name matches as a
// route, summed.
func (b *builder) matchRequestTime(key string) (RequestTime, bool) {
	var out RequestTime
	found := false
	for _, rt := range b.opt.RequestTimes {
		if rt.Count > 0 && sqltag.MatchRoute(key, rt.Method, rt.Path) {
			out.Count += rt.Count
			out.TimeTotalS += rt.TimeTotalS
			found = true
		}
	}
	return out, found && out.Count > 0
}

// round rounds v to n decimals.
func round(v float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(v*p) / p
}
