package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/internal/dirsnap"
	"github.com/stacktune/stacktune/knobsearch"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/report"
)

// searchOptions are the flags of the knob search itself, `stacktune
// search`'s own (tune --workload, its deprecated alias, takes them hidden).
type searchOptions struct {
	workload     string
	memoryBudget string
	screen       int
	trials       int
	top          int
	repeats      int
	anchor       int
	maxTime      time.Duration
	warmup       time.Duration
	reset        string
	datadir      string
	snapshotDir  string
	mysqlStop    string
	mysqlStart   string
	knobs        []string
	emit         string
	noAudit      bool
	procedures   bool
}

// searchCmdOptions are the flags of `stacktune search`: the search's
// own, the server and the load (as tpcc run and bench take them), the
// audit's constraints, how apply reaches the server, and the output.
type searchCmdOptions struct {
	search   searchOptions
	tc       tpccConn // the server and --db, the TPC-C database
	load     loadgen.Options
	scenario string
	baseURL  string
	seed     uint64
	// the audit's
	allowDurabilityLoss bool
	fixed               []string
	dedicatedDB         bool
	reserve             string

	apply   applyOptions
	history string
	noHist  bool
	format  string
	report  string
	// name is the command the progress lines and messages name ("search",
	// or "tune" for the deprecated alias).
	name string
}

