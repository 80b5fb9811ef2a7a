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
	// Findings describe the step; nil means those of Changes.
	Findings []Finding
	// Notes are said next to what changed.
	Notes []string
	// Why says why there is nothing to do, when there is nothing.
	Why string
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
		return &Work{Changes: p.Changes(changeset.MySQLVariable, changeset.MySQLOption)}, nil
	}}
	// Nginx takes the audit's nginx directives, each in its context.
	Nginx = Step{"nginx", func(_ context.Context, p *Pick) (*Work, error) {
		return &Work{Changes: p.Changes(changeset.Nginx)}, nil
	}}
	// AppWorkers takes the audit's PHP-FPM pool settings (workers sized
	// to the cores from the CPU per request, their limits).
	AppWorkers = Step{"app workers", func(_ context.Context, p *Pick) (*Work, error) {
		return &Work{Changes: p.Changes(changeset.PHPFPM)}, nil
	}}
	// Indexes takes the indexes proven on a throwaway copy.
	Indexes = Step{"indexes", planIndexes}
	// HostWide takes sysctl and systemd limits (with the my.cnf settings
	// that go with them: open_files_limit with LimitNOFILE), with
	// Options.HostWide.
	HostWide = Step{"host-wide", func(_ context.Context, p *Pick) (*Work, error) {
		if !p.hostWide {
			return &Work{Why: "host-wide changes need --host-wide"}, nil
		}
		return &Work{Changes: p.ChangesWith([]changeset.Kind{changeset.Sysctl, changeset.Systemd, changeset.MySQLVariable, changeset.MySQLOption},
			[]changeset.Kind{changeset.Sysctl, changeset.Systemd})}, nil
	}}
)

// DefaultSteps are the steps of a user's stack.
func DefaultSteps() []Step { return []Step{MyCnf, Nginx, AppWorkers, Indexes, HostWide} }

// planIndexes: the indexes `stacktune indexes` proved on a copy, each
// with its evidence.
func planIndexes(_ context.Context, p *Pick) (*Work, error) {
	ix := p.D.Indexes
	if ix == nil || ix.Changes == nil || len(ix.Changes.Changes) == 0 {
		return &Work{Why: "no index was proven to help"}, nil
	}
	w := &Work{Changes: ix.Changes.Changes, Findings: []Finding{}}
	for _, pr := range ix.Proposals {
		f := Finding{ID: "index", Title: fmt.Sprintf("%s (%s)", pr.Table, strings.Join(pr.Columns, ", ")), Change: pr.DDL,
			Evidence: []string{
				fmt.Sprintf("rows examined (EXPLAIN on a copy): %d → %d", pr.RowsBefore, pr.RowsAfter),
				fmt.Sprintf("median time on the copy: %.2f ms → %.2f ms", pr.TimeBeforeMS, pr.TimeAfterMS),
				fmt.Sprintf("index size %d bytes", pr.IndexBytes),
			}, Source: "stacktune indexes (proven on a throwaway copy)"}
		f.Evidence = append(f.Evidence, pr.Reasons...)
		w.Findings = append(w.Findings, f)
	}
	return w, nil
}

// appNPlusOne is the audit's finding for the N+1 patterns the diagnosis
// measured per request (Result.NPlusOne lists them too).
const appNPlusOne = "app-n-plus-one"

// Pick is a diagnosis as the steps of one round see it: each audit
// finding and each N+1 pattern goes to the first step that takes it, and
// what no step took is listed as not applied, with why.
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
// changes of those kinds.
func (p *Pick) Changes(kinds ...changeset.Kind) []changeset.Change {
	return p.ChangesWith(kinds, kinds)
}

// ChangesWith is Changes for the findings whose every change is of the
// kinds all and one at least of the kinds some (the host-wide step takes
// a my.cnf setting that goes with a systemd limit).
func (p *Pick) ChangesWith(all, some []changeset.Kind) []changeset.Change {
	of := func(kinds []changeset.Kind) func(c changeset.Change) bool {
		return func(c changeset.Change) bool { return slices.Contains(kinds, c.Kind) }
	}
	var out []changeset.Change
	for _, f := range p.Findings(func(f *advise.Finding) bool {
		cs := f.Changeset()
		return len(cs) > 0 && !advise.Observability(f.ID) && !slices.ContainsFunc(cs, func(c changeset.Change) bool { return !of(all)(c) }) &&
			slices.ContainsFunc(cs, of(some))
	}) {
		out = append(out, f.Changeset()...)
	}
	return out
}

