// Command noisebench measures how often the A/B test of `stacktune tune`
// calls a difference where there is none, on the real reference stack of
// `stacktune demo`: it starts the stack and runs the loop's noise floor
// (the stack against itself, A against A, exactly as tune measures a
// step: interleaved ABBA runs with a warm-up after each switch, the
// stopping rule, the bootstrap interval and Mann-Whitney) --floors times,
// and prints each decision and how many were not "within noise". At the
// 95% level at most 5% may be, by chance; more means the measurement is
// biased.
//
// With --tuned it first runs the demo's loop (--quick settings) and
// measures the noise floors on the tuned stack, whose pages are fast and
// whose scores vary run to run, instead of on the untuned one, whose runs
// are dominated by a few slow pages.
//
//	go run ./bench/noisebench                     # 10 floors on the untuned stack, 10 s runs
//	go run ./bench/noisebench --tuned --floors 10 # on the tuned stack
//	go run ./bench/noisebench --markdown          # + a Markdown table for docs/benchmarks.md
//
// See bench/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/bench/internal/measure"
	"github.com/stacktune/stacktune/refstack/demo"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/tune"
)

type config struct {
	floors           int
	duration         time.Duration
	minRuns, maxRuns int
	tuned            bool
	markdown         bool
	verbose          bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("noisebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.floors, "floors", 10, "noise floors to measure (each one A/A test)")
	fs.DurationVar(&c.duration, "duration", demo.FullDuration, "one bench run (the demo's; at the quick loop's 4 s the untuned stack's runs all score the same: only logins finish)")
	fs.IntVar(&c.minRuns, "min-runs", abtest.DefaultMinRuns, "runs per state at the first look")
	fs.IntVar(&c.maxRuns, "max-runs", abtest.DefaultMaxRuns, "the most runs per state")
	fs.BoolVar(&c.tuned, "tuned", false, "run the demo's loop (quick) first and measure the tuned stack")
	fs.BoolVar(&c.markdown, "markdown", false, "also print a Markdown table")
	fs.BoolVar(&c.verbose, "v", false, "print the loop's progress")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.floors < 1 || c.floors > 100 {
		return c, fmt.Errorf("--floors %d: from 1 to 100", c.floors)
	}
	return c, nil
}

// floor is one measured noise floor.
type floor struct {
	d    abtest.Decision
	wall time.Duration
}

func run(ctx context.Context, c config, stdout, stderr io.Writer) error {
	opt := demo.LoopOptions{Quick: true}
	if c.verbose {
		opt.Progress = stderr
	}
	ref, err := demo.StartReference(ctx, opt)
	if err != nil {
		return err
	}
	defer ref.Close()
	state := "untuned (the demo's baseline)"
	if c.tuned {
		fmt.Fprintln(stderr, "noisebench: running the demo's loop (quick) first")
		res, err := ref.Tune(ctx)
		if err != nil {
			return fmt.Errorf("the loop: %w", err)
		}
		state = fmt.Sprintf("tuned by the demo's loop (last step %.2fx the baseline)", res.Steps[len(res.Steps)-1].XBaseline)
	}
	topt := ref.TuneOptions()
	topt.Diagnose.Bench.Load.Duration = c.duration
	topt.AB = abtest.Options{MinRuns: c.minRuns, MaxRuns: c.maxRuns}
	var floors []floor
	for i := 1; i <= c.floors; i++ {
		start := time.Now()
		res, err := tune.NoiseFloor(ctx, topt, fmt.Sprintf("A/A %d", i))
		if err != nil {
			return err
		}
		f := floor{d: *res.NoiseFloor, wall: time.Since(start)}
		floors = append(floors, f)
		fmt.Fprintf(stderr, "noisebench: floor %d/%d: %s (%s)\n", i, c.floors, report.VerdictText(f.d.Verdict), f.wall.Round(time.Second))
	}
	printTable(stdout, c, state, floors)
	if c.markdown {
		printMarkdown(stdout, floors)
	}
	return nil
}

func called(floors []floor) int {
	n := 0
	for _, f := range floors {
		if f.d.Verdict != abtest.WithinNoise {
			n++
		}
	}
	return n
}

func printTable(w io.Writer, c config, state string, floors []floor) {
	fmt.Fprintf(w, "Noise floors of the reference stack, %s: %d A/A tests of %s runs, %d to %d runs per state, ABBA\n\n",
		state, len(floors), c.duration, c.minRuns, c.maxRuns)
	fmt.Fprintf(w, "%3s  %-13s  %6s  %-17s  %6s  %7s  %4s  %6s\n", "#", "verdict", "ratio", "interval", "level", "p", "runs", "wall")
	for i, f := range floors {
		d := f.d
		fmt.Fprintf(w, "%3d  %-13s  %6s  %-17s  %5.1f%%  %7.3g  %4d  %6s\n", i+1, report.VerdictText(d.Verdict), report.Ratio(d.RatioMedian),
			fmt.Sprintf("[%s, %s]", report.Ratio(d.CILow), report.Ratio(d.CIHigh)), d.Level*100, d.PValue, d.RunsA, f.wall.Round(time.Second))
	}
	fmt.Fprintf(w, "\n%d of %d called a difference where there is none (at most 5%% by chance)\n", called(floors), len(floors))
}

func printMarkdown(w io.Writer, floors []floor) {
	fmt.Fprintln(w, "\n| # | verdict | B/A | interval | p | runs each |")
	fmt.Fprintln(w, "|---:|---|---:|---|---:|---:|")
	for i, f := range floors {
		d := f.d
		fmt.Fprintf(w, "| %d | %s | %s | [%s, %s] | %.3g | %d |\n", i+1, report.VerdictText(d.Verdict), report.Ratio(d.RatioMedian), report.Ratio(d.CILow), report.Ratio(d.CIHigh), d.PValue, d.RunsA)
	}
}

func main() {
	os.Exit(measure.Main("noisebench", parseFlags, run))
}
