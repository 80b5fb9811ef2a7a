// Command digestbench measures `stacktune digest` against pt-query-digest on
// the same MariaDB slow log, in the same run, and checks that both tools
// found the same query classes with the same counts.
//
// It builds (or reuses from --cache) a slow log written by a throwaway
// MariaDB under sysbench oltp_read_write with long_query_time=0, builds
// stacktune, runs each tool in its own child process (wall time, user+sys
// CPU and peak RSS from the child's rusage), compares their JSON outputs and
// prints a table, optionally also as Markdown for docs/benchmarks.md.
//
//	go run ./bench/digestbench                 # 256 MiB log, 3 stacktune runs, 1 pt run
//	go run ./bench/digestbench --size-mb 32 --runs 5 --gzip --markdown
//
// See bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// config holds the command-line flags.
type config struct {
	measure.StacktuneFlags
	cacheDir string
	sizeMiB  int
	logPath  string
	runsPT   int
	gzip     bool
	threads  int
	genTime  time.Duration
	keep     bool
}

// errDisagree is returned when the two tools found different classes or
// counts: the timings are then not for the same answer.
var errDisagree = errors.New("stacktune and pt-query-digest disagree")

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("digestbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.StacktuneFlags.Register(fs)
	fs.StringVar(&c.cacheDir, "cache", filepath.Join(os.TempDir(), "stacktune-bench"), "directory holding the generated slow logs (reused across runs)")
	fs.IntVar(&c.sizeMiB, "size-mb", 256, "target size of the generated slow log, in MiB")
	fs.StringVar(&c.logPath, "log", "", "benchmark this existing slow log instead of generating one (--size-mb and --cache are then unused)")
	fs.IntVar(&c.runsPT, "runs-pt", 1, "runs of pt-query-digest (the median is reported)")
	fs.BoolVar(&c.gzip, "gzip", false, "also run stacktune on a gzip copy of the log (kept in --cache)")
	fs.IntVar(&c.threads, "threads", 4, "sysbench threads while generating the log")
	fs.DurationVar(&c.genTime, "gen-time", 20*time.Minute, "upper bound on sysbench run time while generating the log")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory with both tools' JSON outputs")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q: every input is a flag", fs.Args())
	}
	switch {
	case c.sizeMiB < 1:
		return c, fmt.Errorf("--size-mb %d: must be at least 1", c.sizeMiB)
	case c.Runs < 1 || c.runsPT < 1:
		return c, errors.New("--runs and --runs-pt must be at least 1")
	case c.threads < 1:
		return c, errors.New("--threads must be at least 1")
	case c.genTime <= 0 || c.ToolTimeout <= 0:
		return c, errors.New("--gen-time and --tool-timeout must be positive")
	}
	return c, nil
}

func main() {
	os.Exit(measure.Main("digestbench", parseFlags, run))
}

// run is the whole benchmark: log, binaries, timed runs, agreement, report.
func run(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	pt, err := measure.LookTool("pt-query-digest", "percona-toolkit")
	if err != nil {
		return err
	}
	lg, err := prepareLog(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	work, cleanup, err := measure.WorkDir("digestbench", cfg.keep, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	bin, err := cfg.Binary(ctx, work, "digestbench", stderr)
	if err != nil {
		return err
	}
	runLog := lg
	if cfg.Tmpfs != "" {
		staged, cleanup, err := stageLog(lg, cfg.Tmpfs)
		if err != nil {
			return err
		}
		defer cleanup()
		runLog = staged
	}
	b := bench{cfg: cfg, work: work, stderr: stderr}
	res, err := b.measureAll(ctx, pt, bin, runLog)
	if err != nil {
		return err
	}
	res.log, res.tmpfs = lg, cfg.Tmpfs
	res.env = collectEnv(ctx, pt, lg.meta)
	printText(stdout, res)
	if cfg.Markdown {
		fmt.Fprintln(stdout)
		printMarkdown(stdout, res)
	}
	if measure.PrintMismatches(stdout, res.mismatches) {
		return errDisagree
	}
	return nil
}
