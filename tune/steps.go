package tune

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/nplusone"
)

// Step is one group of changes the loop applies and measures together.
// Plan picks its work from a diagnosis (through Pick, which hands each
// finding to one step only); the loop applies it through apply's
// transaction and decides it with the A/B test. A step with nothing to
// do returns a Work without changes or targets.
type Step struct {
	Label string
	Plan  func(ctx context.Context, p *Pick) (*Work, error)
}

// Work is what a step applies.
type Work struct {
	// Changes are turned into apply targets with Options.Services
	// (apply.FromChangeSet): my.cnf, nginx, indexes, sysctl, systemd.
	Changes []changeset.Change
	// Targets are targets of the caller's own, applied after those (the
	// demo's app settings and memcached).
	Targets []apply.Target
	// Findings describe the step: those the Pick handed out with what
	// the step took (Changes, NPlusOne, or AuditFinding of Findings'). A
	// step that leaves it nil is described by its changes' own Finding,
	// Title and Evidence.
	Findings []Finding
	// Notes are said next to what changed.
	Notes []string
	// Why says why there is nothing to do, when there is nothing.
	Why string
	// Then are changes made once the step is kept, as a transaction of
	// their own kept with it: an index dropped after the A/B test
	// measured the workload with it ignored.
	Then []changeset.Change
}

func (w *Work) empty() bool { return len(w.Changes) == 0 && len(w.Targets) == 0 }

// The steps of a user's stack, in the order DefaultSteps runs them: the
// server's settings first (they change what the rest is measured on),
// then nginx, the app's workers, the proven indexes, and the host-wide
// settings when allowed.
var (
	// MyCnf takes the audit's MySQL settings (a my.cnf drop-in: SET
	// GLOBAL where dynamic, a restart where not).
	MyCnf = Step{"my.cnf", func(_ context.Context, p *Pick) (*Work, error) {
		return workOf(p.Changes(changeset.MySQLVariable, changeset.MySQLOption)), nil
	}}
	// Nginx takes the audit's nginx directives, each in its context.
	Nginx = Step{"nginx", func(_ context.Context, p *Pick) (*Work, error) {
		return workOf(p.Changes(changeset.Nginx)), nil
	}}
	// AppWorkers takes the audit's PHP-FPM pool settings (workers sized
	// to the cores from the CPU per request, their limits).
	AppWorkers = Step{"app workers", func(_ context.Context, p *Pick) (*Work, error) {
		return workOf(p.Changes(changeset.PHPFPM)), nil
	}}
	// Indexes takes the indexes proven on a throwaway copy.
	Indexes = Step{"indexes", planIndexes}
	// IndexDrops takes the unused, duplicate and redundant indexes: each
	// ignored first (MariaDB 10.6+, MySQL 8), measured, and dropped only
	// when the step is kept (Work.Then); on a server that cannot ignore
	// one, dropped at once and re-created by a rollback.
	IndexDrops = Step{"index drops", planIndexDrops}
	// HostWide takes sysctl and systemd limits (with the my.cnf settings
	// that go with them: open_files_limit with LimitNOFILE), with
	// Options.HostWide.
	HostWide = Step{"host-wide", func(_ context.Context, p *Pick) (*Work, error) {
		if !p.hostWide {
			return &Work{Why: "host-wide changes need --host-wide"}, nil
		}
		return workOf(p.ChangesWith([]changeset.Kind{changeset.Sysctl, changeset.Systemd, changeset.MySQLVariable, changeset.MySQLOption},
			[]changeset.Kind{changeset.Sysctl, changeset.Systemd})), nil
	}}
)

// workOf is the Work of changes the Pick handed out with their findings.
func workOf(cs []changeset.Change, fs []Finding) *Work { return &Work{Changes: cs, Findings: fs} }

// DefaultSteps are the steps of a user's stack.
func DefaultSteps() []Step { return []Step{MyCnf, Nginx, AppWorkers, Indexes, IndexDrops, HostWide} }

