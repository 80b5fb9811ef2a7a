package scenario

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

// PenaltyDefault is the Scoring.Penalties key ("error" in a file) whose
// penalty applies to every error kind without its own.
const PenaltyDefault loadgen.ErrKind = "error"

// penaltySlow is the field of scoring.penalties that sets
// Scoring.SlowPenalty (a slow response is no error kind).
const penaltySlow = "slow"

// Scoring turns a run's result into a score and a verdict.
type Scoring struct {
	// Success is the points per successful request, multiplied by its
	// step's score weight.
	Success float64
	// Penalties are the points subtracted per failed request, by error
	// kind; PenaltyDefault covers the kinds not listed.
	Penalties map[loadgen.ErrKind]float64
	// SlowPenalty is the points subtracted per slow response (a response
	// slower than its step's slow_after), on top of any failure's penalty;
	// "slow" in a file's penalties, 0 by default.
	SlowPenalty float64
	// FailIf are the limits past which the run fails.
	FailIf FailIf
}

// FailIf holds the limits of a passing run. A zero latency limit is no
// limit; ErrorRate and Unfinished always apply (0 fails on any, 1 never
// fails).
type FailIf struct {
	// ErrorRate is the largest passing fraction of failed requests. The
	// requests left unsent and those stalled in flight at the end
	// (loadgen.Result.Unsent and Stalled) count as failed ones:
	//
	//	(Errors + Unsent + Stalled) / (Requests + Unsent + Stalled)
	//
	// Requests in flight at the end that are not stalled (younger than
	// the longest completed request: cut by the end of the run) are in
	// neither term.
	ErrorRate float64
	// Unfinished is the largest passing fraction of requests left unsent
	// or stalled at the end: (Unsent + Stalled) / (Requests + Unsent +
	// Stalled). It fails a saturated run even where ErrorRate is relaxed.
	Unfinished float64
	// SlowRate is the largest passing fraction of slow responses among
	// the requests of the steps with a slow_after (ScoreResult.SlowRate);
	// 1, the default, never fails. Only ScoreRun counts slow responses.
	SlowRate float64
	// Latency limits over all requests with a latency (see loadgen.Result).
	Mean, P50, P90, P99, Max time.Duration
}

// DefaultScoring is the scoring of a scenario without a scoring section, and
// what a scoring section overrides field by field: 1 point per success, 10
// per error, 20 per timeout, 50 per failed content check, and a run fails
// past 1% errors or past 1% of its requests left unsent or stalled in
// flight at the end. Slow responses cost nothing and fail nothing unless a
// scenario says so. Do not modify it; copy it and its Penalties map.
var DefaultScoring = Scoring{
	Success: 1,
	Penalties: map[loadgen.ErrKind]float64{
		PenaltyDefault:     10,
		loadgen.ErrTimeout: 20,
		loadgen.ErrCheck:   50,
	},
	FailIf: FailIf{ErrorRate: 0.01, Unfinished: 0.01, SlowRate: 1},
}

func (s Scoring) clone() Scoring {
	s.Penalties = maps.Clone(s.Penalties)
	if s.Penalties == nil {
		s.Penalties = map[loadgen.ErrKind]float64{}
	}
	return s
}

// Penalty returns the points subtracted for one failed request of kind k.
func (s Scoring) Penalty(k loadgen.ErrKind) float64 {
	if v, ok := s.Penalties[k]; ok {
		return v
	}
	return s.Penalties[PenaltyDefault]
}

