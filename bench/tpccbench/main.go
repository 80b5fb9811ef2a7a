// Command tpccbench is the 2015 tpcc-mysql contest on this machine, in one run: a
// throwaway MariaDB with the contest's rules (innodb_doublewrite=1,
// innodb_flush_log_at_trx_commit=1, both fixed), a TPC-C load, and the
// tpmC of four configurations measured the same way:
//
//   - default: MariaDB's compiled-in defaults, as Debian's package runs;
//   - MySQLTuner: its "Variables to adjust" applied (run against this
//     server after a warm-up run; which lines were taken and which not,
//     and why, is printed);
//   - audit: stacktune's audit of the server under the load;
//   - search: stacktune's knob search (package knobsearch), with the
//     wall time it took.
//
// The four are measured in the search's final comparison: interleaved
// rounds, each round in the mirror order of the one before, every run
// from the same bytes (the data dir restored), and package abtest's
// intervals of the ratio of medians.
//
//	go run ./bench/tpccbench                                  # 10 warehouses, 16 connections, about 40 minutes
//	go run ./bench/tpccbench --markdown                       # + the Markdown for docs/benchmarks.md
//	go run ./bench/tpccbench --procedures                     # the transactions as stored procedures (HammerDB's way)
//	go run ./bench/tpccbench -w 2 -d 10s --warmup 3s --screen 3 --trials 2 --repeats 4   # a quick look
//	go run ./bench/tpccbench --load-only -w 10                # the loader's time alone
//
// See bench/README.md.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/bench/internal/measure"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/stats"
	"github.com/stacktune/stacktune/knobsearch"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/tpcc"
)

