// Package ledger reads the runs of the history's ledger back for pages
// and scripts: a run with its artefacts decoded into the tables people
// look at (Load: endpoints from the bench's steps and from the access log
// of its window, query classes from its digest, the SQL of each request,
// the audit's findings, the functions of its profile and their flame
// graph), and two runs compared (Compare: per endpoint, per query class
// and per function, sorted by the largest change in total time, with a
// Verdict on whether they may be compared at all, and the interleaved
// decision when both came from one tune or ab session).
//
// It computes, never words: a verdict's reasons are Reason codes with
// their numbers, worded by package report (report.ReasonText), and the
// serve package puts the results on pages and under /api/.
package ledger
