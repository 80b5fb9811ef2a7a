// Package demo runs stacktune's main job on the embedded default, with
// nothing pre-installed assumed beyond the Debian packages the setup script
// installs. Everything it starts is stopped and removed before it returns,
// also on error or interrupt.
//
// # The loop (Loop, `stacktune demo`)
//
// The reference stack (stack.go): MariaDB with the distribution's
// defaults reading Dir/my.cnf and conf.d (sandbox ConfigFiles and
// ServerDefaults) and performance_schema on (the diagnosis's trace run
// reads its statement history), memcached over TCP, the reference app (package refapp)
// configured by a JSON file, and nginx in front of it as a reverse proxy
// over TCP with Debian 12's nginx.conf defaults. Data is generated at
// LoopOptions.Scale.
//
// The loop is `stacktune tune` (package tune) on that stack: Loop starts
// it (StartReference) and calls tune.Run with the stack's services (the
// sandbox servers' own check, restart and reload), the reference app's
// scenario with GET /initialize and InnoDB's purge of what it deleted
// before every run, and the demo's steps (steps.go): tune's my.cnf, nginx
// and indexes steps with the reference app's own between them, unix
// sockets (memcached restarted on its socket, the app's DSN, memcached
// address and listen socket, nginx's upstream), cache (the app's
// cache_batch) and N+1 queries (the app's fixes in refapp.Fixes, matched
// by the fingerprint of the statement each removes). The app's steps are
// code changes a developer would make; the reference app has each behind a
// setting, so tune applies them through apply (the app and memcached
// targets of targets.go) and decides them with the same A/B test as a
// server setting. No host-wide step: the demo never changes this
// machine's settings.
//
// The diagnosis makes a trace run (requests one at a time) and profiles
// the app during it. The app runs inside this process, beside the load
// generator, so perf on the process would mix the two: the app labels
// every request's CPU samples with its trace ID (refapp's ProfileLabels),
// and appcpu.InProcess keeps only those (the rest counted as skipped).
// Per endpoint the report shows the app's CPU, DB and other time per
// request, the top functions and a flame graph (an SVG beside the
// Markdown report, inline in HTML).
//
// So the demo shows exactly what tune does on a user's stack: the noise
// floor (the baseline against itself), the diagnosis, each step applied
// and measured interleaved with the state before it until the test
// decides, the second audit and its steps, the restart check with a cold
// and a warm run, and what was not applied with why. LoopOptions.Quick
// shortens it (QuickDuration runs, one look at QuickRuns runs per state).
// LoopOptions.Dir keeps the servers' files, the apply journal, the
// history, each diagnosis and each step's change set.
//
// Loop only produces data: its result (tune.Result) is rendered by
// report.Loop as text, Markdown (linking the SVG of report.LoopChart),
// HTML (a self-contained page with its own inline chart) or JSON.
// Reference lets a benchmark (bench/noisebench) measure more on the same
// stack.
//
// # The digest demo (DigestDemo, `stacktune demo digest`)
//
// A throwaway MariaDB with the slow log at long_query_time=0 and
// performance_schema on, the built-in workload (package workload), and
// the digests of both over the same run.
package demo
