package diagnose

import (
	"context"
	"github.com/stacktune/stacktune/fixplan"
	"time"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/reqtrace"
)

// Sources of the query digest (Options.Source).
const (
	// SourceSlowLog captures every query in the slow log at
	// long_query_time=0 for the run.
	SourceSlowLog = "slowlog"
	// SourcePFS reads performance_schema's statement digests before and
	// after the run; nothing is changed on the server.
	SourcePFS = "performance_schema"
)

// Defaults of Options.
const (
	DefaultClasses   = 20
	DefaultBucket    = time.Second
	DefaultProofRuns = 5
)

// Options configures Run.
type Options struct {
	// DSN names the server (a go-sql-driver DSN, resolved: see
	// dbconn.Source.Resolve). Required.
	DSN string
	// Source is SourceSlowLog (default) or SourcePFS.
	Source string
	// SlowLog is the path of the server's slow log as this host reads it;
	// "" means the server's slow_query_log_file (relative to its datadir).
	SlowLog string
	// Bench is the run: a URL or a scenario, as `stacktune bench` takes
	// them. It is one run (Runs must be 0 or 1) without warm-up, bounded by
	// Load.Duration (required) and Load.MaxDuration as bench bounds it.
	Bench benchrun.Options
	// Collect configures the snapshot taken during the run, as `stacktune
	// collect`'s flags do (Values by flag name). "interval" is set from the
	// run's duration when it is not given. DB nil (and no DBError) means
	// Run's own connection, whose queries the capture does not log.
	Collect collect.Config
	// AccessLogs are the access logs to read for the run's window; empty
	// means those the nginx configuration Collect.Values["nginx-conf"]
	// writes.
	AccessLogs []string
	// AccessLogFormat parses AccessLogs; nil takes the format
	// Collect's "http-log-format" names (--http-log-format), or the
	// log_format the nginx configuration gives the file, or else detects
	// the format from the lines.
	AccessLogFormat accesslog.Parser
	// AppRestart makes the app open new connections: it runs after the
	// capture settings are in place and before the bench (and again after
	// they are restored, when the slow log was on before). AppRestartName
	// says what it is in the report ("systemctl restart app"); see Command.
	AppRestart     func(ctx context.Context) error
	AppRestartName string
	// BeforeBench runs right before the bench, after AppRestart and the
	// connection check (the demo resets its app's data there).
	BeforeBench func(ctx context.Context) error
	// Database is the default database of query classes that name none,
	// for index advice; "" means the DSN's.
	Database string
	// Classes is how many query classes the digest keeps, by total time
	// (default DefaultClasses); IndexClasses how many of them index advice
	// takes (0: all of them).
	Classes      int
	IndexClasses int
	// RowLimit and ProofRuns are indexadv's (copy tables up to RowLimit
	// rows, a sample above; the median of ProofRuns timed runs).
	RowLimit  int64
	ProofRuns int
	// Audit tunes the audit.
	Audit advise.Options
	// AuditCaptureSettings audits the snapshot as taken, the capture's
	// slow-log settings in its variables. By default the variables the
	// capture changed show the values they had before it (and have again).
	AuditCaptureSettings bool
	// Bucket is the time step of the attribution (default DefaultBucket).
	Bucket time.Duration
	// Requests configures the per-request view: which endpoint runs which
	// statements, how many times per request (see RequestOptions).
	Requests RequestOptions
	// Progress receives one line per step; nil for none.
	Progress func(line string)

	// hook, for tests, is called at each stage ("changed", "bench",
	// "analyse"); an error fails the run there.
	hook func(stage string) error
}

