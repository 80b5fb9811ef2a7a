// Package workload is stacktune's built-in database workload: a small social
// network schema (users, relations, entries, comments) written the way a
// first version is written, with the classic faults the ISUCON5 qualifier write-ups found (an
// `one = ? OR another = ?` scan with a filesort, N+1 lookups in a loop, an
// unindexed comment count), and a bounded driver that runs it on a few
// connections. The demo uses it to fill a slow log and performance_schema
// with realistic classes; tests use it as a known input.
//
// Run is always bounded by its Duration and by MaxPages.
package workload
