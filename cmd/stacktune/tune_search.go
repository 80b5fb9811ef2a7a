package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/knobsearch"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/tpcc"
)

// searchOptions are the flags of `stacktune tune --workload`: the knob
// search instead of the step loop.
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

func addSearchFlags(f *pflag.FlagSet, o *searchOptions) {
	f.StringVar(&o.workload, "workload", "", `search the MySQL knobs for this workload instead of the step loop: tpcc (the database stacktune tpcc prepare loaded, --db) or http (--scenario)`)
	f.StringVar(&o.memoryBudget, "memory-budget", "", "search: the RAM the memory budget may count (e.g. 8G): a configuration over it is never tried (default: the host's RAM)")
	f.IntVar(&o.screen, "screen", 10, "search: space-filling samples that rank the knobs")
	f.IntVar(&o.trials, "trials", 12, "search: trials of the model (TPE) on the top knobs")
	f.IntVar(&o.top, "top", 4, "search: knobs the model searches")
	f.IntVar(&o.repeats, "repeats", 5, "search: rounds of the final comparison (best, default, audit), at least 4")
	f.IntVar(&o.anchor, "anchor", 6, "search: measure the server as found again after every N search trials, and rank each trial against the runs around it, so a host whose speed moves does not pick the answer (0: never)")
	f.DurationVar(&o.maxTime, "max-time", 0, "search: no new screening or model trial after this long (the comparison still runs; 0: no bound)")
	f.DurationVar(&o.warmup, "warmup", 10*time.Second, "search, tpcc: each run's warm-up before its -d measured interval")
	f.BoolVar(&o.procedures, "procedures", false, "search, tpcc: run the transactions as stored procedures (see stacktune tpcc run --procedures)")
	f.StringVar(&o.reset, "reset", "reload", "search, tpcc: how each trial gets the same data: reload (empty and load the tables again), datadir (copy the stopped server's data dir back: a server used only for the benchmark; see --datadir), none (trials run on what the last one left)")
	f.StringVar(&o.datadir, "datadir", "", "search, --reset datadir: the server's data directory")
	f.StringVar(&o.snapshotDir, "snapshot-dir", "", "search, --reset datadir: where its copy goes (default DATADIR.stacktune-snapshot; must not exist)")
	f.StringVar(&o.mysqlStop, "mysql-stop", "", `search, --reset datadir: command stopping the server (default "systemctl stop mariadb" or "systemctl stop mysql")`)
	f.StringVar(&o.mysqlStart, "mysql-start", "", `search, --reset datadir: command starting the server (default "systemctl start mariadb" or "systemctl start mysql")`)
	f.StringSliceVar(&o.knobs, "knobs", nil, "search: only these knobs (default: every knob of the catalogue the server has)")
	f.StringVar(&o.emit, "emit", "", "search: write the change set to this directory (for stacktune apply): the search's best or the audit's configuration, whichever the final comparison found better than the server as found (the higher if both), else nothing to change")
	f.BoolVar(&o.noAudit, "no-audit", false, "search: do not start from the audit's advice")
}

