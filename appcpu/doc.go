// Package appcpu measures where an application's CPU goes, per endpoint,
// for any language: samplers behind one small interface take the app's
// on-CPU stacks during a trace run (requests one at a time), and Attribute
// gives every sample to the request in flight when it was taken.
//
// # Samplers
//
//   - Perf runs `perf record -e cpu-clock -F 999 -g -k CLOCK_MONOTONIC -p
//     PIDS` on the app's processes (given, or found from the process
//     listening on the target's port through /proc/net/tcp and
//     /proc/PID/fd, its children included: php-fpm's workers), then
//     `perf script`, whose output ParsePerfScript reads (bounded, fuzzed).
//     perf symbolises native code and Go binaries from their symbol
//     tables, and JIT code from the runtime's perf map
//     (/tmp/perf-PID.map: Node's --perf-basic-prof, PHP's JIT with
//     opcache.jit_debug); an interpreter without one shows its own
//     frames (execute_ex, zend_*), and the result says so (Symbols).
//     Each sample carries its time (CLOCK_MONOTONIC, tied to the wall
//     clock when the recording starts), so it falls in one request.
//   - PProf takes Go's /debug/pprof/profile?seconds=1 from the app,
//     profile after profile, parsed with github.com/google/pprof/profile.
//     A sample labelled with its request's trace ID (pprof.Do with a
//     "trace_id" label, from the traceparent header) or its route goes
//     to that request's endpoint; an unlabelled one only carries its
//     profile's window, and is shared among the endpoints whose requests
//     overlap that window by their time in it (the result says so).
//   - InProcess profiles a Go app started inside the calling program (the
//     demo's reference app) with runtime/pprof: the program's own work is
//     in the same profile, so only the samples labelled with a request's
//     trace ID are kept, the rest counted in Skipped.
//
// # Attribution
//
// During a trace run requests run one at a time, so a sample taken
// between a request's start and end belongs to it. Per endpoint: the
// app's CPU time per request (the samples' periods over its requests),
// the database time per request (the per-request SQL the trace run
// measures), the rest of the request's time (waiting: network, locks,
// sleeps, other processes), the top functions by their own (self) share
// of the endpoint's samples with their inclusive share beside, and the
// folded stacks for a flame graph (rendered by package report).
//
// Diff compares two runs' endpoints: each function's CPU per request
// before and after, the ones that grew or shrank most first, and the
// stacks of both for a differential flame graph.
//
// # Bounds
//
// A capture keeps at most MaxSamples samples of at most MaxDepth frames
// (deeper stacks are cut at the root side: the leaf is what costs), with
// frame names interned and cut at MaxFrameName bytes; an endpoint keeps
// MaxStacks distinct stacks for its flame graph (the rest are counted as
// one "(other stacks)" stack). perf script's output is read as it
// streams. What is dropped is counted in Skipped.
package appcpu
