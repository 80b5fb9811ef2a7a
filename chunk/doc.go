// Package chunk reads large inputs in parallel: Split cuts a stream into
// chunks of about Options.Size bytes that end on record boundaries (the
// caller says where a record starts), and Parallel hands chunks to a fixed
// number of worker goroutines. Slow logs (multi-line events) and access logs
// (one line per record) both use it.
//
// Memory is bounded: chunk buffers are pooled, at most 2×workers chunks are
// in flight, and a record longer than Options.MaxRecord is skipped and
// counted rather than buffered without limit.
package chunk