// Result is one diagnosis: the shape of `stacktune diagnose --format json`.
// Times are seconds.
type Result struct {
	// Server is the database server ("MariaDB 10.11.19").
	Server string `json:"server"`
	// Source is SourceSlowLog or SourcePFS.
	Source string `json:"source"`
	// Started and Ended bracket the bench run: the window every log is
	// read for.
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// WindowS is the bench run's own duration, Connections its
	// connections (virtual users) and CapacityS their product: the
	// users' time, which shares of time are taken of.
	WindowS     float64 `json:"window_s"`
	Connections int     `json:"connections"`
	CapacityS   float64 `json:"capacity_s"`
	// Bench is the run's summary (nil when it did not run).
	Bench *benchrun.Summary `json:"bench"`
	// Capture is what was changed on the server and put back.
	Capture Capture `json:"capture"`
	// ConnCheck is the check of the app's connections (nil with
	// SourcePFS, which counts every connection).
	ConnCheck *ConnCheck `json:"connections_check,omitempty"`
	// Hotspots rank where the time went, across layers.
	Hotspots []Hotspot `json:"hotspots"`
	// Endpoints and Classes are the ranked tables behind Hotspots.
	Endpoints []EndpointTime `json:"endpoints"`
	Classes   []ClassTime    `json:"classes"`
	// Requests is the per-request view, measured (package reqtrace): a
	// trace run's (RequestOptions.Trace) or, without one, the captured
	// statements' tags when they name their requests; nil when neither
	// was there. When set it is the source of the endpoints of the
	// classes, of the N+1 patterns and of the audit's app-n-plus-one.
	Requests *reqtrace.Report `json:"requests,omitempty"`
	// PerRequest says how the per-request view was made (tags, a trace
	// run through the proxy or performance_schema, one after a restart
	// with performance_schema on, or none: the estimate) and why.
	PerRequest *PerRequest `json:"per_request,omitempty"`
	// Attribution estimates the endpoints of the top classes (nil when
	// the logs do not overlap: no access log, or SourcePFS): the fallback
	// when Requests is nil.
	Attribution *Attribution `json:"attribution,omitempty"`
	// NPlusOne are the N+1 patterns: measured per request (a class some
	// request ran at least N times) when Requests is set, else those
	// index advice found by calls over the run, with their endpoint
	// estimated. Source says which.
	NPlusOne []nplusone.Pattern `json:"n_plus_one"`
	// Rewrites are, by an N+1 pattern's fingerprint, the one query that
	// replaces its loop, checked against one request's calls (package
	// fixplan; nil when there was no N+1 pattern).
	Rewrites map[string]*fixplan.Rewrite `json:"rewrites,omitempty"`
	// Digest is the query digest of the run, HTTP the profile of the
	// access logs' lines of its window (nil without an access log).
	Digest     *digest.Report   `json:"digest"`
	HTTP       *httpprof.Report `json:"http,omitempty"`
	AccessLogs []string         `json:"access_logs,omitempty"`
	// Indexes are the proven indexes (with the N+1 patterns and each
	// class's problems); IndexError is why index advice failed, if it did.
	Indexes    *indexadv.Result `json:"indexes"`
	IndexError string           `json:"index_error,omitempty"`
	// Audit is the audit of the snapshot taken during the run.
	Audit *advise.Result `json:"audit"`
	// Snapshot is that snapshot (saved apart: it is large).
	Snapshot *collect.Snapshot `json:"-"`
	// Notes say what the report should be read with.
	Notes []string `json:"notes"`
}

// Capture is what the capture changed on the server and how it was put
// back.
type Capture struct {
	// How describes the capture in words.
	How string `json:"how"`
	// SlowLog is the slow log file read, from StartOffset (its size when
	// the run started) to EndOffset.
	SlowLog     string `json:"slow_log,omitempty"`
	StartOffset int64  `json:"start_offset"`
	EndOffset   int64  `json:"end_offset"`
	// Changed are the variables set, in the order they were set.
	Changed []VarChange `json:"changed"`
	// Restored is true when every changed variable reads back as it was
	// (SHOW GLOBAL VARIABLES), or nothing was changed.
	Restored bool `json:"restored"`
	// Leftovers are the statements that put back what could not be
	// restored, to run by hand.
	Leftovers []string `json:"leftovers,omitempty"`
	// Trim is what became of the bytes the capture added to the slow log
	// (nil when nothing was captured there).
	Trim *SlowLogTrim `json:"slow_log_trim,omitempty"`
}

