package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/history"
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
	warmUp  time.Duration
	keep    string
	// the noise check
	noiseLimit float64
	budget     time.Duration
	format     string
	report     string
	search     searchOptions
	// the user's own steps
	steps     []string
	stepsFile string
}

func newTuneCmd() *cobra.Command {
	var o tuneOptions
	cmd := &cobra.Command{
		Use:   "tune --dsn DSN --nginx-conf FILE --scenario FILE [flags]",
		Short: "The whole loop on your own stack: baseline, diagnose, apply each step, keep it only with proof",
		// It changes systems: never cut short after a signal (main.go).
		Annotations: map[string]string{noForcedExit: ""},
		Long: `tune runs stacktune's loop on your stack, with your scenario:

  baseline   your scenario against the stack as it is, measured against itself
             (A against A): the noise floor, printed, that a step must clear;
  diagnose   one run observed at every layer (stacktune diagnose): the slow log,
             the access log of that window, a snapshot and its audit, indexes
             proven on a throwaway copy;
  steps      my.cnf (SET GLOBAL, or --mysql-restart for read-only variables), nginx
             directives, PHP-FPM pools (--php-fpm-conf: workers sized to the cores,
             their limits), the proven indexes, and sysctl/systemd limits with
             --host-wide: each through stacktune apply's transaction (backed up,
             validated, read back, rolled back on failure), then measured
             interleaved with the state before it (A B B A ...) until a stated
             test decides: the bootstrap interval of the ratio of medians and
             Mann-Whitney must agree at 95% (more runs while undecided, from
             --min-runs to --max-runs each). Worse: rolled back. Better or within
             noise: kept, and said which;
  again      a second diagnosis of the tuned stack, and the steps again for what
             it finds new;
  restart    the services the kept steps changed restarted (the server with
             --mysql-restart, the app with --app-restart), one run cold and one
             with the buffer pool warmed, and every kept value checked in force.

The knob search on the server's settings is its own command: stacktune search
(tune --workload, its old spelling, still runs it for one release).

After a step's switch restarts the server, its buffer pool is warmed (every index
read once) before the next run; --warm-up adds an unrecorded run after every
switch. The app reconnects after each diagnosis (its sessions keep the capture's
slow-log settings) by --app-reload, or else --app-restart.

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
	f.DurationVar(&o.warmUp, "warm-up", 0, "an unrecorded run of this length after every switch between a step's states (0: none)")
	f.Float64Var(&o.noiseLimit, "noise-limit", tune.DefaultNoiseLimit, "the widest noise floor (half its interval, 0.1 = ±10%) taken as it is: past it tune says why and measures again with runs twice as long (within --budget); past ±50% it stops; negative: no check")
	f.DurationVar(&o.budget, "budget", 0, "time tune may spend measuring the noise floor again with longer runs (0: at most two longer floors)")
	f.StringArrayVar(&o.steps, "step", nil, "a step of your own, NAME:APPLY_CMD:REVERT_CMD (repeatable; run without a shell, ':' in a command written '\\:'), measured, kept or reverted after the built-in steps")
	f.StringVar(&o.stepsFile, "steps-file", "", "a file of your own steps, one NAME:APPLY_CMD:REVERT_CMD a line ('#' starts a comment)")
	f.StringVar(&o.keep, "keep", "", "keep each diagnosis (JSON, with its snapshot) and each step's change set (for stacktune apply) in this directory")
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
	// apply reaches the server, nginx.conf and php-fpm.conf named for the
	// diagnosis.
	o.apply.conn = o.diag.collect.conn
	if v, ok := o.diag.collect.values["nginx-conf"]; ok {
		o.apply.nginxConf = v.String()
	}
	if v, ok := o.diag.collect.values["php-fpm-conf"]; ok {
		o.apply.phpfpmConf = v.String()
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
	sv, err := o.apply.services(ctx, dopt.DSN, db, srv, o.apply.nginxConf != "", stderr)
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
	topt := tune.Options{
		Diagnose: dopt, Services: sv, HostWide: o.apply.hostWide, StateDir: state, History: hist,
		Ledger: ledgerMeta(history.CommandTune, dopt.Bench.Scenario, dopt.Bench.URL, dopt.Bench.Load, ""),
		// A diagnosis restarts the server with performance_schema on for
		// its trace run only when the user gave the restart command.
		TraceRestart: cmd.Flags().Changed("mysql-restart") && o.apply.mysqlRestart != "none",
		NoiseLimit:   o.noiseLimit, Budget: o.budget,
		AB: abtest.Options{MinRuns: o.minRuns, MaxRuns: o.maxRuns}, DryRun: o.dryRun, WarmUp: o.warmUp, KeepDir: o.keep,
		Progress: func(line string) { fmt.Fprintln(stderr, "stacktune tune:", report.Clean(line)) },
	}
	if topt.Steps, err = tuneSteps(o); err != nil {
		return err
	}
	if o.diag.appRestart != "" {
		if topt.AppRestart, err = diagnose.Command(o.diag.appRestart); err != nil {
			return fmt.Errorf("--app-restart: %w", err)
		}
		topt.AppRestartName = o.diag.appRestart
	}
	res, err := tune.Run(ctx, topt)
	if res == nil {
		return err
	}
	if werr := report.Loop(stdout, res, o.format, ""); werr != nil && err == nil {
		err = werr
	}
	if o.report != "" {
		if werr := writeReportFile(o.report, "tune", stderr, func(w io.Writer) error { return report.Loop(w, res, reportFormat, "") }); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}

// tuneSteps are the loop's steps: the built-in ones, then the user's own
// (--steps-file, then each --step); nil when the user gave none.
func tuneSteps(o tuneOptions) ([]tune.Step, error) {
	if len(o.steps) == 0 && o.stepsFile == "" {
		return nil, nil
	}
	var ts []*apply.CommandTarget
	if o.stepsFile != "" {
		var err error
		if ts, err = tune.ReadSteps(o.stepsFile); err != nil {
			return nil, err
		}
	}
	for _, s := range o.steps {
		t, err := tune.ParseStep(s)
		if err != nil {
			return nil, fmt.Errorf("--step: %w", err)
		}
		ts = append(ts, t)
	}
	user, err := tune.UserSteps(ts)
	if err != nil {
		return nil, err
	}
	return append(tune.DefaultSteps(), user...), nil
}