// planIndexDrops: the drops `stacktune indexes` found, each with its
// evidence (the window of use, or the index serving in its place).
func planIndexDrops(_ context.Context, p *Pick) (*Work, error) {
	ix := p.D.Indexes
	if ix == nil || len(ix.Drops) == 0 {
		return &Work{Why: "no index is unused, duplicate or redundant on enough evidence"}, nil
	}
	w := &Work{Changes: ix.Drops, Findings: []Finding{}}
	for _, c := range ix.Drops {
		if final, err := indexadv.FinalDrop(c); err == nil {
			w.Then = append(w.Then, final)
		}
	}
	for _, pr := range ix.Proposals {
		if pr.Action != indexadv.ActionDrop {
			continue
		}
		w.Findings = append(w.Findings, Finding{ID: "index-" + string(pr.Reason), Title: fmt.Sprintf("%s %s (%s)", pr.Table, pr.Index, strings.Join(pr.Columns, ", ")),
			Change: pr.DDL, Evidence: append([]string{}, pr.Change.Evidence...), Source: "stacktune indexes (" + string(pr.Reason) + ")"})
	}
	return w, nil
}

// planIndexes: the indexes `stacktune indexes` proved on a copy, each
// with its evidence: the rows, the time, and each query's plan before and
// after (the plan is what proved it).
func planIndexes(_ context.Context, p *Pick) (*Work, error) {
	ix := p.D.Indexes
	if ix == nil || ix.Changes == nil || len(ix.Changes.Changes) == 0 {
		return &Work{Why: "no index was proven to help"}, nil
	}
	w := &Work{Changes: ix.Changes.Changes, Findings: []Finding{}}
	for _, pr := range ix.Proposals {
		if pr.Action == indexadv.ActionDrop {
			continue // drops are a step of their own: ignored first
		}
		f := Finding{ID: "index", Title: fmt.Sprintf("%s (%s)", pr.Table, strings.Join(pr.Columns, ", ")), Change: pr.DDL,
			Evidence: []string{
				fmt.Sprintf("rows examined (EXPLAIN on a copy): %d → %d", pr.RowsBefore, pr.RowsAfter),
				fmt.Sprintf("median time on the copy: %.2f ms → %.2f ms", pr.TimeBeforeMS, pr.TimeAfterMS),
				fmt.Sprintf("index size %d bytes", pr.IndexBytes),
			}, Source: "stacktune indexes (proven on a throwaway copy)"}
		for _, ev := range pr.Evidence.Plans {
			f.Evidence = append(f.Evidence, fmt.Sprintf("plan of %s on the copy: %s → %s; rows examined %d → %d", ev.Query, ev.PlanBefore, ev.PlanAfter, ev.RowsBefore, ev.RowsAfter))
		}
		f.Evidence = append(f.Evidence, pr.Reasons...)
		w.Findings = append(w.Findings, f)
	}
	return w, nil
}

// appNPlusOne is the audit's finding for the N+1 patterns the diagnosis
// measured per request (Result.NPlusOne lists them too: the Pick hands
// out one finding per pattern, the audit's merged in).
const appNPlusOne = "app-n-plus-one"

// Pick is a diagnosis as the steps of one round see it: each audit
// finding and each N+1 pattern goes to the first step that takes it,
// handed out with the finding that describes it (a value: nothing is
// looked up again by its title), and what no step took is listed as not
// applied, with why.
type Pick struct {
	// D is the diagnosis.
	D        *diagnose.Result
	hostWide bool
	taken    map[int]bool    // audit findings, by index
	takenN   map[string]bool // N+1 patterns, by class ID
}

func newPick(d *diagnose.Result, hostWide bool) *Pick {
	return &Pick{D: d, hostWide: hostWide, taken: map[int]bool{}, takenN: map[string]bool{}}
}

// Findings returns the audit's findings that keep accepts and no step
// took yet, and marks them taken.
func (p *Pick) Findings(keep func(f *advise.Finding) bool) []*advise.Finding {
	if p.D.Audit == nil {
		return nil
	}
	var out []*advise.Finding
	for i := range p.D.Audit.Findings {
		f := &p.D.Audit.Findings[i]
		if !p.taken[i] && keep(f) {
			p.taken[i] = true
			out = append(out, f)
		}
	}
	return out
}

// Changes takes the findings whose every change is of the given kinds
// (a finding is applied whole or not at all), observability findings
// left out (they cost speed, which the loop measures), and returns their
// changes with the findings they came from (AuditFinding), in the order
// taken.
func (p *Pick) Changes(kinds ...changeset.Kind) ([]changeset.Change, []Finding) {
	return p.ChangesWith(kinds, kinds)
}

