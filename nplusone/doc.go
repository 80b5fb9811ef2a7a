// Package nplusone holds the one type of an N+1 pattern, a statement an
// application runs once per row of another result: Pattern. Every package
// that finds, merges, advises on or shows one uses it, so no conversion
// stands between them:
//
//   - reqtrace measures patterns per request (a trace run or the
//     statements' tags): the endpoint, its requests, the calls per request,
//     the time, the rewrite;
//   - indexadv detects them from a digest's counts (a SELECT called many
//     times for about one row each): the calls and rows per call;
//   - diagnose lists both, measured first, with the run's figures and the
//     endpoint estimated where nothing measured it (or, for a class run
//     mostly in requests the end of the trace run cut, their endpoint
//     with a lower bound per request: CutRequests; else the route its
//     sampled statement's tag names: TaggedSample); the audit's
//     app-n-plus-one rule (package advise) takes the measured ones; tune's
//     pick hands them to a step; report shows them.
//
// A producer fills what it knows and leaves the rest zero; the JSON of a
// Pattern leaves zero fields out, so each result shows what its producer
// found.
package nplusone
