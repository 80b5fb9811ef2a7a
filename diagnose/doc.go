// Package diagnose is `stacktune diagnose`: one bench run of the user's
// scenario (package benchrun) on the user's own stack, observed at every
// layer at once, and one report of where the time went.
//
// # The run
//
// Run, in this order:
//
//  1. checks what it can before touching anything (the bench's bounds and
//     scenario, the slow log file being readable on this host, the
//     access logs), opens its own connections (sessions with
//     long_query_time at its maximum, so stacktune's own queries are never
//     in the capture) and reads SHOW GLOBAL VARIABLES;
//  2. with the slow log as source (SourceSlowLog, the default), sets only
//     what the capture needs and the server does not already have:
//     log_output with FILE, long_query_time=0, log_slow_verbosity with
//     query_plan (where the server has it: MariaDB, Percona Server),
//     log_slow_rate_limit=1, min_examined_row_limit=0, the default
//     log_slow_filter, and slow_query_log=ON last. Every variable it sets
//     is put back as it was, in reverse order, by a deferred restore that
//     runs on success, on failure and on cancellation (Ctrl-C): it runs on a
//     context of its own, and its statements are also given in Progress
//     before the first change, for a process that is killed. With
//     performance_schema as source (SourcePFS) nothing is set: two
//     readings of its digests bracket the run;
//  3. checks the app's connections (ConnCheck): a session copies
//     long_query_time when it connects, so a pooled connection opened
//     before the change logs nothing. Every connection whose id is below
//     that of a connection opened right after the change existed before
//     it; those still open (stacktune's own and the server's threads
//     excepted) are listed by user@host with their age, and the fix is
//     said: Options.AppRestart (`--app-restart CMD`), run after the change
//     and before the bench, then the check again;
//  4. notes the slow log's size and each access log's size, runs the bench
//     (benchrun, one run, its bounds) and, while it runs, takes the
//     snapshot (collect.Take, over most of the run);
//  5. restores the variables (and, when the slow log was on before, runs
//     AppRestart again so the app's sessions drop long_query_time=0);
//  6. digests the part of the slow log written during the run (from the
//     offset noted at its start), profiles the access logs' lines of the
//     run's window (httpprof), estimates which endpoints the top query
//     classes belong to (Attribution), builds the per-request view (the
//     capture's tags, or a trace run: see below), audits the snapshot (advise.Audit,
//     with the capture's own variables shown as they were before it, unless
//     Options.AuditCaptureSettings) and proves indexes on a throwaway copy
//     (indexadv.Run; nothing is written to the user's server);
//  7. ranks where the time went (Result.Hotspots): endpoints by total
//     request time, query classes by total time, each as a share of the
//     run's wall time × its connections.
//
// Everything is read-only except the capture's variables.
//
// # Which endpoint runs which SQL
//
// Measured first (Result.Requests, package reqtrace): when the captured
// statements carry sqlcommenter or marginalia tags naming their requests,
// they are grouped by request at the run's own concurrency (the last
// Connections requests left out: the run's end may have cut them); with
// RequestOptions.Trace, a trace run after the diagnosis run sends the
// bench's requests again, one at a time, through an HTTP front, while the
// statements are recorded by a MySQL proxy (which Run starts on
// RequestOptions.ProxyListen for the whole diagnosis, or the caller's
// Tap) or by performance_schema's statement history, and each statement
// goes to the request its start falls in. The trace run is preferred over
// tags when both are there. The per-request view then gives the classes'
// endpoints (ClassTime.EndpointSource "measured"), the N+1 patterns (a
// class some request runs at least N times, with the rewrite and its
// cost) and the audit's app-n-plus-one findings (advise.Options.NPlusOne):
// one type, nplusone.Pattern, from reqtrace through the result, the audit
// and tune's pick to report, with nothing converted on the way. A class
// whose calls the view saw mostly in requests the end of its run cut
// keeps the estimated N+1 (below); when the estimate names no endpoint,
// it takes the endpoint whose cut requests ran most of those calls, with
// a lower bound of its calls per request (source "cut_requests").
//
// # Attribution (the fallback)
//
// A slow log does not say which request ran a query, and an access log does
// not say which queries a request ran. Without a per-request view, where
// both cover the run's window,
// the attribution cuts it into Options.Bucket steps (1 s: both logs have
// one-second times), counts each top class's calls and each endpoint's
// requests per step, and fits calls(t) ≈ background + Σ_endpoint
// k_endpoint × requests_endpoint(t) by non-negative least squares: k is the
// estimated calls per request of that endpoint, k × its requests its part
// of the class's calls. It is an estimate: it needs the endpoints' request
// counts to vary from second to second independently of one another (a
// scenario picking steps at random does; two pages always requested
// together cannot be told apart), and the fit's R² is reported with it.
package diagnose
