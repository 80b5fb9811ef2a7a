package main

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/input"
)

// BenchmarkHTTPLog profiles the access log named by $HTTPBENCH_LOG in
// process, the way `stacktune http --nginx-format ... --limit 0` does
// (cmd/stacktune/http.go's profile; keep the two in step), so it can be
// profiled (the CLI has no profiling flag). The log must be in the
// generator's format (nginxFormat). $HTTPBENCH_WORKERS sets the parser
// goroutines (default: one per core). Skipped without $HTTPBENCH_LOG, and
// never run by plain `go test`, which runs no benchmarks:
//
//	HTTPBENCH_LOG=/tmp/stacktune-bench/nginx-timed-1024MiB-seed1.log \
//	  go test ./bench/httpbench -run '^$' -bench HTTPLog -benchtime 3x \
//	  -cpuprofile /tmp/http.cpu -memprofile /tmp/http.mem
//	go tool pprof -top /tmp/http.cpu
func BenchmarkHTTPLog(b *testing.B) {
	path := os.Getenv("HTTPBENCH_LOG")
	if path == "" {
		b.Skip("set HTTPBENCH_LOG to an access log to profile")
	}
	workers, _ := strconv.Atoi(os.Getenv("HTTPBENCH_WORKERS"))
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	p, err := accesslog.NewNginx("inline", nginxFormat)
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
		res, err := httpprof.FromLogs(context.Background(), []input.Input{in}, p, httpprof.LogOptions{Workers: workers})
		c.Close()
		if err != nil {
			b.Fatal(err)
		}
		rep, err := res.Report(p, httpprof.ReportOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Skipped.Count > 0 {
			b.Fatalf("skipped %d lines: %v", rep.Skipped.Count, rep.Skipped.Reasons)
		}
	}
}
