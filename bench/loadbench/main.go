// Command loadbench measures the load generator of `stacktune bench`
// (package loadgen, URL plans) against wrk on the same throwaway nginx
// serving a small static file: achieved requests per second, and client
// CPU per request from each client's own rusage.
//
// Both clients run as child processes of this program, alternating, with
// the same connection count and duration; ours is this same binary
// re-executed as "loadbench client ...", which calls loadgen.Run with
// loadgen.URLWorkload directly (the CLI is not needed). Two configurations
// are measured: unpinned (clients and nginx share both cores) and pinned
// (nginx on CPU 0, the client on CPU 1, with taskset).
//
//	go run ./bench/loadbench                      # 3 runs per client and configuration, 50 connections, 10s
//	go run ./bench/loadbench --markdown           # + a Markdown section for docs/benchmarks.md
//	go run ./bench/loadbench --syscalls           # + syscalls and context switches per request (perf stat)
//	go run ./bench/loadbench --cpuprofile /tmp/lg # + an untimed profiled run of ours per configuration
//
// See bench/README.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// config holds the command-line flags.
type config struct {
	connections int
	duration    time.Duration
	runs        int
	size        int
	configs     []string
	wrkThreads  int
	markdown    bool
	syscalls    bool
	cpuprofile  string
	toolTimeout time.Duration
	keep        bool
	maxOther    float64
	retries     int
}

// The two configurations.
const (
	cfgUnpinned = "unpinned"
	cfgPinned   = "pinned"
)

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var configs string
	fs := flag.NewFlagSet("loadbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.connections, "connections", 50, "connections of each client")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "duration of each run")
	fs.IntVar(&c.runs, "runs", 3, "runs of each client per configuration (alternating; the median is reported)")
	fs.IntVar(&c.size, "size", 1024, "size in bytes of the static file nginx serves")
	fs.StringVar(&configs, "configs", cfgUnpinned+","+cfgPinned, "configurations to measure: unpinned (everything on all cores), pinned (nginx on CPU 0, client on CPU 1)")
	fs.IntVar(&c.wrkThreads, "wrk-threads", 0, "wrk threads (default: the cores the client may use: all unpinned, 1 pinned)")
	fs.BoolVar(&c.markdown, "markdown", false, "also print the results as Markdown for docs/benchmarks.md")
	fs.BoolVar(&c.syscalls, "syscalls", false, "also run each client once under perf stat and report syscalls and context switches per request")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", "also run our client once more per configuration (untimed) writing a CPU profile to PREFIX-<config>.pprof")
	fs.DurationVar(&c.toolTimeout, "tool-timeout", 2*time.Minute, "upper bound on any one run beyond --duration")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (client outputs, nginx logs)")
	fs.Float64Var(&c.maxOther, "max-other-load", 0.15, "a run during which other processes kept more than this many cores busy is noisy and repeated (up to --retries times)")
	fs.IntVar(&c.retries, "retries", 2, "how many times a noisy run is repeated before it is kept (flagged)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q: every input is a flag", fs.Args())
	}
	for _, s := range strings.Split(configs, ",") {
		s = strings.TrimSpace(s)
		switch s {
		case cfgUnpinned, cfgPinned:
			c.configs = append(c.configs, s)
		case "":
		default:
			return c, fmt.Errorf("--configs: unknown configuration %q (want unpinned, pinned)", s)
		}
	}
	switch {
	case len(c.configs) == 0:
		return c, errors.New("--configs: none given")
	case c.connections < 1:
		return c, errors.New("--connections must be at least 1")
	case c.duration < time.Second:
		return c, errors.New("--duration must be at least 1s")
	case c.runs < 1:
		return c, errors.New("--runs must be at least 1")
	case c.size < 0:
		return c, errors.New("--size must not be negative")
	case c.wrkThreads < 0 || c.toolTimeout <= 0:
		return c, errors.New("--wrk-threads must not be negative and --tool-timeout must be positive")
	case c.maxOther <= 0 || c.retries < 0:
		return c, errors.New("--max-other-load must be positive and --retries not negative")
	}
	if c.connections > 10000 {
		return c, errors.New("--connections: at most 10000")
	}
	for _, s := range c.configs {
		if s == cfgPinned && runtime.NumCPU() < 2 {
			return c, errors.New("--configs pinned needs at least 2 cores")
		}
	}
	return c, nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == clientCommand {
		os.Exit(clientMain(os.Args[2:]))
	}
	os.Exit(measure.Main("loadbench", parseFlags, run))
}
