package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/atomicfile"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/tune"
)

// tuneOptions are the flags of `stacktune tune`: the stack and its bench
// as diagnose takes them, how apply reaches each service, and the test.
type tuneOptions struct {
	diag    diagnoseOptions
	apply   applyOptions
	minRuns int
	maxRuns int
	history string
	noHist  bool
	dryRun  bool
	format  string
	report  string
	search  searchOptions
}

func newTuneCmd() *cobra.Command {
	var o tuneOptions
	cmd := &cobra.Command{
		Use:   "tune --dsn DSN --nginx-conf FILE --scenario FILE [flags]",
		Short: "The whole loop on your own stack: baseline, diagnose, apply each step, keep it only with proof",
		Long: `tune runs stacktune's loop on your stack, with your scenario:

  baseline   your scenario against the stack as it is, measured against itself
             (A against A): the noise floor, printed, that a step must clear;
  diagnose   one run observed at every layer (stacktune diagnose): the slow log,
             the access log of that window, a snapshot and its audit, indexes
             proven on a throwaway copy;
  steps      my.cnf (SET GLOBAL, or --mysql-restart for read-only variables), nginx
             directives, the proven indexes, and sysctl/systemd limits with
             --host-wide: each through stacktune apply's transaction (backed up,
             validated, read back, rolled back on failure), then measured
             interleaved with the state before it (A B B A ...) until a stated
             test decides: the bootstrap interval of the ratio of medians and
             Mann-Whitney must agree at 95% (more runs while undecided, from
             --min-runs to --max-runs each). Worse: rolled back. Better or within
             noise: kept, and said which;
  again      a second diagnosis of the tuned stack.

What it cannot change itself (your application's code: N+1 queries with their
endpoint, caches, connection pools; memcached and Redis settings) is listed with
the evidence. --dry-run diagnoses and prints each step's plan, changing nothing.
Every run is recorded in the history. Your scenario's pre_run hook (POST
/initialize) runs before every run.`,
		Example: `  stacktune tune --defaults-file ~/.my.cnf --nginx-conf /etc/nginx/nginx.conf \
      --scenario isucon.yaml -d 30s -c 10 --app-restart 'systemctl restart isuapp' \
      --mysql-restart 'systemctl restart mariadb' --report tune.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return benchrun.MaskError(runTune(cmd.Context(), cmd, o, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	o.diag.flags(cmd)
	f := cmd.Flags()
	addServiceFlags(f, &o.apply)
	addDropInFlags(f, &o.apply)
	f.IntVar(&o.minRuns, "min-runs", 4, "runs per state before the first look of the test (at least 4: 3 against 3 can never prove a difference at 95%)")
	f.IntVar(&o.maxRuns, "max-runs", 8, "the most runs per state when the test stays undecided")
	f.StringVar(&o.history, "history", "", "the run history (default $STACKTUNE_HISTORY or ~/.local/share/stacktune/history.db)")
	f.BoolVar(&o.noHist, "no-history", false, "do not record the runs")
	f.BoolVar(&o.dryRun, "dry-run", false, "diagnose and print each step's plan; change nothing")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.LoopFormats, ", "))
	f.StringVar(&o.report, "report", "", "also write the report to this file (.html, .md, .json or .txt)")
	addSearchFlags(f, &o.search)
	return cmd
}

func runTune(ctx context.Context, cmd *cobra.Command, o tuneOptions, stdout, stderr io.Writer) error {
	if o.search.workload != "" {
		return runTuneSearch(ctx, o, stdout, stderr)
	}
	if err := report.CheckFormat(o.format, report.LoopFormats...); err != nil {
		return err
	}
	reportFormat := ""
	if o.report != "" {
		var err error
		if reportFormat, err = report.LoopReportFormat(o.report); err != nil {
			return err
		}
	}
	if o.diag.scenario == "" {
		return errors.New("--scenario is required: tune measures your stack with your own scenario")
	}
	dopt, err := diagnoseOpts(cmd, o.diag, "", stderr)
	if err != nil {
		return err
	}
	dopt.Progress = nil
	dopt.Bench.Label = ""
	// apply reaches the server and nginx.conf named for the diagnosis.
	o.apply.conn = o.diag.collect.conn
	if v, ok := o.diag.collect.values["nginx-conf"]; ok {
		o.apply.nginxConf = v.String()
	}
	state, err := o.apply.stateDir()
	if err != nil {
		return err
	}
	db, srv, err := openDB(ctx, dopt.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	sv, err := o.apply.services(ctx, db, srv, o.apply.nginxConf != "")
	if err != nil {
		return err
	}
	var hist *history.Store
	if !o.noHist {
		path := o.history
		if path == "" {
			if path, err = history.DefaultPath(); err != nil {
				return err
			}
		}
		if hist, err = history.Open(path); err != nil {
			return err
		}
		defer hist.Close()
	}
	res, err := tune.Run(ctx, tune.Options{
		Diagnose: dopt, Services: sv, HostWide: o.apply.hostWide, StateDir: state, History: hist,
		AB: abtest.Options{MinRuns: o.minRuns, MaxRuns: o.maxRuns}, DryRun: o.dryRun,
		Progress: func(line string) { fmt.Fprintln(stderr, "stacktune tune:", report.Clean(line)) },
	})
	if res == nil {
		return err
	}
	if werr := report.Loop(stdout, &res.Loop, o.format, ""); werr != nil && err == nil {
		err = werr
	}
	if res.NoiseFloor != nil && o.format == report.Text {
		fmt.Fprintf(stdout, "\nNoise floor (the stack against itself): %s\n", report.Clean(res.NoiseFloor.Reason))
	}
	if rc := res.Restart; rc != nil && o.format == report.Text {
		fmt.Fprintf(stdout, "Restart check: restarted %s; one run cold %s, warm %s (after reading %d indexes); still in force: %s\n",
			strings.Join(rc.Restarted, ", "), report.Score(rc.ColdScore), report.Score(rc.WarmScore), len(rc.Warmed), strings.Join(rc.Held, ", "))
		for label, why := range rc.Lost {
			fmt.Fprintf(stdout, "  LOST after the restart: %s: %s\n", label, report.Clean(why))
		}
	}
	for label, plan := range res.Plans {
		fmt.Fprintf(stdout, "\nPlan of step %s (dry run):\n", label)
		if perr := report.ApplyDryRun(stdout, plan, report.Text); perr != nil && err == nil {
			err = perr
		}
	}
	if o.report != "" {
		var b bytes.Buffer
		if werr := report.Loop(&b, &res.Loop, reportFormat, ""); werr != nil {
			return errors.Join(err, werr)
		}
		if werr := os.MkdirAll(filepath.Dir(o.report), 0o755); werr != nil {
			return errors.Join(err, werr)
		}
		if werr := atomicfile.Write(o.report, 0o644, func(w io.Writer) error { _, e := w.Write(b.Bytes()); return e }); werr != nil {
			return errors.Join(err, werr)
		}
		fmt.Fprintf(stderr, "stacktune tune: report written to %s\n", o.report)
	}
	return err
}
