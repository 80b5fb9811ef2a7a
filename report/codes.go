package report

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/knobsearch"
	"github.com/stacktune/stacktune/tune"
)

// The words of the results' codes (docs/json.md lists the codes): the
// results carry codes, and only report says them in words. A value that
// is no known code is shown as it is (cleaned like any other).

// VerdictText says an A/B verdict in words: better, worse, within noise.
func VerdictText(v abtest.Verdict) string {
	if v == abtest.WithinNoise {
		return "within noise"
	}
	return string(v)
}

// HowText says how an apply step takes effect: set at once, restart,
// reload, already in force.
func HowText(h apply.How) string {
	switch h {
	case apply.HowSet:
		return "set at once"
	case apply.HowNone:
		return "already in force"
	}
	return string(h)
}

// PhaseText names a knob search's phase: its code (default, audit,
// screen, model, anchor, compare), or "the contest's settings".
func PhaseText(p knobsearch.Phase) string {
	if p == knobsearch.PhaseContest {
		return "the contest's settings"
	}
	return string(p)
}

// DiffStatusText says where an endpoint of a comparison was seen: both,
// only a, only b.
func DiffStatusText(s httpprof.DiffStatus) string {
	switch s {
	case httpprof.OnlyA:
		return "only a"
	case httpprof.OnlyB:
		return "only b"
	}
	return string(s)
}

// NoiseCauseText says a cause of noise the loop saw (tune.NoiseCause).
func NoiseCauseText(c tune.NoiseCause) string {
	switch c.Code {
	case tune.CauseOtherProcesses:
		s := fmt.Sprintf("other work on the host used %.1f cores", c.Value)
		for i, p := range c.Processes {
			sep := ", "
			if i == 0 {
				sep = ", the busiest: "
			}
			s += fmt.Sprintf("%s%s (pid %d) %.2f", sep, p.Comm, p.PID, p.Cores)
		}
		return s
	case tune.CauseHostBusy:
		return fmt.Sprintf("the host's CPUs were %.0f%% busy", c.Value*100)
	case tune.CauseSteal:
		return fmt.Sprintf("the hypervisor took %.0f%% of the CPU time (steal)", c.Value*100)
	case tune.CauseWarmUp:
		return fmt.Sprintf("the first run scored %.2fx the others (a warm-up effect)", c.Value)
	case tune.CauseToldApart:
		return fmt.Sprintf("A against itself was told apart (%.2fx)", c.Value)
	}
	return c.Code
}

// NoiseTryText says one noise floor: A against itself, its interval, the
// smallest change it can tell, and the causes of noise seen.
func NoiseTryText(n *tune.NoiseTry) string {
	s := fmt.Sprintf("Noise floor (A against itself, %d runs of %gs): %s (interval %s to %s)", n.Runs, n.RunS,
		VerdictText(n.Verdict), RatioX(n.Interval[0]), RatioX(n.Interval[1]))
	if n.Verdict != abtest.WithinNoise {
		s += "; A was told apart from itself, so a verdict on B may be the measurement's bias (a switch that changes the state, a busy host) rather than B's"
	} else {
		s += detectableText(n.Width, &abtest.Decision{CILow: n.Interval[0], CIHigh: n.Interval[1]})
	}
	var cs []string
	for _, c := range n.Causes {
		if c.Code != tune.CauseToldApart {
			cs = append(cs, NoiseCauseText(c))
		}
	}
	if len(cs) > 0 {
		s += "; seen: " + strings.Join(cs, "; ")
	}
	return s
}

// StepSkipText says why a step did not run (tune.StepSkip) with its
// detail; "" when it ran.
func StepSkipText(s *tune.StepResult) string {
	with := func(words string) string {
		if s.Why == "" {
			return words
		}
		return words + ": " + s.Why
	}
	switch s.Skipped {
	case "":
		return ""
	case tune.SkipNothingToApply:
		if s.Why == "" {
			return "nothing to apply: no finding for this step"
		}
		return with("nothing to apply")
	case tune.SkipCannotApply:
		return with("cannot be applied here")
	case tune.SkipApplyFailed:
		return with("the change failed and was rolled back")
	case tune.SkipDryRunBaseline:
		return with("dry run: not measured")
	case tune.SkipDryRun:
		return with("dry run: not applied")
	}
	return with(string(s.Skipped))
}

// StepUndoText says why a measured step was rolled back (tune.StepUndo)
// with its detail; "" when it was kept.
func StepUndoText(s *tune.StepResult) string {
	words := string(s.RolledBack)
	switch s.RolledBack {
	case "":
		return ""
	case tune.UndoSlower:
		words = "slower"
	case tune.UndoStopped:
		words = "the loop stopped here and rolled the step back"
	}
	if s.Why == "" {
		return words
	}
	return words + ": " + s.Why
}