type config struct {
	warehouses   int
	connections  int
	duration     time.Duration
	warmup       time.Duration
	screen       int
	trials       int
	top          int
	repeats      int
	anchor       int
	memoryBudget string
	budgetBytes  int64
	markdown     bool
	loadOnly     bool
	keep         bool
	chart        string
	seed         uint64
	procedures   bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("tpccbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.warehouses, "w", 10, "warehouses (about 100 MB each)")
	fs.IntVar(&c.connections, "c", 16, "TPC-C connections, back to back (no think times)")
	fs.DurationVar(&c.duration, "d", 40*time.Second, "measured interval of every run")
	fs.DurationVar(&c.warmup, "warmup", 10*time.Second, "warm-up before every run's measured interval")
	fs.IntVar(&c.screen, "screen", 8, "the search's space-filling samples")
	fs.IntVar(&c.trials, "trials", 10, "the search's model trials")
	fs.IntVar(&c.top, "top", 4, "knobs the model searches")
	fs.IntVar(&c.repeats, "repeats", 5, "rounds of the final comparison (at least 4)")
	fs.IntVar(&c.anchor, "anchor", 6, "measure the default again after every N search trials and rank each trial against the runs around it (0: never)")
	fs.StringVar(&c.memoryBudget, "memory-budget", "8G", "the RAM the memory budget counts (MySQLTuner is told the same)")
	fs.BoolVar(&c.markdown, "markdown", false, "also print the results as Markdown for docs/benchmarks.md")
	fs.BoolVar(&c.loadOnly, "load-only", false, "only load the warehouses and report the loader's time")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (the server's files, the history, the change set)")
	fs.StringVar(&c.chart, "chart", "", "also draw the run history's score transitions (the 2015 tpcc-mysql contest's chart) into this .svg, .png or .html")
	fs.BoolVar(&c.procedures, "procedures", false, "run the TPC-C transactions as stored procedures (HammerDB's way) instead of a round trip per statement (tpcc-mysql's)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the search and of the terminals")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q: every input is a flag", fs.Args())
	}
	var err error
	if c.budgetBytes, err = mysqlvar.ParseSize(c.memoryBudget); err != nil {
		return c, fmt.Errorf("--memory-budget: %w", err)
	}
	switch {
	case c.warehouses < 1 || c.warehouses > 1000:
		return c, errors.New("-w: 1 to 1000 warehouses")
	case c.connections < 1 || c.connections > 1000:
		return c, errors.New("-c: 1 to 1000 connections")
	case c.duration < time.Second || c.warmup < 0:
		return c, errors.New("-d must be at least 1s and --warmup not negative")
	case c.repeats < 4:
		return c, errors.New("--repeats: at least 4")
	}
	if c.chart != "" {
		if _, err := report.ChartKind(c.chart); err != nil {
			return c, err
		}
	}
	return c, nil
}

func main() { os.Exit(measure.Main("tpccbench", parseFlags, run)) }

// transactions says how the transactions run.
func (c config) transactions() string {
	if c.procedures {
		return "stored procedures (one CALL each, HammerDB's way)"
	}
	return "statements (a round trip each, tpcc-mysql's way)"
}

// contest are the 2015 tpcc-mysql contest's rules.
var contest = map[string]string{"innodb_doublewrite": "ON", "innodb_flush_log_at_trx_commit": "1"}

// quiet discards the driver's lines about the connections every restore
// leaves dead.
type quiet struct{}

func (quiet) Print(...any) {}

func run(ctx context.Context, c config, stdout, stderr io.Writer) error {
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "tpccbench: "+format+"\n", args...)
	}
	work, cleanup, err := measure.WorkDir("tpccbench", c.keep, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	m, err := sandbox.StartMariaDB(ctx, sandbox.MariaDBOptions{Dir: filepath.Join(work, "db"), ConfigFiles: true, ServerDefaults: true,
		Options: contest, StartTimeout: 5 * time.Minute})
	if err != nil {
		return err
	}
	defer m.Stop()
	logf("MariaDB %s in %s", m.Version(), m.Dir())
	if _, err := m.DB().ExecContext(ctx, "CREATE DATABASE tpcc"); err != nil {
		return err
	}
	cfg, err := mysql.ParseDSN(m.DSN("tpcc"))
	if err != nil {
		return err
	}
	cfg.Logger = quiet{}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()

	// The load.
	logf("loading %d warehouses", c.warehouses)
	load, err := tpcc.Load(ctx, db, tpcc.LoadOptions{Warehouses: c.warehouses, Seed: c.seed,
		Progress: func(p tpcc.LoadProgress) {
			if p.UnitsDone%max(1, p.Units/10) == 0 {
				logf("%s", report.TPCCLoadProgressLine(p))
			}
		}})
	if err != nil {
		return err
	}
	var dataBytes int64
	if err := db.QueryRowContext(ctx, "SELECT SUM(data_length + index_length) FROM information_schema.TABLES WHERE table_schema = 'tpcc'").Scan(&dataBytes); err != nil {
		return err
	}
	snapDir := filepath.Join(work, "snapshot")
	snap, err := m.SnapshotData(ctx, snapDir)
	if err != nil {
		return err
	}
	logf("loaded %s rows in %s; data dir snapshot %s in %s", report.Count(load.Rows), load.Elapsed.Round(time.Second), report.Bytes(snap.Bytes), snap.Copy.Round(time.Millisecond))
	res := &result{cfg: c, version: m.Version(), load: load, dataBytes: dataBytes, snap: snap, cpu: measure.CPUModel(), commit: measure.GitCommit(ctx)}
	if c.loadOnly {
		return res.print(stdout)
	}
	reset := func(ctx context.Context) error {
		dc, err := m.RestoreData(ctx, snapDir)
		if err == nil {
			res.restores = append(res.restores, dc.Total)
		}
		return err
	}
	hist, err := history.Open(filepath.Join(work, "history.db"))
	if err != nil {
		return err
	}
	defer hist.Close()
	w, err := knobsearch.NewTPCC(ctx, knobsearch.TPCC{DB: db, ResetData: reset, History: hist, Target: "tpccbench",
		Run: tpcc.RunOptions{Duration: c.duration, WarmUp: c.warmup, Connections: c.connections, Seed: c.seed, Procedures: c.procedures}})
	if err != nil {
		return err
	}

	// MySQLTuner, after a run has filled the server's counters.
	logf("a warm-up run, then MySQLTuner")
	if err := reset(ctx); err != nil {
		return err
	}
	if _, err := w.Measure(ctx, "before MySQLTuner", nil); err != nil {
		return err
	}
	version, lines, err := runMySQLTuner(ctx, work, m.Port(), c.budgetBytes)
	if err != nil {
		return err
	}
	running, err := variables(ctx, m.DB())
	if err != nil {
		return err
	}
	res.tuner = parseTuner(lines, running, contest)
	res.tuner.Version = version
	for _, l := range res.tuner.Taken {
		logf("MySQLTuner: taken: %s → %s=%s", l.Line, l.Name, l.Value)
	}
	for _, l := range res.tuner.Left {
		logf("MySQLTuner: left: %s (%s)", l.Line, l.Why)
	}

	// The search, with MySQLTuner's configuration in its comparison.
	sv := apply.Services{DB: m.DB(), MySQLConf: filepath.Join(m.ConfDir(), "99-stacktune.cnf"), MySQLCheck: m.CheckConfig,
		MySQLRestart: m.Restart, MySQLRestartHint: "restart the sandbox"}
	start := time.Now()
	sr, err := knobsearch.Run(ctx, knobsearch.Options{
		Workload: w, Server: &knobsearch.MySQL{Services: sv, StateDir: filepath.Join(work, "state")}, DB: m.DB(),
		CollectInterval: min(10*time.Second, (c.warmup+c.duration)*3/4),
		Constraints:     knobsearch.Constraints{Fixed: contest, MemoryLimit: c.budgetBytes, CanRestart: true},
		Screen:          c.screen, Trials: c.trials, Top: c.top, Repeats: c.repeats, Anchor: knobsearch.AnchorFlag(c.anchor), Seed: c.seed,
		Compare:  []knobsearch.Arm{{Name: "mysqltuner", Config: res.tuner.Config}},
		Progress: func(s string) { logf("%s", s) },
	})
	res.wall = time.Since(start)
	res.search = sr
	if err != nil {
		if sr != nil {
			report.Search(stderr, sr, report.Text)
		}
		return err
	}
	if c.chart != "" {
		runs, err := hist.Runs(ctx, history.Filter{})
		if err != nil {
			return err
		}
		kind, _ := report.ChartKind(c.chart)
		if err := measure.WriteAtomic(c.chart, func(w io.Writer) error {
			return report.TransitionsChart(w, history.Transitions(runs), runs, kind)
		}); err != nil {
			return err
		}
		logf("score transitions drawn in %s", c.chart)
	}
	return res.print(stdout)
}

