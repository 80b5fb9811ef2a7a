package diagnose

import (
	"context"
	"errors"
	"fmt"
	"github.com/stacktune/stacktune/appcpu"
	"sort"
	"strings"
	"time"

	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/sqltag"
)

// Trace runs of RequestOptions.Trace.
const (
	// TraceProxy records the statements with stacktune's MySQL proxy,
	// which the app's DSN points at.
	TraceProxy = "proxy"
	// TracePFS reads them from performance_schema's statement history.
	TracePFS = "pfs"
	// TraceAuto picks the way per server, with what the user already
	// gave: the captured statements' tags when they name their requests
	// (no trace run); the proxy when one is set up; performance_schema's
	// history when it is on (its consumers switched on for the run and
	// back); when it is off and PFSRestart is given, a restart with it on
	// for the trace run only, and back after; else none, and the classes'
	// endpoints are the per-second estimate, named so.
	TraceAuto = "auto"
)

// Mechanism is how the per-request view was made (PerRequest.Mechanism),
// as a stable code (docs/json.md).
type Mechanism string

// The mechanisms.
const (
	MechanismTags       Mechanism = "tags"
	MechanismProxy      Mechanism = "proxy"
	MechanismPFS        Mechanism = "performance_schema"
	MechanismPFSRestart Mechanism = "performance_schema_restart"
	MechanismEstimate   Mechanism = "estimate"
)

// Codes lists the mechanisms.
func (Mechanism) Codes() []string {
	return []string{string(MechanismTags), string(MechanismProxy), string(MechanismPFS), string(MechanismPFSRestart), string(MechanismEstimate)}
}

// Reason is why the mechanism was chosen (PerRequest.Reason), as a
// stable code (docs/json.md).
type Reason string

// The reasons.
const (
	ReasonAsked       Reason = "asked"              // the user named the trace run (or none)
	ReasonTagged      Reason = "tagged"             // the statements carry request tags
	ReasonPFSOn       Reason = "pfs_on"             // performance_schema is on
	ReasonPFSOff      Reason = "pfs_off_restart"    // off: restarted with it on, and back
	ReasonNoRestart   Reason = "pfs_off_no_restart" // off, and no restart command
	ReasonTraceFailed Reason = "trace_failed"       // the trace run failed
)

// Codes lists the reasons.
func (Reason) Codes() []string {
	return []string{string(ReasonAsked), string(ReasonTagged), string(ReasonPFSOn), string(ReasonPFSOff), string(ReasonNoRestart), string(ReasonTraceFailed)}
}

// PerRequest says how the per-request view was made, and why.
type PerRequest struct {
	// Mechanism is one of the Mechanism codes; Reason one of the Reason
	// codes.
	Mechanism Mechanism `json:"mechanism"`
	Reason    Reason    `json:"reason"`
	// Restart is apply's transaction that turned performance_schema on
	// for the trace run, and Restored whether it was rolled back (the
	// server restarted with it off, as found).
	Restart  string `json:"restart_apply_id,omitempty"`
	Restored bool   `json:"restored,omitempty"`
	// Error is why a trace run failed (the view is then the fallback's).
	Error string `json:"error,omitempty"`
}

// PFSRestart is how a diagnosis may restart the server with
// performance_schema on for its trace run: through apply's transaction
// (a drop-in setting performance_schema=ON, the server's own check of
// its files, the restart, the value read back) and rolled back the same
// way after the run.
type PFSRestart struct {
	Services apply.Services
	StateDir string
}

// Defaults of RequestOptions.
const DefaultTraceDuration = 10 * time.Second

