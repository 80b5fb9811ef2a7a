package diagnose

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/pfs"
	"github.com/stacktune/stacktune/scenario"
)

// Stages the test hook is called at.
const (
	stageChanged = "changed" // the capture's variables are set
	stageBench   = "bench"   // the bench is running
	stageAnalyse = "analyse" // the run is over, the variables restored
)

// defaults checks opt and fills its defaults.
func (o *Options) defaults() error {
	if o.DSN == "" {
		return errors.New("no server: the DSN is required (the slow log or performance_schema is read there)")
	}
	switch o.Source {
	case "":
		o.Source = SourceSlowLog
	case SourceSlowLog, SourcePFS:
	default:
		return fmt.Errorf("unknown source %q: use %s or %s", o.Source, SourceSlowLog, SourcePFS)
	}
	b := &o.Bench
	if (b.URL == "") == (b.Scenario == "") {
		return errors.New("nothing to load: give a URL or a scenario file (not both)")
	}
	if b.Runs > 1 {
		return fmt.Errorf("%d runs: diagnose observes one run", b.Runs)
	}
	b.Runs = 1
	if b.Load.WarmUp > 0 {
		return errors.New("diagnose runs no warm-up: the capture would hold it (run stacktune bench first to warm the stack)")
	}
	if b.Load.Duration <= 0 {
		return errors.New("the run needs a duration: the capture and the snapshot are timed by it")
	}
	if b.Load.Connections == 0 {
		b.Load.Connections = loadgen.DefaultConnections
	}
	if err := loadgen.CheckConnections(b.Load.Connections); err != nil {
		return err
	}
	bound := b.Load.MaxDuration
	if bound == 0 {
		bound = loadgen.DefaultMaxDuration
	}
	if b.Load.Duration+time.Second > bound {
		return &benchrun.BoundError{Bound: bound, Runs: 1, Need: b.Load.Duration}
	}
	if err := o.CheckFiles(); err != nil {
		return err
	}
	if o.Classes <= 0 {
		o.Classes = DefaultClasses
	}
	if o.ProofRuns <= 0 {
		o.ProofRuns = DefaultProofRuns
	}
	if o.Bucket <= 0 {
		o.Bucket = DefaultBucket
	}
	return o.Requests.check()
}

// CheckFiles checks the files o names, as Run does before a server is
// asked anything (callers that open a server first call it before): the
// scenario loads (with Bench.BaseURL), and the logs and configurations
// that exist are regular files, opened without blocking (a FIFO is
// refused, not waited on; /dev/zero is refused, not read): the access
// logs, the slow log, and the files of the snapshot's flags. A missing one
// is left to the run (the server may create its slow log; the collectors
// record what they cannot read).
func (o *Options) CheckFiles() error {
	if b := o.Bench; b.Scenario != "" {
		sc, err := scenario.Load(b.Scenario)
		if err != nil {
			return err
		}
		if b.BaseURL != "" {
			if err := sc.SetBaseURL(b.BaseURL); err != nil {
				return err
			}
		}
	}
	check := func(what, path string) error {
		if path == "" {
			return nil
		}
		if _, err := os.Stat(path); err != nil {
			return nil
		}
		f, _, err := input.OpenFile(path)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return f.Close()
	}
	for _, l := range o.AccessLogs {
		if err := check("access log", l); err != nil {
			return err
		}
	}
	if o.Source != SourcePFS {
		if err := check("slow log", o.SlowLog); err != nil {
			return err
		}
	}
	for _, flag := range []string{"nginx-conf", "php-fpm-conf"} {
		if err := check("--"+flag, o.Collect.Value(flag)); err != nil {
			return err
		}
	}
	if q := o.Collect.Value("queries"); q != "pfs" {
		if err := check("--queries", q); err != nil {
			return err
		}
	}
	for _, l := range strings.Split(o.Collect.Value("http-log"), ",") {
		if err := check("--http-log", strings.TrimSpace(l)); err != nil {
			return err
		}
	}
	return nil
}

// run is one Run.
type run struct {
	opt    Options
	res    *Result
	admin  *sql.DB // one connection: the capture's SET GLOBALs and the processlist
	reader *sql.DB // collect and index advice, opened after the change
	srv    mysqlvar.Server
	vars   map[string]string // SHOW GLOBAL VARIABLES before anything changed
	cap    *capture
	watch  *connWatch
	slow   string // the slow log file
	// slowBefore is the slow log file before the capture changed anything.
	slowBefore slowFile
	logs       []accessLog
	proxy      *mysqlproxy.Proxy // the trace run's, when Run started one
}