// ScoreResult is a scored run.
type ScoreResult struct {
	// Score is Points − Penalty, never below 0.
	Score float64
	// Passed is false when a FailIf limit was crossed, or when nothing
	// succeeded; Reasons says why, one line each ("error rate 3.2% > 1%").
	Passed  bool
	Reasons []string
	// Points is Σ successes × Success × score weight over the steps;
	// Penalty is Σ failures × Penalty(kind) + SlowPenalty.
	Points, Penalty float64
	// ErrorRate is the failed share of the run, the requests left unsent
	// or stalled in flight at the end counting as failed (see
	// FailIf.ErrorRate).
	ErrorRate float64
	// UnfinishedRate is the share of the requests left unsent or stalled
	// in flight at the end (see FailIf.Unfinished).
	UnfinishedRate float64
	// Successes and Failures count requests by step name.
	Successes, Failures map[string]int64
	// FailuresByKind counts failed requests by error kind.
	FailuresByKind map[loadgen.ErrKind]int64
	// Slow counts the slow responses (ScoreRun only), SlowByStep by step
	// name for every step with a slow_after (zero counts included).
	Slow       int64
	SlowByStep map[string]int64
	// SlowRate is Slow / the requests of the steps with a slow_after,
	// checked against FailIf.SlowRate; SlowPenalty is Slow ×
	// Scoring.SlowPenalty, a part of Penalty.
	SlowRate, SlowPenalty float64
}

// Score scores r with the scenario's scoring and step score weights,
// without slow responses (see ScoreRun).
func (s *Scenario) Score(r *loadgen.Result) ScoreResult {
	return Score(r, s.Scoring, s.ScoreWeights())
}

// ScoreRun scores r, the result of running the workload of Plan.Run, with
// the slow responses its Tally counted: each costs Scoring.SlowPenalty, and
// past FailIf.SlowRate of the requests of the steps with a slow_after the
// run fails. A nil t scores as Score does.
func (s *Scenario) ScoreRun(r *loadgen.Result, t *Tally) ScoreResult {
	if t == nil {
		return s.Score(r)
	}
	return score(r, s.Scoring, s.ScoreWeights(), &slowCounts{after: s.SlowAfters(), counts: t.Slow(r)})
}

// slowCounts are a run's slow responses by step (Workload order) and each
// step's slow_after (0: none).
type slowCounts struct {
	after  []time.Duration
	counts []int64
}

// Score scores r: stepWeights[i] is the score weight of r.Steps[i], 1 where
// stepWeights is too short (so a plain URL run passes nil). A result
// without steps is scored as one step from its totals.
//
//	Score = max(0, Σ_steps successes × s.Success × weight − Σ_kinds failures × s.Penalty(kind))
//
// where a step's successes are its Requests − Errors, and failures that its
// ErrorsByKind does not account for are charged PenaltyDefault.
func Score(r *loadgen.Result, s Scoring, stepWeights []float64) ScoreResult {
	return score(r, s, stepWeights, nil)
}

