package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/scenario"
)

// endpointsOptions are the flags of `stacktune endpoints`.
type endpointsOptions struct {
	conn       dsnFlags
	slowLogs   []string
	accessLogs []string
	trace      string
	listen     string
	pfsTags    bool
	appRestart string
	load       loadgen.Options
	scenario   string
	baseURL    string
	seed       uint64
	nPlusOne   int
	dropLast   int
	format     string
	output     string
	profile    profileFlags
	// accessLogFormat is the access logs' format ("auto": detected).
	accessLogFormat string
}

func newEndpointsCmd() *cobra.Command {
	var o endpointsOptions
	cmd := &cobra.Command{
		Use:   "endpoints (--slow-log FILE... | --trace proxy|pfs ... | --pfs-tags ...) [--scenario FILE | URL]",
		Short: "Which endpoint runs which SQL: statements per request, N+1 by calls per request, without an APM agent",
		Long: `endpoints ties every SQL statement to the HTTP request that ran it and reports, per
endpoint, its requests, the queries per request by class (mean and max), the DB time per
request and its share of the request's time, the rows examined per request, and the N+1
patterns: a statement run --n-plus-one times or more in one request, whatever the traffic,
with the rewrite (one IN (...) query, a join, a set loaded once) and what it costs. Per
statement class, the endpoints that run it. Three ways, none changing the app's code:

  --slow-log FILE...   the app tags its statements (sqlcommenter: traceparent, route;
                       marginalia / Rails query log tags: request_id, controller, action):
                       statements are grouped by request at any concurrency, from slow logs
                       captured at long_query_time=0 (files, gzip, - for stdin). With
                       --access-log, endpoints named by a route get their request times.
  --trace proxy        a trace run: the scenario's requests (or the URL's) one at a time
                       (-c for a small known concurrency) through stacktune's HTTP front,
                       while stacktune's MySQL proxy, listening on --listen for the time of
                       the run, records every statement with its connection and exact time.
                       The app's DSN must point at --listen (--app-restart makes it
                       reconnect). TLS and compression are refused through the proxy.
  --trace pfs          the same trace run, with the statements read from
                       performance_schema.events_statements_history_long (the server runs
                       with performance_schema=ON; nothing changes in the app; the consumers
                       it needs are turned on for the run and off again). MariaDB records no
                       text for prepared statements: the proxy sees them.
  --pfs-tags           the bench at any concurrency while the tags are read from
                       performance_schema's history.

Classes are pt-query-digest's, merged where it splits one statement by spacing ("id = ?"
and "id=?", a trailing tag): each class lists the digest IDs it holds.`,
		Example: `  stacktune endpoints --slow-log /var/log/mysql/slow.log --access-log /var/log/nginx/access.log
  stacktune endpoints --trace proxy --listen 127.0.0.1:3307 --dsn-env DSN --app-restart 'systemctl restart app' --scenario s.yaml -d 20s
  stacktune endpoints --trace pfs --defaults-file ~/.my.cnf http://127.0.0.1/ -d 10s --format json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			url := ""
			if len(args) == 1 {
				url = args[0]
			}
			return benchrun.MaskError(runEndpoints(cmd.Context(), o, url, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	f := cmd.Flags()
	o.conn.add(f, "the server (--trace, --pfs-tags)")
	f.StringArrayVar(&o.slowLogs, "slow-log", nil, "slow log to read the tags of (repeatable; - for standard input)")
	f.StringArrayVar(&o.accessLogs, "access-log", nil, "with --slow-log: the access log of the same window, for the endpoints' request times (repeatable)")
	f.StringVar(&o.accessLogFormat, "access-log-format", "auto", "the access logs' format: auto (detected from their lines), "+accesslog.NameList())
	f.StringVar(&o.trace, "trace", "", "a trace run: proxy (stacktune's MySQL proxy on --listen) or pfs (performance_schema's statement history)")
	f.StringVar(&o.listen, "listen", "", "with --trace proxy: where the proxy listens for the app (host:port or unix:/path); the app's DSN points there")
	f.BoolVar(&o.pfsTags, "pfs-tags", false, "run the bench and read the statements' tags from performance_schema's history")
	f.StringVar(&o.appRestart, "app-restart", "", "with --trace proxy: command run once the proxy listens, so the app connects through it (run without a shell)")
	f.IntVarP(&o.load.Connections, "connections", "c", 0, "requests in flight at once (default 1 for --trace, 10 for --pfs-tags)")
	f.DurationVarP(&o.load.Duration, "duration", "d", reqtrace.DefaultTraceDuration, "the run's duration")
	f.Int64VarP(&o.load.Requests, "requests", "n", 0, "stop after this many requests (0 = bounded by --duration)")
	f.BoolVar(&o.load.KeepAlive, "keepalive", true, "reuse connections")
	f.DurationVar(&o.load.Timeout, "timeout", loadgen.DefaultTimeout, "per-request timeout")
	f.StringVar(&o.scenario, "scenario", "", "scenario file (YAML or TOML) instead of a URL")
	f.StringVar(&o.baseURL, "base-url", "", "with --scenario: override its base_url")
	f.Uint64Var(&o.seed, "seed", 1, "seed for scenario choices")
	f.IntVar(&o.nPlusOne, "n-plus-one", reqtrace.DefaultNPlusOne, "N: a statement run N times or more in one request is an N+1")
	f.IntVar(&o.dropLast, "drop-last", 0, "with --slow-log: leave out the last N requests of the log (those a run's end cut: give its connections)")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.RequestsFormats, ", "))
	f.StringVarP(&o.output, "output", "o", "", "write the report to this file instead of standard output")
	o.profile.add(f)
	cmd.AddCommand(newEndpointsDiffCmd())
	return cmd
}

func runEndpoints(ctx context.Context, o endpointsOptions, url string, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := report.CheckFormat(o.format, report.RequestsFormats...); err != nil {
		return err
	}
	modes := 0
	for _, on := range []bool{len(o.slowLogs) > 0, o.trace != "", o.pfsTags} {
		if on {
			modes++
		}
	}
	if modes != 1 {
		return errors.New("give one of --slow-log FILE, --trace proxy|pfs or --pfs-tags")
	}
	if o.nPlusOne < 1 {
		return fmt.Errorf("--n-plus-one %d: give at least 1", o.nPlusOne)
	}
	say := func(l string) { fmt.Fprintln(stderr, "stacktune endpoints:", report.Clean(l)) }
	ropt := reqtrace.Options{NPlusOne: o.nPlusOne, DropLast: o.dropLast}
	var rep *reqtrace.Report
	var err error
	if o.profile.on && o.trace == "" {
		return errors.New("--profile samples the app during a trace run: give --trace proxy or pfs")
	}
	if len(o.slowLogs) > 0 {
		if url != "" || o.scenario != "" || o.listen != "" || o.appRestart != "" || o.conn.asked() {
			return errors.New("--slow-log reads logs: it takes no URL, scenario, server or proxy")
		}
		rep, err = endpointsFromLogs(ctx, o, ropt, stdin)
	} else {
		rep, err = endpointsRun(ctx, o, url, ropt, say, stderr)
	}
	if rep == nil {
		return err
	}
	if ferr := o.profile.writeFlameGraphs(rep, o.output, stderr); ferr != nil {
		err = errors.Join(err, ferr)
	}
	render := func(w io.Writer) error { return report.Requests(w, rep, o.format) }
	if o.output == "" || o.output == "-" {
		return errors.Join(err, render(stdout))
	}
	return errors.Join(err, writeReportFile(o.output, "endpoints", stderr, render))
}

// endpointsFromLogs groups slow logs' statements by their tags, with the
// access logs' request times.
func endpointsFromLogs(ctx context.Context, o endpointsOptions, ropt reqtrace.Options, stdin io.Reader) (*reqtrace.Report, error) {
	if len(o.accessLogs) > 0 {
		var p accesslog.Parser
		if o.accessLogFormat != "auto" && o.accessLogFormat != "" {
			f, ok := accesslog.Lookup(o.accessLogFormat)
			if !ok {
				return nil, fmt.Errorf("unknown --access-log-format %q: use auto, %s", o.accessLogFormat, accesslog.NameList())
			}
			var err error
			if p, err = f.New(); err != nil {
				return nil, err
			}
		}
		files := httpprof.Files{Stdin: stdin, Parser: p, NameTheFormat: "name its format with --access-log-format (" + accesslog.NameList() + ")"}
		h, err := files.Profile(ctx, o.accessLogs, httpprof.Options{}, httpprof.ReportOptions{Sort: "total"})
		if err != nil {
			return nil, fmt.Errorf("the access log: %w", err)
		}
		ropt.RequestTimes = reqtrace.RequestTimesOf(h)
	}
	inputs, closeAll, err := input.OpenAll(o.slowLogs, stdin)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	rep, err := reqtrace.FromSlowLog(ctx, inputs, ropt)
	if err != nil && rep != nil {
		rep.Notes = append(rep.Notes, "incomplete: "+err.Error())
	}
	return rep, err
}

// endpointsRun makes a trace run, or a bench read by tags.
func endpointsRun(ctx context.Context, o endpointsOptions, url string, ropt reqtrace.Options, say func(string), stderr io.Writer) (*reqtrace.Report, error) {
	switch {
	case url != "" && o.scenario != "":
		return nil, errors.New("give either a URL or --scenario, not both")
	case url == "" && o.scenario == "":
		return nil, errors.New("nothing to load: give a URL or --scenario FILE")
	case !o.conn.asked():
		return nil, errors.New("--dsn (or --dsn-env, or --defaults-file) is required: the statements are recorded on the server's side")
	}
	if o.scenario != "" {
		// Checked before the server is asked anything: a bad file fails
		// first.
		if _, err := scenario.Load(o.scenario); err != nil {
			return nil, err
		}
	}
	dsn, err := o.conn.resolve(stderr)
	if err != nil {
		return nil, err
	}
	b := benchrun.Options{URL: url, Scenario: o.scenario, BaseURL: o.baseURL, Load: o.load, Seed: o.seed, Label: "endpoints"}
	sampler, err := o.profile.sampler(url, o.scenario, o.baseURL, say)
	if err != nil {
		return nil, err
	}
	if err := loadgen.CheckConnections(max(b.Load.Connections, 1)); err != nil {
		return nil, connectionsError(err)
	}
	open := func() (*sql.DB, error) { return dbconn.Open(ctx, dsn, 0) }
	switch {
	case o.pfsTags:
		if o.trace != "" || o.listen != "" || o.appRestart != "" {
			return nil, errors.New("--pfs-tags runs the bench as it is: no trace run, proxy or restart")
		}
		db, err := open()
		if err != nil {
			return nil, err
		}
		defer db.Close()
		if b.Load.Connections == 0 {
			b.Load.Connections = loadgen.DefaultConnections
		}
		b.Runs = 1
		ropt.DropLast = b.Load.Connections
		return reqtrace.Tags(ctx, db, ropt, say, func(ctx context.Context) error {
			sum, err := benchrun.Run(ctx, b)
			if err == nil {
				say(fmt.Sprintf("run: %.1f req/s, p99 %.0f ms", sum.RPS, sum.LatencyMS.P99))
			}
			return err
		})
	case o.trace == diagnose.TraceProxy:
		if o.listen == "" {
			return nil, errors.New("--trace proxy needs --listen: where the proxy listens for the app (its DSN points there)")
		}
		topt := reqtrace.TraceOptions{Bench: b, Options: ropt, ProxyListen: o.listen, DSN: dsn, Sampler: sampler, Progress: say}
		// The proxy's connections leave the server's other clients room:
		// sized from what the server has free when the DSN can ask it,
		// else the proxy's default.
		if db, err := open(); err != nil {
			say(fmt.Sprintf("the proxy keeps to its default of %d connections to the server: %v", mysqlproxy.DefaultMaxConns, err))
		} else {
			if topt.ProxyMaxConns, err = mysqlproxy.MaxConnsFor(ctx, db); err != nil {
				say(fmt.Sprintf("the proxy keeps to its default of %d connections to the server: %v", mysqlproxy.DefaultMaxConns, err))
			}
			db.Close()
		}
		if o.appRestart != "" {
			if topt.AppRestart, err = diagnose.Command(o.appRestart); err != nil {
				return nil, fmt.Errorf("--app-restart: %w", err)
			}
		}
		rep, _, err := reqtrace.Trace(ctx, topt)
		return rep, err
	case o.trace == diagnose.TracePFS:
		if o.listen != "" || o.appRestart != "" {
			return nil, errors.New("--listen and --app-restart are for --trace proxy")
		}
		db, err := open()
		if err != nil {
			return nil, err
		}
		defer db.Close()
		rep, _, err := reqtrace.Trace(ctx, reqtrace.TraceOptions{Bench: b, Options: ropt, PFS: db, Sampler: sampler, Progress: say})
		return rep, err
	}
	return nil, fmt.Errorf("--trace %q: use proxy or pfs", o.trace)
}
