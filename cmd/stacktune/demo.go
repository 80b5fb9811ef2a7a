package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/internal/atomicfile"
	"github.com/stacktune/stacktune/internal/demo"
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
		Long: `demo starts a throwaway reference stack (MariaDB with the distribution's
defaults, memcached, a deliberately naive ISUCON5-like web app, nginx in front of
it as a reverse proxy, all over TCP; nothing already running is touched), loads
its data, and runs the loop:

  baseline       --runs bench runs of the app's scenario (content-checked)
  diagnosis      one more run with the slow log at long_query_time=0 while
                 MySQL, Linux, nginx and memcached are collected; the audit
                 and index advice (proven on a copy) of that run
  my.cnf         the audit's server settings, as a conf.d drop-in
  unix sockets   app to MySQL and memcached, nginx to app
  nginx          the audit's nginx directives, each in its context
  indexes        the indexes proven on the copy
  cache          the cache client's fix (multi-get, set on a miss, TTL)

Each step is applied with stacktune apply's transaction (backup, validation,
atomic write, reload or restart, read-back, rollback on failure) and measured
with --runs runs, all recorded in the history under the step's label. It prints
the score transition table and the findings behind each step, and writes a
report file (--report, Markdown or HTML with the chart). Host-wide findings
(sysctl, systemd) are listed, never applied: the demo does not change this
machine's settings. --quick is a shortened loop (5 s runs) for a first look.

"stacktune demo digest" is the slow-log and performance_schema digest demo.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.loop.Quick, "quick", false, "shortened loop: 5 s runs, a shorter diagnosis (under three minutes)")
	f.IntVar(&o.loop.Scale, "scale", 1, "data scale of the reference app (1: 1000 users, 10k entries, 30k comments)")
	f.IntVar(&o.loop.Runs, "runs", 3, "bench runs per step")
	f.DurationVar(&o.loop.Duration, "duration", 0, "one bench run (default 30s, 5s with --quick)")
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
	if o.loop.Runs > 20 {
		return fmt.Errorf("--runs %d: at most 20", o.loop.Runs)
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
		if werr := writeDemoReport(res, o.reportPath, reportFormat); werr != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "stacktune demo: report: %v\n", werr)
			if err == nil {
				err = werr
			}
		} else {
			fmt.Fprintf(cmd.ErrOrStderr(), "stacktune demo: report written to %s\n", o.reportPath)
		}
	}
	return err
}

// writeDemoReport writes the report file (and, for Markdown, the chart
// beside it as an SVG), each atomically. HTML draws its chart inline.
func writeDemoReport(res *demo.LoopResult, path, format string) error {
	ref := ""
	if format == report.Markdown {
		chart, err := report.LoopChart(res)
		if err != nil {
			return err
		}
		if len(chart) > 0 {
			svg := strings.TrimSuffix(path, filepath.Ext(path)) + ".svg"
			if err := atomicfile.Write(svg, 0o644, func(w io.Writer) error { _, err := w.Write(chart); return err }); err != nil {
				return err
			}
			ref = filepath.Base(svg)
		}
	}
	var b bytes.Buffer
	if err := report.Loop(&b, res, format, ref); err != nil {
		return err
	}
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err })
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
