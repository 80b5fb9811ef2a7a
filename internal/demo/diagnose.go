package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/internal/atomicfile"
	"github.com/stacktune/stacktune/report"
)

// diagnosis is what one measured run under observation found: the audit
// of a snapshot taken while the bench ran, and the indexes proven for the
// slow log of that run.
type diagnosis struct {
	audit   *advise.Result
	indexes *indexadv.Result
	slowlog *digest.Report
	used    map[int]bool // findings a step took, by index in audit.Findings
	// nPlusOne are the query classes the index advice reported as N+1
	// patterns (QueryReport.NPlusOne set); usedQuery marks those a step
	// took.
	nPlusOne  []indexadv.QueryReport
	usedQuery map[int]bool
}

// diagnose runs the bench once more with the slow log at
// long_query_time=0 while collecting a snapshot over the run, audits the
// snapshot and proves indexes for the slow log's classes. The run is not
// scored.
func (l *loop) diagnose(ctx context.Context) (*diagnosis, error) {
	st := l.st
	dur := 2 * l.opt.Duration
	if l.opt.Quick {
		dur = l.opt.Duration + 3*time.Second
	}
	l.say("diagnosis: one %s run with the slow log at long_query_time=0, collecting MySQL, Linux, nginx and memcached", dur)
	if err := os.Truncate(st.db.SlowLogPath(), 0); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, q := range []string{"SET GLOBAL long_query_time = 0", "SET GLOBAL log_slow_verbosity = 'query_plan'", "SET GLOBAL slow_query_log = ON"} {
		if _, err := st.db.DB().ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	// Sessions copy long_query_time when they connect: a fresh pool.
	if err := st.restartApp(ctx); err != nil {
		return nil, err
	}
	if err := l.initialize(ctx); err != nil {
		return nil, err
	}
	bo := l.benchOptions("diagnosis")
	bo.Load.Duration = dur
	var (
		wg    sync.WaitGroup
		snap  *collect.Snapshot
		bench *benchrun.Summary
		berr  error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		bench, berr = benchrun.Run(ctx, bo)
	}()
	// Collect once the bench has connections open, over most of the run.
	warm := min(2*time.Second, dur/4)
	select {
	case <-time.After(warm):
	case <-ctx.Done():
	}
	// The registered collectors, set as the CLI's flags would set them
	// (collect.Registered); one that fails is recorded in snap.Errors.
	snap, cerr := collect.Take(ctx, collect.Config{DB: st.db.DB(), Values: map[string]string{
		"interval":   (dur - warm - time.Second).String(),
		"nginx-conf": st.nginx.ConfigPath(),
		"memcached":  collect.JoinAddr(st.mc.Network(), st.mc.Addr()),
	}})
	wg.Wait()
	if cerr != nil {
		return nil, cerr
	}
	if berr != nil {
		return nil, berr
	}
	l.say("diagnosis run: %.1f req/s, p99 %.0f ms", bench.RPS, bench.LatencyMS.P99)
	for _, q := range []string{"SET GLOBAL slow_query_log = OFF", "SET GLOBAL long_query_time = 10"} {
		if _, err := st.db.DB().ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	if err := st.restartApp(ctx); err != nil {
		return nil, err
	}
	for _, ce := range snap.Errors {
		l.say("collector %s: %s", ce.Collector, ce.Error)
	}

	d := &diagnosis{used: map[int]bool{}}
	d.audit = advise.Audit(snap, advise.Options{AllowDurabilityLoss: l.opt.AllowDurabilityLoss})
	l.say("audit: %d findings", len(d.audit.Findings))
	l.keep("snapshot.json", snap)
	l.keep("audit.json", d.audit)

	var err error
	if d.slowlog, err = digestSlowLog(ctx, st.db.SlowLogPath(), digest.ReportOptions{Limit: 20}); err != nil {
		return nil, err
	}
	l.say("slow log: %d queries in %d classes; proving indexes on a copy", d.slowlog.Overall.Events, len(d.slowlog.Classes))
	runs := 5
	if l.opt.Quick {
		runs = 3
	}
	d.indexes, err = indexadv.Run(ctx, indexadv.Options{Classes: d.slowlog.Classes, Source: st.appDB, Database: appDB, Runs: runs})
	if err != nil {
		return nil, fmt.Errorf("index advice: %w", err)
	}
	l.say("indexes: %d proven, %d rejected", len(d.indexes.Proposals), len(d.indexes.Rejected))
	d.usedQuery = map[int]bool{}
	for _, q := range d.indexes.Queries {
		if q.NPlusOne != nil {
			d.nPlusOne = append(d.nPlusOne, q)
		}
	}
	l.keep("slowlog-digest.json", d.slowlog)
	l.keep("indexes.json", d.indexes)
	return d, nil
}

// digestSlowLog digests one slow log file (the demos' servers' own).
func digestSlowLog(ctx context.Context, path string, ropt digest.ReportOptions) (*digest.Report, error) {
	in, closer, err := input.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	agg, stats, err := digest.FromSlowLogs(ctx, []input.Input{in}, digest.Options{})
	if err != nil {
		return nil, err
	}
	rep, err := agg.Report(ropt)
	if err != nil {
		return nil, err
	}
	rep.FillSkipped(stats)
	rep.Overall.Inputs = []string{path}
	return rep, nil
}

// take returns the findings matching keep that no step took yet, and
// marks them taken.
func (d *diagnosis) take(keep func(f *advise.Finding) bool) []*advise.Finding {
	var out []*advise.Finding
	for i := range d.audit.Findings {
		f := &d.audit.Findings[i]
		if !d.used[i] && keep(f) {
			d.used[i] = true
			out = append(out, f)
		}
	}
	return out
}

// nPlusOneFinding turns an N+1 query class (q.NPlusOne set) into a
// finding.
func nPlusOneFinding(q indexadv.QueryReport) StepFinding {
	sf := StepFinding{ID: "n-plus-one", Title: "N+1 queries: " + q.Fingerprint, Source: "stacktune indexes (the digest of the diagnosis run)",
		Evidence: []string{fmt.Sprintf("calls in the diagnosis run: %d", q.Count), "sample: " + q.Sample}}
	if q.NPlusOne != nil {
		sf.Change = "load the rows once per page (an IN list, a JOIN, or a set kept in memory) instead of one query per row"
		sf.Evidence = append(sf.Evidence, q.NPlusOne.Problem())
	}
	return sf
}

// notApplied lists the findings no step took, with the reason.
func (d *diagnosis) notApplied() []StepFinding {
	out := []StepFinding{}
	for i, q := range d.nPlusOne {
		if !d.usedQuery[i] {
			sf := nPlusOneFinding(q)
			sf.Reason = "a change to the application the reference app has no switch for"
			out = append(out, sf)
		}
	}
	for i := range d.audit.Findings {
		if d.used[i] {
			continue
		}
		f := &d.audit.Findings[i]
		sf := stepFinding(f)
		switch {
		case observability[f.ID]:
			sf.Reason = "observability: worth having on a real server, but it costs the server some speed, so a loop that measures speed leaves it out (the diagnosis turns the slow log on for its own run)"
		case len(f.Changes()) == 0:
			sf.Reason = "information only: no setting to change"
		case hasKind(f, changeset.Sysctl, changeset.Systemd):
			sf.Reason = "host-wide (kernel settings, service units): the demo never changes this machine's settings; `stacktune apply --host-wide` does on a real host"
		case hasKind(f, changeset.App):
			sf.Reason = "a change to the application the reference app has no switch for"
		default:
			sf.Reason = "no step of the demo applies this kind of change"
		}
		out = append(out, sf)
	}
	return out
}

func hasKind(f *advise.Finding, kinds ...changeset.Kind) bool {
	for _, ch := range f.Changes() {
		if slices.Contains(kinds, ch.Kind) {
			return true
		}
	}
	return false
}

// stepFinding summarises a finding for the report.
func stepFinding(f *advise.Finding) StepFinding {
	sf := StepFinding{ID: f.ID, Title: f.Title, Source: f.Source, Evidence: []string{}}
	for _, e := range f.Evidence {
		s := e.What + ": " + e.Value
		if e.Unit != "" {
			s += " " + e.Unit
		}
		if e.Source != "" {
			s += " (" + e.Source + ")"
		}
		sf.Evidence = append(sf.Evidence, s)
	}
	var chs []string
	for _, ch := range f.Changes() {
		c := ch.Name + " = " + ch.To
		if ch.From != "" {
			c = ch.Name + ": " + ch.From + " → " + ch.To
		}
		chs = append(chs, c)
	}
	sf.Change = strings.Join(chs, "; ")
	return sf
}

// keep writes one of the diagnosis's results as JSON under
// Dir/diagnosis, for the user to look into (a failure is only said).
func (l *loop) keep(name string, v any) {
	dir := filepath.Join(l.dir, "diagnosis")
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		err = atomicfile.Write(filepath.Join(dir, name), 0o644, func(w io.Writer) error { return report.WriteJSON(w, v) })
	}
	if err != nil {
		l.say("keeping %s: %v", name, err)
	}
}
