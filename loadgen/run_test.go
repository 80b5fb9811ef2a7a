package loadgen

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeUser performs requests with do.
type fakeUser struct {
	do     func(ctx context.Context, intended time.Time) Sample
	closed *atomic.Int64
}

func (u *fakeUser) Do(ctx context.Context, intended time.Time) Sample { return u.do(ctx, intended) }
func (u *fakeUser) Close() error {
	if u.closed != nil {
		u.closed.Add(1)
	}
	return nil
}

// fakePlan builds a plan whose users all run do.
func fakePlan(do func(ctx context.Context, intended time.Time) Sample) (Workload, *atomic.Int64) {
	var closed atomic.Int64
	return Workload{
		Steps:   []string{"fake"},
		NewUser: func(int) (User, error) { return &fakeUser{do: do, closed: &closed}, nil },
	}, &closed
}

// sleeper is a request taking d (or until the run stops).
func sleeper(d time.Duration) func(ctx context.Context, intended time.Time) Sample {
	return func(ctx context.Context, intended time.Time) Sample {
		select {
		case <-time.After(d):
			return Sample{Latency: time.Since(intended), Status: 200}
		case <-ctx.Done():
			return Sample{Err: ErrOther, Detail: "aborted"}
		}
	}
}

func instant(_ context.Context, intended time.Time) Sample {
	return Sample{Latency: time.Since(intended), Status: 200, Bytes: 10}
}

func TestRunRefuses(t *testing.T) {
	plan, _ := fakePlan(instant)
	tests := []struct {
		name string
		plan Workload
		opt  Options
		want string
	}{
		{name: "unbounded", plan: plan, opt: Options{}, want: "unbounded"},
		{name: "unbounded open model", plan: plan, opt: Options{Rate: 100}, want: "unbounded"},
		{name: "too many requests", plan: plan, opt: Options{Requests: MaxRequests + 1}, want: "limit"},
		{name: "negative requests", plan: plan, opt: Options{Requests: -1}, want: "negative"},
		{name: "negative connections", plan: plan, opt: Options{Connections: -1, Requests: 1}, want: "Connections"},
		{name: "negative rate", plan: plan, opt: Options{Rate: -1, Requests: 1}, want: "Rate"},
		{name: "duration beyond the safety bound", plan: plan, opt: Options{Duration: time.Minute, MaxDuration: time.Second}, want: "MaxDuration"},
		{name: "warm-up beyond the default safety bound", plan: plan, opt: Options{Duration: time.Second, WarmUp: DefaultMaxDuration}, want: "MaxDuration"},
		{name: "no users", plan: Workload{}, opt: Options{Requests: 1}, want: "NewUser"},
		{name: "user error", plan: Workload{NewUser: func(int) (User, error) { return nil, errors.New("no session") }}, opt: Options{Requests: 1}, want: "no session"},
		{name: "plan check", plan: Workload{NewUser: plan.NewUser, Check: func(Options) error { return errors.New("checked") }}, opt: Options{Requests: 1}, want: "checked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(context.Background(), tt.plan, tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) || res != nil {
				t.Fatalf("Run = %v, %v; want an error containing %q", res, err, tt.want)
			}
		})
	}
}

