package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/report"
)

// benchOptions are the flags of `stacktune bench`.
type benchOptions struct {
	load      loadgen.Options
	scenario  string
	baseURL   string
	runs      int
	label     string
	format    string
	history   string
	noHistory bool
	seed      uint64
	progress  string
	appDir    string
	fleet     fleetFlags
}

func newBenchCmd() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench [flags] [URL]",
		Short: "Scored load test (plain URL or scenario file), remembered in the history",
		Long: `bench loads a web app and scores the run like a contest benchmarker: successes
times each step's weight, minus penalties for errors, timeouts and failed checks,
failing the run past its thresholds (more than 1% errors by default).

Without --scenario it requests one URL, with the flags wrk and hey users know.
Every run is bounded by --duration and/or --requests; an unbounded run is refused,
and the whole command (all --runs and warm-ups) by 10 minutes. --connections is at
most 10000, and at most what the open-files limit (ulimit -n) allows.
The closed model (default) keeps --connections users busy back to back; --rate
switches to the open model, a constant arrival rate whose latency is measured from
the intended send time, so a stalled server cannot hide its latency.

Requests the open model scheduled but never sent (the backlog of a saturated
server) are counted as unsent, and requests still out when a run ends as in
flight. An in-flight request is stalled when it has been out longer than the
longest request the run completed (or when none completed); the others were
cut by the end of the run, as every connection of a closed run has one out.
Unsent and stalled requests count as failed in the error rate, and a run that
leaves more than 1% of its requests unsent or stalled fails. Passwords and query
values in URLs are shown masked (user:***@, ?token=***).

A scenario may call a pre_run hook before each run and its warm-up (an HTTP
request such as POST /initialize, or a command): if it fails, the run fails with
its message and no load is sent; the time it took is shown, not scored. Steps
may capture values (regexp, CSS selector, JSON path, header) for the session's
later requests and checks, and count responses over their slow_after as slow
(shown per step, penalised by penalties.slow, failing past fail_if.slow_rate).
See go doc github.com/stacktune/stacktune/scenario.

Each run is stored in the history database with its --label; "stacktune history"
prints the score transitions.`,
		Example: `  stacktune bench -c 50 -d 10s http://127.0.0.1:8080/
  stacktune bench -n 10000 -c 100 --keepalive=false http://127.0.0.1/   # like ab -n 10000 -c 100
  stacktune bench --rate 500 -d 30s http://127.0.0.1:8080/api/items
  stacktune bench --scenario isucon.yaml -d 60s --runs 3 --label "add index on relations"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			url := ""
			if len(args) == 1 {
				url = args[0]
			}
			// No message shows a URL's password.
			return benchrun.MaskError(runBench(cmd.Context(), o, url, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	f := cmd.Flags()
	f.IntVarP(&o.load.Connections, "connections", "c", loadgen.DefaultConnections, fmt.Sprintf("connections (virtual users), at most %d and what the open-files limit allows", loadgen.MaxConnections))
	f.DurationVarP(&o.load.Duration, "duration", "d", 0, "measured duration (default 10s when --requests is not given)")
	f.Int64VarP(&o.load.Requests, "requests", "n", 0, "requests to complete (0 = bounded by --duration only)")
	f.Float64Var(&o.load.Rate, "rate", 0, "open model: requests per second at a constant rate (0 = closed model)")
	f.BoolVar(&o.load.KeepAlive, "keepalive", true, "reuse connections; false opens one per request (ab's default)")
	f.DurationVar(&o.load.Timeout, "timeout", loadgen.DefaultTimeout, "per-request timeout")
	f.DurationVar(&o.load.WarmUp, "warmup", 0, "run this long first and discard the results")
	f.StringVar(&o.scenario, "scenario", "", "scenario file (YAML or TOML) instead of a URL")
	f.StringVar(&o.baseURL, "base-url", "", "with --scenario: override its base_url")
	f.IntVar(&o.runs, "runs", 1, "repeat the run and report min/median/max")
	f.StringVar(&o.label, "label", "", "label stored with the runs in the history (e.g. \"add index on relations\")")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.BenchFormats, ", "))
	f.StringVar(&o.history, "history", "", "history database (default $STACKTUNE_HISTORY or ~/.local/share/stacktune/history.db)")
	f.BoolVar(&o.noHistory, "no-history", false, "do not record the runs")
	o.fleet.add(f, 5*time.Minute)
	f.StringVar(&o.appDir, "app-dir", "", "the app's source directory: its git commit is recorded with the runs (default: the current directory's)")
	f.Uint64Var(&o.seed, "seed", 1, "seed for scenario choices")
	f.StringVar(&o.progress, "progress", "auto", "live progress on stderr: auto (when it is a terminal), always, never")
	cmd.AddCommand(newBenchExportCmd(), newBenchImportCmd())
	return cmd
}

func runBench(ctx context.Context, o benchOptions, url string, stdout, stderr io.Writer) error {
	if err := report.CheckFormat(o.format, report.BenchFormats...); err != nil {
		return err
	}
	switch {
	case url != "" && o.scenario != "":
		return errors.New("give either a URL or --scenario, not both")
	case url == "" && o.scenario == "":
		return errors.New("nothing to load: give a URL or --scenario FILE")
	}
	if o.load.Duration == 0 && o.load.Requests == 0 {
		o.load.Duration = 10 * time.Second
	}
	if err := loadgen.CheckConnections(o.load.Connections); err != nil {
		return connectionsError(err)
	}
	var store *history.Store
	if !o.noHistory {
		path := o.history
		if path == "" {
			var err error
			if path, err = history.DefaultPath(); err != nil {
				return err
			}
		}
		var err error
		if store, err = history.Open(path); err != nil {
			return err
		}
		defer store.Close()
	}
	show := o.progress == "always" || (o.progress == "auto" && isTerminal(stderr))
	if o.progress != "auto" && o.progress != "always" && o.progress != "never" {
		return fmt.Errorf("--progress %q: use auto, always or never", o.progress)
	}
	opt := benchrun.Options{URL: url, Scenario: o.scenario, BaseURL: o.baseURL, Load: o.load, Runs: o.runs, Label: o.label, Seed: o.seed}
	if show {
		opt.Progress = func(run int, p loadgen.Progress) {
			total := o.load.Duration
			if p.WarmUp {
				total = o.load.WarmUp
			}
			fmt.Fprintf(stderr, "\r\033[K%s", report.ProgressLine(run, max(o.runs, 1), p.Elapsed, total, p.Requests, p.Errors, p.RPS, p.P99, p.WarmUp))
		}
	}
	// With --hosts, every host is collected over the run (its counters
	// read at the start and the end, as `collect --hosts` does).
	var hosts *fleetRun
	if o.fleet.Inventory != "" {
		var err error
		if hosts, err = startFleetRun(ctx, o.fleet, o.load.Duration*time.Duration(max(o.runs, 1))); err != nil {
			return err
		}
	}
	sum, err := benchrun.Run(ctx, opt)
	if show {
		fmt.Fprint(stderr, "\r\033[K")
	}
	var fleetArt []history.Artefact
	if hosts != nil {
		fs, ferr := hosts.wait()
		if fs == nil {
			err = errors.Join(err, fmt.Errorf("collecting from the hosts: %w", ferr))
		} else if a, ok := history.JSONArtefact(history.ArtefactFleet, fs); ok {
			fleetArt = append(fleetArt, a)
			fmt.Fprintf(stderr, "stacktune bench: %d hosts collected, %d failed\n", len(fs.Hosts), len(fs.Failed()))
		}
	}
	switch {
	case errors.As(err, new(*benchrun.BoundError)):
		err = fmt.Errorf("%w: lower --runs, --duration, --warmup or --requests", err)
	case errors.As(err, new(*loadgen.ConnectionsError)):
		err = connectionsError(err)
	}
	if sum == nil {
		return err
	}
	if store != nil {
		meta := ledgerMeta(history.CommandBench, o.scenario, url, o.load, o.appDir)
		runs := history.FromSummary(sum)
		runs[len(runs)-1].Artefacts = fleetArt // the collection spans the runs: kept with the last
		for _, r := range runs {
			meta.Set(&r)
			if _, herr := store.Add(ctx, &r); herr != nil {
				return fmt.Errorf("recording the run in the history: %w", herr)
			}
		}
	}
	if werr := report.Bench(stdout, sum, o.format); werr != nil {
		return fmt.Errorf("writing the report: %w", werr)
	}
	if err != nil {
		return err
	}
	if !sum.Passed {
		msg := strings.Join(sum.FailReasons, "; ")
		if len(sum.ErrorsByKind) > 0 {
			var kinds []string
			for k, v := range sum.ErrorsByKind {
				kinds = append(kinds, fmt.Sprintf("%s: %d", k, v))
			}
			sort.Strings(kinds)
			msg += " (errors " + strings.Join(kinds, ", ") + ")"
		}
		return fmt.Errorf("the run failed: %s", msg)
	}
	return nil
}
