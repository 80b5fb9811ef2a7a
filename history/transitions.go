package history

import (
	"encoding/json"
	"math"
	"slices"
	"time"

	"github.com/stacktune/stacktune/internal/stats"
)

// Step is one row of the transition table: consecutive runs under one label.
type Step struct {
	Label string
	// Again is set when an earlier step had the same label: the label was
	// measured again after other changes (for example "baseline" after a
	// revert).
	Again  bool
	Runs   int
	Scores []float64 // the runs' scores, in run order

	Min, Median, Max float64
	Passed           int // runs that passed

	// XFirst is Median / the first step's median. ChangeFirst and ChangePrev
	// are relative changes of Median against the first and the previous
	// step's median: (m - base) / |base|, so +0.25 is 25% higher.
	XFirst                  float64
	ChangeFirst, ChangePrev float64
	// HasFirst reports whether XFirst and ChangeFirst are defined: false
	// when the first step's median is 0 (a failed baseline), and they are
	// then left 0. HasPrev does the same for ChangePrev; it is false for the
	// first step, which has no previous one.
	HasFirst, HasPrev bool

	RPSMedian float64
	P99Median time.Duration
}

// Transitions groups runs into steps: consecutive runs with the same label
// form one step, in the order given (Store.Runs returns oldest first). A
// label that comes back after another label starts a new step, marked
// Again, so a re-measurement shows where it happened.
func Transitions(runs []Run) []Step {
	var steps []Step
	seen := map[string]bool{}
	for i := 0; i < len(runs); {
		j := i + 1
		for j < len(runs) && runs[j].Label == runs[i].Label {
			j++
		}
		steps = append(steps, newStep(runs[i:j], seen[runs[i].Label]))
		seen[runs[i].Label] = true
		i = j
	}
	for i := range steps {
		s := &steps[i]
		if base := steps[0].Median; base != 0 {
			s.XFirst = s.Median / base
			s.ChangeFirst = (s.Median - base) / math.Abs(base)
			s.HasFirst = true
		}
		if i > 0 {
			if prev := steps[i-1].Median; prev != 0 {
				s.ChangePrev = (s.Median - prev) / math.Abs(prev)
				s.HasPrev = true
			}
		}
	}
	return steps
}

func newStep(runs []Run, again bool) Step {
	s := Step{Label: runs[0].Label, Again: again, Runs: len(runs)}
	rps := make([]float64, len(runs))
	p99 := make([]float64, len(runs))
	for i, r := range runs {
		s.Scores = append(s.Scores, r.Score)
		rps[i] = r.RPS
		p99[i] = float64(r.P99)
		if r.Passed {
			s.Passed++
		}
	}
	s.Min, s.Max = slices.Min(s.Scores), slices.Max(s.Scores)
	s.Median = stats.Median(s.Scores)
	s.RPSMedian = stats.Median(rps)
	s.P99Median = time.Duration(math.Round(stats.Median(p99)))
	return s
}

// stepJSON is a Step as JSON: ratios that are undefined are null (never
// NaN, which JSON cannot carry), durations are seconds as elsewhere in
// stacktune's JSON.
type stepJSON struct {
	Label       string    `json:"label"`
	Again       bool      `json:"again,omitempty"`
	Runs        int       `json:"runs"`
	Passed      int       `json:"passed"`
	Scores      []float64 `json:"scores"`
	Min         float64   `json:"min"`
	Median      float64   `json:"median"`
	Max         float64   `json:"max"`
	XFirst      *float64  `json:"x_first"`
	ChangeFirst *float64  `json:"change_first"`
	ChangePrev  *float64  `json:"change_prev"`
	RPSMedian   float64   `json:"rps_median"`
	P99Median   float64   `json:"p99_median_s"`
}

// JSONShape is the type MarshalJSON writes (see internal/jsonschema).
func (Step) JSONShape() any { return stepJSON{} }

// MarshalJSON writes the step with snake_case names; x_first, change_first
// and change_prev are null when undefined (see HasFirst and HasPrev).
func (s Step) MarshalJSON() ([]byte, error) {
	j := stepJSON{
		Label: s.Label, Again: s.Again, Runs: s.Runs, Passed: s.Passed, Scores: s.Scores,
		Min: s.Min, Median: s.Median, Max: s.Max,
		RPSMedian: s.RPSMedian, P99Median: s.P99Median.Seconds(),
	}
	if j.Scores == nil {
		j.Scores = []float64{}
	}
	if s.HasFirst {
		j.XFirst, j.ChangeFirst = &s.XFirst, &s.ChangeFirst
	}
	if s.HasPrev {
		j.ChangePrev = &s.ChangePrev
	}
	return json.Marshal(j)
}