func TestRunRequestsExact(t *testing.T) {
	tests := []struct {
		name string
		opt  Options
	}{
		{name: "closed", opt: Options{Connections: 7, Requests: 1000}},
		{name: "closed, more users than requests", opt: Options{Connections: 50, Requests: 3}},
		{name: "closed, more users than shards", opt: Options{Connections: maxShards*2 + 1, Requests: 5000}},
		{name: "open", opt: Options{Connections: 4, Requests: 300, Rate: 3000}},
		{name: "closed with warm-up", opt: Options{Connections: 3, Requests: 200, WarmUp: 50 * time.Millisecond}},
		{name: "open with warm-up", opt: Options{Connections: 3, Requests: 200, Rate: 2000, WarmUp: 50 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int64
			plan, closed := fakePlan(func(ctx context.Context, intended time.Time) Sample {
				calls.Add(1)
				time.Sleep(100 * time.Microsecond)
				return instant(ctx, intended)
			})
			res, err := Run(context.Background(), plan, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != tt.opt.Requests || res.Steps[0].Requests != tt.opt.Requests {
				t.Errorf("%d requests, want %d", res.Requests, tt.opt.Requests)
			}
			if calls.Load() != tt.opt.Requests+res.WarmUpRequests {
				t.Errorf("users performed %d requests, want %d measured + %d warm-up", calls.Load(), tt.opt.Requests, res.WarmUpRequests)
			}
			if tt.opt.WarmUp > 0 && res.WarmUpRequests == 0 {
				t.Error("no warm-up request")
			}
			if res.Stopped != StopRequests || res.Bytes != 10*tt.opt.Requests || res.Errors != 0 {
				t.Errorf("stopped %q, bytes %d, errors %d", res.Stopped, res.Bytes, res.Errors)
			}
			if closed.Load() != int64(tt.opt.Connections) {
				t.Errorf("%d users closed, want %d", closed.Load(), tt.opt.Connections)
			}
			if res.Connections != tt.opt.Connections || (res.Model == "open") != (tt.opt.Rate > 0) {
				t.Errorf("connections %d model %q", res.Connections, res.Model)
			}
		})
	}
}

func TestRunDurationBound(t *testing.T) {
	const d = 300 * time.Millisecond
	for _, model := range []struct {
		name string
		rate float64
	}{{"closed", 0}, {"open", 500}} {
		t.Run(model.name, func(t *testing.T) {
			// Requests take 50ms: several are in flight when the
			// duration ends; they are aborted and not counted.
			plan, _ := fakePlan(sleeper(50 * time.Millisecond))
			start := time.Now()
			res, err := Run(context.Background(), plan, Options{Connections: 4, Duration: d, Rate: model.rate})
			wall := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stopped != StopDuration {
				t.Errorf("stopped by %q", res.Stopped)
			}
			if res.Elapsed < d || res.Elapsed > d+500*time.Millisecond {
				t.Errorf("elapsed %v, want %v (+500ms)", res.Elapsed, d)
			}
			if wall > d+time.Second {
				t.Errorf("Run took %v for a %v run", wall, d)
			}
			// 4 users × 300ms / 50ms = at most 24 complete requests
			// (the open model is also bounded by its 150 tickets).
			if res.Requests > 24 || res.Requests < 1 {
				t.Errorf("%d requests, want 1..24", res.Requests)
			}
			if res.Errors != 0 {
				t.Errorf("aborted requests counted as errors: %v %q", res.ErrorsByKind, res.Steps[0].Details)
			}
		})
	}
}

func TestRunMaxDurationAndCancel(t *testing.T) {
	plan, _ := fakePlan(sleeper(10 * time.Millisecond))
	res, err := Run(context.Background(), plan, Options{Connections: 2, Requests: MaxRequests, MaxDuration: 200 * time.Millisecond})
	if !errors.Is(err, ErrMaxDuration) || res == nil || res.Stopped != StopMaxDuration {
		t.Fatalf("Run = %+v, %v; want the partial result and ErrMaxDuration", res, err)
	}
	if res.Requests == 0 || res.Requests > 40 {
		t.Errorf("%d requests in 200ms of 2 users × 10ms", res.Requests)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	start := time.Now()
	res, err = Run(ctx, plan, Options{Connections: 2, Duration: time.Minute})
	if !errors.Is(err, context.Canceled) || res == nil || res.Stopped != StopCanceled {
		t.Fatalf("Run = %+v, %v; want the partial result and context.Canceled", res, err)
	}
	if wall := time.Since(start); wall > time.Second {
		t.Errorf("canceled run took %v", wall)
	}

	cancel()
	if _, err := Run(ctx, plan, Options{Requests: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("Run on a canceled context: %v", err)
	}
}

// TestOpenModelSchedule checks that the open model sends at evenly spaced
// intended times, never before them, whatever the number of users.
func TestOpenModelSchedule(t *testing.T) {
	const rate, n = 2000.0, 400
	var mu sync.Mutex
	var intended []time.Time
	var early atomic.Int64
	plan, _ := fakePlan(func(ctx context.Context, at time.Time) Sample {
		if time.Now().Before(at) {
			early.Add(1)
		}
		mu.Lock()
		intended = append(intended, at)
		mu.Unlock()
		return instant(ctx, at)
	})
	res, err := Run(context.Background(), plan, Options{Connections: 8, Rate: rate, Requests: n})
	if err != nil {
		t.Fatal(err)
	}
	if len(intended) != n || res.Requests != n {
		t.Fatalf("%d requests, want %d", len(intended), n)
	}
	if early.Load() > 0 {
		t.Errorf("%d requests sent before their intended time", early.Load())
	}
	seen := map[time.Duration]bool{}
	first := intended[0]
	for _, at := range intended {
		if at.Before(first) {
			first = at
		}
	}
	for _, at := range intended {
		off := at.Sub(first)
		k := time.Duration(float64(off) * rate / 1e9)
		if diff := off - k*time.Second/rate; diff < -time.Microsecond || diff > time.Microsecond {
			k++
			if diff := off - k*time.Second/rate; diff < -time.Microsecond || diff > time.Microsecond {
				t.Fatalf("intended time %v after the first is not on the %v grid", off, time.Second/rate)
			}
		}
		if seen[k] {
			t.Fatalf("two requests intended at slot %d", k)
		}
		seen[k] = true
	}
	// The whole schedule spans n/rate: no free run.
	if res.Elapsed < time.Duration(float64(n-1)/rate*1e9) {
		t.Errorf("%d requests at %v/s took only %v", n, rate, res.Elapsed)
	}
}

// TestOpenModelQueueBound: users far slower than the rate make the queue
// grow; tickets late by more than the timeout are counted as timeouts
// instead of being sent, and the latency shows the queueing.
func TestOpenModelQueueBound(t *testing.T) {
	var sent atomic.Int64
	plan, _ := fakePlan(func(ctx context.Context, at time.Time) Sample {
		sent.Add(1)
		time.Sleep(20 * time.Millisecond)
		return Sample{Latency: time.Since(at), Status: 200}
	})
	// One user serving 50/s against 1000/s, timeout 100ms: about 100
	// tickets may queue; the rest time out without being sent.
	res, err := Run(context.Background(), plan, Options{Connections: 1, Rate: 1000, Requests: 500, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 500 {
		t.Fatalf("%d requests, want 500", res.Requests)
	}
	to := res.ErrorsByKind[ErrTimeout]
	if to < 300 || sent.Load()+to != 500 {
		t.Errorf("%d sent + %d queue timeouts, want most of 500 timed out", sent.Load(), to)
	}
	if res.Latency.P50 < 100*time.Millisecond {
		t.Errorf("p50 %v: queueing not in the latency", res.Latency.P50)
	}
	if !strings.Contains(strings.Join(res.Steps[0].Details, ";"), "queued longer than the timeout") {
		t.Errorf("details %q", res.Steps[0].Details)
	}
}

func TestOpenModelBacklog(t *testing.T) {
	plan, _ := fakePlan(sleeper(100 * time.Millisecond))
	res, err := Run(context.Background(), plan, Options{Connections: 1, Rate: 200, Duration: 300 * time.Millisecond, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// 60 tickets due, one user completing about 3: the rest is backlog.
	if res.Unsent < 40 || res.Unsent > 60 {
		t.Errorf("unsent %d, want about 57", res.Unsent)
	}
}

func TestRunStepsDetailsAndProgress(t *testing.T) {
	var n atomic.Int64
	plan := Workload{
		Steps: []string{"login", "browse"},
		NewUser: func(int) (User, error) {
			return &fakeUser{do: func(ctx context.Context, at time.Time) Sample {
				i := n.Add(1)
				time.Sleep(time.Millisecond)
				s := Sample{Step: int(i % 3), Latency: time.Since(at), Status: 200}
				switch i % 4 {
				case 1:
					s.Err, s.Detail = ErrStatus, "expected status 200, got "+itoa(500+i%10)
				case 2:
					s.Err, s.Detail = ErrCheck, "missing text"
				}
				return s
			}}, nil
		},
	}
	var reports []Progress
	res, err := Run(context.Background(), plan, Options{Connections: 4, Duration: 2500 * time.Millisecond, WarmUp: 1200 * time.Millisecond,
		Progress: func(p Progress) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 3 || res.Steps[0].Name != "login" || res.Steps[1].Name != "browse" || res.Steps[2].Name != "step 2" {
		t.Fatalf("steps %+v", res.Steps)
	}
	var sum int64
	for _, s := range res.Steps {
		sum += s.Requests
		for _, d := range s.Details {
			if !strings.HasPrefix(d, "status: ") && !strings.HasPrefix(d, "check: ") {
				t.Errorf("detail %q without its kind", d)
			}
		}
		var status int
		for _, d := range s.Details {
			if strings.HasPrefix(d, "status: ") {
				status++
			}
		}
		if status > maxDetails {
			t.Errorf("%d status details kept, want at most %d", status, maxDetails)
		}
	}
	if sum != res.Requests || res.Errors != res.ErrorsByKind[ErrStatus]+res.ErrorsByKind[ErrCheck] || res.Errors == 0 {
		t.Errorf("steps sum %d of %d; errors %d %v", sum, res.Requests, res.Errors, res.ErrorsByKind)
	}
	if res.WarmUpRequests == 0 {
		t.Error("no warm-up requests")
	}
	// Reports at about 1s, 2s (warm-up), 3s: at least one of each phase.
	var warm, measured int
	for _, p := range reports {
		if p.WarmUp {
			warm++
		} else {
			measured++
			if p.Requests == 0 || p.RPS <= 0 || p.P99 <= 0 || p.Elapsed <= 0 {
				t.Errorf("progress %+v", p)
			}
		}
	}
	if warm < 1 || measured < 1 {
		t.Errorf("progress reports %+v: want warm-up and measured ones", reports)
	}
}
