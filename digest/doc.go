// Package digest groups query events into classes (one per fingerprint, see
// package fingerprint) and reports per-class statistics: calls, total, average,
// median, 95th percentile and maximum time, lock time, rows sent, examined and
// affected, temporary tables, full scans and filesorts, databases, users and
// hosts, first and last seen.
//
// # Memory
//
// Nothing per event is kept. Each class holds counters, a log-bucketed
// histogram of query times (package hist: buckets 1/32 of a power of two wide, so a
// percentile is within about 3% of the true value; only the span of buckets a
// class uses is allocated), one sample query (the slowest, the last of equals, as
// pt-query-digest chooses it) and bounded maps of databases and users (MaxDistinct names, then
// "(other)"). Memory grows with the number of classes, never with the number of
// events.
//
// # Concurrency
//
// FromSlowLogs reads inputs on one goroutine, which cuts them into chunks at
// event boundaries (slowlog.Split), and parses and aggregates chunks on
// Options.Workers goroutines, each with its own Parser and Aggregator; the
// aggregators are merged at the end. Merging is exact for counts and sums and
// for histograms; the sample is the slowest event, the last in input order among equals,
// so results do not depend on scheduling. An Aggregator is not safe for
// concurrent use.
//
// Live input from performance_schema is in package pfs, which builds the same
// Report.
package digest
