package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

// clientCommand is the hidden first argument that makes this binary our
// client: loadgen.Run on a URL plan, the result as JSON on stdout.
const clientCommand = "client"

// clientResult is what the client child prints.
type clientResult struct {
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Elapsed  float64 `json:"elapsed_s"`
	RPS      float64 `json:"rps"`
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	Bytes    int64   `json:"bytes"`
	Details  []string
}

func clientMain(args []string) int {
	fs := flag.NewFlagSet("loadbench client", flag.ContinueOnError)
	url := fs.String("url", "", "URL to load")
	conns := fs.Int("connections", 50, "connections")
	dur := fs.Duration("duration", 10*time.Second, "duration")
	profile := fs.String("cpuprofile", "", "write a CPU profile here")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := client(ctx, *url, *conns, *dur, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench client:", err)
		return 1
	}
	return 0
}

func client(ctx context.Context, url string, conns int, dur time.Duration, profile string) error {
	plan, err := loadgen.URLWorkload(url, loadgen.URLOptions{KeepAlive: true})
	if err != nil {
		return err
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	res, err := loadgen.Run(ctx, plan, loadgen.Options{Connections: conns, Duration: dur, KeepAlive: true})
	if err != nil {
		return err
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var details []string
	for _, s := range res.Steps {
		details = append(details, s.Details...)
	}
	return json.NewEncoder(os.Stdout).Encode(clientResult{
		Requests: res.Requests,
		Errors:   res.Errors,
		Elapsed:  res.Elapsed.Seconds(),
		RPS:      res.RPS,
		P50:      ms(res.Latency.P50),
		P99:      ms(res.Latency.P99),
		Bytes:    res.Bytes,
		Details:  details,
	})
}
