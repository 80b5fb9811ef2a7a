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
// EXPLAIN's plan and rows and timed runs before and after each candidate,
// the index's size and its write cost). The plan is the proof: a
// candidate is kept only when EXPLAIN on the copy chooses it for a query
// (the plan's key, or one of an index_merge's) and its estimated rows
// examined at least halve (rowsFactor); a query that merely times faster
// proves nothing, and one that takes longer vetoes it. Each proposal's
// Evidence holds the plans and rows before and after, and a rejected
// candidate says why ("the plan did not change: key user_id, rows 14 →
// 14"). Nothing is applied to the user's server: Result.Changes is for
// `stacktune apply`.
//
// Each class's QueryReport lists its problems in words (Problems). An N+1
// pattern (a SELECT called at least Options.NPlusOneCalls times for about
// one row per call) is also typed data, QueryReport.NPlusOne (an
// nplusone.Pattern with its calls, rows per call and problem), for callers
// that act on it rather than show it.
package indexadv
