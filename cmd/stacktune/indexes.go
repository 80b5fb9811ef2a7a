package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/pfs"
	"github.com/stacktune/stacktune/report"
)

// indexesOptions are the flags of `stacktune indexes`.
type indexesOptions struct {
	conn     dsnFlags
	dsn      string
	slowlogs []string
	interval time.Duration
	limit    int
	db       string
	rowLimit int64
	runs     int
	format   string
	apply    bool
	state    string
	// unusedMin is the shortest window an index is called unused from.
	unusedMin time.Duration
}

func newIndexesCmd() *cobra.Command {
	var o indexesOptions
	cmd := &cobra.Command{
		Use:   "indexes --dsn DSN [--slowlog FILE]",
		Short: "Propose indexes for the top query classes, proven on a throwaway copy",
		// It changes systems with --apply: never cut short after a signal (main.go).
		Annotations: map[string]string{noForcedExit: "apply"},
		Long: `indexes takes the top classes of a digest (of --slowlog files, or else of the
server's performance_schema), parses and EXPLAINs each sample on the server (UPDATE
and DELETE through a SELECT of their WHERE, never executed), reports full scans,
filesorts, temporary tables, ORs across columns, functions on columns, leading
wildcards and N+1 patterns, and proposes indexes. Each proposal is proven on a
throwaway MariaDB holding a copy of the schema and of the data (a sample above
--row-limit rows): only indexes that cut the rows examined or the time are kept,
with their benefit over the window and their write cost (the window's writes
replayed on the copy with and without each; one whose writes cost more than it
saves is refused). Unused (on evidence over at least --unused-min-window),
duplicate and redundant indexes are proposed as drops, never one that backs a
constraint; tune ignores each first and drops it only once measured.
Nothing is changed on the server without --apply,
which adds them as one transaction of stacktune apply (journal in --state,
undone by stacktune rollback). --format sql writes the proven DDL with its
evidence as comments: what "stacktune apply --ddl FILE" reads.`,
		Example: `  stacktune indexes --dsn 'ro@tcp(db:3306)/app' --slowlog /var/log/mysql/slow.log
  stacktune indexes --dsn 'root@unix(/run/mysqld/mysqld.sock)/app' --interval 60s --format markdown
  stacktune indexes --dsn "$DSN" --slowlog slow.log --format sql > ix.sql && stacktune apply --dsn "$DSN" --ddl ix.sql`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIndexes(cmd.Context(), o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	o.conn.add(f, "the server to advise on; read-only unless --apply")
	f.StringSliceVar(&o.slowlogs, "slowlog", nil, "take the classes from these slow logs (- for standard input) instead of performance_schema")
	f.DurationVar(&o.interval, "interval", 10*time.Second, "without --slowlog: time between the two performance_schema samples")
	f.IntVar(&o.limit, "limit", 10, "advise on the top N classes by total time")
	f.StringVar(&o.db, "db", "", "default database for queries that name none (default: the DSN's)")
	f.Int64Var(&o.rowLimit, "row-limit", 200000, "copy tables whole up to this many rows, a sample above")
	f.IntVar(&o.runs, "runs", 5, "timed runs of each query on the copy (the median is kept)")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.IndexesFormats, ", "))
	f.BoolVar(&o.apply, "apply", false, "add the proven indexes on the server as a transaction of stacktune apply (otherwise they are only printed)")
	f.StringVar(&o.state, "state", "", "with --apply: the journal directory, as stacktune apply's --state")
	f.DurationVar(&o.unusedMin, "unused-min-window", indexadv.DefaultMinUsageWindow, "the shortest window of evidence an index is called unused from (performance_schema's and userstat's counters since the server started, or the digest's window)")
	return cmd
}

