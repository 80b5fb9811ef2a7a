package scenario

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

// TestTallyMeasuredPhase: a Tally counts the slow responses loadgen's
// result counts, judging each by when it was sent and when it completed.
func TestTallyMeasuredPhase(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// The user was created at 0 and sent its first request at 10; the run
	// (and its 100ms warm-up) started in between: measured from 105.
	type req struct {
		intended, done int
		slow           bool
	}
	tests := []struct {
		name    string
		reqs    []req
		started int // Result.Started
		elapsed int
		stopped string
		want    int64
	}{
		{name: "warm-up responses are not counted",
			reqs:    []req{{10, 60, true}, {60, 99, true}, {120, 130, true}, {130, 140, false}},
			started: 105, elapsed: 1000, stopped: loadgen.StopDuration, want: 1},
		{name: "sent while the start was uncertain: judged by the result",
			reqs:    []req{{10, 60, false}, {103, 108, true}, {107, 112, true}, {112, 113, false}},
			started: 105, elapsed: 1000, stopped: loadgen.StopDuration, want: 1},
		{name: "the last one, in flight at the end, is not counted",
			reqs:    []req{{200, 300, true}, {300, 1200, true}},
			started: 105, elapsed: 1000, stopped: loadgen.StopDuration, want: 1},
		{name: "the last one, completed before the end, is",
			reqs:    []req{{200, 300, true}, {300, 1100, true}},
			started: 105, elapsed: 1000, stopped: loadgen.StopDuration, want: 2},
		{name: "a request bound counts the last completion",
			reqs:    []req{{200, 300, true}, {300, 1105, true}},
			started: 105, elapsed: 1000, stopped: loadgen.StopRequests, want: 2},
		{name: "a stop counts nothing completed after it",
			reqs:    []req{{200, 300, true}, {300, 700, true}},
			started: 105, elapsed: 500, stopped: loadgen.StopCanceled, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTally(2)
			tl.check(loadgen.Options{WarmUp: 100 * time.Millisecond})
			u := tl.newUser()
			u.created = at(0)
			for _, r := range tt.reqs {
				u.begin(at(r.intended))
				if r.slow {
					u.slow(1, at(r.intended), at(r.done))
				}
			}
			res := &loadgen.Result{Started: at(tt.started), Elapsed: time.Duration(tt.elapsed) * time.Millisecond, Stopped: tt.stopped}
			if got := tl.Slow(res); !slices.Equal(got, []int64{0, tt.want}) {
				t.Errorf("slow %v, want [0 %d]", got, tt.want)
			}
		})
	}
}

