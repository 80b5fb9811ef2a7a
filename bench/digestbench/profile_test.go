package main

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/input"
)

// BenchmarkDigestLog digests the slow log named by $DIGESTBENCH_LOG in
// process, the way `stacktune digest` does (cmd/stacktune/digest.go's
// digestFiles; keep the two in step), so it can be profiled (the CLI
// has no profiling flag). $DIGESTBENCH_WORKERS sets the parser goroutines
// (default: one per core). Skipped without $DIGESTBENCH_LOG, and never run
// by plain `go test`, which runs no benchmarks:
//
//	DIGESTBENCH_LOG=/tmp/stacktune-bench/oltp_read_write-256MiB.log \
//	  go test ./bench/digestbench -run '^$' -bench DigestLog -benchtime 3x \
//	  -cpuprofile /tmp/digest.cpu -memprofile /tmp/digest.mem
//	go tool pprof -top /tmp/digest.cpu
func BenchmarkDigestLog(b *testing.B) {
	path := os.Getenv("DIGESTBENCH_LOG")
	if path == "" {
		b.Skip("set DIGESTBENCH_LOG to a slow log to profile")
	}
	workers, _ := strconv.Atoi(os.Getenv("DIGESTBENCH_WORKERS"))
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		in, c, err := input.Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		agg, _, err := digest.FromSlowLogs(context.Background(), []input.Input{in}, digest.Options{Workers: workers})
		c.Close()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := agg.Report(digest.ReportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
