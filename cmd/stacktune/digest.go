package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/pfs"
	"github.com/stacktune/stacktune/report"
)

// digestOptions are the flags of `stacktune digest`.
type digestOptions struct {
	files    []string
	dsn      string
	conn     dsnFlags
	interval time.Duration
	limit    int
	sort     string
	format   string
	filter   digest.Filter
	workers  int
}

func newDigestCmd() *cobra.Command {
	var o digestOptions
	cmd := &cobra.Command{
		Use:   "digest [flags] [SLOWLOG ...]",
		Short: "Group slow-log or performance_schema queries into classes and rank them",
		Long: `digest reads MySQL, Percona Server and MariaDB slow logs (plain or gzip; "-" is
standard input) or, with --dsn, performance_schema's statement digests sampled
twice --interval apart, and ranks query classes by total time. Fingerprints and
query IDs are pt-query-digest's, so classes can be compared across tools.`,
		Example: `  stacktune digest /var/log/mysql/slow.log
  zcat slow.log.gz | stacktune digest --sort p95 --limit 5 -
  stacktune digest --dsn 'root@unix(/run/mysqld/mysqld.sock)/' --interval 30s --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			return runDigest(cmd.Context(), o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	o.conn.add(f, "read performance_schema of this server instead of slow logs")
	f.DurationVar(&o.interval, "interval", 10*time.Second, "with --dsn: time between the two performance_schema samples")
	f.IntVar(&o.limit, "limit", 20, "show the top N classes (0 = all)")
	f.StringVar(&o.sort, "sort", digest.SortTotal, "order classes by: "+strings.Join(digest.SortKeys, ", "))
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.DigestFormats, ", "))
	f.StringSliceVar(&o.filter.Databases, "db", nil, "keep only these databases (repeat or comma-separate)")
	f.StringSliceVar(&o.filter.Users, "user", nil, "keep only these users")
	f.StringSliceVar(&o.filter.Types, "type", nil, "keep only these statement types (select, insert, update, delete, ...)")
	f.IntVar(&o.workers, "workers", 0, "parser goroutines (0 = one per core)")
	return cmd
}

func runDigest(ctx context.Context, o digestOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	ropt := digest.ReportOptions{Sort: o.sort, Limit: o.limit}
	if err := ropt.Validate(); err != nil {
		return err
	}
	if err := report.CheckFormat(o.format, report.DigestFormats...); err != nil {
		return err
	}
	var (
		rep *digest.Report
		err error
	)
	switch {
	case o.conn.asked() && len(o.files) > 0:
		return errors.New("give either slow-log files or --dsn, not both")
	case o.conn.asked():
		if o.dsn, err = o.conn.resolve(stderr); err != nil {
			return err
		}
		rep, err = digestLive(ctx, o, ropt)
	case len(o.files) == 0:
		return errors.New("nothing to read: give slow-log files (- for standard input) or --dsn for performance_schema")
	default:
		rep, err = digestFiles(ctx, o, ropt, stdin)
	}
	if rep != nil {
		if werr := render(stderr, o.format, "events", rep.Skipped.Count, rep.Skipped.Reasons, func() error { return report.Digest(stdout, rep, o.format) }); werr != nil {
			return werr
		}
	}
	return err
}

func digestFiles(ctx context.Context, o digestOptions, ropt digest.ReportOptions, stdin io.Reader) (*digest.Report, error) {
	var inputs []input.Input
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	stdinUsed := false
	for _, path := range o.files {
		if path == "-" {
			if stdinUsed {
				return nil, errors.New(`standard input ("-") given twice`)
			}
			stdinUsed = true
		}
		in, c, err := input.Open(path, stdin)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, in)
		closers = append(closers, c)
	}
	return digest.ReportOf(ctx, inputs, o.files, digest.Options{Workers: o.workers, Filter: o.filter}, ropt)
}

func digestLive(ctx context.Context, o digestOptions, ropt digest.ReportOptions) (*digest.Report, error) {
	db, err := dbconn.Open(ctx, o.dsn, 0)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return pfs.Digest(ctx, db, pfs.Options{Interval: o.interval, Filter: o.filter, Report: ropt})
}