// Run diagnoses the stack during one bench run: see the package
// documentation. When the run fails after it started, the result so far
// comes back with the error (the capture is restored either way: see
// Result.Capture); a failed restore is part of the error, with the
// statements to run by hand.
func Run(ctx context.Context, opt Options) (res *Result, err error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	r := &run{opt: opt, res: &Result{Source: opt.Source, Notes: []string{}, Hotspots: []Hotspot{}, Endpoints: []EndpointTime{},
		Classes: []ClassTime{}, NPlusOne: []nplusone.Pattern{}, Capture: Capture{Changed: []VarChange{}, Restored: true}}}
	defer r.close()
	// The deferred restore: on success it already ran right after the
	// bench; on a failure, a cancellation (Ctrl-C) or a panic it runs
	// here, on a context of its own.
	defer func() {
		if r.cap != nil && !r.cap.restored {
			leftovers, rerr := r.cap.restore(ctx)
			r.recordRestore(leftovers)
			err = errors.Join(err, rerr)
		}
	}()
	return r.res, r.run(ctx)
}

func (r *run) say(format string, a ...any) {
	if r.opt.Progress != nil {
		r.opt.Progress(fmt.Sprintf(format, a...))
	}
}

func (r *run) note(format string, a ...any) {
	r.res.Notes = append(r.res.Notes, fmt.Sprintf(format, a...))
}

func (r *run) hook(stage string) error {
	if r.opt.hook != nil {
		return r.opt.hook(stage)
	}
	return nil
}

func (r *run) close() {
	if r.proxy != nil {
		r.proxy.Close()
	}
	if r.reader != nil {
		r.reader.Close()
	}
	if r.admin != nil {
		r.admin.Close()
	}
}

func (r *run) run(ctx context.Context) error {
	if err := r.prepare(ctx); err != nil {
		return err
	}
	if r.opt.Source == SourceSlowLog {
		if err := r.change(ctx); err != nil {
			return err
		}
	} else {
		if _, err := pfs.Check(ctx, r.admin); err != nil {
			return err
		}
		var err error
		if r.reader, err = openOwn(ctx, r.opt.DSN, nil); err != nil {
			return err
		}
		r.res.Capture.How = "performance_schema statement digests read before and after the run (nothing changed on the server; every connection counts)"
	}
	if r.opt.BeforeBench != nil {
		if err := r.opt.BeforeBench(ctx); err != nil {
			return fmt.Errorf("before the bench: %w", err)
		}
	}
	snap, pfsDigest, err := r.bench(ctx)
	if err != nil {
		return err
	}
	if r.cap != nil {
		leftovers, rerr := r.cap.restore(ctx)
		r.recordRestore(leftovers)
		if rerr != nil {
			return rerr
		}
		r.say("restored %s", changedNames(r.res.Capture.Changed))
		r.afterRestore(ctx)
	}
	if err := r.hook(stageAnalyse); err != nil {
		return err
	}
	err = r.analyse(ctx, snap, pfsDigest)
	if err == nil {
		r.rewrites(ctx)
	}
	if r.cap != nil && r.cap.restored {
		r.trimSlowLog()
	}
	return err
}

// prepare checks what can be checked before anything changes and opens
// stacktune's connection.
func (r *run) prepare(ctx context.Context) error {
	var err error
	if r.admin, err = openOwn(ctx, r.opt.DSN, nil); err != nil {
		return err
	}
	// One connection, kept: its id is known (CONNECTION_ID) and left
	// out of the check of the app's connections.
	r.admin.SetMaxOpenConns(1)
	r.admin.SetMaxIdleConns(1)
	if r.srv, err = mysqlvar.Detect(ctx, r.admin); err != nil {
		return err
	}
	r.res.Server = r.srv.String()
	if r.vars, err = readGlobals(ctx, r.admin); err != nil {
		return err
	}
	if r.opt.Source == SourceSlowLog {
		if r.slow, err = slowLogPath(r.opt.SlowLog, r.vars); err != nil {
			return err
		}
		if err := checkSlowLogDir(r.slow); err != nil {
			return err
		}
		if r.slowBefore, err = statSlow(r.slow); err != nil {
			return notHere(r.slow, err)
		}
	}
	var notes []string
	format := r.opt.AccessLogFormat
	if format == nil {
		if format, err = collect.HTTPLogFormat(r.opt.Collect); err != nil {
			return err
		}
	}
	r.logs, notes, err = resolveAccessLogs(r.opt.AccessLogs, format, r.opt.Collect.Value("nginx-conf"))
	for _, n := range notes {
		r.note("%s", n)
	}
	if err != nil {
		return err
	}
	for _, l := range r.opt.AccessLogs {
		if _, err := os.Stat(l); err != nil {
			return fmt.Errorf("access log: %w", err)
		}
	}
	if len(r.logs) == 0 {
		r.note("no access log: give --access-log FILE or --nginx-conf to rank the endpoints and tell which endpoints the queries belong to")
	}
	return r.startProxy(ctx)
}

