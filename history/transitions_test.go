package history

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// runsOf makes runs from label/score pairs, one minute apart; a label
// written "!label" is a failed run of label.
func runsOf(pairs ...any) []Run {
	var runs []Run
	for i := 0; i+1 < len(pairs); i += 2 {
		label := pairs[i].(string)
		failed := strings.HasPrefix(label, "!")
		runs = append(runs, Run{
			Label: strings.TrimPrefix(label, "!"), Score: toFloat(pairs[i+1]), Passed: !failed,
			Started: t0.Add(time.Duration(len(runs)) * time.Minute),
		})
	}
	return runs
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int:
		return float64(v)
	case float64:
		return v
	}
	panic("not a number")
}

// stepSummary is what the cases check of a Step.
type stepSummary struct {
	Label                   string
	Again                   bool
	Runs, Passed            int
	Min, Median, Max        float64
	XFirst                  float64
	ChangeFirst, ChangePrev float64
	HasFirst, HasPrev       bool
}

func summarize(steps []Step) []stepSummary {
	var out []stepSummary
	for _, s := range steps {
		out = append(out, stepSummary{
			s.Label, s.Again, s.Runs, s.Passed, s.Min, s.Median, s.Max,
			round4(s.XFirst), round4(s.ChangeFirst), round4(s.ChangePrev), s.HasFirst, s.HasPrev,
		})
	}
	return out
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

func TestTransitions(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs []Run
		want []stepSummary
	}{
		{"no runs", nil, nil},
		{
			"one run",
			runsOf("base", 100),
			[]stepSummary{{"base", false, 1, 1, 100, 100, 100, 1, 0, 0, true, false}},
		},
		{
			"consecutive labels group, even count median",
			runsOf("base", 100, "base", 90, "base", 110, "base", 120, "index", 300, "index", 280, "index", 290),
			[]stepSummary{
				{"base", false, 4, 4, 90, 105, 120, 1, 0, 0, true, false},
				{"index", false, 3, 3, 280, 290, 300, 2.7619, 1.7619, 1.7619, true, true},
			},
		},
		{
			"a label used again starts a new step",
			runsOf("base", 100, "index", 200, "index", 220, "base", 95, "cache", 400),
			[]stepSummary{
				{"base", false, 1, 1, 100, 100, 100, 1, 0, 0, true, false},
				{"index", false, 2, 2, 200, 210, 220, 2.1, 1.1, 1.1, true, true},
				{"base", true, 1, 1, 95, 95, 95, 0.95, -0.05, -0.5476, true, true},
				{"cache", false, 1, 1, 400, 400, 400, 4, 3, 3.2105, true, true},
			},
		},
		{
			"empty labels group like any other",
			runsOf("", 10, "", 20, "x", 30),
			[]stepSummary{
				{"", false, 2, 2, 10, 15, 20, 1, 0, 0, true, false},
				{"x", false, 1, 1, 30, 30, 30, 2, 1, 1, true, true},
			},
		},
		{
			"zero first median: ratios to it undefined",
			runsOf("broken", 0, "!broken", 0, "broken", 50, "fixed", 1000, "faster", 1500),
			[]stepSummary{
				{"broken", false, 3, 2, 0, 0, 50, 0, 0, 0, false, false},
				{"fixed", false, 1, 1, 1000, 1000, 1000, 0, 0, 0, false, false},
				{"faster", false, 1, 1, 1500, 1500, 1500, 0, 0, 0.5, false, true},
			},
		},
		{
			"zero previous median: change to it undefined",
			runsOf("base", 100, "oops", 0, "fixed", 150),
			[]stepSummary{
				{"base", false, 1, 1, 100, 100, 100, 1, 0, 0, true, false},
				{"oops", false, 1, 1, 0, 0, 0, 0, -1, -1, true, true},
				{"fixed", false, 1, 1, 150, 150, 150, 1.5, 0.5, 0, true, false},
			},
		},
		{
			"failed runs are counted",
			runsOf("!base", 0, "base", 100, "!base", 80),
			[]stepSummary{{"base", false, 3, 1, 0, 80, 100, 1, 0, 0, true, false}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(Transitions(tc.runs))
			if len(got) != len(tc.want) {
				t.Fatalf("%d steps, want %d:\n%+v", len(got), len(tc.want), got)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("step %d:\n got %+v\nwant %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestTransitionsNegativeScores(t *testing.T) {
	// Scores below zero are unusual but must not flip the sign of a change:
	// from -100 to -50 is an improvement of 50%.
	runs := []Run{{Label: "a", Score: -100}, {Label: "b", Score: -50}}
	s := Transitions(runs)
	if got := s[1].ChangeFirst; got != 0.5 {
		t.Errorf("ChangeFirst = %v, want 0.5", got)
	}
	if got := s[1].XFirst; got != 0.5 {
		t.Errorf("XFirst = %v, want 0.5 (a plain ratio)", got)
	}
}

func TestTransitionsRPSAndP99(t *testing.T) {
	runs := []Run{
		{Label: "a", RPS: 100, P99: 10 * time.Millisecond},
		{Label: "a", RPS: 300, P99: 30 * time.Millisecond},
		{Label: "a", RPS: 200, P99: 21 * time.Millisecond},
		{Label: "a", RPS: 400, P99: 40 * time.Millisecond},
	}
	s := Transitions(runs)[0]
	if s.RPSMedian != 250 {
		t.Errorf("RPSMedian = %v, want 250", s.RPSMedian)
	}
	if s.P99Median != 25500*time.Microsecond {
		t.Errorf("P99Median = %v, want 25.5ms", s.P99Median)
	}
	if len(s.Scores) != 4 {
		t.Errorf("Scores = %v", s.Scores)
	}
}

func TestStepJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		step Step
		want string
	}{
		{
			"defined ratios",
			Step{Label: "a", Runs: 1, Scores: []float64{2}, Min: 2, Median: 2, Max: 2, Passed: 1,
				XFirst: 2, ChangeFirst: 1, ChangePrev: 0.5, HasFirst: true, HasPrev: true, RPSMedian: 10, P99Median: 1500 * time.Millisecond},
			`{"label":"a","runs":1,"passed":1,"scores":[2],"min":2,"median":2,"max":2,"x_first":2,"change_first":1,"change_prev":0.5,"rps_median":10,"p99_median_s":1.5}`,
		},
		{
			"undefined ratios are null",
			Step{Label: "b", Again: true, Runs: 1, Scores: []float64{0}},
			`{"label":"b","again":true,"runs":1,"passed":0,"scores":[0],"min":0,"median":0,"max":0,"x_first":null,"change_first":null,"change_prev":null,"rps_median":0,"p99_median_s":0}`,
		},
		{
			"no scores is an empty list",
			Step{},
			`{"label":"","runs":0,"passed":0,"scores":[],"min":0,"median":0,"max":0,"x_first":null,"change_first":null,"change_prev":null,"rps_median":0,"p99_median_s":0}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.step)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}
