// Package engines takes stacktune's load beyond one host, onto load
// engines users already run: it exports a scenario (package scenario) to a
// Locust file (distributed master/worker mode) and to a k6 script, and it
// reads the engines' results back (Locust's CSV or JSON statistics, k6's
// summary JSON) into a loadgen.Result scored by the scenario, so the
// history and its score transitions are the same whatever sent the load.
//
// # Export
//
// The scenario becomes data, not code: Locust and K6 write a fixed
// runtime (Python or JavaScript) with the scenario embedded as JSON
// (model), so no template, URL or check of a scenario can inject code into
// the script. The runtime does what scenario's workload does: a virtual
// user per Locust user or k6 VU, with its own cookies and captured values,
// logs in first (binding each data list to the user's row), then picks
// steps by weight among those whose captures it has, fills templates
// (escaping for the URL's path or query as stacktune does), checks status,
// substrings and CSS selectors, and takes captures. A failure is reported
// with stacktune's error kind (connect, timeout, reset, protocol, status,
// check, other): as the "KIND: " prefix of a Locust failure, as a per-step
// k6 counter. Slow responses (over a step's slow_after) are a Locust
// entry of type SlowType without a response time, and a k6 counter.
//
// The open model is k6's constant-arrival-rate and, in Locust, each user
// paced at Rate/Users (constant_throughput); the closed model is k6's
// constant-vus and Locust's users back to back, with think time. The
// exported file says in its header how to run it; the warnings returned
// are what the engine does differently from stacktune bench.
//
// # Import
//
// ImportLocustCSV reads Locust's --csv PREFIX files (PREFIX_stats.csv and
// PREFIX_failures.csv), ImportLocustJSON the --json output of newer
// Locust versions, ImportK6 k6's summary (--summary-export, or the data
// handleSummary receives). Each returns a loadgen.Result in the
// scenario's step order, failures by kind, latency mean and percentiles
// per step and overall, the elapsed time, the dropped iterations of
// k6's open model as unsent requests, and the slow responses per step;
// Score then scores it with the scenario. Input is bounded and checked:
// unknown steps, negative or non-numeric counts, a missing aggregate, a
// Locust Aggregated row that is not what Locust computes from the step
// rows (locustagg.go), and a file past its size bound are errors naming
// the file and line, never a panic. Every number that becomes a count or
// a duration is range-checked first (NaN, infinities, negatives, past
// 1e15 or a year, sums included): refused with its field named, never
// converted out of range.
package engines