// TestSlowResponsesCounted runs a scenario through loadgen: every measured
// response of the step that answers in 30ms is slow (slow_after 1ms), none
// of the warm-up's or of those in flight at the end, none of the fast
// step's, and the step without a slow_after has no count.
func TestSlowResponsesCounted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(30 * time.Millisecond)
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	s := loadApp(t, `
base_url: http://set.by.test/
steps:
  - {name: slow, url: /slow, slow_after: 1ms}
  - {name: fast, url: /fast, slow_after: 10s}
  - {name: plain, url: /slow}
scoring:
  penalties: {slow: 0.5}
  fail_if: {slow_rate: 10%}
`, srv)
	for _, lo := range []loadgen.Options{
		{Connections: 3, WarmUp: 150 * time.Millisecond, Duration: 600 * time.Millisecond, KeepAlive: true},
		{Connections: 4, Rate: 60, WarmUp: 200 * time.Millisecond, Duration: 600 * time.Millisecond, KeepAlive: true},
	} {
		t.Run(map[bool]string{true: "open model", false: "closed model"}[lo.Rate > 0], func(t *testing.T) {
			plan, err := s.Plan(WorkloadOptions{Timeout: 5 * time.Second, KeepAlive: true, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			w, tally := plan.Run()
			res, err := loadgen.Run(context.Background(), w, lo)
			if err != nil {
				t.Fatal(err)
			}
			if res.WarmUpRequests == 0 || res.Steps[0].Requests == 0 || res.Errors != 0 {
				t.Fatalf("warm-up %d, slow step %d requests, %d errors: nothing to check", res.WarmUpRequests, res.Steps[0].Requests, res.Errors)
			}
			got := tally.Slow(res)
			if want := []int64{res.Steps[0].Requests, 0, 0}; !slices.Equal(got, want) {
				t.Errorf("slow %v, want %v (in flight %d, warm-up %d)", got, want, res.InFlight, res.WarmUpRequests)
			}
			sc := s.ScoreRun(res, tally)
			n := res.Steps[0].Requests
			of := n + res.Steps[1].Requests
			if sc.Slow != n || sc.SlowByStep["slow"] != n || sc.SlowByStep["fast"] != 0 || len(sc.SlowByStep) != 2 {
				t.Errorf("slow %d by step %v", sc.Slow, sc.SlowByStep)
			}
			if math.Abs(sc.SlowPenalty-0.5*float64(n)) > 1e-9 || math.Abs(sc.Score-(float64(res.Requests)-0.5*float64(n))) > 1e-9 {
				t.Errorf("penalty %v score %v for %d requests, %d slow", sc.SlowPenalty, sc.Score, res.Requests, n)
			}
			// (A loaded machine may fail the run on a stalled request too.)
			if math.Abs(sc.SlowRate-float64(n)/float64(of)) > 1e-12 || sc.Passed || !slices.ContainsFunc(sc.Reasons, func(r string) bool {
				return strings.HasPrefix(r, "slow rate ") && strings.HasSuffix(r, " > 10% ("+strconv.FormatInt(n, 10)+" of "+strconv.FormatInt(of, 10)+" requests slower than their step's slow_after)")
			}) {
				t.Errorf("slow rate %v (want %d/%d), passed %v %q", sc.SlowRate, n, of, sc.Passed, sc.Reasons)
			}
			// Score leaves slow responses out.
			if plain := s.Score(res); plain.Slow != 0 || plain.SlowByStep != nil || len(plain.Reasons) != len(sc.Reasons)-1 {
				t.Errorf("Score counted slow responses: %+v", plain)
			}
		})
	}
}

func TestScoreSlow(t *testing.T) {
	r := &loadgen.Result{Requests: 200, Errors: 1, Steps: []loadgen.StepResult{
		{Name: "login", Requests: 10},
		{Name: "home", Requests: 150, Errors: 1, ErrorsByKind: map[loadgen.ErrKind]int64{loadgen.ErrCheck: 1}},
		{Name: "post", Requests: 40},
	}}
	tests := []struct {
		name    string
		scoring Scoring
		after   []time.Duration
		counts  []int64
		score   float64
		slow    int64
		rate    float64
		reasons []string
	}{
		{name: "defaults: counted, free, never failing", scoring: DefaultScoring,
			after: []time.Duration{0, 3 * time.Second, 0}, counts: []int64{0, 90, 0},
			score: 199 - 50, slow: 90, rate: 90.0 / 150},
		{name: "penalty per slow response",
			scoring: Scoring{Success: 1, SlowPenalty: 2, Penalties: map[loadgen.ErrKind]float64{}, FailIf: FailIf{ErrorRate: 1, Unfinished: 1, SlowRate: 1}},
			after:   []time.Duration{0, time.Second, time.Second}, counts: []int64{0, 10, 5},
			score: 199 - 30, slow: 15, rate: 15.0 / 190},
		{name: "slow rate over the limit",
			scoring: Scoring{Success: 1, Penalties: map[loadgen.ErrKind]float64{}, FailIf: FailIf{ErrorRate: 1, Unfinished: 1, SlowRate: 0.05}},
			after:   []time.Duration{time.Second, 0, time.Second}, counts: []int64{1, 0, 3},
			score: 199, slow: 4, rate: 4.0 / 50, reasons: []string{"slow rate 8% > 5% (4 of 50 requests slower than their step's slow_after)"}},
		{name: "slow rate 0 fails on any",
			scoring: Scoring{Success: 1, Penalties: map[loadgen.ErrKind]float64{}, FailIf: FailIf{ErrorRate: 1, Unfinished: 1}},
			after:   []time.Duration{0, 0, time.Second}, counts: []int64{0, 0, 1},
			score: 199, slow: 1, rate: 1.0 / 40, reasons: []string{"slow rate 2.5% > 0% (1 of 40 requests slower than their step's slow_after)"}},
		{name: "none slow passes any limit",
			scoring: Scoring{Success: 1, Penalties: map[loadgen.ErrKind]float64{}, FailIf: FailIf{ErrorRate: 1, Unfinished: 1}},
			after:   []time.Duration{0, 0, time.Second}, counts: []int64{0, 0, 0},
			score: 199},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := score(r, tt.scoring, nil, &slowCounts{after: tt.after, counts: tt.counts})
			if math.Abs(got.Score-tt.score) > 1e-9 || got.Slow != tt.slow || math.Abs(got.SlowRate-tt.rate) > 1e-12 {
				t.Errorf("score %v slow %d rate %v, want %v %d %v", got.Score, got.Slow, got.SlowRate, tt.score, tt.slow, tt.rate)
			}
			if len(got.Reasons) != len(tt.reasons) || (len(tt.reasons) > 0 && !slices.Equal(got.Reasons, tt.reasons)) {
				t.Errorf("reasons %q, want %q", got.Reasons, tt.reasons)
			}
		})
	}
}
