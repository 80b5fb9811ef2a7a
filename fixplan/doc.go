// Package fixplan turns a finding the user must fix in code (an N+1 loop,
// a hot function) into the fix's plan: the endpoint, the calls per
// request, the share of the request's time, for SQL the one query that
// replaces the loop, checked against what the loop returned, and the
// command that will prove the change (`stacktune ab`).
//
// # The query that replaces a loop
//
// LoopFromSlowLog finds, in a slow log captured at long_query_time=0
// whose statements carry request tags (sqlcommenter, marginalia: package
// sqltag), one request's statements of the loop's class with their
// values: the request of the endpoint with the most calls. Rewrite reads
// them (a small lexer, no SQL engine): a SELECT whose WHERE is an AND/OR
// of `column = literal` comparisons; the comparisons whose literal
// changes from call to call are the loop's keys. The one query selects
// the columns the WHERE compares (and the loop's own columns, unless it
// counts rows) with each key comparison turned into `column IN (the
// values)`: the per-row `WHERE id = ?` becomes `WHERE id IN (...)`, and a
// friendship check per row, `(one = ? AND another = ?) OR (one = ? AND
// another = ?)`, becomes one query for the user's rows with the listed
// users.
//
// Check runs each of the loop's statements and the one query on a
// database (the copy, or the live server in a read-only transaction:
// only SELECT statements are run) and evaluates the loop's WHERE on the
// one query's rows for each call: the rows (or, for COUNT, the count)
// each call returned must be the rows of the one query that match it.
// The result is CheckSameRows, CheckDifferentRows (with the first call
// that differs) or CheckUnchecked with a reason code (Unchecked*).
//
// # The command that proves the change
//
// ProveCommand is `stacktune ab` filled in with the user's scenario (or
// URL) and run length, with placeholders only for the two commands that
// deploy the user's code before and after the change.
//
// # Bounds
//
// A loop keeps at most MaxCalls statements of one request (MaxRequests
// requests are tracked while the log is read), Check reads at most
// MaxRows rows in all, and a statement longer than MaxStatement bytes is
// not read.
package fixplan