// change sets the capture's variables, checks the app's connections
// (after AppRestart when given) and checks the slow log is readable.
func (r *run) change(ctx context.Context) error {
	plan := capturePlan(r.vars)
	r.cap = &capture{db: r.admin, before: r.vars}
	var ownID int64
	if err := r.admin.QueryRowContext(ctx, qConnectionID).Scan(&ownID); err != nil {
		return err
	}
	r.watch = &connWatch{q: r.admin, own: map[int64]bool{ownID: true}, firstSeen: map[int64]time.Time{}}
	_, watchErr := r.watch.see(ctx)
	if len(plan) > 0 {
		r.say("setting %s (if stacktune is killed before it puts them back, run: %s)", planText(plan), strings.Join(restoreStatements(plan, r.vars), " "))
	}
	r.res.Capture.Restored = len(plan) == 0
	err := r.cap.set(ctx, plan)
	r.res.Capture.Changed = r.cap.changed
	if err != nil {
		return err
	}
	r.res.Capture.SlowLog = r.slow
	r.res.Capture.How = "slow log at long_query_time=0 for the run (" + r.slow + "), read from its size at the start of the run"
	if err := r.hook(stageChanged); err != nil {
		return err
	}
	// A connection opened now reads the new values: its id is the
	// boundary, and it is the pool stacktune reads the server with.
	extra := map[string]string{}
	if r.srv.IsMariaDB() {
		extra["slow_query_log"] = "0" // also out of log_queries_not_using_indexes
	}
	var oerr error
	if r.reader, oerr = openOwn(ctx, r.opt.DSN, extra); oerr != nil && len(extra) > 0 {
		r.reader, oerr = openOwn(ctx, r.opt.DSN, nil) // a session setting refused
	}
	if oerr != nil {
		return oerr
	}
	if err := r.reader.QueryRowContext(ctx, qConnectionID).Scan(&r.watch.boundary); err != nil {
		return err
	}
	r.res.ConnCheck = &ConnCheck{Boundary: r.watch.boundary, BeforeRestart: -1, Uncaptured: []Conn{}, Groups: []ConnGroup{}}
	if watchErr == nil {
		r.checkConns(ctx)
	} else {
		r.res.ConnCheck.Error = watchErr.Error()
	}
	if err := checkSlowLogDir(r.slow); err != nil {
		return err
	}
	if _, err := os.Stat(r.slow); err != nil {
		return notHere(r.slow, err)
	}
	return nil
}

// How long the check after AppRestart waits for the connections it closed
// to leave the processlist, and how often it looks.
const (
	restartSettle = 3 * time.Second
	restartPoll   = 200 * time.Millisecond
)

// checkConns lists the connections opened before the change, runs
// AppRestart when given and lists them again.
func (r *run) checkConns(ctx context.Context) {
	cc := r.res.ConnCheck
	list := func() []Conn {
		cs, err := r.watch.uncaptured(ctx)
		if err != nil {
			cc.Error = err.Error()
		}
		return cs
	}
	cs := list()
	if r.opt.AppRestart != nil {
		cc.BeforeRestart = len(cs)
		name := orText(r.opt.AppRestartName, "the app's restart")
		r.say("%d connection(s) opened before the change; running %s", len(cs), name)
		if err := r.opt.AppRestart(ctx); err != nil {
			cc.Error = fmt.Sprintf("%s failed: %v", name, err)
			r.note("%s failed: %v", name, err)
		} else {
			cc.Restart = name
		}
		// A closed connection leaves the processlist when the server has
		// read its end: give the restart's a moment.
		deadline := time.Now().Add(restartSettle)
		for cs = list(); len(cs) > 0 && time.Now().Before(deadline) && ctx.Err() == nil; cs = list() {
			time.Sleep(restartPoll)
		}
	}
	if cs == nil {
		cs = []Conn{}
	}
	cc.Uncaptured = cs
	cc.Groups = groupConns(cs)
	cc.Fix = connFix(len(cs), cc.Restart)
	if len(cs) > 0 {
		var who []string
		for _, g := range cc.Groups {
			who = append(who, fmt.Sprintf("%s@%s ×%d", g.User, g.Host, g.Count))
		}
		r.say("not captured: %s", strings.Join(who, ", "))
	}
}

