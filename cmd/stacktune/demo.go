package main

import (
	"errors"
	"fmt"
	"github.com/stacktune/stacktune/appcpu"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/internal/atomicfile"
	"github.com/stacktune/stacktune/refstack/demo"
	"github.com/stacktune/stacktune/report"
)

type demoOptions struct {
	loop       demo.LoopOptions
	format     string
	reportPath string
}

func newDemoCmd() *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole loop on a reference stack: baseline, diagnosis, fixes applied one step at a time, score transitions",
		// It changes systems: never cut short after a signal (main.go).
		Annotations: map[string]string{noForcedExit: ""},
		Long: `demo starts a throwaway reference stack (MariaDB with the distribution's
defaults, memcached, a deliberately naive ISUCON5-like web app, nginx in front of
it as a reverse proxy, all over TCP; nothing already running is touched), loads
its data, and runs stacktune tune on it, with the reference app's own steps:

  baseline       the app's scenario (content-checked) against itself, A against A:
                 the noise floor a step's effect must clear
  diagnosis      one run with the slow log at long_query_time=0 while MySQL,
                 Linux, nginx and memcached are collected; the audit and index
                 advice (proven on a copy) of that run
  my.cnf         the audit's server settings, as a conf.d drop-in
  unix sockets   app to MySQL and memcached, nginx to app
  nginx          the audit's nginx directives, each in its context
  indexes        the indexes proven on the copy
  cache          the cache client's fix (multi-get, set on a miss, TTL)
  N+1 queries    the app's fix for the N+1 pattern the diagnosis found
  2nd audit      the tuned stack diagnosed again, the steps again for what is new
  restart        the server and the app restarted, cold and warm runs, every
                 kept value checked in force

Each step is applied with stacktune apply's transaction (backup, validation,
atomic write, reload or restart, read-back, rollback on failure) and measured
interleaved with the state before it (A B B A ...) until a stated test decides
(the bootstrap interval of the ratio of medians and Mann-Whitney agree at 95%,
from --min-runs to --max-runs runs each): worse is rolled back, better or within
noise is kept. Every run is recorded in the history. It prints the score
transition table with each step's interval and the findings behind it, and
writes a report file (--report, Markdown or HTML with the chart). Host-wide
findings (sysctl, systemd) are listed, never applied: the demo does not change
this machine's settings. --quick is a shortened loop (4 s runs, 4 runs per state)
for a first look.

"stacktune demo digest" is the slow-log and performance_schema digest demo.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.loop.Quick, "quick", false, "shortened loop: 4 s runs, 4 runs per state, a shorter diagnosis")
	f.IntVar(&o.loop.Scale, "scale", 1, "data scale of the reference app (1: 1000 users, 10k entries, 30k comments)")
	f.IntVar(&o.loop.MinRuns, "min-runs", 0, "runs per state before the first look of a step's test (default 4; at least 4: 3 against 3 can never prove a difference at 95%)")
	f.IntVar(&o.loop.MaxRuns, "max-runs", 0, "the most runs per state while a step's test is undecided (default 8; 4 with --quick)")
	f.DurationVar(&o.loop.Duration, "duration", 0, "one bench run (default 10s, 4s with --quick)")
	f.IntVarP(&o.loop.Connections, "connections", "c", 8, "the bench's virtual users")
	f.StringVar(&o.loop.Dir, "dir", "", "keep the servers' files, the applied files, the apply journal and the history here (default: a temporary directory, removed)")
	f.StringVar(&o.loop.HistoryPath, "history", "", "record the runs in this history database (default: inside --dir)")
	f.BoolVar(&o.loop.AllowDurabilityLoss, "allow-durability-loss", false, "let the my.cnf step take the audit's durability changes (innodb_flush_log_at_trx_commit and the like)")
	f.StringVar(&o.format, "format", report.Text, "output format: text, markdown, json")
	f.StringVar(&o.reportPath, "report", "stacktune-demo.md", "report file: .md (with the chart as a .svg beside it) or .html (chart inline); \"\" for none")
	cmd.AddCommand(newDemoDigestCmd())
	return cmd
}

func runDemo(cmd *cobra.Command, o demoOptions) error {
	if err := report.CheckFormat(o.format, report.Text, report.Markdown, report.JSON); err != nil {
		return err
	}
	if o.loop.MaxRuns > 20 {
		return fmt.Errorf("--max-runs %d: at most 20", o.loop.MaxRuns)
	}
	if o.loop.Duration > 10*time.Minute {
		return fmt.Errorf("--duration %s: at most 10m", o.loop.Duration)
	}
	var reportFormat string
	if o.reportPath != "" {
		var err error
		if reportFormat, err = report.LoopReportFormat(o.reportPath); err != nil {
			return err
		}
	}
	o.loop.Progress = cmd.ErrOrStderr()
	res, err := demo.Loop(cmd.Context(), o.loop)
	if res == nil {
		return err
	}
	if werr := report.Loop(cmd.OutOrStdout(), res, o.format, ""); werr != nil && err == nil {
		err = werr
	}
	if o.reportPath != "" {
		if werr := writeDemoReport(res, o.reportPath, reportFormat, cmd.ErrOrStderr()); werr != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "stacktune demo: report: %v\n", werr)
			err = errors.Join(err, werr)
		}
	}
	return err
}

// writeDemoReport writes the report file (and, for Markdown, the chart
// beside it as an SVG), each atomically, the report first (it makes the
// directory, and a report that fails to render leaves no chart behind).
// HTML draws its chart inline.
func writeDemoReport(res *demo.LoopResult, path, format string, stderr io.Writer) error {
	var chart []byte
	ref, svg := "", strings.TrimSuffix(path, filepath.Ext(path))+".svg"
	if format == report.Markdown {
		var err error
		if chart, err = report.LoopChart(res); err != nil {
			return err
		}
		if len(chart) > 0 {
			ref = filepath.Base(svg)
		}
	}
	var flames []demoFlame
	if format == report.Markdown {
		flames = demoFlameGraphs(res, path)
	}
	if err := writeReportFile(path, "demo", stderr, func(w io.Writer) error { return report.Loop(w, res, format, ref) }); err != nil {
		return err
	}
	if ref != "" {
		if err := atomicfile.Write(svg, 0o644, func(w io.Writer) error { _, err := w.Write(chart); return err }); err != nil {
			return err
		}
	}
	for _, f := range flames {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return err
		}
		if err := atomicfile.Write(f.path, 0o644, func(w io.Writer) error { return report.FlameGraph(w, f.title, f.stacks) }); err != nil {
			return err
		}
	}
	return nil
}

// demoFlame is one endpoint's flame graph file beside the Markdown report.
type demoFlame struct {
	path, title string
	stacks      []appcpu.Stack
}

// demoFlameGraphs names the flame graph of each endpoint the first
// diagnosis's trace run profiled, in REPORT.flame/ beside the Markdown
// report, and records each path relative to the report (its image link).
func demoFlameGraphs(res *demo.LoopResult, path string) []demoFlame {
	if res.First == nil || res.First.Requests == nil || res.First.Requests.Profile == nil {
		return nil
	}
	rep := res.First.Requests
	rel := filepath.Base(strings.TrimSuffix(path, filepath.Ext(path))) + ".flame"
	var out []demoFlame
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		if e.Usage == nil || len(e.Stacks) == 0 {
			continue
		}
		name := filepath.Join(rel, fmt.Sprintf("%02d-%s.svg", i+1, fileSafe(e.Endpoint)))
		e.FlameGraph = name
		out = append(out, demoFlame{path: filepath.Join(filepath.Dir(path), name), stacks: e.Stacks,
			title: fmt.Sprintf("%s: app CPU %.2f ms per request (%s)", e.Endpoint, e.AppCPUMsPerRequest, rep.Profile.Sampler)})
	}
	return out
}

func newDemoDigestCmd() *cobra.Command {
	var o demo.DigestOptions
	cmd := &cobra.Command{
		Use:   "digest",
		Short: "Digest demo: throwaway MariaDB, built-in workload, slow log and performance_schema digests",
		Long: `demo digest starts a throwaway MariaDB (its own data dir, socket and port; nothing
already running is touched) with the slow log at long_query_time=0 and
performance_schema on, loads a small social-network data set, drives the
built-in workload against it for --duration, then prints the digest of the slow
log and of performance_schema over the same run. Everything it started is
removed when it ends.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Progress = cmd.ErrOrStderr()
			_, err := demo.DigestDemo(cmd.Context(), cmd.OutOrStdout(), o)
			return err
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.Duration, "duration", 5*time.Second, "how long the workload runs (at most 10m)")
	f.IntVar(&o.Connections, "connections", 4, "workload connections")
	f.IntVar(&o.Limit, "limit", 5, "classes shown per digest")
	f.StringVar(&o.Format, "format", report.Text, "output format: "+strings.Join(report.DigestFormats, ", "))
	return cmd
}
