// Package httpprof profiles access logs by endpoint: it groups requests into
// endpoints (method + path pattern) without any user-written regex, and
// reports per endpoint the count, share of total time, status classes,
// request-time distribution (sum, avg, min, p50, p90, p95, p99, max),
// upstream time and body bytes, plus the slowest single requests and the
// overall rate and static/dynamic split. nginx's 499 (the client closed the
// connection, as the last requests of a bench run do) is counted apart
// (StatusCounts.ClientClosed), neither a 4xx nor a server error. Diff
// compares two profiles endpoint by endpoint, per second of window when
// the two logs cover windows of different lengths (see DiffReport).
//
// # Grouping
//
// A path is cut into segments. Segments that are obviously values are typed
// at once: all digits (:num), UUIDs (:uuid), hex hashes of 16+ digits
// (:hash), dates (:date). Other segments go into a trie, one node per
// position. When a node sees more than Options.GroupThreshold distinct
// literal segments (default 20: route vocabularies are smaller, user names
// and slugs are not), it collapses them into one wildcard child (:name),
// merging what was counted under the literals, and from then on counts every
// value there. This happens in the same pass, per worker, and merging
// workers applies the same rule, so a profile does not depend on the number
// of workers. Each collapse is reported (GroupsLearned) with examples of the
// values it merged, so a user can check it. User groups (Options.Groups,
// the CLI's -m) are regular expressions matched first; a path that matches
// one is counted under it and never enters the trie.
//
// Query strings are dropped by default, or grouped by their sorted keys
// (Options.QueryKeys: /search?page=&q=).
//
// # Memory
//
// Nothing per request is kept: each endpoint holds counters and a
// histogram.Histogram. The trie is bounded: a node has at most GroupThreshold
// literal children plus one wildcard, paths deeper than MaxDepth segments are
// cut, and past MaxEndpoints endpoints further new ones are counted under
// "(other)". Memory grows with endpoints, never with lines.
//
// # Concurrency
//
// FromLogs cuts inputs into line-aligned chunks (package chunk) and profiles
// them on every core, one Profiler per worker, merged at the end. A
// Profiler is not safe for concurrent use. Given no parser, FromLogs
// detects the format from the first lines it reads (accesslog.Sample:
// lines longer than MaxLineBytes are skipped and counted, so a log that
// starts with gigabytes of junk is read from the lines after it), holding
// the chunks read meanwhile (bounded) and profiling them once it knows; no
// input is read twice, so standard input and gzip are detected too.
package httpprof
