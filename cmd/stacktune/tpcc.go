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

	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/tpcc"
)

// tpccConn are the flags naming the server and the TPC-C database.
type tpccConn struct {
	conn dsnFlags
	db   string
}

func (c *tpccConn) add(f *pflag.FlagSet) {
	c.conn.add(f, "the MySQL/MariaDB server")
	f.StringVar(&c.db, "db", "", `the TPC-C database (default: the DSN's, else "tpcc")`)
}

// resolve is the server and database the flags name, the DSN resolved.
func (c *tpccConn) resolve(stderr io.Writer) (tpcc.Conn, error) {
	dsn, err := c.conn.resolve(stderr)
	return tpcc.Conn{DSN: dsn, DB: c.db}, err
}

func newTPCCCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tpcc prepare|run|check",
		Short: "A TPC-C benchmark against MySQL/MariaDB: load, run (tpmC), check consistency",
		Long: `tpcc is the 2015 tpcc-mysql contest's benchmark: TPC-C against your MySQL or MariaDB, scored in tpmC.

  prepare  creates the nine tables in --db and loads -w warehouses (about 100 MB
           each), warehouse ranges in parallel; run it again after a crash or
           Ctrl-C and it finishes the load (no duplicate keys), or with more
           warehouses and it adds them
  run      the five transactions from a shuffled deck (45/43/4/4/4), NURand keys,
           1% New-Order rollbacks, bounded by --warmup + --duration; tpmC,
           tpmTotal, per transaction p90/p99 against the spec's limits, the mix
           reached, deadlocks and retries; every run is recorded in the history
           (stacktune history draws the transitions)
  check    the consistency conditions 1-12 of the spec (clause 3.3.2): totals,
           order numbers, every order's lines, deliveries, payments and
           balances; 11 only as loaded, before a run

Without --think-times each connection runs transactions back to back (throughput,
as tpcc-mysql measures); with it, ten terminals per warehouse key and think as the
spec says, and the result is also an efficiency against 12.86 tpmC per warehouse.`,
		Example: `  stacktune tpcc prepare --defaults-file ~/.my.cnf -w 10
  stacktune tpcc run --defaults-file ~/.my.cnf -c 16 -d 120s --label "buffer pool 4G"
  stacktune tpcc check --defaults-file ~/.my.cnf
  stacktune history --label "buffer pool 4G"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newTPCCPrepareCmd(), newTPCCRunCmd(), newTPCCCheckCmd())
	return cmd
}

type tpccPrepareOptions struct {
	conn       tpccConn
	warehouses int
	workers    int
	seed       uint64
	tiny       bool
	format     string
	progress   string
}

func newTPCCPrepareCmd() *cobra.Command {
	var o tpccPrepareOptions
	cmd := &cobra.Command{
		Use:   "prepare -w N",
		Short: "Create the TPC-C tables and load N warehouses (resumes an interrupted load)",
		// It changes systems: never cut short after a signal (main.go).
		Annotations: map[string]string{noForcedExit: ""},
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTPCCPrepare(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	o.conn.add(f)
	f.IntVarP(&o.warehouses, "warehouses", "w", 0, "warehouses to load (the scale; about 100 MB each)")
	f.IntVar(&o.workers, "workers", 0, "connections loading in parallel (default: the cores, at least 2)")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the data: the same seed loads the same rows")
	f.BoolVar(&o.tiny, "tiny", false, "load about 1/100 of each warehouse (1,000 items, 60 customers per district): for trying things, not a TPC-C load")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.TPCCFormats, ", "))
	f.StringVar(&o.progress, "progress", "auto", "live progress on stderr: auto (when it is a terminal), always, never")
	return cmd
}

func runTPCCPrepare(ctx context.Context, o tpccPrepareOptions, stdout, stderr io.Writer) error {
	if err := report.CheckFormat(o.format, report.TPCCFormats...); err != nil {
		return err
	}
	live, err := liveProgress(o.progress, stderr)
	if err != nil {
		return err
	}
	conn, err := o.conn.resolve(stderr)
	if err != nil {
		return err
	}
	opt := tpcc.PrepareOptions{Conn: conn, Warehouses: o.warehouses, Workers: o.workers, Seed: o.seed, Tiny: o.tiny}
	if live.show {
		opt.Progress = func(p tpcc.LoadProgress) { live.draw(report.TPCCLoadProgressLine(p)) }
	}
	res, err := tpcc.Prepare(ctx, opt)
	live.clear()
	if err != nil {
		return err
	}
	return report.TPCCLoad(stdout, res, o.format)
}

type tpccRunOptions struct {
	conn      tpccConn
	run       tpcc.RunOptions
	label     string
	history   string
	noHistory bool
	format    string
	progress  string
}

func newTPCCRunCmd() *cobra.Command {
	var o tpccRunOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the TPC-C transactions for a bounded time: tpmC, response times, mix, deadlocks",
		Long: `run drives the five TPC-C transactions against the database prepare loaded, for