func score(r *loadgen.Result, s Scoring, stepWeights []float64, slow *slowCounts) ScoreResult {
	out := ScoreResult{
		Successes:      map[string]int64{},
		Failures:       map[string]int64{},
		FailuresByKind: map[loadgen.ErrKind]int64{},
	}
	if r == nil {
		out.Reasons = []string{"no result"}
		return out
	}
	steps := r.Steps
	if len(steps) == 0 && r.Requests > 0 {
		steps = []loadgen.StepResult{{Requests: r.Requests, Errors: r.Errors, ErrorsByKind: r.ErrorsByKind}}
	}
	var successes, slowOf int64
	for i, st := range steps {
		if slow != nil && i < len(slow.after) && slow.after[i] > 0 {
			if out.SlowByStep == nil {
				out.SlowByStep = map[string]int64{}
			}
			var n int64
			if i < len(slow.counts) {
				n = slow.counts[i]
			}
			out.SlowByStep[st.Name] += n
			out.Slow += n
			slowOf += st.Requests
		}
		w := 1.0
		if i < len(stepWeights) {
			w = stepWeights[i]
		}
		ok := max(st.Requests-st.Errors, 0)
		successes += ok
		out.Successes[st.Name] += ok
		out.Failures[st.Name] += st.Errors
		out.Points += float64(ok) * s.Success * w
		var kinds int64
		for k, n := range st.ErrorsByKind {
			if n <= 0 {
				continue
			}
			kinds += n
			out.FailuresByKind[k] += n
			out.Penalty += float64(n) * s.Penalty(k)
		}
		if rest := st.Errors - kinds; rest > 0 {
			out.FailuresByKind[PenaltyDefault] += rest
			out.Penalty += float64(rest) * s.Penalty(PenaltyDefault)
		}
	}
	out.SlowPenalty = float64(out.Slow) * s.SlowPenalty
	out.Penalty += out.SlowPenalty
	if slowOf > 0 {
		out.SlowRate = float64(out.Slow) / float64(slowOf)
	}
	out.Score = max(out.Points-out.Penalty, 0)
	// Requests in flight at the end but not stalled were cut by the end
	// of the run (see loadgen.Result.Stalled): neither failed nor counted.
	unfinished := max(r.Unsent, 0) + max(r.Stalled, 0)
	all := r.Requests + unfinished
	if all > 0 {
		out.ErrorRate = float64(r.Errors+unfinished) / float64(all)
		out.UnfinishedRate = float64(unfinished) / float64(all)
	}
	switch {
	case r.Requests == 0:
		out.Reasons = append(out.Reasons, "no requests completed")
	case successes == 0:
		out.Reasons = append(out.Reasons, "no successful requests")
	}
	if unfinished > 0 && out.UnfinishedRate > s.FailIf.Unfinished {
		out.Reasons = append(out.Reasons, fmt.Sprintf("unfinished %s > %s (%s)", percent(out.UnfinishedRate), percent(s.FailIf.Unfinished), UnfinishedCounts(r)))
	}
	if all > 0 && out.ErrorRate > s.FailIf.ErrorRate {
		reason := fmt.Sprintf("error rate %s > %s", percent(out.ErrorRate), percent(s.FailIf.ErrorRate))
		if unfinished > 0 {
			reason += " (unsent and stalled requests count as failed)"
		}
		out.Reasons = append(out.Reasons, reason)
	}
	if out.Slow > 0 && out.SlowRate > s.FailIf.SlowRate {
		out.Reasons = append(out.Reasons, fmt.Sprintf("slow rate %s > %s (%s of %s requests slower than their step's slow_after)",
			percent(out.SlowRate), percent(s.FailIf.SlowRate), group(out.Slow), group(slowOf)))
	}
	for _, l := range []struct {
		name       string
		got, limit time.Duration
	}{
		{"mean", r.Latency.Mean, s.FailIf.Mean},
		{"p50", r.Latency.P50, s.FailIf.P50},
		{"p90", r.Latency.P90, s.FailIf.P90},
		{"p99", r.Latency.P99, s.FailIf.P99},
		{"max", r.Latency.Max, s.FailIf.Max},
	} {
		if l.limit > 0 && l.got > l.limit {
			out.Reasons = append(out.Reasons, fmt.Sprintf("%s latency %v > %v", l.name, roundDuration(l.got), l.limit))
		}
	}
	out.Passed = len(out.Reasons) == 0
	return out
}

// UnfinishedCounts describes the requests r left unfinished, as its fail
// reasons do, with the age bound of the stalled ones: "2,999,990 unsent,
// 10 stalled: in flight at the end for longer than 2.003s, the longest
// completed request", or "4 stalled: in flight at the end, no request
// completed"; "" when r has neither unsent nor stalled requests.
func UnfinishedCounts(r *loadgen.Result) string {
	if r == nil {
		return ""
	}
	var parts []string
	if r.Unsent > 0 {
		parts = append(parts, group(r.Unsent)+" unsent")
	}
	switch {
	case r.Stalled <= 0:
	case r.Requests <= 0:
		parts = append(parts, group(r.Stalled)+" stalled: in flight at the end, no request completed")
	default:
		parts = append(parts, fmt.Sprintf("%s stalled: in flight at the end for longer than %v, the longest completed request",
			group(r.Stalled), roundDuration(r.StalledAfter)))
	}
	return strings.Join(parts, ", ")
}

// group formats n ≥ 0 with thousands separators: 2999990 → "2,999,990".
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i > 0 && s[i-1] != '-' && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// percent formats a fraction as a percentage with up to 3 significant
// digits: 0.032 → "3.2%".
func percent(f float64) string {
	return strconv.FormatFloat(f*100, 'g', 3, 64) + "%"
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d
}