// VarChange is one global variable the capture set.
type VarChange struct {
	Name   string `json:"name"`
	Before string `json:"before"`
	During string `json:"during"`
	// After is the value read back after the restore.
	After string `json:"after"`
	// Set and Restore are the statements run.
	Set     string `json:"set"`
	Restore string `json:"restore"`
}

// ConnCheck says which connections the capture could not see: those
// opened before long_query_time changed, which keep their old value.
type ConnCheck struct {
	// Boundary is the id of a connection opened right after the change:
	// connections with a lower id existed before it.
	Boundary int64 `json:"boundary_id"`
	// Uncaptured are the connections open before the change still open
	// when the bench started (stacktune's own and the server's threads
	// left out), and Groups the same by user@host.
	Uncaptured []Conn      `json:"uncaptured"`
	Groups     []ConnGroup `json:"groups"`
	// BeforeRestart is how many there were before AppRestart ran (-1:
	// it was not given).
	BeforeRestart int `json:"before_restart"`
	// Restart names AppRestart when it ran.
	Restart string `json:"restart,omitempty"`
	// Fix says how to capture them, when there are any.
	Fix string `json:"fix,omitempty"`
	// Error is why the check could not be made (a missing PROCESS
	// privilege shows only the user's own connections).
	Error string `json:"error,omitempty"`
}

// Conn is one connection of the processlist.
type Conn struct {
	ID      int64  `json:"id"`
	User    string `json:"user"`
	Host    string `json:"host"`
	DB      string `json:"db,omitempty"`
	Command string `json:"command"`
	// AgeAtLeastS bounds its age from below: the longer of its time in
	// its current state and the time since stacktune first saw it.
	AgeAtLeastS float64 `json:"age_at_least_s"`
	// OpenAtEnd is true when it was still open after the bench.
	OpenAtEnd bool `json:"open_at_end"`
}

// ConnGroup counts the uncaptured connections of one user@host.
type ConnGroup struct {
	User  string  `json:"user"`
	Host  string  `json:"host"`
	Count int     `json:"count"`
	IDs   []int64 `json:"ids"`
	// AgeAtLeastS is the oldest of them.
	AgeAtLeastS float64 `json:"age_at_least_s"`
}

// Layers of a Hotspot.
const (
	LayerHTTP  = "http"
	LayerMySQL = "mysql"
)

// Hotspot is one place the time went: an endpoint or a query class,
// ranked across layers by total time. A class's time is part of its
// endpoints' time: Hotspots rank, they do not add up.
type Hotspot struct {
	Rank  int    `json:"rank"`
	Layer string `json:"layer"`
	// What is "GET /items/:num" or a class's fingerprint; ID is the class
	// ID (empty for an endpoint).
	What string `json:"what"`
	ID   string `json:"id,omitempty"`
	// TimeS is its total time in the run, CapacityShare that over the
	// run's wall time × connections.
	TimeS         float64 `json:"time_s"`
	CapacityShare float64 `json:"capacity_share"`
	Count         int64   `json:"count"`
	// Details: the likely endpoint of a class (estimated), a proven
	// index, an N+1 pattern, the classes of an endpoint.
	Details []string `json:"details"`
}

// EndpointTime is an endpoint of the run by total request time.
type EndpointTime struct {
	Rank   int     `json:"rank"`
	Method string  `json:"method"`
	Path   string  `json:"path"`
	Count  int64   `json:"count"`
	TimeS  float64 `json:"time_s"`
	// Share is of all requests' time, CapacityShare of the run's wall
	// time × connections.
	Share         float64 `json:"share"`
	CapacityShare float64 `json:"capacity_share"`
	AvgS          float64 `json:"avg_s"`
	P99S          float64 `json:"p99_s"`
	Errors5xx     int64   `json:"5xx"`
	// Classes are the query classes estimated to run under it (IDs, most
	// time first).
	Classes []string `json:"classes,omitempty"`
}

