package abtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/stacktune/stacktune/internal/stats"
)

// Verdict is what a comparison concluded about B against A, as a stable
// code (docs/json.md); report says it in words.
type Verdict string

// Codes lists the verdicts.
func (Verdict) Codes() []string {
	return []string{string(Better), string(Worse), string(WithinNoise)}
}

// The three verdicts.
const (
	// Better: B scores higher than A beyond the noise (and by more than
	// Options.MinEffect).
	Better Verdict = "better"
	// Worse: B scores lower than A beyond the noise.
	Worse Verdict = "worse"
	// WithinNoise: the runs cannot tell B from A. It is not a proof that
	// B equals A: the interval says how large a difference could still
	// hide in the noise.
	WithinNoise Verdict = "within_noise"
)

// Decision is a stated comparison of B (the step) against A (the state
// before it).
type Decision struct {
	Verdict Verdict `json:"verdict"`
	// RatioMedian is median(B)/median(A) of the runs.
	RatioMedian float64 `json:"ratio_median"`
	// CILow and CIHigh are the percentile bootstrap interval of that
	// ratio at Level.
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// Level is the confidence level of this interval: Options.Level for
	// Compare, the look's own (wider) level in a sequential Run.
	Level float64 `json:"level"`
	// PValue is the two-sided Mann-Whitney U p value, the second
	// opinion: a verdict other than WithinNoise needs it at or below
	// 1-Level as well.
	PValue float64 `json:"p_value"`
	RunsA  int     `json:"runs_a"`
	RunsB  int     `json:"runs_b"`
	// Reason says in one sentence why, with the numbers.
	Reason string `json:"reason"`
}

// Options are the test's settings. The zero value is the default
// everywhere.
type Options struct {
	// Level is the confidence level, overall: default 0.95 (a 5% chance
	// of a verdict other than WithinNoise when B is no different from
	// A). A sequential Run spends 1-Level over its looks (Schedule).
	Level float64
	// MinEffect is the smallest improvement that counts: Better needs the
	// whole interval above 1+MinEffect (default 0; 0.05 asks for at
	// least 5%). Worse needs the interval below 1, whatever MinEffect.
	MinEffect float64
	// Resamples is the number of bootstrap resamples: default 10000.
	Resamples int
	// Seed makes the bootstrap deterministic: the same runs and the same
	// seed give the same interval (0 is a seed like any other).
	Seed uint64

	// MinRuns and MaxRuns bound a sequential Run's runs per arm: default
	// 4 and 8. Runs are taken in blocks (Order) and a look happens at the
	// end of each block from MinRuns runs per arm on; the last look is at
	// the last block end not beyond MaxRuns.
	MinRuns, MaxRuns int
	// Order is the order of a sequential Run's runs: default ABBA.
	Order Order
	// Start is the state the system is in when Run is called (no switch
	// is made before the first run when it matches the first block):
	// default A. The blocks are mirrored to start with it (BAAB).
	Start Arm
}

// Default settings.
const (
	DefaultLevel     = 0.95
	DefaultResamples = 10000
	DefaultMinRuns   = 4
	DefaultMaxRuns   = 8
)

// ErrInput is returned (wrapped, with the detail) for runs no test can
// take: an empty arm, a score that is NaN, infinite or negative, or an A
// whose median is 0 (a ratio to nothing).
var ErrInput = errors.New("abtest: unusable scores")

func (o Options) withDefaults() (Options, error) {
	if o.Level == 0 {
		o.Level = DefaultLevel
	}
	if !(o.Level > 0 && o.Level < 1) {
		return o, fmt.Errorf("abtest: level %v is not between 0 and 1", o.Level)
	}
	if o.MinEffect < 0 || math.IsNaN(o.MinEffect) || math.IsInf(o.MinEffect, 0) {
		return o, fmt.Errorf("abtest: minimum effect %v is not a finite value >= 0", o.MinEffect)
	}
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	if o.Resamples < 100 {
		return o, fmt.Errorf("abtest: %d resamples are too few for a percentile interval (at least 100)", o.Resamples)
	}
	if o.MinRuns == 0 {
		o.MinRuns = DefaultMinRuns
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = max(DefaultMaxRuns, o.MinRuns)
	}
	if o.MinRuns < 1 || o.MaxRuns < o.MinRuns {
		return o, fmt.Errorf("abtest: runs per arm from %d to %d", o.MinRuns, o.MaxRuns)
	}
	if o.Order != ABBA && o.Order != Alternate {
		return o, fmt.Errorf("abtest: unknown order %d", o.Order)
	}
	if o.Start != A && o.Start != B {
		return o, fmt.Errorf("abtest: unknown start state %d", o.Start)
	}
	return o, nil
}

