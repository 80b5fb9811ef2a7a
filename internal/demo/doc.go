// Package demo runs stacktune's main job on the embedded default, with
// nothing pre-installed assumed beyond the Debian packages the setup script
// installs. Everything it starts is stopped and removed before it returns,
// also on error or interrupt.
//
// # The loop (Loop, `stacktune demo`)
//
// The reference stack (stack.go): MariaDB with the distribution's
// defaults reading Dir/my.cnf and conf.d (sandbox ConfigFiles and
// ServerDefaults), memcached over TCP, the reference app (package refapp)
// configured by a JSON file, and nginx in front of it as a reverse proxy
// over TCP with Debian 12's nginx.conf defaults. Data is generated at
// LoopOptions.Scale.
//
// Every measurement is LoopOptions.Runs bench runs of refapp's scenario
// (content-checked: a fix that breaks a page fails its run), each after
// GET /initialize and InnoDB's purge of what it deleted, recorded in the
// history under the step's label. The baseline is measured first; then
// one diagnosis run, not scored, with the slow log at long_query_time=0
// while collect takes a snapshot of MySQL, Linux, nginx and memcached;
// the snapshot is audited (package advise) and indexes are proven for the
// slow log's classes on a throwaway copy (package indexadv).
//
// Each step (steps.go) takes its group of findings from the diagnosis and
// turns them into apply targets: my.cnf (a conf.d drop-in; observability
// findings are left out), unix sockets (memcached restarted on its
// socket, the app's DSN, memcached address and listen socket, nginx's
// upstream), nginx (the emitted snippet, each directive in its context),
// indexes (the proven DDL) and cache (the app's cache_batch: the code
// change, behind a setting of the reference app). The targets are applied
// with apply.Run, so each step is backed up, validated, activated, read
// back and rolled back on failure (a failed step is reported and the loop
// goes on). Then the tuned stack is diagnosed again and the steps run
// again for what it finds now ("(2nd audit)"; a change rolled back in the
// first round is tried again, on the tuned stack). Findings no step takes are
// listed with the reason (host-wide, information only, observability, a
// code change the app has no switch for).
//
// Loop only produces data: its result (LoopResult, an alias of
// loopresult.Result, with the recorded runs for the chart) is rendered by
// report.Loop as text, Markdown (linking the SVG of report.LoopChart),
// HTML (a self-contained page with its own inline chart) or JSON ({"steps": [{"label", "scores", "median",
// "x_baseline", "findings", ...}], "not_applied": [...]}).
//
// # The digest demo (DigestDemo, `stacktune demo digest`)
//
// A throwaway MariaDB with the slow log at long_query_time=0 and
// performance_schema on, the built-in workload (package workload), and
// the digests of both over the same run.
package demo