// RequestOptions configures the per-request view (package reqtrace).
type RequestOptions struct {
	// Trace asks for a trace run after the diagnosis run: the bench's
	// requests again, TraceConnections at a time (default 1), for
	// TraceDuration (default DefaultTraceDuration), each statement tied to
	// its request by time. TraceProxy records the statements through a
	// MySQL proxy: ProxyListen, where Run starts one for the whole
	// diagnosis (the app's DSN must point there: AppRestart makes it
	// reconnect), or Tap, a proxy's the caller runs. TracePFS reads
	// performance_schema's history (no change to the app; the server runs
	// with performance_schema=ON). "" makes no trace run.
	Trace            string
	ProxyListen      string
	Tap              *reqtrace.Tap
	TraceConnections int
	TraceDuration    time.Duration
	// NoTags skips reading the captured slow log's statements for
	// sqlcommenter or marginalia tags (read by default: when they name
	// their requests, they give the per-request view without a trace
	// run, at the diagnosis run's own concurrency).
	NoTags bool
	// NPlusOne is N: a class some request runs at least N times is an
	// N+1 (default reqtrace.DefaultNPlusOne).
	NPlusOne int
	// OnRequest receives each request of the per-request view with its
	// statements (reqtrace.Options.OnRequest).
	OnRequest func(reqtrace.RequestCalls)
	// PFSRestart lets TraceAuto restart a server whose
	// performance_schema is off (nil: it does not).
	PFSRestart *PFSRestart
	// Sampler, with a trace run, samples the app's CPU during it (package
	// appcpu): each endpoint's app CPU, DB and other time per request.
	Sampler appcpu.Sampler
}

func (o *RequestOptions) check() error {
	switch o.Trace {
	case TraceAuto:
		if o.ProxyListen != "" && o.Tap != nil {
			return errors.New("the trace run through the proxy needs one proxy: where it listens or a tap")
		}
	case "", TracePFS:
		if o.ProxyListen != "" || o.Tap != nil {
			return errors.New("a proxy is for the trace run through the proxy (trace proxy)")
		}
	case TraceProxy:
		if (o.ProxyListen == "") == (o.Tap == nil) {
			return errors.New("the trace run through the proxy needs where the proxy listens for the app (the app's DSN points there)")
		}
	default:
		return fmt.Errorf("unknown trace run %q: use %s, %s or %s", o.Trace, TraceAuto, TraceProxy, TracePFS)
	}
	if o.TraceConnections < 0 || o.TraceDuration < 0 || o.NPlusOne < 0 {
		return errors.New("negative trace connections, duration or N")
	}
	return nil
}

// startProxy starts the MySQL proxy of a trace run through the proxy,
// for the whole diagnosis.
func (r *run) startProxy(ctx context.Context) error {
	o := &r.opt.Requests
	if o.Trace != TraceProxy && o.Trace != TraceAuto || o.ProxyListen == "" {
		return nil
	}
	network, addr, err := mysqlproxy.Upstream(r.opt.DSN)
	if err != nil {
		return err
	}
	// The proxy's connections to the server leave the server's other
	// clients room: sized from what it has free now.
	maxConns, err := mysqlproxy.MaxConnsFor(ctx, r.admin)
	if err != nil {
		return err
	}
	o.Tap = reqtrace.NewTap()
	r.proxy, err = mysqlproxy.Start(ctx, mysqlproxy.Options{Listen: o.ProxyListen, Network: network, Address: addr, OnStatement: o.Tap.Statement,
		MaxConns: maxConns, IdleTimeout: mysqlproxy.DefaultIdleTimeout})
	if err != nil {
		return err
	}
	o.Tap.Watch(r.proxy)
	r.say("MySQL proxy listening on %s for the app (its DSN must point there), forwarding to %s, at most %d connections to it", r.proxy.Addr(), addr, maxConns)
	r.note("the MySQL proxy on %s ran for the diagnosis only: point the app's DSN back at the server (and restart it)", r.proxy.Addr())
	return nil
}

