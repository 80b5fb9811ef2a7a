// Package pfs digests a live MySQL or MariaDB server from performance_schema:
// it reads events_statements_summary_by_digest twice, an interval apart, and
// reports the difference (what ran during the interval, not totals since the
// server started) as a digest.Report, with the same fingerprints and query IDs
// as slow-log digests.
//
// It only reads. Where performance_schema is off (MariaDB's default) or the
// statements_digest consumer is disabled, it returns ErrDisabled with the
// exact setting to change.
//
// Columns differ by server: MySQL 8.0 adds QUERY_SAMPLE_TEXT and QUANTILE_95;
// MySQL 8.0.19+ has events_statements_histogram_by_digest, whose bucket
// deltas give a true median and p95 for the interval. Which columns exist is
// read from information_schema, so an unknown version degrades to what it
// has; a percentile the server cannot give is reported as null, never
// invented. MIN and MAX are since the summary was last reset (the server
// keeps no per-interval extremes); the report notes this.
package pfs