// bench runs the bench and, while it runs, takes the snapshot (and the
// performance_schema readings around it).
func (r *run) bench(ctx context.Context) (*collect.Snapshot, *digest.Report, error) {
	var err error
	var pfsA *pfs.Snapshot
	if r.opt.Source == SourcePFS {
		if pfsA, err = pfs.Take(ctx, r.reader); err != nil {
			return nil, nil, err
		}
	} else if r.res.Capture.StartOffset, err = fileSize(r.slow); err != nil {
		return nil, nil, notHere(r.slow, err)
	}
	for i := range r.logs {
		if r.logs[i].start, err = fileSize(r.logs[i].path); err != nil {
			return nil, nil, fmt.Errorf("access log: %w", err)
		}
	}
	dur := r.opt.Bench.Load.Duration
	r.say("one %s bench run with %d connections while collecting", dur, r.opt.Bench.Load.Connections)
	bctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg    sync.WaitGroup
		sum   *benchrun.Summary
		berr  error
		start = time.Now()
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		sum, berr = benchrun.Run(bctx, r.opt.Bench)
	}()
	// Collect once the bench has connections open, over most of the run.
	warm := min(2*time.Second, dur/4)
	select {
	case <-time.After(warm):
	case <-bctx.Done():
	}
	if err := r.hook(stageBench); err != nil {
		cancel(err)
	}
	cfg := r.opt.Collect
	cfg.Values = maps.Clone(cfg.Values)
	if cfg.Values == nil {
		cfg.Values = map[string]string{}
	}
	if cfg.Values["interval"] == "" {
		cfg.Values["interval"] = max(dur-warm-time.Second, time.Second).String()
	}
	// The snapshot's rules that read the interval's requests and queries
	// (health checks, bulk INSERTs) see the run's: its access logs and
	// the captured slow log.
	if cfg.Values["http-log"] == "" && len(r.logs) > 0 {
		var paths []string
		for _, l := range r.logs {
			paths = append(paths, l.path)
		}
		cfg.Values["http-log"] = strings.Join(paths, ",")
	}
	if cfg.Values["queries"] == "" && r.opt.Source == SourceSlowLog && r.slow != "" {
		cfg.Values["queries"] = r.slow
	}
	if cfg.DB == nil && cfg.DBError == nil {
		cfg.DB = r.reader
	}
	snap, cerr := collect.Take(bctx, cfg)
	wg.Wait()
	end := time.Now()
	r.res.Bench = sum
	r.res.Started, r.res.Ended = start, end
	if sum != nil {
		r.res.WindowS = sum.ElapsedS
		r.res.Connections = sum.Connections
		r.res.CapacityS = round(sum.ElapsedS*float64(sum.Connections), 3)
	}
	if c := context.Cause(bctx); c != nil && ctx.Err() == nil {
		return nil, nil, c // the hook's failure
	}
	if berr != nil {
		return nil, nil, fmt.Errorf("the bench: %w", berr)
	}
	if cerr != nil {
		return nil, nil, fmt.Errorf("collecting: %w", cerr)
	}
	r.say("run: %.1f req/s, p99 %.0f ms", sum.RPS, sum.LatencyMS.P99)
	if !sum.Passed {
		r.note("the run did not pass its checks (%s): the diagnosis is of a failing run", strings.Join(sum.FailReasons, "; "))
	}
	for _, ce := range snap.Errors {
		r.say("collector %s: %s", ce.Collector, ce.Error)
	}
	var rep *digest.Report
	if pfsA != nil {
		pfsB, err := pfs.Take(ctx, r.reader)
		if err != nil {
			return nil, nil, err
		}
		if rep, err = pfs.Diff(pfsA, pfsB, pfs.Options{Report: digest.ReportOptions{Sort: digest.SortTotal, Limit: r.opt.Classes}}); err != nil {
			return nil, nil, err
		}
		indexadv.FillSamples(ctx, r.reader, rep.Classes)
	} else if r.res.Capture.EndOffset, err = fileSize(r.slow); err != nil {
		return nil, nil, notHere(r.slow, err)
	}
	return snap, rep, nil
}

