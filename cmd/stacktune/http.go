package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/input"
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
	f.StringVar(&o.logFormat, "log-format", "auto", "log format: auto, combined, common, ltsv, json, apache-common, apache-combined, "+
		"apache-combined-d, or with --nginx-conf the name of a log_format in that config")
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

// parseTimeFlag reads --since/--until.
func parseTimeFlag(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--%s %q: use RFC 3339 (2024-05-01T10:00:00Z) or 2024-05-01 10:00:00", name, v)
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

// parser picks the log parser from the flags, or from the first lines of
// the first input when the format is "auto".
func (o *httpOptions) parser(sample []byte) (accesslog.Parser, error) {
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
	}
	switch o.logFormat {
	case "combined":
		return accesslog.NewNginx("combined", accesslog.Combined)
	case "common":
		return accesslog.NewNginx("common", accesslog.Common)
	case "ltsv":
		return accesslog.NewLTSV(), nil
	case "json":
		return accesslog.NewJSON(), nil
	case "apache-common":
		return accesslog.NewApache(accesslog.ApacheCommon)
	case "apache-combined":
		return accesslog.NewApache(accesslog.ApacheCombined)
	case "apache-combined-d":
		return accesslog.NewApache(accesslog.ApacheCombinedD)
	case "auto", "":
		var lines [][]byte
		for _, l := range bytes.SplitN(sample, []byte("\n"), 21) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines = append(lines, l)
			}
		}
		if len(lines) > 20 {
			lines = lines[:20] // the 21st piece may be cut
		}
		return accesslog.Detect(lines)
	}
	return nil, fmt.Errorf("unknown --log-format %q (without --nginx-conf): use auto, combined, common, ltsv, json, apache-common, apache-combined or apache-combined-d", o.logFormat)
}

// openLogs opens the paths and peeks at the first one for format
// detection.
func openLogs(paths []string, stdin io.Reader) ([]input.Input, []byte, func(), error) {
	var inputs []input.Input
	var closers []io.Closer
	closeAll := func() {
		for _, c := range closers {
			c.Close()
		}
	}
	stdinUsed := false
	var sample []byte
	for i, path := range paths {
		if path == "-" {
			if stdinUsed {
				closeAll()
				return nil, nil, nil, errors.New(`standard input ("-") given twice`)
			}
			stdinUsed = true
		}
		in, c, err := input.Open(path, stdin)
		if err != nil {
			closeAll()
			return nil, nil, nil, err
		}
		closers = append(closers, c)
		if i == 0 {
			br := bufio.NewReaderSize(in.R, 64<<10)
			sample, _ = br.Peek(64 << 10)
			sample = bytes.Clone(sample)
			in.R = br
		}
		inputs = append(inputs, in)
	}
	return inputs, sample, closeAll, nil
}

// profile reads logs into a report.
func profile(ctx context.Context, o httpOptions, popt httpprof.Options, paths []string, stdin io.Reader, ropt httpprof.ReportOptions) (*httpprof.Report, error) {
	inputs, sample, closeAll, err := openLogs(paths, stdin)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	p, err := o.parser(sample)
	if err != nil {
		return nil, err
	}
	res, readErr := httpprof.FromLogs(ctx, inputs, p, httpprof.LogOptions{Workers: o.workers, Profile: popt})
	rep, err := res.Report(p, ropt)
	if err != nil {
		return nil, err
	}
	rep.Overall.Inputs = paths
	if readErr != nil {
		rep.Notes = append(rep.Notes, "incomplete: "+readErr.Error())
	}
	return rep, readErr
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

// savedProfile reads a profile saved with --format json, or returns nil
// when path is a log. A saved profile is one indented JSON document, so its
// first line is a lone "{"; a JSON-lines log's first line is a whole object.
func savedProfile(path string, stdin io.Reader) (*httpprof.Report, error) {
	if path == "-" {
		return nil, nil
	}
	in, c, err := input.Open(path, stdin)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	br := bufio.NewReader(in.R)
	first, _ := br.Peek(2)
	if !bytes.Equal(bytes.TrimRight(first, "\r"), []byte("{\n")) && !bytes.Equal(first, []byte("{\r")) {
		return nil, nil
	}
	var r httpprof.Report
	if err := json.NewDecoder(br).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s looks like a saved profile but does not decode: %w", path, err)
	}
	return &r, nil
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
	ra, err := savedProfile(a, stdin)
	if err != nil {
		return err
	}
	rb, err := savedProfile(b, stdin)
	if err != nil {
		return err
	}
	all := httpprof.ReportOptions{}
	if ra == nil {
		if ra, err = profile(ctx, o, popt, []string{a}, stdin, all); err != nil {
			return err
		}
	}
	if rb == nil {
		// Group B as A was grouped, so rows match.
		pb := popt
		pb.Collapse = ra.LearnedPatterns()
		if rb, err = profile(ctx, o, pb, []string{b}, stdin, all); err != nil {
			return err
		}
		// If B learned groups A did not, and A is a log, profile A again
		// with them.
		if extra := newPatterns(ra.LearnedPatterns(), rb.LearnedPatterns()); len(extra) > 0 && a != "-" {
			if saved, _ := savedProfile(a, stdin); saved == nil {
				pa := popt
				pa.Collapse = append(ra.LearnedPatterns(), extra...)
				if ra, err = profile(ctx, o, pa, []string{a}, stdin, all); err != nil {
					return err
				}
			}
		}
	}
	d := httpprof.Diff(ra, rb)
	return report.HTTPDiff(stdout, d, o.format, o.limit)
}

func newPatterns(have, got []string) []string {
	seen := map[string]bool{}
	for _, p := range have {
		seen[p] = true
	}
	var out []string
	for _, p := range got {
		if !seen[p] {
			out = append(out, p)
		}
	}
	return out
}
