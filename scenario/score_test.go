package scenario

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

func TestScore(t *testing.T) {
	custom := Scoring{
		Success:   2,
		Penalties: map[loadgen.ErrKind]float64{PenaltyDefault: 1, loadgen.ErrCheck: 5},
		FailIf:    FailIf{ErrorRate: 0.5, P99: time.Second, Max: 3 * time.Second},
	}
	tests := []struct {
		name    string
		result  *loadgen.Result
		scoring Scoring
		weights []float64
		score   float64
		points  float64
		penalty float64
		reasons []string
	}{
		{
			name: "plain URL run, all good",
			result: &loadgen.Result{Requests: 1000, Steps: []loadgen.StepResult{
				{Name: "GET /", Requests: 1000},
			}},
			scoring: DefaultScoring,
			score:   1000, points: 1000,
		},
		{
			name: "no steps: scored from the totals",
			result: &loadgen.Result{Requests: 100, Errors: 1,
				ErrorsByKind: map[loadgen.ErrKind]int64{loadgen.ErrTimeout: 1}},
			scoring: DefaultScoring,
			score:   99 - 20, points: 99, penalty: 20,
		},
		{
			name: "weights and penalties by kind",
			result: &loadgen.Result{Requests: 130, Errors: 6, Steps: []loadgen.StepResult{
				{Name: "login", Requests: 10},
				{Name: "home", Requests: 100, Errors: 4, ErrorsByKind: map[loadgen.ErrKind]int64{
					loadgen.ErrCheck: 1, loadgen.ErrTimeout: 1, loadgen.ErrStatus: 2}},
				{Name: "post", Requests: 20, Errors: 2, ErrorsByKind: map[loadgen.ErrKind]int64{loadgen.ErrReset: 2}},
			}},
			scoring: DefaultScoring,
			weights: []float64{0, 10, 3},
			// points: 0×10 + 96×10 + 18×3; penalty: 50 + 20 + 2×10 + 2×10
			score: 960 + 54 - 110, points: 1014, penalty: 110,
			reasons: []string{"error rate 4.62% > 1%"},
		},
		{
			name: "never below zero; missing weights are 1",
			result: &loadgen.Result{Requests: 10, Errors: 5, Steps: []loadgen.StepResult{
				{Name: "a", Requests: 10, Errors: 5, ErrorsByKind: map[loadgen.ErrKind]int64{loadgen.ErrConnect: 5}},
			}},
			scoring: DefaultScoring,
			score:   0, points: 5, penalty: 50,
			reasons: []string{"error rate 50% > 1%"},
		},
		{
			name: "uncounted kinds cost the default penalty",
			result: &loadgen.Result{Requests: 10, Errors: 3, Steps: []loadgen.StepResult{
				{Name: "a", Requests: 10, Errors: 3, ErrorsByKind: map[loadgen.ErrKind]int64{loadgen.ErrCheck: 1}},
			}},
			scoring: custom,
			score:   14 - 5 - 2, points: 14, penalty: 7,
		},
		{
			name: "latency limits",
			result: &loadgen.Result{Requests: 10, Steps: []loadgen.StepResult{{Name: "a", Requests: 10}},
				Latency: loadgen.Latency{P99: 1500 * time.Millisecond, Max: 3 * time.Second}},
			scoring: custom,
			score:   20, points: 20,
			reasons: []string{"p99 latency 1.5s > 1s"},
		},
		{
			name:    "nothing ran",
			result:  &loadgen.Result{},
			scoring: DefaultScoring,
			reasons: []string{"no requests completed"},
		},
		{
			name: "nothing succeeded",
			result: &loadgen.Result{Requests: 3, Errors: 3, Steps: []loadgen.StepResult{
				{Name: "a", Requests: 3, Errors: 3, ErrorsByKind: map[loadgen.ErrKind]int64{loadgen.ErrStatus: 3}}}},
			scoring: custom,
			penalty: 3,
			reasons: []string{"no successful requests", "error rate 100% > 50%"},
		},
		{
			name:    "nil result",
			scoring: DefaultScoring,
			reasons: []string{"no result"},
		},
		{
			name: "saturated open model: the backlog fails the run",
			result: &loadgen.Result{Requests: 10, Unsent: 2_999_980, InFlight: 10, Stalled: 10, StalledAfter: 2003456 * time.Microsecond,
				Steps: []loadgen.StepResult{{Name: "GET /", Requests: 10}}},
			scoring: DefaultScoring,
			score:   10, points: 10,
			reasons: []string{"unfinished 100% > 1% (2,999,980 unsent, 10 stalled: in flight at the end for longer than 2.003s, the longest completed request)",
				"error rate 100% > 1% (unsent and stalled requests count as failed)"},
		},
		{
			name:    "server never answers: all in flight stalled, nothing completed",
			result:  &loadgen.Result{InFlight: 4, Stalled: 4},
			scoring: DefaultScoring,
			reasons: []string{"no requests completed", "unfinished 100% > 1% (4 stalled: in flight at the end, no request completed)",
				"error rate 100% > 1% (unsent and stalled requests count as failed)"},
		},
		{
			name: "closed run of a slow app: in flight but not stalled pass",
			result: &loadgen.Result{Requests: 200, InFlight: 8, StalledAfter: 900 * time.Millisecond, Steps: []loadgen.StepResult{
				{Name: "GET /", Requests: 200}}},
			scoring: DefaultScoring,
			score:   200, points: 200,
		},
		{
			name: "a few stalled at the end of a long run pass",
			result: &loadgen.Result{Requests: 1000, InFlight: 5, Stalled: 5, StalledAfter: time.Second, Steps: []loadgen.StepResult{
				{Name: "GET /", Requests: 1000}}},
			scoring: DefaultScoring,
			score:   1000, points: 1000,
		},
		{
			name: "stalled tip the error rate over",
			result: &loadgen.Result{Requests: 100, Errors: 1, InFlight: 3, Stalled: 1, StalledAfter: 850 * time.Microsecond, Steps: []loadgen.StepResult{
				{Name: "GET /", Requests: 100, Errors: 1, ErrorsByKind: map[loadgen.ErrKind]int64{loadgen.ErrStatus: 1}}}},
			scoring: DefaultScoring,
			score:   99 - 10, points: 99, penalty: 10,
			reasons: []string{"error rate 1.98% > 1% (unsent and stalled requests count as failed)"},
		},
		{
			name: "stalled fail the unfinished limit, with the age bound",
			result: &loadgen.Result{Requests: 50, InFlight: 8, Stalled: 2, StalledAfter: 12345678 * time.Nanosecond, Steps: []loadgen.StepResult{
				{Name: "GET /", Requests: 50}}},
			scoring: Scoring{Success: 1, FailIf: FailIf{ErrorRate: 1, Unfinished: 0.01}},
			score:   50, points: 50,
			reasons: []string{"unfinished 3.85% > 1% (2 stalled: in flight at the end for longer than 12.35ms, the longest completed request)"},
		},
		{
			name: "unfinished limit holds where the error rate is relaxed",
			result: &loadgen.Result{Requests: 90, Unsent: 10, Steps: []loadgen.StepResult{
				{Name: "GET /", Requests: 90}}},
			scoring: Scoring{Success: 1, FailIf: FailIf{ErrorRate: 1, Unfinished: 0.05}},
			score:   90, points: 90,
			reasons: []string{"unfinished 10% > 5% (10 unsent)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Score(tt.result, tt.scoring, tt.weights)
			if math.Abs(got.Score-tt.score) > 1e-9 || math.Abs(got.Points-tt.points) > 1e-9 || math.Abs(got.Penalty-tt.penalty) > 1e-9 {
				t.Errorf("score %v points %v penalty %v, want %v %v %v", got.Score, got.Points, got.Penalty, tt.score, tt.points, tt.penalty)
			}
			if !slices.Equal(got.Reasons, tt.reasons) {
				t.Errorf("reasons %q, want %q", got.Reasons, tt.reasons)
			}
			if got.Passed != (len(tt.reasons) == 0) {
				t.Errorf("passed %v with reasons %q", got.Passed, got.Reasons)
			}
		})
	}
}