// ChangesWith is Changes for the findings whose every change is of the
// kinds all and one at least of the kinds some (the host-wide step takes
// a my.cnf setting that goes with a systemd limit).
func (p *Pick) ChangesWith(all, some []changeset.Kind) ([]changeset.Change, []Finding) {
	of := func(kinds []changeset.Kind) func(c changeset.Change) bool {
		return func(c changeset.Change) bool { return slices.Contains(kinds, c.Kind) }
	}
	var out []changeset.Change
	fs := []Finding{}
	for _, f := range p.Findings(func(f *advise.Finding) bool {
		cs := f.Changeset()
		return len(cs) > 0 && !advise.Observability(f.ID) && !slices.ContainsFunc(cs, func(c changeset.Change) bool { return !of(all)(c) }) &&
			slices.ContainsFunc(cs, of(some))
	}) {
		out = append(out, f.Changeset()...)
		fs = append(fs, AuditFinding(f))
	}
	return out, fs
}

// NPlusOne returns the diagnosis's N+1 patterns that keep accepts and no
// step took yet, each with its finding (nPlusOneFinding: the audit's
// finding about the same pattern merged in), and marks them taken, the
// audit's findings merged in with them.
func (p *Pick) NPlusOne(keep func(n *nplusone.Pattern) bool) ([]nplusone.Pattern, []Finding) {
	var out []nplusone.Pattern
	fs := []Finding{}
	for i := range p.D.NPlusOne {
		n := &p.D.NPlusOne[i]
		if !p.takenN[n.ID] && keep(n) {
			p.takenN[n.ID] = true
			f, ai := p.nPlusOneFinding(*n)
			if ai >= 0 {
				p.taken[ai] = true
			}
			out = append(out, *n)
			fs = append(fs, f)
		}
	}
	return out, fs
}

// auditOf is the index of the audit's app-n-plus-one finding about the
// pattern n (the same endpoint and statement: the values the audit was
// given), -1 for none.
func (p *Pick) auditOf(n *nplusone.Pattern) int {
	if p.D.Audit == nil {
		return -1
	}
	for i := range p.D.Audit.Findings {
		f := &p.D.Audit.Findings[i]
		if f.ID == appNPlusOne && f.NPlusOne != nil && f.NPlusOne.Endpoint == n.Endpoint && f.NPlusOne.Fingerprint == n.Fingerprint {
			return i
		}
	}
	return -1
}

// nPlusOneFinding is NPlusOneFinding(n) with the audit's finding about n
// merged in: one finding with both evidences (the diagnosis's first) and
// both sources; ai is the audit finding's index (-1: none).
func (p *Pick) nPlusOneFinding(n nplusone.Pattern) (f Finding, ai int) {
	f = NPlusOneFinding(n)
	if ai = p.auditOf(&n); ai >= 0 {
		af := AuditFinding(&p.D.Audit.Findings[ai])
		f.Evidence = append(f.Evidence, af.Evidence...)
		f.Source += "; the audit (" + appNPlusOne + "): " + af.Source
	}
	return f, ai
}

// notApplied are what no step took: the audit's findings (application
// code, memcached and Redis settings, host-wide without leave,
// durability and observability) and the N+1 patterns with their
// endpoint, each with why.
func (p *Pick) notApplied() []Finding {
	out := []Finding{}
	merged := map[int]bool{} // audit findings merged into a pattern's
	for _, n := range p.D.NPlusOne {
		if !p.takenN[n.ID] {
			f, ai := p.nPlusOneFinding(n)
			if ai >= 0 {
				merged[ai] = true
			}
			f.Reason = LeftAppCode
			out = append(out, f)
		}
	}
	if p.D.Audit == nil {
		return out
	}
	for i := range p.D.Audit.Findings {
		if p.taken[i] || merged[i] {
			continue
		}
		f := &p.D.Audit.Findings[i]
		nf := AuditFinding(f)
		nf.Reason = p.reason(f)
		out = append(out, nf)
	}
	return out
}