// ClassTime is a query class of the run by total time.
type ClassTime struct {
	Rank                int     `json:"rank"`
	ID                  string  `json:"id"`
	Fingerprint         string  `json:"fingerprint"`
	Count               int64   `json:"count"`
	TimeS               float64 `json:"time_s"`
	Share               float64 `json:"share"`
	CapacityShare       float64 `json:"capacity_share"`
	AvgS                float64 `json:"avg_s"`
	RowsExaminedPerSent float64 `json:"rows_examined_per_sent"`
	// Endpoint is the endpoint that runs most of its calls ("GET
	// /items"), EndpointShare its part of the class's calls,
	// CallsPerRequest its calls per request of that endpoint: measured
	// when EndpointSource is EndpointMeasured (Result.Requests), a lower
	// bound when EndpointCutRequests (most of its calls in that
	// endpoint's requests the end of the trace run cut), else estimated
	// (see Attribution).
	Endpoint        string  `json:"endpoint,omitempty"`
	EndpointShare   float64 `json:"endpoint_share,omitempty"`
	CallsPerRequest float64 `json:"calls_per_request,omitempty"`
	EndpointSource  string  `json:"endpoint_source,omitempty"`
	// Indexes are the proven indexes serving it (their DDL), NPlusOne is
	// set when it is an N+1 pattern, Problems what index advice saw.
	Indexes  []string `json:"indexes,omitempty"`
	NPlusOne bool     `json:"n_plus_one,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

// Sources of an endpoint or an N+1 pattern.
const (
	EndpointMeasured  = nplusone.Measured
	EndpointEstimated = nplusone.Estimated
	// EndpointUnknown: the estimate could not separate the endpoints
	// (Attribution's Confident false), so none is named.
	EndpointUnknown = nplusone.Unknown
	// EndpointCutRequests: the per-request view saw most of the class's
	// calls in requests of one endpoint that the end of its run cut (see
	// reqtrace.Class.CutEndpoints): that endpoint, and a lower bound of
	// its calls per request.
	EndpointCutRequests = nplusone.CutRequests
	// EndpointTaggedSample: no estimate, but the class's sampled
	// statement names its request's route in a tag (sqlcommenter,
	// marginalia): an endpoint that runs it, calls per request unknown.
	EndpointTaggedSample = nplusone.TaggedSample
)

// Attribution estimates which endpoints the top query classes belong to
// (see the package documentation).
type Attribution struct {
	// Method says how, in words.
	Method string `json:"method"`
	// BucketS is the time step, Buckets how many steps the window had.
	BucketS float64 `json:"bucket_s"`
	Buckets int     `json:"buckets"`
	// Endpoints are the endpoints fitted (the rest as "(other requests)").
	Endpoints []string           `json:"endpoints"`
	Classes   []ClassAttribution `json:"classes"`
}

// ClassAttribution is one class's estimate.
type ClassAttribution struct {
	ID          string `json:"id"`
	Fingerprint string `json:"fingerprint"`
	// Calls are the class's calls in the window's steps.
	Calls int64 `json:"calls"`
	// R2 is the fit's coefficient of determination (1: the endpoints'
	// requests explain every second's calls).
	R2 float64 `json:"r2"`
	// Endpoints are those with at least a twentieth of its calls, most
	// first.
	Endpoints []EndpointShare `json:"endpoints"`
	// Background is the part of its calls no endpoint explains (steady
	// work: other clients, background jobs).
	Background float64 `json:"background"`
	// Note says why there is no estimate, when there is none.
	Note string `json:"note,omitempty"`
	// Confident is true when the estimate separates the endpoints (R² at
	// least 0.5, the top endpoint's range above 0): only then does a
	// class get an endpoint from it; otherwise its endpoint is unknown.
	Confident bool `json:"confident"`
}

// EndpointShare is one endpoint's estimated part of a class.
type EndpointShare struct {
	Endpoint        string  `json:"endpoint"`
	CallsPerRequest float64 `json:"calls_per_request"`
	// Low and High are the 5th and 95th percentiles of CallsPerRequest
	// over fits on resampled steps: how sure the estimate is.
	Low   float64 `json:"calls_per_request_low"`
	High  float64 `json:"calls_per_request_high"`
	Share float64 `json:"share"`
	// TimeS is the class's time from this endpoint (Share of its total).
	TimeS float64 `json:"time_s"`
}