// Compare compares one fixed set of runs of B with one of A at
// opt.Level: one look, no runs added. For runs taken in a sequence that
// stops when it is decided, use Run, whose looks are each at a wider
// level so the error rate holds overall.
func Compare(a, b []float64, opt Options) (Decision, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Decision{}, err
	}
	return decide(a, b, 1-opt.Level, opt, "")
}

// check refuses runs no test can take.
func check(name string, vs []float64) error {
	if len(vs) == 0 {
		return fmt.Errorf("%w: no runs of %s", ErrInput, name)
	}
	for i, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%w: run %d of %s scored %v (scores are finite and >= 0)", ErrInput, i+1, name, v)
		}
	}
	return nil
}

// decide is one look at alpha (two-sided): the verdict needs the
// bootstrap interval at 1-alpha on one side of 1 (above 1+MinEffect for
// Better) and Mann-Whitney's p at most alpha in the same direction. where
// prefixes the reason (the look, in a sequential run).
func decide(a, b []float64, alpha float64, opt Options, where string) (Decision, error) {
	if err := check("A", a); err != nil {
		return Decision{}, err
	}
	if err := check("B", b); err != nil {
		return Decision{}, err
	}
	ma, mb := stats.Median(a), stats.Median(b)
	if ma == 0 {
		return Decision{}, fmt.Errorf("%w: the median of A is 0, so a ratio B/A means nothing (are A's runs failing?)", ErrInput)
	}
	d := Decision{RatioMedian: mb / ma, Level: 1 - alpha, RunsA: len(a), RunsB: len(b), Verdict: WithinNoise}
	d.CILow, d.CIHigh = bootstrap{resamples: opt.Resamples, seed: opt.Seed}.interval(a, b, alpha)
	mw := mannWhitney(a, b, false)
	d.PValue = mw.P
	// A tolerance for p values equal to alpha up to rounding (the
	// schedule gives a look exactly the smallest p it can reach).
	significant := mw.P <= alpha*(1+1e-9)
	half := float64(len(a)*len(b)) / 2
	ci := fmt.Sprintf("B/A = %.3f, %s interval [%.3f, %.3f]", d.RatioMedian, pct(d.Level), d.CILow, d.CIHigh)
	test := fmt.Sprintf("Mann-Whitney p = %.4f (%s, U = %g of %d)", mw.P, map[bool]string{true: "exact", false: "normal approximation"}[mw.Exact], mw.U, len(a)*len(b))
	floor := smallestP(len(a), len(b))
	switch {
	case d.CILow > 1+opt.MinEffect && significant && mw.U > half:
		d.Verdict = Better
		d.Reason = fmt.Sprintf("better: %s lies above %s and %s <= %.4g agrees", ci, minText(opt.MinEffect), test, alpha)
	case d.CIHigh < 1 && significant && mw.U < half:
		d.Verdict = Worse
		d.Reason = fmt.Sprintf("worse: %s lies below 1 and %s <= %.4g agrees", ci, test, alpha)
	case floor > alpha*(1+1e-9):
		d.Reason = fmt.Sprintf("within noise: %d against %d runs cannot reach p <= %.4g (the smallest possible p is %.4f); %s", len(a), len(b), alpha, floor, ci)
	case d.CILow > 1 && d.CILow <= 1+opt.MinEffect && significant && mw.U > half:
		d.Reason = fmt.Sprintf("within noise: %s is above 1 but not above %s", ci, minText(opt.MinEffect))
	case d.CILow > 1 || d.CIHigh < 1:
		d.Reason = fmt.Sprintf("within noise: %s excludes 1 but the second opinion does not agree: %s > %.4g", ci, test, alpha)
	case significant:
		d.Reason = fmt.Sprintf("within noise: %s includes 1, although %s", ci, test)
	default:
		d.Reason = fmt.Sprintf("within noise: %s includes 1; %s", ci, test)
	}
	if where != "" {
		d.Reason = where + ": " + d.Reason
	}
	return d, nil
}

func minText(m float64) string {
	if m == 0 {
		return "1"
	}
	return fmt.Sprintf("1+%g", m)
}

// pct writes a level as a percentage without trailing zeros: 95%,
// 98.75%.
func pct(level float64) string {
	return fmt.Sprintf("%s%%", trimFloat(100*level))
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

// MarshalJSON writes the decision with an interval end that is not
// finite (a resample whose A scored nothing makes the ratio +Inf) as
// null: JSON has no infinity, and a report must not fail on one run that
// scored 0.
func (d Decision) MarshalJSON() ([]byte, error) { return json.Marshal(d.JSONShape()) }

// JSONShape is the value MarshalJSON writes (see internal/jsonschema).
func (d Decision) JSONShape() any {
	type plain Decision
	return struct {
		plain
		CILow  *float64 `json:"ci_low"`
		CIHigh *float64 `json:"ci_high"`
	}{plain(d), Finite(d.CILow), Finite(d.CIHigh)}
}

// Finite is v, or nil when v is NaN or infinite (JSON's null).
func Finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
