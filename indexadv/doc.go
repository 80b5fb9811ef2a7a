// Package indexadv is `stacktune indexes`: index advice for the top classes
// of a digest, proven on a throwaway copy before anyone touches production.
//
// The pipeline is Analyze (the tidb parser: per table the equality, range,
// OR, ORDER BY and GROUP BY columns, functions on columns, leading
// wildcards) → Explain on the user's server (EXPLAIN FORMAT=JSON, MariaDB's
// and MySQL's shapes, tabular EXPLAIN as a fallback; UPDATE and DELETE are
// rewritten to a SELECT of the same WHERE, never executed) → Propose
// (candidates, left-prefix coverage by existing indexes, merging across
// queries, duplicate and redundant existing indexes) → Prove (a sandbox
// MariaDB holding a copy of the schema and of the data, or of a sample,
// EXPLAIN rows and timed runs before and after each candidate, the index's
// size and its write cost). Only proposals that help are kept. Nothing is
// applied to the user's server: Result.Changes is for `stacktune apply`.
//
// Each class's QueryReport lists its problems in words (Problems). An N+1
// pattern (a SELECT called at least Options.NPlusOneCalls times for about
// one row per call) is also typed data, QueryReport.NPlusOne (calls, rows
// per call), for callers that act on it rather than show it.
package indexadv
