package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/report"
)

// httpOptions are the flags of `stacktune http` and `stacktune http diff`.
type httpOptions struct {
	logFormat    string
	nginxConf    string
	nginxFormat  string
	apacheFormat string
	groups       []string
	queryKeys    bool
	since, until string
	sort         string
	limit        int
	format       string
	slowest      int
	threshold    int
	workers      int
}

func (o *httpOptions) flags(cmd *cobra.Command, withTable bool) {
	f := cmd.Flags()
	f.StringVar(&o.logFormat, "log-format", "auto", "log format: auto (detected from the lines), "+accesslog.NameList()+
		", or with --nginx-conf the name of a log_format in that config")
	f.StringVar(&o.nginxConf, "nginx-conf", "", "nginx config file to read --log-format NAME from (includes are followed)")
	f.StringVar(&o.nginxFormat, "nginx-format", "", "an nginx log_format string, given inline")
	f.StringVar(&o.apacheFormat, "apache-format", "", "an Apache LogFormat string, given inline")
	f.StringArrayVarP(&o.groups, "group", "m", nil, "group paths matching this regular expression as one endpoint (repeatable; overrides learning)")
	f.BoolVar(&o.queryKeys, "query-keys", false, "group query strings by their keys (/search?page=&q=) instead of dropping them")
	f.StringVar(&o.since, "since", "", "keep requests at or after this time (RFC 3339, or 2006-01-02 15:04:05)")
	f.StringVar(&o.until, "until", "", "keep requests before this time")
	f.IntVar(&o.threshold, "group-threshold", httpprof.DefaultGroupThreshold, "distinct values at one path position before it is grouped as :name")
	f.IntVar(&o.workers, "workers", 0, "parser goroutines (0 = one per core)")
	f.IntVar(&o.limit, "limit", 20, "show the top N rows (0 = all)")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.HTTPFormats, ", "))
	if withTable {
		f.StringVar(&o.sort, "sort", "total", "order endpoints by: "+strings.Join(httpprof.SortKeys, ", "))
		f.IntVar(&o.slowest, "slowest", httpprof.DefaultSlowest, "how many single slowest requests to list")
	}
}