// recordRestore copies the restore's outcome into the result.
func (r *run) recordRestore(leftovers []string) {
	if r.cap == nil {
		return
	}
	r.res.Capture.Changed = r.cap.changed
	r.res.Capture.Leftovers = leftovers
	r.res.Capture.Restored = (r.cap.restored || len(r.cap.changed) == 0) && len(leftovers) == 0
}

// afterRestore deals with the sessions opened during the capture: they
// keep long_query_time=0. With the slow log off again nothing is logged;
// with it on (as before the capture), they log every query until they
// reconnect, so AppRestart runs again.
func (r *run) afterRestore(ctx context.Context) {
	on, _ := mysqlvar.ParseBool(r.vars["slow_query_log"])
	if on && r.opt.AppRestart != nil {
		name := orText(r.opt.AppRestartName, "the app's restart")
		r.say("running %s again: the app's connections opened during the capture keep long_query_time=0", name)
		if err := r.opt.AppRestart(ctx); err != nil {
			r.note("%s after the restore failed (%v): the app's connections opened during the capture keep logging every query until they reconnect", name, err)
		}
	} else if on {
		r.note("the slow log was on before the capture and is again: the app's connections opened during the capture keep long_query_time=0, and log every query, until they reconnect (restart the app)")
	}
	if r.watch == nil {
		return
	}
	open, err := processlist(ctx, r.admin)
	if err != nil {
		return
	}
	for i := range r.res.ConnCheck.Uncaptured {
		_, r.res.ConnCheck.Uncaptured[i].OpenAtEnd = open[r.res.ConnCheck.Uncaptured[i].ID]
	}
}

// analyse digests the capture, profiles the access logs, attributes,
// audits, proves indexes and ranks.
func (r *run) analyse(ctx context.Context, snap *collect.Snapshot, rep *digest.Report) error {
	ropt := digest.ReportOptions{Sort: digest.SortTotal, Limit: r.opt.Classes}
	w := newWindow(r.res.Started, r.res.Ended, r.opt.Bucket)
	if r.opt.Source == SourceSlowLog {
		var err error
		c := r.res.Capture
		if rep, err = digestSection(ctx, r.slow, c.StartOffset, c.EndOffset, ropt); err != nil {
			return fmt.Errorf("digesting the slow log: %w", err)
		}
	}
	r.res.Digest = rep
	r.say("digest: %d queries in %d classes", rep.Overall.Events, rep.Overall.Classes)
	if len(r.logs) > 0 {
		h, reqs, notes, err := profileWindow(ctx, r.logs, w, r.res.Started, r.res.Ended, scenarioPatterns(r.opt.Bench.Scenario))
		for _, n := range notes {
			r.note("%s", n)
		}
		if err != nil {
			return err
		}
		r.res.HTTP = h
		if h != nil {
			r.res.AccessLogs = h.Overall.Inputs
			r.say("access log: %d requests in %d endpoints", h.Overall.Requests, h.Overall.Endpoints)
			if h.Overall.Timed == 0 {
				r.note("the access log has no request times: endpoints are ranked by requests (%s)", strings.Join(h.Notes, "; "))
			}
		} else {
			r.note("the access logs have no line of the run's window")
		}
		if reqs != nil && r.opt.Source == SourceSlowLog && len(rep.Classes) > 0 {
			c := r.res.Capture
			calls, err := classSeries(ctx, r.slow, c.StartOffset, c.EndOffset, w, rep.Classes)
			if err != nil {
				return fmt.Errorf("reading the slow log's times: %w", err)
			}
			r.res.Attribution = attribute(rep.Classes, calls, reqs, w)
		}
	}
	if err := r.requests(ctx); err != nil {
		return err
	}
	if r.opt.Source == SourcePFS && r.res.Requests == nil {
		r.note("performance_schema digests have no per-query times: which endpoints the classes belong to needs the slow log (--source slowlog) or a trace run (--trace)")
	}
	if r.res.Requests != nil && r.res.Attribution != nil {
		r.res.Attribution.Method = "fallback, not used while the per-request view is measured: " + r.res.Attribution.Method
	}
	r.res.Snapshot = snap
	audited := snap
	if r.cap != nil && !r.opt.AuditCaptureSettings && snap.MySQL != nil && len(r.cap.touched) > 0 {
		audited = asBefore(snap, r.cap.touched)
		r.note("the audit reads the slow-log variables as they were before the capture (and are again): %s", changedNames(r.res.Capture.Changed))
	}
	aopt := r.opt.Audit
	measured, how := auditNPlusOne(r.res.Requests)
	aopt.NPlusOne = append(slices.Clip(aopt.NPlusOne), measured...)
	if aopt.NPlusOneSource == "" {
		aopt.NPlusOneSource = how
	}
	r.res.Audit = advise.Audit(audited, aopt)
	r.say("audit: %d findings", len(r.res.Audit.Findings))
	classes := rep.Classes
	if r.opt.IndexClasses > 0 && len(classes) > r.opt.IndexClasses {
		classes = classes[:r.opt.IndexClasses]
	}
	dbName := r.opt.Database
	if dbName == "" {
		dbName, _ = dbconn.CurrentDatabase(ctx, r.reader)
	}
	r.say("proving indexes for %d classes on a throwaway copy", len(classes))
	// Every class of the run is the workload: its writes weigh each
	// index, its plans are evidence of use (a bench run is too short a
	// window for that alone: the servers' counters are read first).
	window := rep.Overall.IntervalSeconds
	if f, l := rep.Overall.FirstSeen, rep.Overall.LastSeen; window == 0 && f != nil && l != nil {
		window = l.Sub(*f).Seconds()
	}
	ix, err := indexadv.Run(ctx, indexadv.Options{Classes: classes, Workload: rep.Classes, WindowSeconds: window, Source: r.reader, Database: dbName,
		RowLimit: r.opt.RowLimit, Runs: r.opt.ProofRuns, NPlusOneCalls: r.nPlusOneCalls()})
	r.res.Indexes = ix
	if err != nil {
		r.res.IndexError = err.Error()
		r.note("index advice: %v", err)
		if ctx.Err() != nil {
			return err
		}
	}
	if ix != nil {
		r.say("indexes: %d proven, %d rejected", len(ix.Proposals), len(ix.Rejected))
	}
	r.res.rank()
	return nil
}

