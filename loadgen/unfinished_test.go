package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// neverServer is an HTTP server that never answers: each handler waits
// until its client goes away or the test ends.
func neverServer(t *testing.T) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: frees the handlers
	return srv
}

// blocker is a request that never completes: it returns only when the run
// aborts it.
func blocker(ctx context.Context, _ time.Time) Sample {
	<-ctx.Done()
	return Sample{Err: ErrOther, Detail: "aborted"}
}

// TestRunCountsUnfinished checks that the requests left unsent or in
// flight at the end are counted, in both models and both engines. The
// checks hold however late the machine runs the workers: every Do call is
// a completed request or one in flight at the end, and in the open model
// every ticket due in the measured window is completed, in flight or
// unsent.
func TestRunCountsUnfinished(t *testing.T) {
	never := neverServer(t)
	urlPlan := func(t *testing.T, _ *atomic.Int64) Workload {
		p, err := URLWorkload(never.URL+"/", URLOptions{KeepAlive: true})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// fake counts the calls of do.
	fake := func(do func(context.Context, time.Time) Sample) func(*testing.T, *atomic.Int64) Workload {
		return func(_ *testing.T, calls *atomic.Int64) Workload {
			p, _ := fakePlan(func(ctx context.Context, at time.Time) Sample {
				calls.Add(1)
				return do(ctx, at)
			})
			return p
		}
	}
	// thinker completes its request at once, then thinks until the run
	// stops, like a scenario user with a think time.
	thinker := func(ctx context.Context, at time.Time) Sample {
		s := Sample{Latency: time.Since(at), Status: 200, End: time.Now()}
		<-ctx.Done()
		return s
	}
	tests := []struct {
		name string
		plan func(*testing.T, *atomic.Int64) Workload
		opt  Options
		// requests is the exact count of completed requests, -1 for any.
		requests int64
		// inFlight is within [minInFlight, opt.Connections], or 0 with
		// noInFlight.
		minInFlight int64
		noInFlight  bool
		// unsent: whether some requests must be left unsent (the open
		// model's backlog); never in the closed model.
		unsent bool
		// due, when > 0: requests + in flight + unsent must equal it.
		due int64
		// allStalled: every request in flight is stalled; noneStalled:
		// none is (else any of them may be).
		allStalled, noneStalled bool
	}{
		{name: "closed model, never answers", plan: fake(blocker),
			opt: Options{Connections: 4, Duration: 200 * time.Millisecond}, requests: 0, minInFlight: 1, allStalled: true},
		{name: "closed model, never answers during warm-up either", plan: fake(blocker),
			opt: Options{Connections: 3, Duration: 200 * time.Millisecond, WarmUp: 100 * time.Millisecond}, requests: 0, minInFlight: 1, allStalled: true},
		{name: "closed model, slow", plan: fake(sleeper(70 * time.Millisecond)),
			opt: Options{Connections: 4, Duration: 300 * time.Millisecond}, requests: -1},
		// Each user completes a 200ms request, then has its next one out
		// for at most the 100ms left: cut by the end, not stalled.
		{name: "closed model, cut by the end: in flight, none stalled", plan: fake(sleeper(200 * time.Millisecond)),
			opt: Options{Connections: 4, Duration: 300 * time.Millisecond}, requests: -1, minInFlight: 1, noneStalled: true},
		{name: "closed model, think time after the end of the request", plan: fake(thinker),
			opt: Options{Connections: 2, Duration: 200 * time.Millisecond}, requests: -1, noInFlight: true},
		{name: "closed model, event loops, never answers", plan: urlPlan,
			opt: Options{Connections: 5, Duration: 300 * time.Millisecond, KeepAlive: true}, requests: 0, minInFlight: 1, allStalled: true},
		{name: "open model, never answers: the schedule is backlog", plan: fake(blocker),
			opt: Options{Connections: 4, Rate: 200, Duration: 300 * time.Millisecond}, requests: 0, minInFlight: 1, unsent: true, due: 60, allStalled: true},
		{name: "open model, slow user", plan: fake(sleeper(100 * time.Millisecond)),
			opt: Options{Connections: 1, Rate: 200, Duration: 300 * time.Millisecond, Timeout: time.Minute}, requests: -1, unsent: true, due: 60},
		{name: "open model, URL users, never answers", plan: urlPlan,
			opt: Options{Connections: 3, Rate: 100, Duration: 300 * time.Millisecond, KeepAlive: true}, requests: 0, minInFlight: 1, unsent: true, due: 30, allStalled: true},
		{name: "request bound: nothing left over", plan: fake(instant),
			opt: Options{Connections: 4, Rate: 2000, Requests: 100}, requests: 100, noInFlight: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int64
			res, err := Run(context.Background(), tt.plan(t, &calls), tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if tt.requests >= 0 && res.Requests != tt.requests {
				t.Errorf("requests %d, want %d", res.Requests, tt.requests)
			}
			if res.InFlight < tt.minInFlight || res.InFlight > int64(tt.opt.Connections) || (tt.noInFlight && res.InFlight != 0) {
				t.Errorf("in flight %d, want %d..%d", res.InFlight, tt.minInFlight, tt.opt.Connections)
			}
			if (res.Unsent > 0) != tt.unsent {
				t.Errorf("unsent %d, want some: %v", res.Unsent, tt.unsent)
			}
			if n := calls.Load(); n > 0 && res.Requests+res.WarmUpRequests+res.InFlight != n {
				t.Errorf("%d requests + %d warm-up + %d in flight, want the %d calls", res.Requests, res.WarmUpRequests, res.InFlight, n)
			}
			if tt.due > 0 && res.Requests+res.InFlight+res.Unsent != tt.due {
				t.Errorf("%d requests + %d in flight + %d unsent, want the %d due", res.Requests, res.InFlight, res.Unsent, tt.due)
			}
			if res.Stalled < 0 || res.Stalled > res.InFlight || (tt.allStalled && res.Stalled != res.InFlight) || (tt.noneStalled && res.Stalled != 0) {
				t.Errorf("%d stalled of %d in flight (after %v), want all: %v, none: %v", res.Stalled, res.InFlight, res.StalledAfter, tt.allStalled, tt.noneStalled)
			}
			if (res.Requests == 0) != (res.StalledAfter == 0) {
				t.Errorf("stalled after %v with %d requests completed", res.StalledAfter, res.Requests)
			}
			if res.Errors != 0 {
				t.Errorf("aborted requests counted as errors: %v", res.ErrorsByKind)
			}
		})
	}
}

// TestStalledRule applies the stalled rule to synthetic start times: a
// request in flight at the end is stalled when its age (end − start)
// exceeds the longest latency of the completed requests, or when none
// completed.
func TestStalledRule(t *testing.T) {
	end := time.Date(2025, 1, 1, 12, 0, 30, 0, time.UTC)
	ago := func(ds ...time.Duration) []time.Time {
		starts := make([]time.Time, len(ds))
		for i, d := range ds {
			starts[i] = end.Add(-d)
		}
		return starts
	}
	tests := []struct {
		name      string
		starts    []time.Time
		longest   time.Duration
		completed int64
		want      int64
	}{
		{name: "nothing in flight", longest: time.Second, completed: 100, want: 0},
		{name: "closed run of a slow app: every connection cut by the end",
			starts: ago(10*time.Millisecond, 300*time.Millisecond, 899*time.Millisecond, 900*time.Millisecond), longest: 900 * time.Millisecond, completed: 240, want: 0},
		{name: "older than the longest completed request",
			starts: ago(100*time.Millisecond, 900*time.Millisecond+time.Nanosecond, 25*time.Second), longest: 900 * time.Millisecond, completed: 240, want: 2},
		{name: "none completed: all stalled, however young",
			starts: ago(time.Second, time.Millisecond, 0), completed: 0, want: 3},
		{name: "none completed, a bound given all the same",
			starts: ago(time.Millisecond, 2*time.Millisecond), longest: time.Hour, completed: 0, want: 2},
		{name: "started at or after the end (raced the stop)",
			starts: ago(0, -time.Millisecond), longest: 0, completed: 1, want: 0},
		{name: "open model: ages from the intended send time",
			starts: ago(2500*time.Millisecond, 2999*time.Millisecond, 1500*time.Millisecond), longest: 2 * time.Second, completed: 10, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stalled(tt.starts, end, tt.longest, tt.completed); got != tt.want {
				t.Errorf("stalled = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestRunInFlightAccountsForEveryCall: with a user that sometimes answers
// late, every Do call is a measured request, a warm-up request or one in
// flight at the end.
func TestRunInFlightAccountsForEveryCall(t *testing.T) {
	for _, model := range []struct {
		name string
		rate float64
	}{{"closed", 0}, {"open", 400}} {
		t.Run(model.name, func(t *testing.T) {
			var calls atomic.Int64
			plan, _ := fakePlan(func(ctx context.Context, at time.Time) Sample {
				n := calls.Add(1)
				if n%5 == 0 {
					return blocker(ctx, at)
				}
				time.Sleep(2 * time.Millisecond)
				return instant(ctx, at)
			})
			res, err := Run(context.Background(), plan, Options{Connections: 8, Rate: model.rate, Duration: 300 * time.Millisecond, WarmUp: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Requests + res.WarmUpRequests + res.InFlight; got != calls.Load() {
				t.Errorf("%d requests + %d warm-up + %d in flight, want the %d calls", res.Requests, res.WarmUpRequests, res.InFlight, calls.Load())
			}
			if res.InFlight == 0 || res.InFlight > 8 {
				t.Errorf("in flight %d, want 1..8 (users stuck)", res.InFlight)
			}
		})
	}
}