func runIndexes(ctx context.Context, o indexesOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := report.CheckFormat(o.format, report.IndexesFormats...); err != nil {
		return err
	}
	if !o.conn.asked() {
		return errors.New("--dsn (or --dsn-env, or --defaults-file) is required: indexes EXPLAINs the queries on the server and copies its tables")
	}
	var err error
	if o.dsn, err = o.conn.resolve(stderr); err != nil {
		return err
	}
	if o.limit <= 0 {
		return fmt.Errorf("--limit %d: give at least 1", o.limit)
	}
	// Every class of the window (bounded) is the workload: its writes
	// are replayed for the write cost, its plans are evidence of use;
	// the top --limit are advised on.
	ropt := digest.ReportOptions{Sort: digest.SortTotal, Limit: max(o.limit, workloadClasses)}
	var rep *digest.Report
	if len(o.slowlogs) > 0 {
		// Read before the server is asked anything: a bad file fails
		// first.
		if rep, err = digestFiles(ctx, digestOptions{files: o.slowlogs}, ropt, stdin); err != nil {
			return err
		}
	}
	db, err := dbconn.Open(ctx, o.dsn, 0)
	if err != nil {
		return err
	}
	defer db.Close()
	if rep == nil {
		if rep, err = pfs.Digest(ctx, db, pfs.Options{Interval: o.interval, Report: ropt}); err != nil {
			return err
		}
		// MariaDB's digests hold no sample: take one from the statement
		// history when it is kept.
		indexadv.FillSamples(ctx, db, rep.Classes)
	}
	dbName := o.db
	if dbName == "" {
		dbName, _ = dbconn.CurrentDatabase(ctx, db) // "" when unknown: queries name theirs
	}
	res, err := indexadv.Run(ctx, indexadv.Options{
		Classes: rep.Classes[:min(o.limit, len(rep.Classes))], Workload: rep.Classes, WindowSeconds: digestWindow(rep),
		Source: db, Database: dbName, RowLimit: o.rowLimit, Runs: o.runs, MinUsageWindow: o.unusedMin,
	})
	if err == nil && o.apply && len(res.Changes.Changes) > 0 {
		err = applyIndexes(ctx, db, dbName, o.state, res, stderr)
	}
	if res != nil {
		if werr := report.Indexes(stdout, res, o.format); werr != nil {
			return fmt.Errorf("writing the report: %w", werr)
		}
		if len(res.Skipped) > 0 && o.format != report.Text {
			fmt.Fprintf(stderr, "stacktune: skipped %d classes (see \"skipped\")\n", len(res.Skipped))
		}
	}
	return err
}

// workloadClasses bounds the classes of the window read as the
// workload.
const workloadClasses = 2000

// digestWindow is the length of a digest's window in seconds: the
// interval of performance_schema's samples, or the slow log's first to
// last event.
func digestWindow(rep *digest.Report) float64 {
	if rep.Overall.IntervalSeconds > 0 {
		return rep.Overall.IntervalSeconds
	}
	if f, l := rep.Overall.FirstSeen, rep.Overall.LastSeen; f != nil && l != nil {
		return l.Sub(*f).Seconds()
	}
	return 0
}

// applyIndexes adds the proven indexes as one transaction of stacktune
// apply, and records the statements in res.Applied.
func applyIndexes(ctx context.Context, db *sql.DB, schema, state string, res *indexadv.Result, stderr io.Writer) error {
	if state == "" {
		var err error
		if state, err = apply.DefaultStateDir(); err != nil {
			return err
		}
	}
	ix, err := apply.NewIndexes(db, schema, res.Changes.Changes)
	if err != nil {
		return err
	}
	ar, err := apply.Run(ctx, []apply.Target{ix}, apply.Options{StateDir: state, Label: "stacktune indexes --apply",
		Log: func(format string, args ...any) { fmt.Fprintf(stderr, "stacktune: "+format+"\n", args...) }})
	if err != nil {
		return err
	}
	for _, d := range res.DDL {
		res.Applied = append(res.Applied, d.DDL)
	}
	fmt.Fprintf(stderr, "stacktune: applied as transaction %s in %s (stacktune rollback --state %s undoes it)\n", ar.ID, state, state)
	return nil
}
