package nplusone

// Sources of a pattern's endpoint (Pattern.Source).
const (
	// Measured: per request, by a trace run or the statements' tags.
	Measured = "measured"
	// Estimated: from the run's counts (index advice's calls over the
	// run, the endpoint by a fit or by the parent query's counts).
	Estimated = "estimated"
	// Unknown: the estimate could not separate the endpoints, so none is
	// named.
	Unknown = "unknown"
	// CutRequests: the endpoint is the one whose requests ran most of the
	// class's calls in the per-request view, but in requests the end of
	// its run cut (a page slower than the run is long), which it does not
	// count: the calls per request (PerRequest) are a lower bound, those
	// calls over those requests, and the run's counts are the digest's.
	CutRequests = "cut_requests"
	// TaggedSample: the estimate named no endpoint, and the class's
	// sampled statement carries its request's route tag: that endpoint
	// runs it (others may too); its calls per request are not counted.
	TaggedSample = "tagged_sample"
)

// Pattern is an N+1 pattern: a statement class run many times in one
// request (a loop over rows), with the endpoint that runs it.
type Pattern struct {
	// Endpoint runs the class ("GET /friends", a route, or "" when
	// unknown).
	Endpoint string `json:"endpoint,omitempty"`
	// ID is the pt-query-digest class ID (the one with the most calls,
	// when the per-request view merged several classes: IDs), Fingerprint
	// its fingerprint, Sample one statement of it.
	ID          string   `json:"id,omitempty"`
	IDs         []string `json:"ids,omitempty"`
	Fingerprint string   `json:"fingerprint,omitempty"`
	Sample      string   `json:"sample,omitempty"`
	// Source says how the endpoint is known: Measured, Estimated,
	// CutRequests or Unknown ("" from a producer that does not say: reqtrace measures,
	// indexadv names no endpoint).
	Source string `json:"source,omitempty"`

	// Measured per request: the endpoint's requests, those that ran the
	// class at least N times (Flagged; -1: unknown, tags that name no
	// request), the class's calls per request of the endpoint (PerRequest,
	// the mean; estimated ones have it too) and the most in one (Max; -1:
	// unknown), its time per request and that over the endpoint's mean
	// request time (RequestShare; 0 when unknown), and the request with
	// the most calls (Worst: its path or trace).
	Requests        int64   `json:"requests,omitempty"`
	Flagged         int64   `json:"flagged,omitempty"`
	N               int     `json:"n,omitempty"`
	PerRequest      float64 `json:"per_request_mean,omitempty"`
	Max             int64   `json:"per_request_max,omitempty"`
	TimePerRequestS float64 `json:"time_per_request_s,omitempty"`
	RequestShare    float64 `json:"request_share,omitempty"`
	Worst           string  `json:"worst,omitempty"`

	// Calls, RowsPerCall and TimeS are the class's in the run: its calls
	// and rows sent per call in the digest, and its time (from the
	// endpoint, when measured per request). EndpointShare is the part of
	// its calls that Endpoint makes.
	Calls         int64   `json:"calls,omitempty"`
	RowsPerCall   float64 `json:"rows_per_call,omitempty"`
	TimeS         float64 `json:"time_s,omitempty"`
	EndpointShare float64 `json:"endpoint_share,omitempty"`

	// Rewrite says how to make it one query, from the statement's shape;
	// Problem says the pattern in one line (where, what, how many times,
	// what it costs, what to do).
	Rewrite string `json:"rewrite,omitempty"`
	Problem string `json:"problem,omitempty"`
	// Parent is the query whose rows it loops over (its fingerprint), when
	// the counts show it: the endpoint is then that query's. Note
	// qualifies an estimate (one query per page rather than a loop over
	// rows; calls cut by the end of the run).
	Parent string `json:"parent,omitempty"`
	Note   string `json:"note,omitempty"`
}