func TestScoreCounts(t *testing.T) {
	r := &loadgen.Result{Requests: 30, Errors: 4, Steps: []loadgen.StepResult{
		{Name: "login", Requests: 5, Errors: 1, ErrorsByKind: map[loadgen.ErrKind]int64{loadgen.ErrStatus: 1}},
		{Name: "home", Requests: 25, Errors: 3, ErrorsByKind: map[loadgen.ErrKind]int64{loadgen.ErrCheck: 2, loadgen.ErrTimeout: 1}},
	}}
	got := Score(r, DefaultScoring, nil)
	if got.Successes["login"] != 4 || got.Successes["home"] != 22 || got.Failures["login"] != 1 || got.Failures["home"] != 3 {
		t.Errorf("successes %v failures %v", got.Successes, got.Failures)
	}
	if got.FailuresByKind[loadgen.ErrCheck] != 2 || got.FailuresByKind[loadgen.ErrStatus] != 1 || got.FailuresByKind[loadgen.ErrTimeout] != 1 {
		t.Errorf("by kind %v", got.FailuresByKind)
	}
	if math.Abs(got.ErrorRate-4.0/30) > 1e-12 || got.UnfinishedRate != 0 {
		t.Errorf("error rate %v, unfinished %v", got.ErrorRate, got.UnfinishedRate)
	}
	// 6 unsent and 4 stalled of 7 in flight: the 3 others were cut by
	// the end of the run, and count nowhere.
	r.Unsent, r.InFlight, r.Stalled = 6, 7, 4
	got = Score(r, DefaultScoring, nil)
	if math.Abs(got.ErrorRate-14.0/40) > 1e-12 || math.Abs(got.UnfinishedRate-10.0/40) > 1e-12 {
		t.Errorf("with 6 unsent and 4 stalled: error rate %v, unfinished %v", got.ErrorRate, got.UnfinishedRate)
	}
}

func TestScenarioScore(t *testing.T) {
	s, err := Load("example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// login, home, profile, my page, entry, post comment
	r := &loadgen.Result{Requests: 60, Errors: 1, Steps: []loadgen.StepResult{
		{Name: "login", Requests: 10}, {Name: "home", Requests: 10}, {Name: "profile", Requests: 10},
		{Name: "my page", Requests: 10}, {Name: "entry", Requests: 10},
		{Name: "post comment", Requests: 10, Errors: 1, ErrorsByKind: map[loadgen.ErrKind]int64{loadgen.ErrCheck: 1}},
	}}
	got := s.Score(r)
	// 10×1 + 10×10 + 10×2 + 10×2 + 10×3 + 9×1 − 50
	if got.Score != 189-50 {
		t.Errorf("score %v", got.Score)
	}
	if got.Passed || !slices.Equal(got.Reasons, []string{"error rate 1.67% > 1%"}) {
		t.Errorf("passed %v reasons %q", got.Passed, got.Reasons)
	}
}