func newHTTPCmd() *cobra.Command {
	var o httpOptions
	cmd := &cobra.Command{
		Use:   "http [flags] [ACCESSLOG ...]",
		Short: "Profile access logs by endpoint, grouping URLs by themselves",
		Long: `http reads nginx (combined or any log_format), LTSV, JSON-lines and Apache access logs
(plain or gzip; "-" is standard input) and profiles them by endpoint: method and path
pattern, with numbers, UUIDs, hashes, dates and high-cardinality path segments
(/profile/alice, /profile/bob → /profile/:name) grouped automatically, learned in the
same pass. The grouping that was learned is shown so you can check it; -m regexes
override it.`,
		Example: `  stacktune http /var/log/nginx/access.log
  stacktune http --nginx-conf /etc/nginx/nginx.conf --log-format timed access.log.1.gz access.log
  stacktune http -m '^/api/items/[^/]+$' --sort p99 --limit 10 access.log
  stacktune http diff before.log after.log`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHTTP(cmd.Context(), o, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.flags(cmd, true)
	var d httpOptions
	diff := &cobra.Command{
		Use:   "diff [flags] A B",
		Short: "Compare two access logs (or saved --format json profiles) endpoint by endpoint",
		Long: `diff profiles A and B with the same grouping and shows, per endpoint, the change in
calls, p99 and total time, so a tuning step can be judged page by page. A and B are
access logs or profiles saved with "stacktune http --format json".`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHTTPDiff(cmd.Context(), d, args[0], args[1], cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	d.flags(diff, false)
	cmd.AddCommand(diff)
	return cmd
}

func (o *httpOptions) profileOptions() (httpprof.Options, error) {
	groups, err := httpprof.CompileGroups(o.groups)
	if err != nil {
		return httpprof.Options{}, err
	}
	since, err := parseTimeFlag("since", o.since)
	if err != nil {
		return httpprof.Options{}, err
	}
	until, err := parseTimeFlag("until", o.until)
	if err != nil {
		return httpprof.Options{}, err
	}
	if o.threshold < 1 {
		return httpprof.Options{}, fmt.Errorf("--group-threshold %d: must be at least 1", o.threshold)
	}
	return httpprof.Options{GroupThreshold: o.threshold, Groups: groups, QueryKeys: o.queryKeys, Since: since, Until: until, Slowest: o.slowest}, nil
}

// parser picks the log parser from the flags; nil when the format is
// "auto", detected from the lines as they are read.
func (o *httpOptions) parser() (accesslog.Parser, error) {
	switch {
	case o.nginxFormat != "":
		return accesslog.NewNginx("inline", o.nginxFormat)
	case o.apacheFormat != "":
		return accesslog.NewApache(o.apacheFormat)
	case o.nginxConf != "":
		if o.logFormat == "auto" || o.logFormat == "" {
			return nil, errors.New("--nginx-conf needs --log-format NAME: the log_format to read from it")
		}
		f, err := accesslog.NginxFormatFromConfig(o.nginxConf, o.logFormat)
		if err != nil {
			return nil, err
		}
		return accesslog.NewNginx(o.logFormat, f)
	case o.logFormat == "auto" || o.logFormat == "":
		return nil, nil
	}
	f, ok := accesslog.Lookup(o.logFormat)
	if !ok {
		return nil, fmt.Errorf("unknown --log-format %q (without --nginx-conf): use auto, %s", o.logFormat, accesslog.NameList())
	}
	return f.New()
}

// nameTheFormat is what a log whose format was not detected needs.
var nameTheFormat = "name its format with --log-format (" + accesslog.NameList() +
	"), --nginx-conf FILE --log-format NAME (a log_format of that config), --nginx-format 'LOG_FORMAT' or --apache-format 'LOGFORMAT'"

// files is how the flags read logs.
func (o *httpOptions) files(stdin io.Reader) (httpprof.Files, error) {
	p, err := o.parser()
	if err != nil {
		return httpprof.Files{}, err
	}
	return httpprof.Files{Stdin: stdin, Parser: p, Workers: o.workers, NameTheFormat: nameTheFormat}, nil
}

// profile reads logs into a report.
func profile(ctx context.Context, o httpOptions, popt httpprof.Options, paths []string, stdin io.Reader, ropt httpprof.ReportOptions) (*httpprof.Report, error) {
	f, err := o.files(stdin)
	if err != nil {
		return nil, err
	}
	return f.Profile(ctx, paths, popt, ropt)
}

func runHTTP(ctx context.Context, o httpOptions, paths []string, stdin io.Reader, stdout, stderr io.Writer) error {
	ropt := httpprof.ReportOptions{Sort: o.sort, Limit: o.limit}
	if err := ropt.Validate(); err != nil {
		return err
	}
	if err := report.CheckFormat(o.format, report.HTTPFormats...); err != nil {
		return err
	}
	if len(paths) == 0 {
		return errors.New("nothing to read: give access-log files (- for standard input)")
	}
	popt, err := o.profileOptions()
	if err != nil {
		return err
	}
	rep, err := profile(ctx, o, popt, paths, stdin, ropt)
	if rep != nil {
		if werr := render(stderr, o.format, "lines", rep.Skipped.Count, rep.Skipped.Reasons, func() error { return report.HTTP(stdout, rep, o.format) }); werr != nil {
			return werr
		}
	}
	return err
}

func runHTTPDiff(ctx context.Context, o httpOptions, a, b string, stdin io.Reader, stdout io.Writer) error {
	if err := report.CheckFormat(o.format, report.HTTPFormats...); err != nil {
		return err
	}
	if a == "-" && b == "-" {
		return errors.New(`standard input ("-") given twice`)
	}
	popt, err := o.profileOptions()
	if err != nil {
		return err
	}
	f, err := o.files(stdin)
	if err != nil {
		return err
	}
	d, err := f.DiffFiles(ctx, a, b, popt)
	if err != nil {
		return err
	}
	return report.HTTPDiff(stdout, d, o.format, o.limit)
}