func variables(ctx context.Context, db *sql.DB) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL VARIABLES")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// result is what the run measured.
type result struct {
	cfg       config
	version   string
	cpu       string
	commit    string
	load      *tpcc.LoadResult
	dataBytes int64
	snap      sandbox.DataCopy
	restores  []time.Duration
	tuner     *tunerAdvice
	search    *knobsearch.Result
	wall      time.Duration
}

// row is one configuration's line of the table.
type row struct {
	name, what string
	median     float64
	scores     []float64
	vsDefault  string
	vsTuner    string
}

func (r *result) rows() []row {
	cmp := r.search.Comparison
	arm := func(name string) *knobsearch.ArmScores {
		for i := range cmp.Arms {
			if cmp.Arms[i].Name == name {
				return &cmp.Arms[i]
			}
		}
		return nil
	}
	decision := func(a, b string) string {
		for _, d := range cmp.Decisions {
			if d.A == a && d.B == b {
				return fmt.Sprintf("%.2fx [%.2f, %.2f] %s", d.Decision.RatioMedian, d.Decision.CILow, d.Decision.CIHigh, report.VerdictText(d.Decision.Verdict))
			}
			if d.A == b && d.B == a && d.Decision.RatioMedian > 0 {
				return fmt.Sprintf("%.2fx [%.2f, %.2f] %s", 1/d.Decision.RatioMedian, 1/d.Decision.CIHigh, 1/d.Decision.CILow, report.VerdictText(flip(d.Decision.Verdict)))
			}
		}
		return ""
	}
	ratio := func(a, b *knobsearch.ArmScores) string {
		if a == nil || b == nil || a.Median == 0 {
			return ""
		}
		return fmt.Sprintf("%.2fx", b.Median/a.Median)
	}
	best := "best"
	if arm("best") == nil {
		best = r.bestName()
	}
	var out []row
	for _, x := range []struct{ name, arm, what string }{
		{"default", "default", "MariaDB's compiled-in defaults"},
		{"MySQLTuner", "mysqltuner", "its Variables to adjust, applied"},
		{"stacktune audit", "audit", "the audit's MySQL changes"},
		{"stacktune search best", best, "the knob search's best"},
	} {
		a := arm(x.arm)
		if a == nil {
			out = append(out, row{name: x.name, what: x.what + " (not measured: see the notes)"})
			continue
		}
		rw := row{name: x.name, what: x.what, median: a.Median, scores: a.Scores, vsDefault: ratio(arm("default"), a), vsTuner: ratio(arm("mysqltuner"), a)}
		if x.arm == best {
			if d := decision("default", best); d != "" {
				rw.vsDefault = d
			}
			if d := decision("mysqltuner", best); d != "" {
				rw.vsTuner = d
			}
		}
		out = append(out, rw)
	}
	return out
}

