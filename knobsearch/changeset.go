package knobsearch

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/mysqlvar"
)

// FindingID names the search's changes in a change set (the audit's
// changes it kept keep their findings).
const FindingID = "knob-search"

// changeSet is the chosen configuration (ChangeSetFrom) as a change set
// for stacktune apply: each variable from its running value to the
// chosen one, how it takes effect, and the comparison's evidence.
func (s *search) changeSet() *changeset.Set {
	var chosen Config
	title := "the knob search's best configuration"
	switch s.res.ChangeSetFrom {
	case "best":
		chosen = s.res.BestTrial().Config
	case "audit":
		chosen, title = s.res.Audit, "the audit's configuration, which the knob search measured"
	}
	set := &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune tune (knob search, " + s.res.Workload + ")", Server: s.space.Server.String()}
	if s.space.snap != nil {
		set.Host, set.Taken = s.space.snap.Host, s.space.snap.Taken
	}
	evidence := s.evidence()
	for _, name := range chosen.Keys() {
		to := chosen[name]
		from := s.space.Running(name)
		ch := changeset.Change{Kind: changeset.MySQLVariable, Target: "mysqld", Name: name, From: from, To: to,
			Direction: direction(from, to), Finding: FindingID, Title: title, Evidence: evidence}
		if o := mysqlvar.OptionName(name); o != name {
			ch.Option = o
		}
		dyn, _ := mysqlvar.Dynamic(s.space.Server.Flavor, s.space.Server.Version, name)
		ch.Activation = changeset.Dynamic
		if !dyn {
			ch.Activation = changeset.Restart
		}
		risk := &changeset.Risk{Restart: !dyn}
		if k := s.space.Knob(name); k != nil && k.Durability {
			risk.Durability = "can lose commits on a crash (searched because --allow-durability-loss was given)"
		}
		if name == "innodb_buffer_pool_size" {
			risk.Memory = "the memory budget with it: " + s.space.budgetTotal(chosen)
		}
		ch.Risk = risk
		if f, ok := s.auditFi[name]; ok && (s.space.Knob(name) == nil || s.res.ChangeSetFrom == "audit") {
			ch.Finding, ch.Title = f.ID, f.Title
		}
		if dyn {
			if stmt, err := mysqlvar.SetGlobal(name, to); err == nil {
				ch.Apply = stmt
			}
		} else {
			ch.Apply = "restart the server with the drop-in"
		}
		set.Changes = append(set.Changes, ch)
	}
	return set
}

// direction is how to goes from from, for people.
func direction(from, to string) string {
	a, okA := number(from)
	b, okB := number(to)
	switch {
	case !okA || !okB:
		return "set"
	case b > a:
		return "increase"
	case b < a:
		return "decrease"
	}
	return "set"
}

// evidence is what the comparison measured, one line per decision.
func (s *search) evidence() []string {
	best := s.res.BestTrial()
	out := []string{fmt.Sprintf("best trial %d of %d (%s): %s", best.N, len(s.res.Trials), best.Label, oneLine(best.Summary)),
		"chosen: " + s.res.ChangeSetWhy}
	if s.res.Comparison == nil {
		return out
	}
	for _, d := range s.res.Comparison.Decisions {
		out = append(out, fmt.Sprintf("%s vs %s: %s", d.B, d.A, oneLine(d.Decision.Reason)))
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