// reason says why a finding stays with the user.
func (p *Pick) reason(f *advise.Finding) LeftReason {
	cs := f.Changeset()
	has := func(kinds ...changeset.Kind) bool {
		return slices.ContainsFunc(cs, func(c changeset.Change) bool { return slices.Contains(kinds, c.Kind) })
	}
	switch {
	case advise.Observability(f.ID):
		return LeftObservability
	case len(cs) == 0:
		return LeftInformation
	case has(changeset.Sysctl, changeset.Systemd) && !p.hostWide:
		return LeftHostWide
	case has(changeset.App):
		return LeftAppSetting
	case has(changeset.Memcached, changeset.Redis):
		return LeftServiceConfig
	case has(changeset.Mount):
		return LeftMount
	}
	return LeftNoStep
}

// AuditFinding describes an audit finding for the report: its evidence,
// its changes and its source.
func AuditFinding(f *advise.Finding) Finding {
	out := Finding{ID: f.ID, Title: f.Title, Source: f.Source, Evidence: []string{}}
	for _, e := range f.Evidence {
		out.Evidence = append(out.Evidence, e.String())
	}
	var chs []string
	for _, c := range f.Changeset() {
		chs = append(chs, changeText(c))
	}
	out.Change = strings.Join(chs, "; ")
	return out
}

// NPlusOneFinding describes an N+1 pattern with the endpoint that runs it,
// its counts (measured per request, estimated, or a lower bound from
// requests the run's end cut: said which) and the rewrite.
func NPlusOneFinding(n nplusone.Pattern) Finding {
	where := "endpoint unknown"
	switch {
	case n.Endpoint == "":
	case n.Source == diagnose.EndpointCutRequests:
		// Seen in requests the run's end cut: a lower bound.
		where = fmt.Sprintf("%s (at least %.0f calls per request, in requests the run's end cut)", n.Endpoint, n.PerRequest)
	case n.Source == diagnose.EndpointTaggedSample:
		// Named by a sampled statement's route tag: calls not counted.
		where = n.Endpoint + " (its statement's route tag; calls per request not counted)"
	default:
		how := "about"
		if n.Source == diagnose.EndpointMeasured {
			how = "measured:"
		}
		where = fmt.Sprintf("%s (%s %.0f calls per request)", n.Endpoint, how, n.PerRequest)
	}
	f := Finding{ID: "n-plus-one", Title: "N+1 queries in " + where + ": " + n.Fingerprint,
		Evidence: []string{n.Problem, fmt.Sprintf("%d calls, %.1f rows per call, %.2fs in the run", n.Calls, n.RowsPerCall, n.TimeS), "sample: " + n.Sample},
		Change:   "load the rows once per request (an IN list, a JOIN, or a set kept in memory) instead of one query per row",
		Source:   "stacktune diagnose (" + n.Source + ")"}
	if n.Max > 0 {
		e := fmt.Sprintf("at most %d calls in one request, %.1f ms per request", n.Max, n.TimePerRequestS*1000)
		if n.RequestShare > 0 {
			e += fmt.Sprintf(" (%.0f%% of the request's time)", n.RequestShare*100)
		}
		f.Evidence = append(f.Evidence, e)
	}
	if n.Rewrite != "" {
		f.Change = n.Rewrite
	}
	return f
}

// changeFindings describes changes a step returned without findings by
// what each says of itself (its Finding, Title and Evidence), once per
// finding.
func changeFindings(cs []changeset.Change) []Finding {
	out := []Finding{}
	seen := map[string]bool{}
	for _, c := range cs {
		key := c.Finding + "\x00" + c.Title
		if seen[key] {
			continue
		}
		seen[key] = true
		f := Finding{ID: c.Finding, Title: c.Title, Evidence: c.Evidence, Change: changeText(c)}
		if f.Evidence == nil {
			f.Evidence = []string{}
		}
		out = append(out, f)
	}
	return out
}

// changeText is one change in words.
func changeText(c changeset.Change) string {
	if c.Kind == changeset.Index {
		if q, err := changeset.AddIndexSQL(c); err == nil {
			return q + ";"
		}
	}
	from := c.From
	if from == "" {
		from = "(not set)"
	}
	return fmt.Sprintf("%s %s in %s: %s → %s", c.Kind, c.Name, c.Target, from, c.To)
}