// bestName is the arm the best configuration was (when it equals one).
func (r *result) bestName() string {
	best := r.search.BestTrial().Config.String()
	for _, a := range r.search.Comparison.Arms {
		if a.Config.String() == best {
			return a.Name
		}
	}
	return "best"
}

// flip is the verdict of A against B from B's against A.
func flip(v abtest.Verdict) abtest.Verdict {
	switch v {
	case abtest.Better:
		return abtest.Worse
	case abtest.Worse:
		return abtest.Better
	}
	return v
}

func (r *result) print(w io.Writer) error {
	c := r.cfg
	loadRate := float64(r.load.Rows) / r.load.Elapsed.Seconds()
	fmt.Fprintf(w, "tpccbench %s: %d cores (%s), MariaDB %s, stacktune %s\n", measure.Today(), measure.NumCPU(), r.cpu, r.version, r.commit)
	fmt.Fprintf(w, "rules: innodb_doublewrite=1, innodb_flush_log_at_trx_commit=1 (fixed); memory budget %s\n", c.memoryBudget)
	fmt.Fprintf(w, "load: %d warehouses, %s rows, %s of tables, in %s (%s rows/s, %d workers); goal 10 warehouses under 2 minutes\n",
		c.warehouses, report.Count(r.load.Rows), report.Bytes(r.dataBytes), r.load.Elapsed.Round(100*time.Millisecond), report.PerSecond(loadRate), r.load.Workers)
	fmt.Fprintf(w, "data dir snapshot: %s in %d files, copied in %s\n", report.Bytes(r.snap.Bytes), r.snap.Files, r.snap.Copy.Round(time.Millisecond))
	if r.search == nil {
		return nil
	}
	if len(r.restores) > 0 {
		fmt.Fprintf(w, "reset between runs (kill, restore the data dir, start): median %s over %d\n", stats.Median(r.restores).Round(10*time.Millisecond), len(r.restores))
	}
	fmt.Fprintf(w, "runs: %d connections, transactions as %s, %s warm-up, %s measured; the comparison %d rounds\n\n", c.connections, c.transactions(), c.warmup, c.duration, c.repeats)
	rows := r.rows()
	fmt.Fprintf(w, "%-22s %10s  %-34s %-34s %s\n", "configuration", "tpmC", "vs default", "vs MySQLTuner", "runs")
	for _, x := range rows {
		fmt.Fprintf(w, "%-22s %10s  %-34s %-34s %s\n", x.name, report.Count(int64(math.Round(x.median))), x.vsDefault, x.vsTuner, scores(x.scores))
	}
	fmt.Fprintf(w, "\nsearch wall time: %s (%d trials; %s to the best, then the comparison)\n", r.wall.Round(time.Second), len(r.search.Trials), r.search.SearchTime.Round(time.Second))
	r.goals(w)
	fmt.Fprintf(w, "\nMySQLTuner %s: taken\n", r.tuner.Version)
	for _, l := range r.tuner.Taken {
		fmt.Fprintf(w, "  %s  →  %s=%s\n", report.Clean(l.Line), l.Name, l.Value)
	}
	fmt.Fprintln(w, "not taken")
	for _, l := range r.tuner.Left {
		fmt.Fprintf(w, "  %s  (%s)\n", report.Clean(l.Line), l.Why)
	}
	fmt.Fprintln(w)
	if err := report.Search(w, r.search, report.Text); err != nil {
		return err
	}
	if c.markdown {
		return r.markdown(w, rows)
	}
	return nil
}