// runTuneSearch is `stacktune tune --workload`.
func runTuneSearch(ctx context.Context, o tuneOptions, stdout, stderr io.Writer) error {
	so := o.search
	format := o.format
	if err := report.CheckFormat(format, report.SearchFormats...); err != nil {
		return fmt.Errorf("--workload: %w", err)
	}
	reportFormat := ""
	if o.report != "" {
		switch strings.ToLower(filepath.Ext(o.report)) {
		case ".md":
			reportFormat = report.Markdown
		case ".json":
			reportFormat = report.JSON
		case ".txt":
			reportFormat = report.Text
		default:
			return fmt.Errorf("--report %s: the search writes .md, .json or .txt", o.report)
		}
	}
	if so.workload != "tpcc" && so.workload != "http" {
		return fmt.Errorf("--workload %q: tpcc or http", so.workload)
	}
	if o.dryRun {
		return errors.New("--dry-run: the search measures every configuration it proposes; it has no dry run (its change set, --emit, is applied only by stacktune apply)")
	}
	fixed, err := advise.ParseFixed(o.diag.fixed)
	if err != nil {
		return err
	}
	c := knobsearch.Constraints{Fixed: fixed, AllowDurabilityLoss: o.diag.allowDurabilityLoss, DedicatedDB: o.diag.dedicatedDB, Only: so.knobs}
	if so.memoryBudget != "" {
		if c.MemoryLimit, err = mysqlvar.ParseSize(so.memoryBudget); err != nil || c.MemoryLimit <= 0 {
			return fmt.Errorf("--memory-budget %q: a size, as 8G or 8192M", so.memoryBudget)
		}
	}
	if o.diag.reserve != "" {
		if c.MemoryReserve, err = mysqlvar.ParseSize(o.diag.reserve); err != nil {
			return fmt.Errorf("--memory-reserve %q: a size, as 2G", o.diag.reserve)
		}
	}
	dsn, err := o.diag.collect.conn.resolve(stderr)
	if err != nil {
		return err
	}
	if dsn == "" {
		return errors.New("no server: give --dsn, --dsn-env or --defaults-file (or a [client] section in ~/.my.cnf)")
	}
	db, srv, err := openDB(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(4)
	o.apply.conn = o.diag.collect.conn
	sv, err := o.apply.services(ctx, db, srv, false)
	if err != nil {
		return err
	}
	c.CanRestart = sv.MySQLRestart != nil
	state, err := o.apply.stateDir()
	if err != nil {
		return err
	}
	var hist *history.Store
	if !o.noHist {
		if hist, err = openHistory(o.history); err != nil {
			return err
		}
		defer hist.Close()
	}
	progress := func(line string) { fmt.Fprintln(stderr, "stacktune tune:", report.Clean(line)) }
	var w knobsearch.Workload
	var collectEvery time.Duration
	switch so.workload {
	case "tpcc":
		conns := o.diag.load.Connections
		tc := tpccConn{conn: o.diag.collect.conn, db: o.diag.db}
		tdb, tdsn, err := tc.open(ctx, false, conns+2, stderr)
		if err != nil {
			return err
		}
		defer tdb.Close()
		reset, err := searchReset(ctx, so, srv, tdb, db, progress)
		if err != nil {
			return err
		}
		tw, err := knobsearch.NewTPCC(ctx, knobsearch.TPCC{DB: tdb, ResetData: reset, History: hist, Target: dbconn.Mask(tdsn),
			Run: tpcc.RunOptions{Duration: o.diag.load.Duration, WarmUp: so.warmup, Connections: conns, Procedures: so.procedures}})
		if err != nil {
			return err
		}
		w = tw
		collectEvery = min(10*time.Second, (so.warmup+o.diag.load.Duration)*3/4)
	case "http":
		if o.diag.scenario == "" {
			return errors.New("--workload http: give the --scenario to measure")
		}
		w = &knobsearch.HTTP{History: hist, Bench: benchrun.Options{Scenario: o.diag.scenario, BaseURL: o.diag.baseURL, Load: o.diag.load, Seed: o.diag.seed}}
		collectEvery = min(10*time.Second, o.diag.load.Duration*3/4)
	}
	res, err := knobsearch.Run(ctx, knobsearch.Options{
		Workload: w, Server: &knobsearch.MySQL{Services: sv, StateDir: state}, DB: db, CollectInterval: collectEvery,
		Constraints: c, Screen: so.screen, Top: so.top, Trials: so.trials, Repeats: so.repeats, Anchor: knobsearch.AnchorFlag(so.anchor), MaxTime: so.maxTime,
		NoAudit: so.noAudit, Seed: o.diag.seed, Progress: progress,
	})
	if res == nil {
		return err
	}
	if werr := report.Search(stdout, res, format); werr != nil {
		err = errors.Join(err, werr)
	}
	if so.emit != "" && res.ChangeSet != nil && err == nil {
		if _, werr := changeset.Write(so.emit, res.ChangeSet); werr != nil {
			err = errors.Join(err, werr)
		} else {
			fmt.Fprintf(stderr, "stacktune tune: the change set (%s) is in %s: stacktune apply %s\n", res.ChangeSetWhy, so.emit, so.emit)
		}
	}
	if o.report != "" {
		if werr := writeReportFile(o.report, "tune", stderr, func(w io.Writer) error { return report.Search(w, res, reportFormat) }); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}

// searchReset is the reset --reset asks for: tdb reaches the TPC-C
// database, admin the server.
func searchReset(ctx context.Context, so searchOptions, srv mysqlvar.Server, tdb, admin *sql.DB, progress func(string)) (func(context.Context) error, error) {
	switch so.reset {
	case "none":
		progress("--reset none: every trial runs on the data the last one left; scores drift as the tables grow")
		return nil, nil
	case "reload":
		return func(ctx context.Context) error { _, err := tpcc.Reload(ctx, tdb, 0); return err }, nil
	case "datadir":
		if so.datadir == "" {
			return nil, errors.New("--reset datadir needs --datadir, the server's data directory (SELECT @@datadir)")
		}
		unit := "mysql"
		if srv.IsMariaDB() {
			unit = "mariadb"
		}
		stop, err := command("mysql-stop", so.mysqlStop, []string{"systemctl", "stop", unit}, false)
		if err != nil {
			return nil, err
		}
		start, err := command("mysql-start", so.mysqlStart, []string{"systemctl", "start", unit}, false)
		if err != nil {
			return nil, err
		}
		snap := so.snapshotDir
		if snap == "" {
			snap = filepath.Clean(so.datadir) + ".stacktune-snapshot"
		}
		d := &knobsearch.Datadir{Dir: so.datadir, Snapshot: snap, Stop: stop, Start: start, Ping: admin.PingContext}
		progress("taking the data dir snapshot: " + so.datadir + " → " + snap + " (the server stops for the copy)")
		st, err := d.Take(ctx)
		if err != nil {
			return nil, err
		}
		progress(fmt.Sprintf("snapshot: %s in %d files, copied in %s", report.Bytes(st.Bytes), st.Files, report.Duration(st.Elapsed.Seconds())))
		return d.Restore, nil
	}
	return nil, fmt.Errorf("--reset %q: reload, datadir or none", so.reset)
}
