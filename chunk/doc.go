// Package chunk reads large inputs in parallel: Split cuts a stream into
// chunks of about Options.Size bytes that end on record boundaries (the
// caller says where a record starts), and Parallel hands chunks to a fixed
// number of worker goroutines. Slow logs (multi-line events) and access logs
// (one line per record) both use it.
//
// Memory is bounded: chunk buffers are pooled, at most 2×workers chunks are
// in flight, a record longer than Options.MaxRecord is skipped and counted
// rather than buffered without limit, a record that grows past a chunk is
// given up as soon as the caller's Boundaries.Junk recognises junk in it
// (a slow log's NUL bytes), and only one chunk larger than twice
// DefaultSize is in flight at a time.
//
// Nothing is lost in silence: Split reads until io.EOF and returns any
// other read error (io.ErrUnexpectedEOF from a gzip stream cut short
// included) after emitting the complete records before it, and its Stats
// account for every byte read: emitted, or dropped as too large, as junk,
// or as the incomplete record at a read error.
package chunk
