package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/changeset"
)

// Final is the loop's one number: the stack as it was found against the
// tuned one (every kept step in force), measured interleaved and decided
// by the same test as each step.
type Final struct {
	// Ratio is median(tuned) / median(original); Interval its bootstrap
	// interval at Level.
	Ratio    float64    `json:"ratio"`
	Interval [2]float64 `json:"interval"`
	Level    float64    `json:"level"`
	// Decision is the verdict as a code: better, worse or within_noise.
	Decision abtest.Verdict `json:"decision"`
	// Detectable is the smallest effect the test could tell from noise,
	// as a fraction (0.07: about ±7%): half the interval's width.
	Detectable float64 `json:"detectable"`
	// Test is the whole decision; Original and Tuned the runs of each
	// state.
	Test     *abtest.Decision `json:"test"`
	Original []float64        `json:"original_scores"`
	Tuned    []float64        `json:"tuned_scores"`
	// Steps are the kept steps that make the tuned state, in order.
	Steps []string `json:"steps"`
	// RolledBack is true when the tuned stack measured worse than the
	// original and every kept step was rolled back: the stack is as it
	// was found.
	RolledBack bool `json:"rolled_back,omitempty"`
}

// MarshalJSON writes an interval end that is not finite as null (see
// abtest.Decision's).
func (f Final) MarshalJSON() ([]byte, error) { return json.Marshal(f.JSONShape()) }

// JSONShape is the value MarshalJSON writes (see internal/jsonschema).
func (f Final) JSONShape() any {
	type plain Final
	return struct {
		plain
		Interval [2]*float64 `json:"interval"`
	}{plain(f), [2]*float64{abtest.Finite(f.Interval[0]), abtest.Finite(f.Interval[1])}}
}

// Verdict codes of Final.Decision (and of JSON results that decide):
// abtest's, stable, unlike the decisions' sentences.
const (
	CodeBetter      = abtest.Better
	CodeWorse       = abtest.Worse
	CodeWithinNoise = abtest.WithinNoise
)

// Detectable is the smallest effect a decision could tell from noise:
// half its interval's width, relative to its ratio (0.07: an effect
// under about ±7% hides in the noise).
func Detectable(d *abtest.Decision) float64 {
	if d == nil || d.CIHigh <= 0 || d.RatioMedian <= 0 || math.IsInf(d.CIHigh, 0) {
		return 0
	}
	return round3((d.CIHigh - d.CILow) / 2 / d.RatioMedian)
}

// final measures the original stack against the tuned one: every kept
// step rolled back (newest first) is A, every kept step applied again
// (oldest first) is B, interleaved from B (where the loop left the
// stack). A tuned stack that measures worse is rolled back whole.
func (t *tuner) final(ctx context.Context) (*Final, error) {
	if len(t.kept) == 0 {
		return nil, nil
	}
	f := &Final{Steps: []string{}}
	for _, k := range t.kept {
		f.Steps = append(f.Steps, k.label)
	}
	t.say("final: the stack as found against the tuned one (%d kept step(s)), interleaved", len(t.kept))
	sw := &stackSwitch{t: t, steps: t.kept, inForce: len(t.kept)}
	ab := t.opt.AB
	ab.Start = abtest.B
	kept := t.keptChanges()
	t.inForce = func(arm abtest.Arm) []changeset.Change {
		if arm == abtest.B {
			return kept
		}
		return nil
	}
	defer func() { t.inForce = nil }()
	r, err := abtest.Run(ctx, abtest.Experiment{ToA: sw.to(abtest.A), ToB: sw.to(abtest.B), Measure: t.measure(labelOriginal, labelTuned)}, ab)
	if err != nil {
		// The stack goes back to the tuned state the loop decided on.
		return nil, sw.restore(ctx, err)
	}
	d := r.Decision
	f.Test, f.Ratio, f.Interval, f.Level = &d, d.RatioMedian, [2]float64{d.CILow, d.CIHigh}, d.Level
	f.Decision, f.Detectable = d.Verdict, Detectable(&d)
	f.Original, f.Tuned = r.Scores(abtest.A), r.Scores(abtest.B)
	want := abtest.B
	if d.Verdict == abtest.Worse {
		want, f.RolledBack = abtest.A, true
	}
	t.decided(ctx, labelOriginal, labelTuned, &d, want == abtest.B)
	if sw.inForce != len(sw.steps) && want == abtest.B || sw.inForce != 0 && want == abtest.A {
		if err := sw.to(want)(ctx); err != nil {
			return f, sw.restore(ctx, fmt.Errorf("final: putting the stack in the %s state: %w", stateName(want), err))
		}
	}
	if f.RolledBack {
		t.kept = nil
	}
	t.say("final: %s", d.Reason)
	return f, nil
}

// Labels of the final comparison's runs in the history.
const (
	labelOriginal = "original"
	labelTuned    = "tuned"
)

func stateName(a abtest.Arm) string {
	if a == abtest.A {
		return "original"
	}
	return "tuned"
}

// stackSwitch moves a stack between the state before its kept steps (A:
// each step's transaction rolled back, newest first) and the state with
// all of them (B: each applied again, oldest first). inForce counts the
// steps in force, so a switch that fails half-way is resumed, not
// repeated.
type stackSwitch struct {
	t       *tuner
	steps   []keptStep
	inForce int
}

func (s *stackSwitch) to(arm abtest.Arm) func(context.Context) error {
	return func(ctx context.Context) error {
		for arm == abtest.A && s.inForce > 0 {
			k := s.steps[s.inForce-1]
			_, err := apply.Rollback(ctx, k.targets, k.opt)
			// A rollback that failed half-way is still the step's way out:
			// apply's next transaction (Run, when the step goes back in)
			// first finishes it from its journal.
			s.inForce--
			if err != nil {
				return fmt.Errorf("rolling back %s: %w", k.label, err)
			}
		}
		for arm == abtest.B && s.inForce < len(s.steps) {
			k := s.steps[s.inForce]
			if _, err := apply.Run(ctx, k.targets, k.opt); err != nil {
				return fmt.Errorf("applying %s again: %w", k.label, err)
			}
			s.inForce++
		}
		return s.t.afterSwitch(ctx)
	}
}

// restore puts the stack back in the tuned state after err, on a context
// of its own (an interrupt must not leave half the steps in force), and
// says where it is.
func (s *stackSwitch) restore(ctx context.Context, err error) error {
	if s.inForce == len(s.steps) {
		return err
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	if rerr := s.to(abtest.B)(uctx); rerr != nil {
		return fmt.Errorf("%w; putting the tuned state back failed too, with %d of %d kept steps in force: %w", err, s.inForce, len(s.steps), rerr)
	}
	s.t.say("the tuned state is back in force")
	return errors.Join(err, errTunedBack)
}

// errTunedBack says, after an error in the final comparison, that the
// stack was put back in the tuned state.
var errTunedBack = errors.New("tune put the tuned state back: every kept step is in force")

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