// requests builds the per-request view: the trace run's when asked, else
// the capture's tags when they name requests.
func (r *run) requests(ctx context.Context) error {
	o := r.opt.Requests
	ropt := reqtrace.Options{NPlusOne: o.NPlusOne, OnRequest: o.OnRequest, RowsExaminedPerCall: map[string]float64{}}
	if d := r.res.Digest; d != nil {
		for _, c := range d.Classes {
			if c.Count > 0 {
				ropt.RowsExaminedPerCall[c.ID] = float64(c.RowsExaminedTotal) / float64(c.Count)
			}
		}
	}
	if h := r.res.HTTP; h != nil {
		ropt.Collapse = h.LearnedPatterns()
		ropt.RequestTimes = reqtrace.RequestTimesOf(h)
	}
	var tags *reqtrace.Report
	if !o.NoTags && r.opt.Source == SourceSlowLog {
		c := r.res.Capture
		f, _, err := input.OpenFile(r.slow)
		if err != nil {
			return notHere(r.slow, err)
		}
		tagOpt := ropt
		if b := r.res.Bench; b != nil {
			tagOpt.DropLast = b.Connections // the run's end cuts the requests in flight
		}
		if o.Trace != "" && o.Trace != TraceAuto {
			tagOpt.OnRequest = nil // the trace run's requests are the ones given
		}
		tags, err = reqtrace.SlowLogSection(ctx, f, r.slow, c.StartOffset, c.EndOffset, tagOpt)
		f.Close()
		if err != nil {
			return fmt.Errorf("reading the slow log's tags: %w", err)
		}
		if tags.Requests == 0 && len(tags.Endpoints) == 0 {
			tags = nil
		}
	}
	trace, pr, restart := r.chooseTrace(ctx, tags)
	r.res.PerRequest = pr
	if trace != "" {
		rep, err := r.traceWith(ctx, trace, restart, ropt)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			r.note("the trace run failed: %v", err)
			r.say("trace run: %v", err)
			pr.Error, pr.Reason, pr.Mechanism = err.Error(), ReasonTraceFailed, MechanismEstimate
		} else {
			r.res.Requests = rep
			if tags != nil {
				r.note("the diagnosis run's statements carry request tags too (%d requests): `stacktune endpoints --slow-log` reads them at the run's own concurrency", tags.Requests)
			}
			return nil
		}
	}
	if tags != nil {
		r.res.Requests = tags
		pr.Mechanism = MechanismTags
		r.say("per request from the statements' tags: %d requests, %d statements", tags.Requests, tags.Statements)
	}
	if o.Sampler != nil {
		r.note("the app's CPU was not profiled: profiling needs a trace run (requests one at a time), and none was made (--trace proxy or pfs makes one)")
	}
	return nil
}

// chooseTrace picks the trace run (TraceProxy, TracePFS or "" for none),
// says how the per-request view will be made, and whether
// performance_schema must be turned on by a restart for it.
func (r *run) chooseTrace(ctx context.Context, tags *reqtrace.Report) (trace string, pr *PerRequest, restart bool) {
	o := r.opt.Requests
	switch o.Trace {
	case "":
		if tags != nil {
			return "", &PerRequest{Mechanism: MechanismTags, Reason: ReasonTagged}, false
		}
		return "", &PerRequest{Mechanism: MechanismEstimate, Reason: ReasonAsked}, false
	case TraceProxy:
		return TraceProxy, &PerRequest{Mechanism: MechanismProxy, Reason: ReasonAsked}, false
	case TracePFS:
		return TracePFS, &PerRequest{Mechanism: MechanismPFS, Reason: ReasonAsked}, false
	}
	// TraceAuto.
	switch {
	case tags != nil:
		r.say("per request: the statements carry request tags: no trace run")
		return "", &PerRequest{Mechanism: MechanismTags, Reason: ReasonTagged}, false
	case o.Tap != nil:
		return TraceProxy, &PerRequest{Mechanism: MechanismProxy, Reason: ReasonAsked}, false
	}
	var on string
	if err := r.admin.QueryRowContext(ctx, qPerformanceSchema).Scan(&on); err == nil {
		if b, ok := mysqlvar.ParseBool(on); b && ok || on == "1" {
			r.say("per request: performance_schema is on: a trace run reads its statement history")
			return TracePFS, &PerRequest{Mechanism: MechanismPFS, Reason: ReasonPFSOn}, false
		}
	}
	if p := o.PFSRestart; p != nil && p.Services.MySQLRestart != nil && p.StateDir != "" {
		r.say("per request: performance_schema is off: the server is restarted with it on for the trace run, and back after")
		return TracePFS, &PerRequest{Mechanism: MechanismPFSRestart, Reason: ReasonPFSOff}, true
	}
	r.note("performance_schema is off and no restart command was given (--mysql-restart): the classes' endpoints are the per-second estimate; " +
		"give --mysql-restart to let the diagnosis restart the server with performance_schema on for its trace run (and back after), or tag the app's SQL (sqlcommenter, marginalia)")
	return "", &PerRequest{Mechanism: MechanismEstimate, Reason: ReasonNoRestart}, false
}

