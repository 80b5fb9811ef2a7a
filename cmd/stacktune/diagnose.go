package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/reqtrace"
)

// diagnoseOptions are the flags of `stacktune diagnose`.
type diagnoseOptions struct {
	collect    collectOptions
	profile    profileFlags // diagnose only (the trace run)
	load       loadgen.Options
	scenario   string
	baseURL    string
	seed       uint64
	source     string
	slowLog    string
	appRestart string
	appReload  string
	accessLogs []string
	db         string
	classes    int
	indexLimit int
	rowLimit   int64
	proofRuns  int
	// the audit's
	allowDurabilityLoss bool
	fixed               []string
	dedicatedDB         bool
	reserve             string

	format   string
	output   string
	snapshot string
	// the per-request view
	requests diagnose.RequestOptions
	// restarting the server with performance_schema on for the trace
	// run (diagnose's own flags; tune has apply's)
	apply applyOptions
	// the ledger
	label, history string
	noHistory      bool
	appDir         string
}

// diagnoseDefaultDuration is the run's duration without --duration:
// longer than bench's, for more seconds to attribute the queries with.
const diagnoseDefaultDuration = 30 * time.Second

func newDiagnoseCmd() *cobra.Command {
	var o diagnoseOptions
	cmd := &cobra.Command{
		Use:   "diagnose --dsn DSN [--nginx-conf FILE | --access-log FILE] (--scenario FILE | URL)",
		Short: "One bench run observed at every layer: where the time goes, from the page to the query",
		Long: `diagnose runs your scenario (or a URL) once, as stacktune bench does, against your own
stack, and observes every layer while it runs:

  queries     the slow log at long_query_time=0 for the run (and log_slow_verbosity=
              query_plan where the server has it), read from its size at the start of
              the run; or, with --source pfs, performance_schema's digests before and
              after (nothing changed on the server). Every variable it sets is put
              back as it was at the end: on success, on failure and on Ctrl-C (the
              statements are printed first, for a process that is killed);
  connections a session reads long_query_time when it connects: connections the app
              opened before the change are not captured. They are listed (user@host,
              how many, their age) with the fix: --app-restart CMD runs a command
              after the change and before the run (e.g. 'systemctl restart app'),
              then the check is made again;
  requests    the access log's lines of the run's window (--access-log, format
              detected or --http-log-format, or the access logs of --nginx-conf
              with their log_format);
  settings    a snapshot (as stacktune collect: MySQL, Linux, nginx, memcached, Redis)
              taken during the run, audited as stacktune audit does;
  indexes     index advice for the top classes, proven on a throwaway copy;
  requests    which endpoint runs which SQL, per request: from the captured statements'
              sqlcommenter/marginalia tags when they name their requests, or from a
              trace run after the diagnosis run (--trace proxy|pfs: the requests again,
              one at a time, each statement tied to its request by time). N+1 patterns
              are flagged by calls per request (--n-plus-one), whatever the traffic.

The report ranks where the time went across layers: endpoints by total time, query
classes by total time, each as a share of the run's wall time × its connections;
which endpoints the top classes likely belong to (an estimate from the two logs'
per-second counts, said so, with how it is made), the N+1 patterns with their
endpoint, the proven indexes with their evidence, and the audit's findings.
Everything is read-only except the slow-log variables it restores; nothing is
applied (see stacktune apply). The run has the same bounds as stacktune bench. It is
recorded in the history's ledger with what it saw (digest, access-log profile,
per-request SQL, snapshot, audit) for stacktune serve, but stays out of the score
transitions (the capture slows the server down).`,
		Example: `  stacktune diagnose --dsn 'root@unix(/run/mysqld/mysqld.sock)/app' --nginx-conf /etc/nginx/nginx.conf \
      --scenario isucon.yaml -d 60s -c 20 --app-restart 'systemctl restart app'
  stacktune diagnose --dsn-env DSN --access-log /var/log/nginx/access.log -c 10 http://127.0.0.1/
  stacktune diagnose --defaults-file ~/.my.cnf --source pfs --scenario s.yaml --format html -o diagnosis.html`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			url := ""
			if len(args) == 1 {
				url = args[0]
			}
			return benchrun.MaskError(runDiagnose(cmd.Context(), cmd, o, url, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	o.flags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.DiagnoseFormats, ", "))
	f.StringVarP(&o.output, "output", "o", "", "write the report to this file instead of standard output")
	f.StringVar(&o.snapshot, "snapshot", "", "also save the snapshot taken during the run (JSON, for stacktune audit)")
	f.StringVar(&o.label, "label", "", "label of the run in the history's ledger")
	f.StringVar(&o.history, "history", "", "history database (default $STACKTUNE_HISTORY or ~/.local/share/stacktune/history.db)")
	f.BoolVar(&o.noHistory, "no-history", false, "do not record the run")
	f.StringVar(&o.appDir, "app-dir", "", "the app's source directory: its git commit is recorded with the run (default: the current directory's)")
	f.StringVar(&o.apply.mysqlRestart, "mysql-restart", "", "command restarting the server: with it, a server whose performance_schema is off is restarted with it on for the trace run only (a my.cnf drop-in through stacktune apply's transaction) and restarted again with it off after")
	f.StringVar(&o.apply.state, "state", "", "apply's journal directory for that restart (default as stacktune apply's)")
	addDropInFlags(f, &o.apply)
	o.profile.add(f)
	return cmd
}

// flags registers what names the stack, its bench run, the capture and
// the audit (diagnose and tune).
func (o *diagnoseOptions) flags(cmd *cobra.Command) {
	o.collect.flags(cmd)
	f := cmd.Flags()
	f.IntVarP(&o.load.Connections, "connections", "c", loadgen.DefaultConnections, fmt.Sprintf("connections (virtual users), at most %d and what the open-files limit allows", loadgen.MaxConnections))
	f.DurationVarP(&o.load.Duration, "duration", "d", diagnoseDefaultDuration, "the run's duration (the capture lasts as long)")
	f.Float64Var(&o.load.Rate, "rate", 0, "open model: requests per second at a constant rate (0 = closed model)")
	f.BoolVar(&o.load.KeepAlive, "keepalive", true, "reuse connections; false opens one per request")
	f.DurationVar(&o.load.Timeout, "timeout", loadgen.DefaultTimeout, "per-request timeout")
	f.StringVar(&o.scenario, "scenario", "", "scenario file (YAML or TOML) instead of a URL")
	f.StringVar(&o.baseURL, "base-url", "", "with --scenario: override its base_url")
	f.Uint64Var(&o.seed, "seed", 1, "seed for scenario choices")
	f.StringVar(&o.source, "source", "slowlog", "where the queries come from: slowlog (the slow log at long_query_time=0 for the run) or pfs (performance_schema digests, when it is on; nothing is changed)")
	f.StringVar(&o.slowLog, "slow-log", "", "the server's slow log as this host reads it (default: the server's slow_query_log_file)")
	f.StringVar(&o.appRestart, "app-restart", "", "command run after the slow log is set and before the run, so the app opens new connections (e.g. 'systemctl restart app'); run without a shell")
	f.StringVar(&o.appReload, "app-reload", "", "command that makes the app reopen its database connections without a full restart (e.g. 'systemctl reload app', a graceful reload); used instead of --app-restart for that; run without a shell")
	f.StringArrayVar(&o.accessLogs, "access-log", nil, "access log to read for the run's window (repeatable; default: the access logs of --nginx-conf)")
	f.StringVar(&o.db, "db", "", "default database for queries that name none (default: the DSN's)")
	f.IntVar(&o.classes, "limit", diagnose.DefaultClasses, "query classes to keep, by total time")
	f.IntVar(&o.indexLimit, "index-limit", 10, "top classes index advice proves indexes for (0 = every class kept)")
	f.Int64Var(&o.rowLimit, "row-limit", 200000, "index proof: copy tables whole up to this many rows, a sample above")
	f.IntVar(&o.proofRuns, "proof-runs", diagnose.DefaultProofRuns, "index proof: timed runs of each query on the copy (the median is kept)")
	f.BoolVar(&o.allowDurabilityLoss, "allow-durability-loss", false, "audit: also propose changes that can lose up to ~1 s of commits on a crash")
	f.StringArrayVar(&o.fixed, "fix", nil, "audit: a setting that must not change, NAME=VALUE (repeatable)")
	f.BoolVar(&o.dedicatedDB, "dedicated-db", false, "audit: the host runs the database alone")
	f.StringVar(&o.reserve, "memory-reserve", "", "audit: RAM to keep for the OS and other services, e.g. 2GiB")
	f.StringVar(&o.requests.Trace, "trace", diagnose.TraceAuto, "how each statement is tied to its request: auto (the statements' tags; else a trace run reading performance_schema's history when it is on, or after restarting the server with it on when --mysql-restart is given, and back after; else the per-second estimate, said so), proxy (stacktune's MySQL proxy on --trace-listen), pfs (performance_schema's history), none (the estimate)")
	f.StringVar(&o.requests.ProxyListen, "trace-listen", "", "with --trace proxy: where the proxy listens for the whole diagnosis (host:port or unix:/path); point the app's DSN there (--app-restart makes it reconnect), and back at the server after")
	f.IntVar(&o.requests.TraceConnections, "trace-connections", 1, "the trace run's requests in flight at once")
	f.DurationVar(&o.requests.TraceDuration, "trace-duration", diagnose.DefaultTraceDuration, "the trace run's duration")
	f.IntVar(&o.requests.NPlusOne, "n-plus-one", reqtrace.DefaultNPlusOne, "N: a statement run N times or more in one request is an N+1")
	f.BoolVar(&o.requests.NoTags, "no-tags", false, "do not read the captured statements' sqlcommenter/marginalia tags")
}

// diagnoseSources maps --source to the library's names.
var diagnoseSources = map[string]string{"slowlog": diagnose.SourceSlowLog, "pfs": diagnose.SourcePFS, "performance_schema": diagnose.SourcePFS}

// diagnoseOpts turns the flags into the library's options.
func diagnoseOpts(cmd *cobra.Command, o diagnoseOptions, url string, stderr io.Writer) (diagnose.Options, error) {
	var opt diagnose.Options
	switch {
	case url != "" && o.scenario != "":
		return opt, errors.New("give either a URL or --scenario, not both")
	case url == "" && o.scenario == "":
		return opt, errors.New("nothing to load: give a URL or --scenario FILE")
	}
	src, ok := diagnoseSources[o.source]
	if !ok {
		return opt, fmt.Errorf("--source %q: use slowlog or pfs", o.source)
	}
	if o.load.Duration <= 0 {
		return opt, fmt.Errorf("--duration %v: the run needs a duration", o.load.Duration)
	}
	if err := loadgen.CheckConnections(o.load.Connections); err != nil {
		return opt, connectionsError(err)
	}
	if o.source != "slowlog" && o.slowLog != "" {
		return opt, errors.New("--slow-log is for --source slowlog")
	}
	if !o.collect.conn.asked() {
		return opt, errors.New("--dsn (or --dsn-env, or --defaults-file) is required: diagnose captures the queries on the server")
	}
	dsn, err := o.collect.conn.resolve(stderr)
	if err != nil {
		return opt, err
	}
	fixed, err := advise.ParseFixed(o.fixed)
	if err != nil {
		return opt, err
	}
	aopt := advise.Options{AllowDurabilityLoss: o.allowDurabilityLoss, DedicatedDB: o.dedicatedDB, Fixed: fixed}
	if o.reserve != "" {
		if aopt.MemoryReserveBytes, err = mysqlvar.ParseSize(o.reserve); err != nil {
			return opt, fmt.Errorf("--memory-reserve: %w", err)
		}
	}
	if o.classes <= 0 {
		return opt, fmt.Errorf("--limit %d: give at least 1", o.classes)
	}
	// The collectors' flags as collect takes them; their MySQL server is
	// diagnose's own connection (its queries are not captured), and the
	// interval follows the run unless given.
	cfg := collect.Config{Values: map[string]string{}}
	for name, v := range o.collect.values {
		if name == "interval" && !cmd.Flags().Changed("interval") {
			continue
		}
		cfg.Values[name] = v.String()
	}
	opt = diagnose.Options{
		DSN: dsn, Source: src, SlowLog: o.slowLog, AccessLogs: o.accessLogs, Collect: cfg,
		Bench:    benchrun.Options{URL: url, Scenario: o.scenario, BaseURL: o.baseURL, Load: o.load, Seed: o.seed, Label: "diagnose"},
		Database: o.db, Classes: o.classes, IndexClasses: o.indexLimit, RowLimit: o.rowLimit, ProofRuns: o.proofRuns, Audit: aopt,
		Progress: func(line string) { fmt.Fprintln(stderr, "stacktune diagnose:", report.Clean(line)) },
	}
	opt.Requests = o.requests
	if opt.Requests.Trace == "none" {
		opt.Requests.Trace = ""
	}
	if opt.Requests.Trace == diagnose.TraceProxy && opt.Requests.ProxyListen == "" {
		return opt, errors.New("--trace proxy needs --trace-listen: where the proxy listens for the app (its DSN points there)")
	}
	// The app reconnects by its reload when it has one, else by its
	// restart.
	for _, c := range []struct{ flag, cmd string }{{"--app-reload", o.appReload}, {"--app-restart", o.appRestart}} {
		if c.cmd == "" {
			continue
		}
		if opt.AppRestart, err = diagnose.Command(c.cmd); err != nil {
			return opt, fmt.Errorf("%s: %w", c.flag, err)
		}
		opt.AppRestartName = c.cmd
		break
	}
	// The files first: tune opens the server before it runs diagnose.
	return opt, opt.CheckFiles()
}

func runDiagnose(ctx context.Context, cmd *cobra.Command, o diagnoseOptions, url string, stdout, stderr io.Writer) error {
	if err := report.CheckFormat(o.format, report.DiagnoseFormats...); err != nil {
		return err
	}
	opt, err := diagnoseOpts(cmd, o, url, stderr)
	if err != nil {
		return err
	}
	if o.apply.mysqlRestart != "" && o.apply.mysqlRestart != "none" {
		// The trace run may restart the server with performance_schema
		// on: apply's transaction, with the drop-in where the server
		// reads it and checked by its own binary.
		db, srv, err := openDB(ctx, opt.DSN)
		if err != nil {
			return err
		}
		defer db.Close()
		o.apply.conn = o.collect.conn
		sv, err := o.apply.services(ctx, opt.DSN, db, srv, false, stderr)
		if err != nil {
			return err
		}
		state, err := o.apply.stateDir()
		if err != nil {
			return err
		}
		opt.Requests.PFSRestart = &diagnose.PFSRestart{Services: sv, StateDir: state}
	}
	say := func(l string) { fmt.Fprintln(stderr, "stacktune diagnose:", report.Clean(l)) }
	if opt.Requests.Sampler, err = o.profile.sampler(url, o.scenario, o.baseURL, say); err != nil {
		return err
	}
	res, err := diagnose.Run(ctx, opt)
	switch {
	case errors.As(err, new(*benchrun.BoundError)):
		err = fmt.Errorf("%w: lower --duration", err)
	case errors.As(err, new(*loadgen.ConnectionsError)):
		err = connectionsError(err)
	}
	if res == nil {
		return err
	}
	if res.Snapshot != nil && o.snapshot != "" {
		if serr := saveSnapshot(o.snapshot, res.Snapshot); serr != nil {
			return errors.Join(err, serr)
		}
		fmt.Fprintf(stderr, "stacktune diagnose: snapshot written to %s\n", o.snapshot)
	}
	if !o.noHistory {
		if run := res.LedgerRun(o.label); run != nil {
			ledgerMeta(history.CommandDiagnose, opt.Bench.Scenario, opt.Bench.URL, opt.Bench.Load, o.appDir).Set(run)
			store, herr := openHistory(o.history)
			if herr == nil {
				_, herr = store.Add(context.WithoutCancel(ctx), run)
				store.Close()
			}
			if herr != nil {
				err = errors.Join(err, fmt.Errorf("recording the run in the history: %w", herr))
			}
		}
	}
	if err != nil {
		// A run that stopped: say what the capture left, not a report
		// of a run that did not happen.
		fmt.Fprintln(stderr, "stacktune diagnose:", report.Clean(captureOutcome(res)))
		return err
	}
	if err := o.profile.writeFlameGraphs(res.Requests, o.output, stderr); err != nil {
		return err
	}
	render := func(w io.Writer) error { return report.Diagnose(w, res, o.format) }
	if o.output == "" || o.output == "-" {
		return render(stdout)
	}
	return writeReportFile(o.output, "diagnose", stderr, render)
}

// captureOutcome says what happened to the server's variables.
func captureOutcome(r *diagnose.Result) string {
	c := r.Capture
	switch {
	case len(c.Changed) == 0:
		return "no server variable was changed"
	case len(c.Leftovers) > 0:
		return "NOT every variable was put back; run by hand: " + strings.Join(c.Leftovers, " ")
	case c.Restored:
		var names []string
		for _, v := range c.Changed {
			names = append(names, v.Name+"="+v.After)
		}
		return "the variables it changed are back as they were: " + strings.Join(names, ", ")
	}
	return "the restore of the variables was not confirmed"
}