// goals says where the run stands against the goals.
func (r *result) goals(w io.Writer) {
	rows := r.rows()
	get := func(name string) float64 {
		for _, x := range rows {
			if x.name == name {
				return x.median
			}
		}
		return 0
	}
	best, def, tuner := get("stacktune search best"), get("default"), get("MySQLTuner")
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	if def > 0 {
		fmt.Fprintf(w, "goal: search best >= 1.5x default: %.2fx, %s\n", best/def, verdict(best >= 1.5*def))
	}
	if tuner > 0 {
		fmt.Fprintf(w, "goal: search best >= 1.2x MySQLTuner: %.2fx, %s\n", best/tuner, verdict(best >= 1.2*tuner))
	}
	if r.cfg.warehouses == 10 {
		fmt.Fprintf(w, "goal: 10 warehouses loaded in under 2 minutes: %s, %s\n", r.load.Elapsed.Round(time.Second), verdict(r.load.Elapsed < 2*time.Minute))
	}
}

func (r *result) markdown(w io.Writer, rows []row) error {
	c := r.cfg
	fmt.Fprintf(w, "\n### Latest run: the 2015 tpcc-mysql contest, %s\n\n", measure.Today())
	procs := ""
	if c.procedures {
		procs = " --procedures"
	}
	fmt.Fprintf(w, "`go run ./bench/tpccbench -w %d -c %d -d %s --warmup %s --screen %d --trials %d --repeats %d --anchor %d --memory-budget %s%s --markdown`: %d cores (%s), MariaDB %s, stacktune %s. "+
		"Transactions as %s. innodb_doublewrite=1 and innodb_flush_log_at_trx_commit=1 fixed; every run from the same data dir; the four configurations measured in %d interleaved rounds (medians; intervals are abtest's 95%% bootstrap interval of the ratio of medians).\n\n",
		c.warehouses, c.connections, c.duration, c.warmup, c.screen, c.trials, c.repeats, c.anchor, c.memoryBudget, procs, measure.NumCPU(), r.cpu, r.version, r.commit, c.transactions(), c.repeats)
	fmt.Fprintln(w, "| configuration | tpmC (median) | vs default | vs MySQLTuner | runs |")
	fmt.Fprintln(w, "|---|---:|---|---|---|")
	for _, x := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", x.name, report.Count(int64(math.Round(x.median))), x.vsDefault, x.vsTuner, scores(x.scores))
	}
	fmt.Fprintf(w, "\nSearch wall time %s (%d trials, %s to the best). Loader: %d warehouses, %s rows in %s. Reset between runs: median %s.\n",
		r.wall.Round(time.Second), len(r.search.Trials), r.search.SearchTime.Round(time.Second), c.warehouses, report.Count(r.load.Rows),
		r.load.Elapsed.Round(time.Second), stats.Median(r.restores).Round(10*time.Millisecond))
	fmt.Fprintf(w, "\nThe search's best: `%s`. MySQLTuner's taken: `%s`.\n", r.search.BestTrial().Config, r.tuner.Config)
	return nil
}

func scores(s []float64) string {
	var parts []string
	for _, v := range s {
		parts = append(parts, report.Count(int64(math.Round(v))))
	}
	return strings.Join(parts, " / ")
}
