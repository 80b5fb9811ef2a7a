package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/engines"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/atomicfile"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/scenario"
)

// Engines bench export writes.
const (
	engineLocust = "locust"
	engineK6     = "k6"
)

func newBenchExportCmd() *cobra.Command {
	var o engines.ExportOptions
	var format, out string
	cmd := &cobra.Command{
		Use:   "export --format locust|k6 [flags] SCENARIO",
		Short: "Write a scenario as a Locust file or a k6 script, to send its load from many hosts",
		Long: `export turns a stacktune scenario into a script for an existing load engine, to send
the load from more hosts than one: a Locust file (locust --master / --worker for
distributed load) or a k6 script. The script does what stacktune bench does: one
session per virtual user with its login, steps by weight, templates, status,
substring and CSS selector checks, captures, and failures reported by stacktune's
kinds, so "stacktune bench import" scores its results the same way and records
them in the history. --rate gives the open model (k6 constant-arrival-rate;
Locust paces each user at rate/users), without it the closed model. What the
engine does differently is printed on standard error.`,
		Example: `  stacktune bench export --format locust --rate 200 -u 100 -d 60s isucon.yaml -o locustfile.py
  locust -f locustfile.py --master --headless -u 100 -r 100 -t 60s --csv run --expect-workers 4   # and 4 × locust --worker
  stacktune bench import --scenario isucon.yaml --locust-csv run --label "4 load hosts"
  stacktune bench export --format k6 --rate 200 -d 60s isucon.yaml -o script.js && k6 run --summary-export summary.json script.js`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchExport(args[0], format, out, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "", "the engine: locust or k6")
	f.IntVarP(&o.Users, "users", "u", loadgen.DefaultConnections, "virtual users (Locust -u, k6 VUs)")
	f.Float64Var(&o.Rate, "rate", 0, "open model: requests per second in all (0 = closed model)")
	f.DurationVarP(&o.Duration, "duration", "d", 60*time.Second, "run length (k6's scenario; printed in the Locust file's command)")
	f.DurationVar(&o.Timeout, "timeout", loadgen.DefaultTimeout, "per-request timeout")
	f.StringVar(&o.BaseURL, "base-url", "", "override the scenario's base_url")
	f.StringVarP(&out, "output", "o", "", "write the script to this file (default: standard output)")
	cmd.MarkFlagRequired("format")
	return cmd
}

func runBenchExport(path, format, out string, o engines.ExportOptions, stdout, stderr io.Writer) error {
	export := map[string]func(io.Writer, *scenario.Scenario, engines.ExportOptions) ([]string, error){engineLocust: engines.Locust, engineK6: engines.K6}[format]
	if export == nil {
		return fmt.Errorf("--format %q: use locust or k6", format)
	}
	sc, err := scenario.Load(path)
	if err != nil {
		return err
	}
	var warn []string
	write := func(w io.Writer) error {
		var err error
		warn, err = export(w, sc, o)
		return err
	}
	if out == "" || out == "-" {
		err = write(stdout)
	} else {
		err = atomicfile.Write(out, 0o644, write)
	}
	if err != nil {
		return err
	}
	for _, w := range warn {
		fmt.Fprintf(stderr, "stacktune: %s: %s\n", format, w)
	}
	if out != "" && out != "-" {
		fmt.Fprintf(stderr, "stacktune: wrote %s\n", out)
	}
	return nil
}

// benchImportOptions are the flags of `stacktune bench import`.
type benchImportOptions struct {
	scenario   string
	locustCSV  string
	locustJSON string
	k6Summary  string
	imp        engines.ImportOptions
	label      string
	format     string
	history    string
	noHistory  bool
}

func newBenchImportCmd() *cobra.Command {
	var o benchImportOptions
	cmd := &cobra.Command{
		Use:   "import --scenario SCENARIO (--locust-csv PREFIX | --locust-json FILE | --k6-summary FILE) [flags]",
		Short: "Score a Locust or k6 run of an exported scenario and record it in the history",
		Long: `import reads the results of a load engine that ran a script of "stacktune bench
export": Locust's --csv files (PREFIX_stats.csv and PREFIX_failures.csv), the
statistics newer Locust prints with --json, or k6's summary (k6 run
--summary-export FILE, or what handleSummary receives). It scores them with the
scenario (successes by step weight, penalties by error kind, slow responses, the
fail_if limits), prints the report stacktune bench prints and records the run in
the history under --label, so "stacktune history" shows the score transitions
whatever sent the load.`,
		Example: `  stacktune bench import --scenario isucon.yaml --locust-csv run --label "4 load hosts"
  stacktune bench import --scenario isucon.yaml --k6-summary summary.json --rate 200 --users 100`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchImport(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.scenario, "scenario", "", "the scenario the script was exported from")
	f.StringVar(&o.locustCSV, "locust-csv", "", "the prefix Locust's --csv was given")
	f.StringVar(&o.locustJSON, "locust-json", "", "the statistics locust --json printed")
	f.StringVar(&o.k6Summary, "k6-summary", "", "k6's summary JSON")
	f.Float64Var(&o.imp.Rate, "rate", 0, "the rate the run was exported with (open model; 0 = closed)")
	f.IntVar(&o.imp.Users, "users", 0, "the virtual users it ran")
	f.StringVar(&o.label, "label", "", "label stored with the run in the history")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.BenchFormats, ", "))
	f.StringVar(&o.history, "history", "", "history database (default $STACKTUNE_HISTORY or ~/.local/share/stacktune/history.db)")
	f.BoolVar(&o.noHistory, "no-history", false, "do not record the run")
	cmd.MarkFlagRequired("scenario")
	return cmd
}

