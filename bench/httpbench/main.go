// Command httpbench measures `stacktune http` against goaccess and a plain
// awk aggregation on the same nginx access log, in the same run, and checks
// that they counted the same requests and request time.
//
// It generates (or reuses from --cache) a deterministic ISUCON-like access
// log in an nginx log_format with $request_time and $upstream_response_time
// appended to combined, with the expected per-endpoint totals beside it;
// builds stacktune; runs each tool in its own child process (wall time,
// user+sys CPU and peak RSS from the child's rusage); checks the answers;
// and prints a table, optionally also as Markdown for docs/benchmarks.md.
//
//	go run ./bench/httpbench                  # 1 GiB log, 3 stacktune runs
//	go run ./bench/httpbench --size-mb 64 --runs 5 --markdown
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
	"strings"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// config holds the command-line flags.
type config struct {
	measure.StacktuneFlags
	cacheDir   string
	sizeMiB    int
	seed       uint64
	runsOthers int
	quarter    bool
	goaccess   bool
	awks       []string
	keep       bool
}

// errDisagree is returned when the tools (or stacktune and the generator)
// counted differently: the timings are then not for the same work.
var errDisagree = errors.New("the tools disagree")

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var awks string
	fs := flag.NewFlagSet("httpbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.StacktuneFlags.Register(fs)
	fs.StringVar(&c.cacheDir, "cache", filepath.Join(os.TempDir(), "stacktune-bench"), "directory holding the generated access logs (reused across runs)")
	fs.IntVar(&c.sizeMiB, "size-mb", 1024, "size of the generated access log, in MiB")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the log generator (the same seed and size give the same log)")
	fs.IntVar(&c.runsOthers, "runs-others", 1, "runs of goaccess and of each awk (the median is reported)")
	fs.BoolVar(&c.quarter, "quarter", true, "also run stacktune on the first quarter of the log: peak RSS should not grow with the lines")
	fs.BoolVar(&c.goaccess, "goaccess", true, "run goaccess")
	fs.StringVar(&awks, "awk", "mawk,gawk", "comma-separated awk implementations to run (those not installed are skipped with a note; \"\" for none)")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory with every tool's output")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q: every input is a flag", fs.Args())
	}
	for _, a := range strings.Split(awks, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.awks = append(c.awks, a)
		}
	}
	switch {
	case c.sizeMiB < 1:
		return c, fmt.Errorf("--size-mb %d: must be at least 1", c.sizeMiB)
	case c.Runs < 1 || c.runsOthers < 1:
		return c, errors.New("--runs and --runs-others must be at least 1")
	case c.ToolTimeout <= 0:
		return c, errors.New("--tool-timeout must be positive")
	}
	return c, nil
}

func main() {
	os.Exit(measure.Main("httpbench", parseFlags, run))
}

// run is the whole benchmark: log, binaries, timed runs, agreement, report.
func run(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	tl, err := findTools(cfg)
	if err != nil {
		return err
	}
	lg, err := prepareLog(cfg, stderr)
	if err != nil {
		return err
	}
	work, cleanup, err := measure.WorkDir("httpbench", cfg.keep, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	if tl.stacktune, err = cfg.Binary(ctx, work, "httpbench", stderr); err != nil {
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
	res, err := b.measureAll(ctx, tl, runLog)
	if err != nil {
		return err
	}
	res.log, res.tmpfs = lg, cfg.Tmpfs
	res.env = collectEnv(ctx, tl)
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

// stageLog copies the log (and its quarter) into a new directory under
// dir, for timed runs that must not depend on the page cache. cleanup
// removes the copies.
func stageLog(lg logInfo, dir string) (staged logInfo, cleanup func(), err error) {
	staged = lg
	cleanup, err = measure.Stage(dir, "httpbench-", &staged.path, &staged.quarter.path)
	if err != nil {
		return lg, nil, err
	}
	return staged, cleanup, nil
}