// NPlusOne returns the diagnosis's N+1 patterns that keep accepts and no
// step took yet, and marks them taken.
func (p *Pick) NPlusOne(keep func(n *diagnose.NPlusOne) bool) []diagnose.NPlusOne {
	var out []diagnose.NPlusOne
	for i := range p.D.NPlusOne {
		n := &p.D.NPlusOne[i]
		if !p.takenN[n.ID] && keep(n) {
			p.takenN[n.ID] = true
			out = append(out, *n)
		}
	}
	return out
}

// notApplied are what no step took: the audit's findings (application
// code, memcached and Redis settings, host-wide without leave,
// durability and observability) and the N+1 patterns with their
// endpoint, each with why.
func (p *Pick) notApplied() []Finding {
	out := []Finding{}
	for _, n := range p.D.NPlusOne {
		if !p.takenN[n.ID] {
			f := NPlusOneFinding(n)
			f.Reason = "a change to the application's code: " + f.Change
			out = append(out, f)
		}
	}
	if p.D.Audit == nil {
		return out
	}
	for i := range p.D.Audit.Findings {
		// The audit's app-n-plus-one findings are the N+1 patterns above.
		if p.taken[i] || (p.D.Audit.Findings[i].ID == appNPlusOne && len(p.D.NPlusOne) > 0) {
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
func (p *Pick) reason(f *advise.Finding) string {
	cs := f.Changeset()
	has := func(kinds ...changeset.Kind) bool {
		return slices.ContainsFunc(cs, func(c changeset.Change) bool { return slices.Contains(kinds, c.Kind) })
	}
	switch {
	case advise.Observability(f.ID):
		return "observability: worth having on a real server, but it costs some speed, which this loop measures (the diagnosis turns the slow log on for its own run)"
	case len(cs) == 0:
		return "information only: no setting to change"
	case has(changeset.Sysctl, changeset.Systemd) && !p.hostWide:
		return "host-wide (kernel settings, service units): changed only when allowed (stacktune tune --host-wide, stacktune apply --host-wide; the demo never changes this machine's settings)"
	case has(changeset.App):
		return "a change to the application's code or settings, for its developers"
	case has(changeset.Memcached, changeset.Redis):
		return "memcached and Redis options live in the service's own configuration: set them there and restart it"
	case has(changeset.Mount):
		return "a mount option: set it in /etc/fstab and remount (stacktune does not change mounts)"
	}
	return "no step of this loop applies this kind of change"
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
// its counts (measured per request, or estimated: said which) and the
// rewrite.
func NPlusOneFinding(n diagnose.NPlusOne) Finding {
	where := "endpoint unknown"
	if n.Endpoint != "" {
		how := "about"
		if n.Source == diagnose.EndpointMeasured {
			how = "measured:"
		}
		where = fmt.Sprintf("%s (%s %.0f calls per request)", n.Endpoint, how, n.CallsPerRequest)
	}
	f := Finding{ID: "n-plus-one", Title: "N+1 queries in " + where + ": " + n.Fingerprint,
		Evidence: []string{n.Problem, fmt.Sprintf("%d calls, %.1f rows per call, %.2fs in the run", n.Calls, n.RowsPerCall, n.TimeS), "sample: " + n.Sample},
		Change:   "load the rows once per request (an IN list, a JOIN, or a set kept in memory) instead of one query per row",
		Source:   "stacktune diagnose (" + n.Source + ")"}
	if n.PerRequestMax > 0 {
		e := fmt.Sprintf("at most %d calls in one request, %.1f ms per request", n.PerRequestMax, n.TimePerRequestS*1000)
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

// findingsOf describes the audit findings behind changes, once each.
func findingsOf(d *diagnose.Result, cs []changeset.Change) []Finding {
	out := []Finding{}
	seen := map[string]bool{}
	for _, c := range cs {
		key := c.Finding + "\x00" + c.Title
		if seen[key] {
			continue
		}
		seen[key] = true
		f := Finding{ID: c.Finding, Title: c.Title, Evidence: c.Evidence, Change: changeText(c)}
		if d.Audit != nil {
			for i := range d.Audit.Findings {
				if af := &d.Audit.Findings[i]; af.ID == c.Finding && af.Title == c.Title {
					f = AuditFinding(af)
				}
			}
		}
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
		return changeset.AddIndexSQL(c) + ";"
	}
	from := c.From
	if from == "" {
		from = "(not set)"
	}
	return fmt.Sprintf("%s %s in %s: %s → %s", c.Kind, c.Name, c.Target, from, c.To)
}
