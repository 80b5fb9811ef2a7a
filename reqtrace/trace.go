package reqtrace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/stacktune/stacktune/httpprof"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/scenario"
)

// DefaultTraceDuration is a trace run's length when the bench gives none.
const DefaultTraceDuration = 10 * time.Second

// TraceOptions configures a trace run.
type TraceOptions struct {
	// Bench is the run: a URL or a scenario, as `stacktune bench` takes
	// them, bounded as bench bounds it. Its Load.Connections is the
	// concurrency (default 1: requests one at a time, so that every
	// statement falls in exactly one request); Load.Duration defaults to
	// DefaultTraceDuration. Its requests go through the trace's HTTP
	// front, which forwards them to the URL's (or scenario's base URL's)
	// host.
	Bench benchrun.Options
	// The statements come from Tap (a mysqlproxy.Proxy's, which the
	// app's DSN points at) or, when Tap is nil, from performance_schema's
	// statement history read through PFS (no change to the app; the
	// server must run with performance_schema=ON).
	Tap *Tap
	PFS *sql.DB
	// ProxyListen, instead of Tap, has Trace start a proxy there for the
	// time of the trace run, in front of the server DSN names (its
	// network and address only: the app authenticates through it), and
	// run AppRestart (when given) once it listens, so that the app
	// connects through it.
	ProxyListen string
	DSN         string
	AppRestart  func(ctx context.Context) error
	// ProxyMaxConns is the started proxy's cap on its connections to the
	// server (mysqlproxy.Options.MaxConns; 0: its default,
	// mysqlproxy.MaxConnsFor sizes it from the server).
	ProxyMaxConns int
	// Options tune the attribution.
	Options
	// Sampler, when set, samples the app's CPU during the run (package
	// appcpu): every sample goes to the request in flight, and each
	// endpoint gets its app CPU, DB and other time per request, top
	// functions and stacks (Endpoint.Usage, Report.Profile).
	Sampler appcpu.Sampler
	// Progress receives one line per step; nil for none.
	Progress func(string)
}

// traceMethod says how a trace run ties statements to requests.
const traceMethod = "a trace run: the scenario's requests sent %s through stacktune's HTTP front, which records each request's start and end, " +
	"while %s records each statement with its connection and its start and end; a statement that starts within exactly one request's time belongs to it%s"