func newSearchCmd() *cobra.Command {
	o := searchCmdOptions{name: "search"}
	cmd := &cobra.Command{
		Use:   "search --workload tpcc|http --dsn DSN [flags]",
		Short: "Search the MySQL/MariaDB knobs for your workload, and prove the best against the default and the audit",
		// It changes systems: never cut short after a signal (main.go).
		Annotations: map[string]string{noForcedExit: ""},
		Long: `search looks for the server settings that make your workload fastest, on a server you
can change freely (each trial applies a configuration through stacktune apply's
transaction and measures it):

  space       the catalogue's knobs the server has (or --knobs), under the
              constraints: --fix, the memory budget (--memory-budget, --memory-reserve),
              restarts only with --mysql-restart, durability only with
              --allow-durability-loss;
  trials      each on the same data (--reset: reload the TPC-C tables, copy the
              stopped server's data dir back, or none): the server as found, the
              audit's advice, a space-filling screen that ranks the knobs (Spearman),
              then a model (TPE) on the --top knobs, the server as found measured
              again every --anchor trials;
  comparison  the best, the server as found and the audit's configuration in
              --repeats interleaved rounds, decided by stacktune's A/B test;
  change set  the configuration the comparison supports, or none (--emit, for
              stacktune apply).

--workload tpcc runs TPC-C on the database stacktune tpcc prepare loaded (--db);
--workload http runs your --scenario against the stack.`,
		Example: `  stacktune search --defaults-file ~/.my.cnf --workload tpcc -c 16 -d 60s \
      --mysql-restart 'systemctl restart mariadb' --emit ./best
  stacktune search --dsn 'root@unix(/run/mysqld/mysqld.sock)/' --workload http --scenario shop.yaml -d 30s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return benchrun.MaskError(runSearch(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	f := cmd.Flags()
	o.tc.add(f)
	f.IntVarP(&o.load.Connections, "connections", "c", loadgen.DefaultConnections, fmt.Sprintf("connections (virtual users; TPC-C terminals), at most %d", loadgen.MaxConnections))
	f.DurationVarP(&o.load.Duration, "duration", "d", diagnoseDefaultDuration, "each run's measured duration")
	f.Float64Var(&o.load.Rate, "rate", 0, "http: requests per second at a constant rate (0 = closed model)")
	f.BoolVar(&o.load.KeepAlive, "keepalive", true, "http: reuse connections; false opens one per request")
	f.DurationVar(&o.load.Timeout, "timeout", loadgen.DefaultTimeout, "http: per-request timeout")
	f.StringVar(&o.scenario, "scenario", "", "http: the scenario file (YAML or TOML) each run measures")
	f.StringVar(&o.baseURL, "base-url", "", "http: override the scenario's base_url")
	f.Uint64Var(&o.seed, "seed", 1, "seed for the search's samples and the scenario's choices")
	f.BoolVar(&o.allowDurabilityLoss, "allow-durability-loss", false, "also search settings that can lose up to ~1 s of commits on a crash")
	f.StringArrayVar(&o.fixed, "fix", nil, "a setting that must not change, NAME=VALUE (repeatable)")
	f.BoolVar(&o.dedicatedDB, "dedicated-db", false, "the host runs the database alone (the audit's memory budget)")
	f.StringVar(&o.reserve, "memory-reserve", "", "RAM to keep for the OS and other services, e.g. 2GiB")
	f.StringVar(&o.apply.mysqlRestart, "mysql-restart", "", `command restarting the server when a read-only variable changes ("none": such knobs are left out; default "systemctl restart mariadb" or "systemctl restart mysql")`)
	f.StringVar(&o.apply.state, "state", "", "directory of apply's journals and backups (default as stacktune apply's)")
	addDropInFlags(f, &o.apply)
	f.StringVar(&o.history, "history", "", "the run history (default $STACKTUNE_HISTORY or ~/.local/share/stacktune/history.db)")
	f.BoolVar(&o.noHist, "no-history", false, "do not record the runs")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.SearchFormats, ", "))
	f.StringVar(&o.report, "report", "", "also write the report to this file (.md, .json or .txt)")
	o.search.add(f, false)
	return cmd
}

// add registers the search's own flags; hidden hides them from help (tune
// takes them for its deprecated --workload).
func (o *searchOptions) add(f *pflag.FlagSet, hidden bool) {
	f.StringVar(&o.workload, "workload", "", `what each trial measures: tpcc (the database stacktune tpcc prepare loaded, --db) or http (--scenario)`)
	f.StringVar(&o.memoryBudget, "memory-budget", "", "the RAM the memory budget may count (e.g. 8G): a configuration over it is never tried (default: the host's RAM)")
	f.IntVar(&o.screen, "screen", 10, "space-filling samples that rank the knobs")
	f.IntVar(&o.trials, "trials", 12, "trials of the model (TPE) on the top knobs")
	f.IntVar(&o.top, "top", 4, "knobs the model searches")
	f.IntVar(&o.repeats, "repeats", 5, "rounds of the final comparison (best, default, audit), at least 4")
	f.IntVar(&o.anchor, "anchor", 6, "measure the server as found again after every N search trials, and rank each trial against the runs around it, so a host whose speed moves does not pick the answer (0: never)")
	f.DurationVar(&o.maxTime, "max-time", 0, "no new screening or model trial after this long (the comparison still runs; 0: no bound)")
	f.DurationVar(&o.warmup, "warmup", 10*time.Second, "tpcc: each run's warm-up before its -d measured interval")
	f.BoolVar(&o.procedures, "procedures", false, "tpcc: run the transactions as stored procedures (see stacktune tpcc run --procedures)")
	f.StringVar(&o.reset, "reset", "reload", "tpcc: how each trial gets the same data: reload (empty and load the tables again), datadir (copy the stopped server's data dir back: a server used only for the benchmark; see --datadir), none (trials run on what the last one left)")
	f.StringVar(&o.datadir, "datadir", "", "--reset datadir: the server's data directory")
	f.StringVar(&o.snapshotDir, "snapshot-dir", "", "--reset datadir: where its copy goes (default DATADIR.stacktune-snapshot; must not exist)")
	f.StringVar(&o.mysqlStop, "mysql-stop", "", `--reset datadir: command stopping the server (default "systemctl stop mariadb" or "systemctl stop mysql")`)
	f.StringVar(&o.mysqlStart, "mysql-start", "", `--reset datadir: command starting the server (default "systemctl start mariadb" or "systemctl start mysql")`)
	f.StringSliceVar(&o.knobs, "knobs", nil, "only these knobs (default: every knob of the catalogue the server has)")
	f.StringVar(&o.emit, "emit", "", "write the change set to this directory (for stacktune apply): the search's best or the audit's configuration, whichever the final comparison found better than the server as found (the higher if both), else nothing to change")
	f.BoolVar(&o.noAudit, "no-audit", false, "do not start from the audit's advice")
	if hidden {
		for _, name := range []string{"workload", "memory-budget", "screen", "trials", "top", "repeats", "anchor", "max-time", "warmup", "procedures",
			"reset", "datadir", "snapshot-dir", "mysql-stop", "mysql-start", "knobs", "emit", "no-audit"} {
			_ = f.MarkHidden(name)
		}
	}
}

// addSearchFlags registers the search's flags on tune, hidden: tune
// --workload is the deprecated alias of stacktune search.
func addSearchFlags(f *pflag.FlagSet, o *searchOptions) { o.add(f, true) }

// runTuneSearch is `stacktune tune --workload`, deprecated: the search
// with tune's flags for the server, the load and the audit.
func runTuneSearch(ctx context.Context, o tuneOptions, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "stacktune tune: --workload is deprecated and goes in the next release: use stacktune search --workload %s (the same flags)\n", o.search.workload)
	if o.dryRun {
		return errors.New("--dry-run: the search measures every configuration it proposes; it has no dry run (its change set, --emit, is applied only by stacktune apply)")
	}
	return runSearch(ctx, searchCmdOptions{
		search: o.search, tc: tpccConn{conn: o.diag.collect.conn, db: o.diag.db}, load: o.diag.load,
		scenario: o.diag.scenario, baseURL: o.diag.baseURL, seed: o.diag.seed,
		allowDurabilityLoss: o.diag.allowDurabilityLoss, fixed: o.diag.fixed, dedicatedDB: o.diag.dedicatedDB, reserve: o.diag.reserve,
		apply: o.apply, history: o.history, noHist: o.noHist, format: o.format, report: o.report, name: "tune",
	}, stdout, stderr)
}

// runSearch is `stacktune search`.
func runSearch(ctx context.Context, o searchCmdOptions, stdout, stderr io.Writer) error {
	so := o.search
	if so.workload == "" {
		return errors.New("--workload is required: tpcc (the database stacktune tpcc prepare loaded) or http (--scenario)")
	}
	if err := report.CheckFormat(o.format, report.SearchFormats...); err != nil {
		if o.name == "tune" {
			return fmt.Errorf("--workload: %w", err)
		}
		return err
	}
	reportFormat := ""
	if o.report != "" {
		var err error
		if reportFormat, err = report.SearchReportFormat(o.report); err != nil {
			return err
		}
	}
	dsn, err := o.tc.conn.resolve(stderr)
	if err != nil {
		return err
	}
	progress := func(line string) { fmt.Fprintln(stderr, "stacktune "+o.name+":", report.Clean(line)) }
	res, err := knobsearch.Search(ctx, knobsearch.Request{
		DSN: dsn, TPCCDB: o.tc.db, Reach: o.apply.reach(), StateDir: o.apply.state, History: o.history, NoHistory: o.noHist,
		Workload: so.workload, Load: o.load, WarmUp: so.warmup, Procedures: so.procedures, Scenario: o.scenario, BaseURL: o.baseURL,
		Reset: knobsearch.Reset{Mode: so.reset, Datadir: so.datadir, SnapshotDir: so.snapshotDir, Stop: so.mysqlStop, Start: so.mysqlStart},
		Fixed: o.fixed, MemoryBudget: so.memoryBudget, MemoryReserve: o.reserve,
		Search: knobsearch.Options{
			Constraints: knobsearch.Constraints{AllowDurabilityLoss: o.allowDurabilityLoss, DedicatedDB: o.dedicatedDB, Only: so.knobs},
			Screen:      so.screen, Top: so.top, Trials: so.trials, Repeats: so.repeats, Anchor: knobsearch.AnchorFlag(so.anchor), MaxTime: so.maxTime,
			NoAudit: so.noAudit, Seed: o.seed, Progress: progress,
		},
		Note:          noteTo(stderr),
		SnapshotTaken: func(st dirsnap.Stats) { progress(report.SearchSnapshotLine(st.Bytes, st.Files, st.Elapsed)) },
	})
	if res == nil {
		return err
	}
	if werr := report.Search(stdout, res, o.format); werr != nil {
		err = errors.Join(err, werr)
	}
	if so.emit != "" && res.ChangeSet != nil && err == nil {
		if _, werr := changeset.Write(so.emit, res.ChangeSet); werr != nil {
			err = errors.Join(err, werr)
		} else {
			fmt.Fprintf(stderr, "stacktune %s: %s\n", o.name, report.SearchEmitted(res, so.emit))
		}
	}
	if o.report != "" {
		if werr := writeReportFile(o.report, o.name, stderr, func(w io.Writer) error { return report.Search(w, res, reportFormat) }); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}
