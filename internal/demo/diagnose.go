package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/diagnose"
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
// snapshot and proves indexes for the slow log's classes (package
// diagnose, as `stacktune diagnose` does on a user's stack). The run is
// not scored.
func (l *loop) diagnose(ctx context.Context) (*diagnosis, error) {
	st := l.st
	dur := 2 * l.opt.Duration
	if l.opt.Quick {
		dur = l.opt.Duration + 3*time.Second
	}
	l.say("diagnosis: one %s run with the slow log at long_query_time=0, collecting MySQL, Linux, nginx and memcached", dur)
	bo := l.benchOptions("diagnosis")
	bo.Load.Duration = dur
	runs := 5
	if l.opt.Quick {
		runs = 3
	}
	res, err := diagnose.Run(ctx, diagnose.Options{
		DSN: st.db.DSN(""), SlowLog: st.db.SlowLogPath(), Bench: bo,
		// The registered collectors, set as the CLI's flags would set them
		// (collect.Registered); one that fails is recorded in snap.Errors.
		Collect: collect.Config{Values: map[string]string{
			"nginx-conf": st.nginx.ConfigPath(),
			"memcached":  collect.JoinAddr(st.mc.Network(), st.mc.Addr()),
		}},
		// Sessions copy long_query_time when they connect: a fresh pool.
		AppRestart: st.restartApp, AppRestartName: "the reference app's restart",
		BeforeBench: l.initialize,
		Database:    appDB, Classes: 20, ProofRuns: runs,
		Audit: advise.Options{AllowDurabilityLoss: l.opt.AllowDurabilityLoss},
		// The loop audits the snapshot as it was taken.
		AuditCaptureSettings: true,
		Progress:             func(line string) { l.say("diagnosis: %s", line) },
	})
	if err != nil {
		return nil, err
	}
	// The app's sessions opened during the capture keep
	// long_query_time=0: a fresh pool.
	if err := st.restartApp(ctx); err != nil {
		return nil, err
	}
	d := &diagnosis{used: map[int]bool{}, audit: res.Audit, slowlog: res.Digest, indexes: res.Indexes}
	l.keep("snapshot.json", res.Snapshot)
	l.keep("audit.json", d.audit)
	if res.IndexError != "" || d.indexes == nil {
		return nil, fmt.Errorf("index advice: %s", res.IndexError)
	}
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
	return digest.ReportOf(ctx, []input.Input{in}, []string{path}, digest.Options{}, ropt)
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
		case advise.Observability(f.ID):
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
		sf.Evidence = append(sf.Evidence, e.String())
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