// Trace runs a trace run and attributes its statements to its requests
// (see the package documentation). The bench's summary comes back with
// the report.
func Trace(ctx context.Context, opt TraceOptions) (*Report, *benchrun.Summary, error) {
	say := func(format string, a ...any) {
		if opt.Progress != nil {
			opt.Progress(fmt.Sprintf(format, a...))
		}
	}
	b := opt.Bench
	if b.Load.Connections <= 0 {
		b.Load.Connections = 1
	}
	if b.Load.Duration <= 0 && b.Load.Requests <= 0 {
		b.Load.Duration = DefaultTraceDuration
	}
	if b.Runs > 1 {
		return nil, nil, fmt.Errorf("%d runs: a trace run is one run", b.Runs)
	}
	b.Runs, b.Load.WarmUp = 1, 0
	target, err := traceTarget(b)
	if err != nil {
		return nil, nil, err
	}
	f, err := startFront(target)
	if err != nil {
		return nil, nil, err
	}
	defer f.close()
	if err := throughFront(&b, f.URL()); err != nil {
		return nil, nil, err
	}

	var col *collector
	var source, recorder string
	var slack time.Duration
	var pfsH, stopped *pfsHistory
	var proxy *mysqlproxy.Proxy // the tap's, watched
	var proxyBefore mysqlproxy.Stats
	if opt.ProxyListen != "" {
		if opt.Tap != nil || opt.PFS != nil {
			return nil, nil, errors.New("a trace run has one source of statements: a proxy to start, a proxy's tap or performance_schema")
		}
		network, addr, err := mysqlproxy.Upstream(opt.DSN)
		if err != nil {
			return nil, nil, err
		}
		opt.Tap = NewTap()
		p, err := mysqlproxy.Start(ctx, mysqlproxy.Options{Listen: opt.ProxyListen, Network: network, Address: addr, OnStatement: opt.Tap.Statement,
			MaxConns: opt.ProxyMaxConns, IdleTimeout: mysqlproxy.DefaultIdleTimeout})
		if err != nil {
			return nil, nil, err
		}
		defer p.Close()
		opt.Tap.Watch(p)
		say("MySQL proxy listening on %s, forwarding to %s (at most %d connections to it): the app's DSN must point at it", p.Addr(), addr, p.Options().MaxConns)
		if opt.AppRestart != nil {
			if err := opt.AppRestart(ctx); err != nil {
				return nil, nil, fmt.Errorf("restarting the app: %w", err)
			}
		}
	}
	switch {
	case opt.Tap != nil:
		if proxy = opt.Tap.watched(); proxy != nil {
			proxyBefore = proxy.Stats()
		}
		col, source, recorder = opt.Tap.start(), SourceProxy, "stacktune's MySQL proxy (the app's DSN points at it)"
		defer func() {
			if opt.Tap.on.Load() {
				opt.Tap.stop()
			}
		}()
	case opt.PFS != nil:
		col = newCollector()
		if pfsH, err = startPFS(ctx, opt.PFS, col.statement, func(l string) { say("%s", l) }); err != nil {
			return nil, nil, err
		}
		defer func() {
			if pfsH != nil {
				pfsH.restore()
			}
		}()
		source, recorder, slack = SourcePFSHistory, "performance_schema's statement history (events_statements_history_long, read every 50 ms)", pfsH.slack
	default:
		return nil, nil, errors.New("a trace run needs a source of statements: the proxy's tap, or performance_schema")
	}
	say("trace run: %d connection(s), %s, through %s to %s", b.Load.Connections, orBound(b.Load), f.URL(), target)
	if opt.Sampler != nil {
		if err := opt.Sampler.Start(ctx); err != nil {
			return nil, nil, fmt.Errorf("the app's CPU profile (%s): %w", opt.Sampler.Name(), err)
		}
		say("sampling the app's CPU with %s", opt.Sampler.Name())
	}
	sum, berr := benchrun.Run(ctx, b)
	var capture *appcpu.Capture
	var cerr error
	if opt.Sampler != nil {
		capture, cerr = opt.Sampler.Stop(context.WithoutCancel(ctx))
	}
	if opt.Tap != nil {
		opt.Tap.stop()
	} else {
		perr := pfsH.stop(ctx)
		stopped = pfsH // its notes are the report's (what it could not see)
		pfsH = nil     // stopped: nothing left to restore
		if perr != nil && berr == nil {
			berr = perr
		}
	}
	if berr != nil {
		return nil, sum, fmt.Errorf("the trace run: %w", berr)
	}
	reqs, droppedReqs := f.requests()
	col.mu.Lock()
	sts, classes, droppedSts, cut := col.sts, col.classes, col.dropped, col.cut
	col.mu.Unlock()

	// The scenario's own paths say which segments are values (a dozen
	// accounts in a short trace run are too few to learn from).
	var values []string
	if b.Scenario != "" {
		if sc, err := scenario.Load(b.Scenario); err == nil {
			values = httpprof.ShapePatterns(sc.PathShapes())
		}
	}
	if err := nameEndpoints(reqs, opt.Collapse, values); err != nil {
		return nil, sum, err
	}
	bl := newBuilder(opt.Options)
	bl.classes = classes
	conc := "one at a time"
	extra := ""
	if b.Load.Connections > 1 {
		conc = fmt.Sprintf("%d at a time", b.Load.Connections)
		extra = "; within several requests' times, it goes to the request its connection served last, if that is one of them, else it is ambiguous"
	}
	if slack > 0 {
		extra += fmt.Sprintf("; the server's timer is tied to this host's clock within %s", slack.Round(time.Microsecond))
	}
	bl.join(reqs, sts, slack)
	bl.skip(ReasonRequestsPastTraceBound, droppedReqs)
	bl.skip(ReasonStmtsPastTraceBound, droppedSts)
	bl.skip(ReasonTextCut, cut)
	if stopped != nil {
		stopped.notes(bl)
	}
	if proxy != nil {
		proxyNotes(bl, proxy.Options(), proxyBefore, proxy.Stats())
	}
	rep := bl.report(source, fmt.Sprintf(traceMethod, conc, recorder, extra))
	rep.Concurrency = b.Load.Connections
	if len(sts) == 0 {
		rep.Notes = append(rep.Notes, "no statement was recorded during the trace run: "+noStatementsHint(opt.Tap != nil))
	}
	if rep.Statements > 0 && rep.Attributed == 0 {
		rep.Notes = append(rep.Notes, "no statement fell within a request's time: are the statements the app's (its DSN pointed at the proxy) and is this host's clock the server's?")
	}
	if opt.Sampler != nil {
		if cerr != nil {
			return rep, sum, fmt.Errorf("the app's CPU profile (%s): %w", opt.Sampler.Name(), cerr)
		}
		attachProfile(rep, reqs, capture)
	}
	return rep, sum, nil
}

func noStatementsHint(proxy bool) string {
	if proxy {
		return "is the app's DSN pointed at the proxy, and did the app reconnect after it started?"
	}
	return "are the statement instruments on (performance_schema.setup_instruments 'statement/%')?"
}

// orBound says how the run is bounded.
func orBound(l loadgen.Options) string {
	switch {
	case l.Duration > 0 && l.Requests > 0:
		return fmt.Sprintf("%s or %d requests", l.Duration, l.Requests)
	case l.Requests > 0:
		return fmt.Sprintf("%d requests", l.Requests)
	}
	return l.Duration.String()
}

