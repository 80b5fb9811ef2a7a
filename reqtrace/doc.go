// Package reqtrace ties every SQL statement to the HTTP request that ran
// it, without an APM agent and without changing the application, and
// reports per endpoint what its requests run: the queries per request by
// class (mean and max), the database time per request and its share of
// the request's time, the rows examined per request, and the N+1
// patterns, flagged by calls per request (a class run at least N times in
// one request) whatever the traffic.
//
// # Two ways to tie statements to requests
//
// A trace run (Trace) sends the scenario's requests one at a time (or a
// small known number at a time) through an HTTP front of its own, which
// records each request's method, path, start and end and sends it on with
// a W3C traceparent header, while the statements are recorded with their
// connection and their start and end by:
//
//   - stacktune's MySQL protocol proxy (package mysqlproxy) that the app's
//     DSN points at, through a Tap. This is the general way: it works on
//     any server and version, sees every statement's text (including
//     executions of prepared statements, mapped to their text by id), and
//     its times come from the same clock as the front's, so a statement
//     falls within its request's time exactly. It costs a change of the
//     app's DSN and a restart, and two more socket hops per round trip
//     (measured by bench/tracebench);
//   - performance_schema's events_statements_history_long, where
//     performance_schema is on: no change to the app and no restart. The
//     consumers it needs are turned on for the run and off again. Its
//     limits: the history is a ring (1000 or 10000 statements by
//     default), read every 50 ms, and a read that finds it went round says
//     statements were lost; the server writes a row without a lock, so a
//     row is taken only once a second read returns it unchanged (a read
//     can catch it half written); the server's timer is tied to this host's
//     clock by a calibration query (within half its round trip); MariaDB
//     records no text for executions of prepared statements (they count in
//     their requests' DB time, in no class); texts are cut at
//     performance_schema_max_sql_text_length.
//
// A statement within exactly one request's time belongs to it. With more
// than one request in flight, a statement within several goes to the one
// its connection's previous statement went to when that is among them (an
// app holding a connection per request, as PHP does), else it is counted
// as ambiguous. Statements outside every request (background work) are
// counted apart.
//
// A request the end of the run cut (a page slower than the run is long)
// is not counted: it ran only part of its statements. Its statements are
// kept apart by its endpoint (Class.CutEndpoints: a class's calls in the
// cut requests of each endpoint, and those requests), so that the
// endpoint of a class run mostly by such requests is still known, with
// its calls per cut request as a lower bound. Tags count the requests
// left in flight at the end (Options.DropLast) the same way.
//
// Tags (FromSlowLog, Tags) need no trace run: an app that writes
// sqlcommenter or marginalia comments (package sqltag) names each
// statement's request (the trace ID of its traceparent, or a request_id)
// and endpoint (its route, or controller#action), so statements group by
// request at any concurrency, from a slow log captured at
// long_query_time=0 or from performance_schema's history. The request's
// time then comes from the access log's endpoint the route matches
// (sqltag.MatchRoute), when there is one. Tags whose endpoint names no request
// give calls per request over the access log's count.
//
// # Classes
//
// Statements are counted by merged class (fingerprint.MergedID):
// pt-query-digest's fingerprint with the spacing differences it keeps
// apart merged, so "id = ?" and "id=?", or a statement with a trailing tag
// and without, are one class for attribution. Each class lists the
// pt-query-digest IDs merged in it: those are the digest's classes, with
// their IDs unchanged.
//
// # Rows examined
//
// The slow log and performance_schema record rows examined per statement;
// the proxy cannot see them, so a proxy trace estimates them from the
// digest of the same stack (Options.RowsExaminedPerCall: calls × the
// class's average per call) and the report says so.
//
// # Bounds
//
// A trace run keeps at most MaxTraceRequests requests and
// MaxTraceStatements statements (about 50 bytes each, the text interned
// into its class as it comes); MaxClasses classes, MaxEndpoints
// endpoints; tags hold at most 100,000 requests open at once and finish a
// request a minute (of log time) after its last statement. What is
// dropped is counted in Report.Skipped.
package reqtrace
