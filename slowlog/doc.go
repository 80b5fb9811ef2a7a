// Package slowlog reads MySQL, Percona Server and MariaDB slow query logs as a
// stream of events, in bounded memory, and counts what it cannot read.
//
// # Formats
//
// One parser reads every format these servers write: MySQL 5.0-5.5 (`# Time:
// 071015 21:43:52`, integer Query_time), 5.6-5.7, 8.0 and 8.4 (RFC 3339 `#
// Time:` lines, `Id:` on the User@Host line, the log_slow_extra fields such as
// Bytes_received and Read_first), Percona Server's extended fields (Schema,
// Last_errno, QC_Hit, Full_scan, Tmp_table_on_disk, Filesort, InnoDB_* ...) and
// MariaDB 10.x/11.x (Thread_id/Schema/QC_hit lines, Rows_affected, the
// log_slow_verbosity=query_plan fields Full_scan, Full_join, Tmp_table,
// Tmp_table_on_disk, Filesort, Filesort_on_disk, Merge_passes, Priority_queue,
// and the `# explain:` lines). A header line is a list of `Name: value` pairs;
// the parser tokenises it generically, so a field it does not know is counted
// (Stats.UnknownFields), never an error.
//
// # Events
//
// An event is a run of `#` header lines followed by query lines. Leading `use
// db;` and `SET timestamp=N;` lines set the event's database and time and are
// not part of the query (a lone `use db;` is the query, as pt-query-digest
// has it). `# administrator command: Quit;` is an event's query. Server banner
// lines written at start-up (`/usr/sbin/mysqld, Version: ...`, `Tcp port:`,
// `Time  Id Command  Argument`) are ignored.
//
// # Bad input
//
// Nothing panics and nothing is lost silently: an event that cannot be used is
// skipped and counted under a reason (see the Reason constants): a header with
// no query (truncated), query text with no header, a line longer than
// MaxLineBytes, binary junk (NUL bytes), a missing or unparseable Query_time,
// an event larger than 64 MiB (Split), the event a read error cut off.
//
// Binary junk runs from a line with a NUL byte to the next `# Time:` or `#
// User@Host:` line: the event it falls in is skipped, and a run between
// events is counted once. Split drops such a run as it reads it, so a
// megabyte or a gigabyte of random bytes costs the same memory, and the
// result is the same as the parser's reading the junk itself.
//
// # Parallelism
//
// Split cuts an input into chunks at event boundaries (a `# Time:` or `#
// User@Host:` line) with package chunk, carrying the last `# Time:` line over
// to the next chunk because old servers write it only when the second
// changes. ParseChunk parses
// one chunk; chunks are independent, so callers (package digest) parse them on
// all cores. A Parser value is not safe for concurrent use: use one per
// goroutine.
package slowlog