// traceTarget is the scheme and host the bench's requests go to.
func traceTarget(b benchrun.Options) (string, error) {
	raw := b.URL
	if b.Scenario != "" {
		raw = b.BaseURL
		if raw == "" {
			sc, err := scenario.Load(b.Scenario)
			if err != nil {
				return "", err
			}
			raw = sc.BaseURL
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the trace run's URL %q: want http://host[:port]/...", loadgen.MaskURL(raw))
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("the trace run's URL %q: only http is traced (the front records plain HTTP)", loadgen.MaskURL(raw))
	}
	return u.Scheme + "://" + u.Host, nil
}

// throughFront points the bench at the front, keeping paths.
func throughFront(b *benchrun.Options, front string) error {
	if b.Scenario != "" {
		path := ""
		if b.BaseURL != "" {
			u, _ := url.Parse(b.BaseURL)
			path = strings.TrimSuffix(u.Path, "/")
		} else if sc, err := scenario.Load(b.Scenario); err == nil {
			u, _ := url.Parse(sc.BaseURL)
			path = strings.TrimSuffix(u.Path, "/")
		}
		b.BaseURL = front + path
		return nil
	}
	u, err := url.Parse(b.URL)
	if err != nil {
		return err
	}
	fu, _ := url.Parse(front)
	u.Host = fu.Host
	b.URL = u.String()
	return nil
}

// Tags groups the statements performance_schema's history records during
// fn (a run the caller makes: a bench at any concurrency) by their tags.
// It turns on the consumers it needs for the time of fn and off again.
func Tags(ctx context.Context, db *sql.DB, opt Options, say func(string), fn func(ctx context.Context) error) (*Report, error) {
	if say == nil {
		say = func(string) {}
	}
	b := newBuilder(opt)
	t := newTagSink(b)
	h, err := startPFS(ctx, db, t.statement, say)
	if err != nil {
		return nil, err
	}
	ferr := fn(ctx)
	serr := h.stop(ctx)
	t.close()
	h.notes(b)
	rep := b.report(SourcePFSTags, tagMethod)
	return rep, errors.Join(ferr, serr)
}

// SlowLogSection is FromSlowLog of the part of a slow log between two
// offsets (a run's capture).
func SlowLogSection(ctx context.Context, r io.ReaderAt, name string, start, end int64, opt Options) (*Report, error) {
	return FromSlowLog(ctx, []input.Input{{Name: name, R: io.NewSectionReader(r, start, end-start)}}, opt)
}

// proxyNotes counts what the proxy refused or closed during the trace run
// (after less before) among the report's skipped, and says what to do
// when it turned the app's connections away.
func proxyNotes(bl *builder, o mysqlproxy.Options, before, after mysqlproxy.Stats) {
	overCap := after.OverCap - before.OverCap
	bl.skip(ReasonProxyOverCap, overCap)
	bl.skip(ReasonProxyRefused, after.Refused-before.Refused-overCap)
	if n := after.HandshakeTimeouts - before.HandshakeTimeouts; n > 0 {
		bl.skip(ReasonProxyHandshakeTimeout, n)
		bl.note("the MySQL proxy's handshake timeout: %s", o.HandshakeTimeout)
	}
	if n := after.IdleClosed - before.IdleClosed; o.IdleTimeout > 0 && n > 0 {
		bl.skip(ReasonProxyIdleTimeout, n)
		bl.note("the MySQL proxy's idle timeout: %s", o.IdleTimeout)
	}
	if overCap > 0 {
		bl.note("the MySQL proxy turned away %d of the app's connections past its cap of %d (error 1040): the statements those requests would have run are missing; "+
			"lower the app's pool, or give the proxy more connections if the server has them free", overCap, o.MaxConns)
	}
}

// attachProfile gives the capture's samples to the trace run's requests
// (those its end cut left out) and puts each endpoint's usage beside its
// SQL.
func attachProfile(rep *Report, reqs []Request, c *appcpu.Capture) {
	known := make(map[string]bool, len(rep.Endpoints))
	db := make(map[string]appcpu.EndpointTimes, len(rep.Endpoints))
	for _, e := range rep.Endpoints {
		known[e.Endpoint] = true
		db[e.Endpoint] = appcpu.EndpointTimes{DBMsPerRequest: e.DBTimeS * 1000}
	}
	in := make([]appcpu.Request, 0, len(reqs))
	for _, r := range reqs {
		if r.Cut {
			continue
		}
		ep := r.Endpoint
		if !known[ep] {
			ep = OtherEndpoint
		}
		in = append(in, appcpu.Request{Endpoint: ep, Trace: r.Trace, Start: r.Start, End: r.End})
	}
	p := appcpu.Attribute(c, in, db)
	byName := make(map[string]*appcpu.Usage, len(p.Endpoints))
	for i := range p.Endpoints {
		byName[p.Endpoints[i].Endpoint] = &p.Endpoints[i]
	}
	for i := range rep.Endpoints {
		if u := byName[rep.Endpoints[i].Endpoint]; u != nil {
			rep.Endpoints[i].Usage = u
		}
	}
	p.Endpoints = nil
	rep.Profile = p
}