// asBefore is the snapshot with the variables the capture changed as they
// were before it.
func asBefore(s *collect.Snapshot, before map[string]string) *collect.Snapshot {
	c := *s
	m := *s.MySQL
	m.Variables = maps.Clone(s.MySQL.Variables)
	for name, v := range before {
		if _, ok := m.Variables[name]; ok {
			m.Variables[name] = v
		}
	}
	c.MySQL = &m
	return &c
}

// digestSection digests the part of a slow log from start to end.
func digestSection(ctx context.Context, path string, start, end int64, ropt digest.ReportOptions) (*digest.Report, error) {
	f, sec, rotated, err := sectionOf(path, start)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if rotated || end < start {
		return nil, fmt.Errorf("%s is smaller than at the start of the run (%d bytes): it was rotated or truncated during the run", path, start)
	}
	if end-start < sec.Size() {
		sec = io.NewSectionReader(f, start, end-start)
	}
	name := fmt.Sprintf("%s (bytes %d-%d, written during the run)", path, start, start+sec.Size())
	return digest.ReportOf(ctx, []input.Input{{Name: name, R: sec}}, []string{name}, digest.Options{}, ropt)
}

func planText(plan []setting) string {
	var parts []string
	for _, s := range plan {
		parts = append(parts, s.name+"="+s.value)
	}
	return strings.Join(parts, ", ")
}

func changedNames(cs []VarChange) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%s", c.Name, orText(c.Before, "''")))
	}
	if len(parts) == 0 {
		return "(nothing was changed)"
	}
	return strings.Join(parts, ", ")
}

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// nPlusOneCalls is the call count from which a class returning about one
// row per call is an N+1 pattern in this run: more calls than the run
// had requests (a class run once per page is not a loop over rows), and
// at least minNPlusOneCalls, so a short run still finds one.
func (r *run) nPlusOneCalls() int64 {
	n := int64(minNPlusOneCalls)
	if b := r.res.Bench; b != nil && b.Requests > n {
		n = b.Requests
	}
	return n
}

// minNPlusOneCalls is the least call count of an N+1 pattern.
const minNPlusOneCalls = 100

// scenarioPatterns are the positions of the scenario's paths that its
// templates fill ("/diary/entries/:name"): the endpoints as the scenario
// means them, which a short run's few distinct values could not teach
// the profile (nil without a scenario).
func scenarioPatterns(path string) []string {
	if path == "" {
		return nil
	}
	sc, err := scenario.Load(path)
	if err != nil {
		return nil
	}
	return httpprof.ShapePatterns(sc.PathShapes())
}