func runBenchImport(ctx context.Context, o benchImportOptions, stdout, stderr io.Writer) error {
	if err := report.CheckFormat(o.format, report.BenchFormats...); err != nil {
		return err
	}
	n := 0
	for _, v := range []string{o.locustCSV, o.locustJSON, o.k6Summary} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return errors.New("give one of --locust-csv, --locust-json and --k6-summary")
	}
	sc, err := scenario.Load(o.scenario)
	if err != nil {
		return err
	}
	o.imp.KeepAlive = true
	var im *engines.Imported
	switch {
	case o.locustCSV != "":
		im, err = engines.ImportLocustCSV(o.locustCSV, sc, o.imp)
	case o.locustJSON != "":
		im, err = engines.ImportLocustJSON(o.locustJSON, sc, o.imp)
	default:
		im, err = engines.ImportK6(o.k6Summary, sc, o.imp)
	}
	if err != nil {
		return err
	}
	for _, n := range im.Notes {
		fmt.Fprintf(stderr, "stacktune: %s\n", n)
	}
	r := im.Result
	if r.Started.IsZero() {
		r.Started = time.Now().Add(-r.Elapsed).UTC()
	}
	rr := benchrun.FromResult(r, im.Score(sc), true, sc.SlowAfters())
	rr.Engine = im.Engine
	sum := benchrun.Summarize(sc.BaseURL, sc.Name, o.label, []benchrun.RunResult{rr})
	if !o.noHistory {
		path := o.history
		if path == "" {
			if path, err = history.DefaultPath(); err != nil {
				return err
			}
		}
		store, err := history.Open(path)
		if err != nil {
			return err
		}
		defer store.Close()
		// The other engine's load: the scenario's file, its connections
		// unknown here.
		meta := ledgerMeta(history.CommandBench, o.scenario, "", loadgen.Options{}, "")
		for _, h := range history.FromSummary(sum) {
			meta.Set(&h)
			if _, err := store.Add(ctx, &h); err != nil {
				return fmt.Errorf("recording the run in the history: %w", err)
			}
		}
	}
	if err := report.Bench(stdout, sum, o.format); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if !sum.Passed {
		return fmt.Errorf("the run failed: %s", strings.Join(sum.FailReasons, "; "))
	}
	return nil
}