--warmup (not measured) and then --duration, and prints tpmC, tpmTotal and per
transaction the count, the mix reached against the spec's minimums, rollbacks,
failures, retries after deadlocks and lock wait timeouts, and response times
(avg, p50, p90, p99, max) against the spec's 90th-percentile limits. The run is
recorded in the history with its --label; stacktune history shows the score
transitions. It exits non-zero when a transaction failed (other than the 1% of
New-Orders rolled back on purpose).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTPCCRun(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	o.conn.add(f)
	f.DurationVarP(&o.run.Duration, "duration", "d", 60*time.Second, fmt.Sprintf("the measured interval (at most %s)", tpcc.MaxDuration))
	f.DurationVar(&o.run.WarmUp, "warmup", 10*time.Second, "runs before the measured interval, not counted (the buffer pool fills)")
	f.IntVarP(&o.run.Connections, "connections", "c", 0, fmt.Sprintf("connections running transactions back to back (default 2 per warehouse, at most %d)", tpcc.MaxConnections))
	f.BoolVar(&o.run.ThinkTimes, "think-times", false, "ten terminals per warehouse with the spec's keying and think times (efficiency against 12.86 tpmC per warehouse)")
	f.BoolVar(&o.run.Procedures, "procedures", false, "run each transaction as one CALL of a stored procedure, as HammerDB does (installed in the database), instead of a round trip per statement, as tpcc-mysql does")
	f.IntVar(&o.run.MaxRetries, "max-retries", 5, "runs of a transaction again after a deadlock or lock wait timeout")
	f.Uint64Var(&o.run.Seed, "seed", 1, "seed of the terminals' choices")
	f.StringVar(&o.label, "label", "", "what this run measures (the history's step)")
	f.StringVar(&o.history, "history", "", "the run history (default $STACKTUNE_HISTORY or ~/.local/share/stacktune/history.db)")
	f.BoolVar(&o.noHistory, "no-history", false, "do not record the run")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.TPCCFormats, ", "))
	f.StringVar(&o.progress, "progress", "auto", "live progress on stderr: auto (when it is a terminal), always, never")
	return cmd
}

func runTPCCRun(ctx context.Context, o tpccRunOptions, stdout, stderr io.Writer) error {
	if err := report.CheckFormat(o.format, report.TPCCFormats...); err != nil {
		return err
	}
	live, err := liveProgress(o.progress, stderr)
	if err != nil {
		return err
	}
	conn, err := o.conn.resolve(stderr)
	if err != nil {
		return err
	}
	if live.show {
		o.run.Progress = func(p tpcc.Progress) { live.draw(report.TPCCProgressLine(p)) }
	}
	res, err := tpcc.Bench(ctx, tpcc.BenchOptions{Conn: conn, Run: o.run, Label: o.label, History: o.history, NoHistory: o.noHistory})
	live.clear()
	if res == nil {
		return err
	}
	if werr := report.TPCCRun(stdout, res, o.format); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

type tpccCheckOptions struct {
	conn   tpccConn
	format string
}

func newTPCCCheckCmd() *cobra.Command {
	var o tpccCheckOptions
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the TPC-C consistency conditions 1-12 (exits non-zero when one is broken)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := report.CheckFormat(o.format, report.TPCCFormats...); err != nil {
				return err
			}
			conn, err := o.conn.resolve(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			res, err := tpcc.CheckDatabase(cmd.Context(), conn)
			if res == nil {
				return err
			}
			if werr := report.TPCCCheck(cmd.OutOrStdout(), res, o.format); werr != nil {
				return werr
			}
			return err
		},
	}
	o.conn.add(cmd.Flags())
	cmd.Flags().StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.TPCCFormats, ", "))
	return cmd
}