const qPerformanceSchema = "SELECT @@performance_schema"

// traceWith makes the trace run, after turning performance_schema on by
// a restart when restart is set (and back after, whatever happens).
func (r *run) traceWith(ctx context.Context, trace string, restart bool, ropt reqtrace.Options) (rep *reqtrace.Report, err error) {
	if !restart {
		return r.traceRun(ctx, trace, ropt)
	}
	p := r.opt.Requests.PFSRestart
	set := &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune diagnose",
		Changes: []changeset.Change{{Kind: changeset.MySQLVariable, Target: "mysqld", Name: "performance_schema", From: "OFF", To: "ON",
			Activation: changeset.Restart, Finding: "trace-run", Title: "performance_schema for the trace run only"}}}
	targets, _, err := apply.FromChangeSet(set, p.Services)
	if err != nil {
		return nil, fmt.Errorf("turning performance_schema on: %w", err)
	}
	aopt := apply.Options{StateDir: p.StateDir, Label: "diagnose: performance_schema for the trace run",
		Log: func(format string, a ...any) { r.say("  apply: "+format, a...) }}
	res, err := apply.Run(ctx, targets, aopt)
	if err != nil {
		return nil, fmt.Errorf("turning performance_schema on: %w", err)
	}
	r.res.PerRequest.Restart = res.ID
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pfsRestoreTimeout)
		defer cancel()
		if _, rerr := apply.Rollback(uctx, targets, aopt); rerr != nil {
			err = errors.Join(err, fmt.Errorf("turning performance_schema off again (stacktune rollback --state %s puts it back): %w", p.StateDir, rerr))
			return
		}
		r.res.PerRequest.Restored = true
		r.say("performance_schema is off again: the server restarted as it was found")
	}()
	return r.traceRun(ctx, TracePFS, ropt)
}

// pfsRestoreTimeout bounds the rollback that turns performance_schema
// off again after the trace run.
const pfsRestoreTimeout = 10 * time.Minute

// traceRun makes the trace run.
func (r *run) traceRun(ctx context.Context, trace string, ropt reqtrace.Options) (*reqtrace.Report, error) {
	o := r.opt.Requests
	b := r.opt.Bench
	b.Label = "trace"
	b.Load.Connections = max(o.TraceConnections, 1)
	b.Load.Duration = o.TraceDuration
	if b.Load.Duration == 0 {
		b.Load.Duration = DefaultTraceDuration
	}
	b.Load.Requests, b.Load.Rate, b.Load.WarmUp = 0, 0, 0
	topt := reqtrace.TraceOptions{Bench: b, Options: ropt, Sampler: o.Sampler, Progress: func(l string) { r.say("%s", l) }}
	if trace == TraceProxy {
		topt.Tap = o.Tap
	} else {
		topt.PFS = r.reader
	}
	if r.opt.BeforeBench != nil {
		if err := r.opt.BeforeBench(ctx); err != nil {
			return nil, fmt.Errorf("before the trace run: %w", err)
		}
	}
	rep, sum, err := reqtrace.Trace(ctx, topt)
	if err != nil {
		return nil, err
	}
	r.say("trace run: %d requests (%.1f req/s), %d statements, %d tied to a request", rep.Requests, sum.RPS, rep.Statements, rep.Attributed)
	if sum != nil && !sum.Passed {
		rep.Notes = append(rep.Notes, "the trace run did not pass its checks ("+strings.Join(sum.FailReasons, "; ")+")")
	}
	return rep, nil
}

