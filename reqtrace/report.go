package reqtrace

import (
	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/internal/skip"
	"github.com/stacktune/stacktune/nplusone"
)

// Report is the per-request view of a run: which endpoint runs which SQL,
// how many times per request. It is the shape of `stacktune endpoints
// --format json` and of diagnose.Result.Requests. Times are seconds.
type Report struct {
	// Source says where the statements came from: SourceProxy,
	// SourcePFSHistory, SourceSlowLogTags or SourcePFSTags.
	Source string `json:"source"`
	// Method says in words how statements were tied to requests.
	Method string `json:"method"`
	// Concurrency is the trace run's (requests in flight at once); 0 for
	// tags, which tie statements to requests at any concurrency.
	Concurrency int `json:"concurrency,omitempty"`
	// NPlusOneMin is N: a class run at least N times in one request is
	// flagged.
	NPlusOneMin int `json:"n_plus_one_min"`
	// Requests are the requests seen, Statements the statements (queries
	// and executions of prepared statements), Attributed those tied to a
	// request.
	Requests   int64 `json:"requests"`
	Statements int64 `json:"statements"`
	Attributed int64 `json:"attributed"`
	// Unattributed are the statements tied to no request: outside every
	// request's time (a trace run: background work, the app's own
	// start-up queries) or without request tags; Ambiguous (trace runs
	// with more than one request in flight) are those inside several
	// requests' times with no connection to tell them apart.
	Unattributed int64 `json:"unattributed"`
	Ambiguous    int64 `json:"ambiguous,omitempty"`
	// RowsExamined says where the endpoints' rows examined come from:
	// "measured" (the slow log or performance_schema records them per
	// statement), "estimated" (calls × the digest's average per call of
	// the class: the proxy sees no rows examined) or "" (unknown).
	RowsExamined string `json:"rows_examined,omitempty"`
	// Endpoints are the endpoints, the worst first (most DB time per
	// request × requests, that is the most DB time in the run).
	Endpoints []Endpoint `json:"endpoints"`
	// Classes are the statement classes, most time first, with the
	// endpoints that run them.
	Classes []Class `json:"classes"`
	// NPlusOne are the classes some request ran at least NPlusOneMin
	// times, the worst first (most time in the run).
	NPlusOne []nplusone.Pattern `json:"n_plus_one"`
	// Skipped counts what was not read or not kept, by reason.
	Skipped skip.Counts `json:"skipped"`
	// Notes say what to read the report with.
	Notes []string `json:"notes"`
	// Profile is the app's CPU over a trace run sampled with
	// TraceOptions.Sampler (its endpoints' figures are in Endpoints'
	// Usage); nil without one.
	Profile *appcpu.Profile `json:"profile,omitempty"`
}

// Sources of a Report.
const (
	SourceProxy       = "trace run: mysqlproxy"
	SourcePFSHistory  = "trace run: performance_schema statement history"
	SourceSlowLogTags = "tags: slow log"
	SourcePFSTags     = "tags: performance_schema statement history"
)

// Endpoint is one endpoint's statements per request.
type Endpoint struct {
	// Endpoint is "GET /profile/:name" (a trace run: the access-log
	// grouping of the paths requested) or what the tags name
	// ("GET /profile/{account_name}", "books#show").
	Endpoint string `json:"endpoint"`
	Requests int64  `json:"requests"`
	// RequestTimeS is the mean request time (0 when unknown: tags
	// without an access log of the endpoint), DBTimeS the mean time of
	// its statements per request and DBShare their ratio.
	RequestTimeS float64 `json:"request_time_s"`
	DBTimeS      float64 `json:"db_time_s"`
	DBShare      float64 `json:"db_share,omitempty"`
	// Queries per request: mean and max over its requests.
	QueriesMean float64 `json:"queries_mean"`
	QueriesMax  int64   `json:"queries_max"`
	// Rows examined per request (see Report.RowsExamined).
	RowsExaminedMean float64 `json:"rows_examined_mean"`
	RowsExaminedMax  int64   `json:"rows_examined_max"`
	// Classes are its statement classes, the most calls per request
	// first.
	Classes []EndpointClass `json:"classes"`
	// Usage, with a profiled trace run, is its app CPU, DB and other
	// time per request, top functions and stacks (its fields sit beside
	// the others in JSON: app_cpu_ms_per_request, db_ms_per_request,
	// other_ms_per_request, top_functions, flame_graph, stacks).
	*appcpu.Usage
}

// EndpointClass is one class's calls in the requests of one endpoint.
type EndpointClass struct {
	// ID is the merged class's key (fingerprint.MergedID), Fingerprint
	// its most frequent pt-query-digest fingerprint.
	ID          string `json:"id"`
	Fingerprint string `json:"fingerprint"`
	// Mean is its calls per request of the endpoint (over all of its
	// requests), Max the most in one request; Requests how many of the
	// endpoint's requests ran it at all.
	Mean     float64 `json:"per_request_mean"`
	Max      int64   `json:"per_request_max"`
	Requests int64   `json:"requests"`
	// TimePerRequestS is its time per request of the endpoint.
	TimePerRequestS float64 `json:"time_per_request_s"`
}

// Class is one merged statement class and the endpoints that run it.
type Class struct {
	// ID is fingerprint.MergedID of its fingerprints; IDs are the
	// pt-query-digest IDs merged in it (the digest's classes), most calls
	// first.
	ID          string   `json:"id"`
	Fingerprint string   `json:"fingerprint"`
	IDs         []string `json:"ids"`
	Sample      string   `json:"sample"`
	Calls       int64    `json:"calls"`
	TimeS       float64  `json:"time_s"`
	RowsSent    int64    `json:"rows_sent"`
	// RowsExamined are the rows examined where measured.
	RowsExamined int64 `json:"rows_examined"`
	// Endpoints are those that run it, the most calls first, and
	// Unattributed its calls tied to no request.
	Endpoints    []ClassEndpoint `json:"endpoints"`
	Unattributed int64           `json:"unattributed"`
	// CutEndpoints are its calls in the requests the end of a trace run
	// cut (for tags: the requests left in flight, Options.DropLast), by
	// their endpoint, the most calls first. Those calls are among
	// Unattributed, and the requests are not counted in Endpoints: the
	// endpoint of a class whose calls were mostly in requests slower than
	// the run is long is still known.
	CutEndpoints []CutEndpoint `json:"cut_endpoints,omitempty"`
}

// CutEndpoint is one endpoint's part of a class's calls in requests the
// end of the run cut.
type CutEndpoint struct {
	Endpoint string `json:"endpoint"`
	// Calls are the class's calls in the endpoint's cut requests,
	// CutRequests how many of its requests were cut (whether they ran the
	// class or not).
	Calls       int64 `json:"calls"`
	CutRequests int64 `json:"cut_requests"`
	// PerRequestMin is Calls over CutRequests: a lower bound of its calls
	// per request of the endpoint, since each request was cut partway.
	PerRequestMin float64 `json:"per_request_min"`
	// Share is Calls' part of the class's calls (all of them, tied to a
	// request or not).
	Share float64 `json:"share"`
}

// ClassEndpoint is one endpoint's part of a class.
type ClassEndpoint struct {
	Endpoint string `json:"endpoint"`
	Calls    int64  `json:"calls"`
	// PerRequest is its calls per request of that endpoint, Share its
	// part of the class's calls.
	PerRequest float64 `json:"per_request"`
	Share      float64 `json:"share"`
}