// measuredClass finds the per-request view's class of a pt-query-digest
// class (its ID and fingerprint).
func measuredClass(rep *reqtrace.Report, id, fp string) (reqtrace.Class, bool) {
	if rep == nil {
		return reqtrace.Class{}, false
	}
	for _, c := range rep.Classes {
		for _, m := range c.IDs {
			if m == id {
				return c, true
			}
		}
	}
	// A class whose statements the digest saw but the trace run did not
	// spell the same way ("id=?" for "id = ?", no tag): the merged key
	// tells.
	merged := fingerprint.MergedID(fp)
	for _, c := range rep.Classes {
		if c.ID == merged {
			return c, true
		}
	}
	return reqtrace.Class{}, false
}

// sameEndpoint reports whether the per-request view's endpoint key names
// the access log's endpoint: the same (a trace run names endpoints as the
// access log does) or a route that matches it (tags).
func sameEndpoint(key, method, path string) bool {
	return key == endpointKey(method, path) || sqltag.MatchRoute(key, method, path)
}

// measuredNPlusOne is the per-request view's N+1 patterns with the
// digest's figures of the class where it has them (the class ID the
// digest's: the merged class's member with the most calls).
func measuredNPlusOne(rep *reqtrace.Report, d digestIndex) []nplusone.Pattern {
	out := []nplusone.Pattern{}
	for _, np := range rep.NPlusOne {
		n := np
		n.ID, n.Source = firstOr(np.IDs, np.ID), EndpointMeasured
		var calls int64
		var rows, t float64
		for _, id := range np.IDs {
			if c, r, tm, ok := d.class(id); ok {
				calls += c
				rows += r
				t += tm
			}
		}
		if calls > 0 {
			n.Calls, n.RowsPerCall, n.TimeS = calls, round(rows/float64(calls), 2), round(t, 6)
		} else {
			n.TimeS = np.TimeS
		}
		for _, c := range rep.Classes {
			if c.ID != np.ID {
				continue
			}
			if calls == 0 {
				n.Calls = c.Calls
				if c.Calls > 0 {
					n.RowsPerCall = round(float64(c.RowsSent)/float64(c.Calls), 2)
				}
			}
			for _, e := range c.Endpoints {
				if e.Endpoint == np.Endpoint {
					n.EndpointShare = e.Share
				}
			}
		}
		out = append(out, n)
	}
	return out
}

func firstOr(ids []string, d string) string {
	if len(ids) > 0 {
		return ids[0]
	}
	return d
}

// auditNPlusOne is the audit's input of the measured N+1 patterns (the
// per-request view's, as they are) and how they were measured.
func auditNPlusOne(rep *reqtrace.Report) ([]nplusone.Pattern, string) {
	if rep == nil {
		return nil, ""
	}
	return rep.NPlusOne, "stacktune diagnose, " + rep.Source
}

// measuredEndpointClasses lists the digest classes an endpoint runs
// (measured), the most calls per request first.
func measuredEndpointClasses(rep *reqtrace.Report, method, path string, digestIDs map[string]bool) []string {
	type cc struct {
		id   string
		mean float64
	}
	var list []cc
	for _, e := range rep.Endpoints {
		if !sameEndpoint(e.Endpoint, method, path) {
			continue
		}
		for _, c := range e.Classes {
			for _, cl := range rep.Classes {
				if cl.ID != c.ID {
					continue
				}
				for _, id := range cl.IDs {
					if digestIDs[id] {
						list = append(list, cc{id, c.Mean})
					}
				}
			}
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].mean > list[j].mean })
	var out []string
	seen := map[string]bool{}
	for _, c := range list {
		if !seen[c.id] {
			seen[c.id] = true
			out = append(out, c.id)
		}
	}
	return out
}
