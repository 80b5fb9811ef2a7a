package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Stop reasons reported in Result.Stopped.
const (
	StopDuration    = "duration"
	StopRequests    = "requests"
	StopCanceled    = "canceled"
	StopMaxDuration = "max-duration"
)

// Run runs plan with opt and returns the measured phase's result. It
// creates Options.Connections users up front (an error from NewUser
// refuses the run), drives them in the closed or open model until a bound
// is reached, and closes them all before returning.
//
// When ctx is canceled or the MaxDuration safety bound stops the run,
// Run returns the partial result together with an error (ctx's cause, or
// ErrMaxDuration); with a nil error the run ended at its own bound.
func Run(ctx context.Context, plan Workload, opt Options) (*Result, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if plan.NewUser == nil {
		return nil, errors.New("loadgen: plan has no NewUser")
	}
	if plan.Check != nil {
		if err := plan.Check(opt); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := newRunner(ctx, plan, opt)
	defer r.cancel(nil)
	if plan.url != nil && opt.Rate == 0 && loopsSupported && !opt.NoEventLoops {
		if workers, cleanup, ok := r.loopWorkers(plan.url); ok {
			defer cleanup()
			return r.run(workers)
		}
	}
	users := make([]User, 0, opt.Connections)
	defer func() {
		for _, u := range users {
			_ = u.Close()
		}
	}()
	for i := 0; i < opt.Connections; i++ {
		u, err := plan.NewUser(i)
		if err != nil {
			return nil, fmt.Errorf("loadgen: user %d: %w", i, err)
		}
		users = append(users, u)
	}
	workers := make([]func() time.Time, len(users))
	for i, u := range users {
		sh := r.shards[i%len(r.shards)]
		if opt.Rate > 0 {
			workers[i] = func() time.Time { return r.openWorker(u, sh) }
		} else {
			workers[i] = func() time.Time { return r.closedWorker(u, sh) }
		}
	}
	return r.run(workers)
}

// runner is one run's shared state. Workers read it; the only shared
// writes per request are the ticket counter (when a count bound or the
// open model needs one) and the worker's own shard.
type runner struct {
	opt    Options
	plan   Workload
	parent context.Context
	ctx    context.Context // handed to Do; canceled when the run stops
	cancel context.CancelCauseFunc
	shards []*shard

	start  time.Time // warm-up start (= mstart without warm-up)
	mstart time.Time // measured phase start
	end    time.Time // measured phase end; zero without Duration

	stopped atomic.Bool
	stopMu  sync.Mutex
	reason  string
	stopAt  time.Time

	// next is the ticket counter: in the closed model the number of
	// measured requests started (only with a Requests bound); in the open
	// model the index of the next scheduled send.
	next     atomic.Int64
	interval float64 // open model: nanoseconds between intended sends
	k0       int64   // open model: first measured ticket
}

func newRunner(parent context.Context, plan Workload, opt Options) *runner {
	r := &runner{opt: opt, plan: plan, parent: parent}
	set := &runSettings{timeout: opt.Timeout, keepAlive: opt.KeepAlive}
	r.ctx, r.cancel = context.WithCancelCause(context.WithValue(context.Background(), optionsKey{}, set))
	n := min(opt.Connections, maxShards)
	r.shards = make([]*shard, n)
	for i := range r.shards {
		r.shards[i] = &shard{}
		r.shards[i].step(max(len(plan.Steps), 1) - 1)
	}
	if opt.Rate > 0 {
		r.interval = 1e9 / opt.Rate
	}
	return r
}

// stop ends the run for reason (the first call wins): workers stop taking
// work and requests in flight are aborted and discarded.
func (r *runner) stop(reason string) {
	r.stopMu.Lock()
	if r.reason == "" {
		r.reason, r.stopAt = reason, time.Now()
		r.stopped.Store(true)
		r.cancel(errors.New("loadgen: run stopped: " + reason))
	}
	r.stopMu.Unlock()
}

// run starts the workers, each returning when its last measured request
// completed, and builds the result once they all returned.
func (r *runner) run(workers []func() time.Time) (*Result, error) {
	opt := r.opt
	r.start = time.Now()
	r.mstart = r.start.Add(opt.WarmUp)
	if opt.Duration > 0 {
		r.end = r.mstart.Add(opt.Duration)
	}
	if opt.Rate > 0 {
		r.k0 = int64(float64(opt.WarmUp) / r.interval)
		for r.ticketTime(r.k0).Before(r.mstart) {
			r.k0++
		}
	}
	timers := []*time.Timer{time.AfterFunc(opt.MaxDuration, func() { r.stop(StopMaxDuration) })}
	if opt.Duration > 0 {
		timers = append(timers, time.AfterFunc(opt.WarmUp+opt.Duration, func() { r.stop(StopDuration) }))
	}
	unwatch := context.AfterFunc(r.parent, func() { r.stop(StopCanceled) })
	defer func() {
		unwatch()
		for _, t := range timers {
			t.Stop()
		}
	}()

	progressDone := make(chan struct{})
	finished := make(chan struct{})
	if opt.Progress != nil {
		go r.progress(finished, progressDone)
	} else {
		close(progressDone)
	}

	lastDone := make([]time.Time, len(workers))
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lastDone[i] = w()
		}()
	}
	wg.Wait()
	close(finished)
	<-progressDone

	done := time.Now()
	r.stopMu.Lock()
	reason, stopAt := r.reason, r.stopAt
	r.stopMu.Unlock()
	var elapsed time.Duration
	switch {
	case reason == StopDuration:
		elapsed = opt.Duration // completions after the end were discarded
	case reason != "":
		elapsed = stopAt.Sub(r.mstart)
		if opt.Duration > 0 {
			elapsed = min(elapsed, opt.Duration)
		}
	case opt.Requests > 0 && r.measuredTickets() >= opt.Requests:
		reason = StopRequests
		last := r.mstart
		for _, t := range lastDone {
			if t.After(last) {
				last = t
			}
		}
		elapsed = last.Sub(r.mstart)
	default: // open model: every ticket before the end was served
		reason = StopDuration
		elapsed = min(done.Sub(r.mstart), opt.Duration)
	}
	elapsed = max(elapsed, 0)

	// The end of the run, at which the ages of the requests in flight
	// are taken: the end of Duration, or the stop when earlier.
	end := stopAt
	if !r.end.IsZero() && (end.IsZero() || r.end.Before(end)) {
		end = r.end
	}
	if end.IsZero() {
		end = done
	}
	res := merge(r.shards, r.plan.Steps, elapsed, end)
	res.Started = r.mstart
	res.Model = "closed"
	if opt.Rate > 0 {
		res.Model = "open"
		res.Unsent += r.untaken(stopAt, reason)
	}
	res.Connections = opt.Connections
	res.Rate = opt.Rate
	res.Stopped = reason
	switch reason {
	case StopCanceled:
		return res, context.Cause(r.parent)
	case StopMaxDuration:
		return res, ErrMaxDuration
	}
	return res, nil
}

// measuredTickets is how many measured requests were started.
func (r *runner) measuredTickets() int64 {
	n := r.next.Load()
	if r.opt.Rate > 0 {
		n -= r.k0
	}
	return min(max(n, 0), r.opt.Requests)
}

// ticketTime is the intended send time of open-model ticket k.
func (r *runner) ticketTime(k int64) time.Time {
	return r.start.Add(time.Duration(float64(k) * r.interval))
}

// untaken counts the measured tickets due before the run stopped that no
// worker took (the tickets a worker took and did not send are counted by
// the worker).
func (r *runner) untaken(stopAt time.Time, reason string) int64 {
	if reason == StopRequests || reason == "" || stopAt.IsZero() {
		return 0
	}
	if !r.end.IsZero() && stopAt.After(r.end) {
		stopAt = r.end
	}
	due := int64(float64(stopAt.Sub(r.start))/r.interval) + 1 // tickets with time <= stopAt
	for due > 0 && !r.ticketTime(due-1).Before(stopAt) {
		due--
	}
	if r.opt.Requests > 0 {
		due = min(due, r.k0+r.opt.Requests)
	}
	taken := max(r.next.Load(), r.k0)
	return max(due-taken, 0)
}

// closedWorker issues requests back to back until a bound; it returns
// when its last measured request completed.
func (r *runner) closedWorker(u User, sh *shard) (last time.Time) {
	limit := r.opt.Requests
	for !r.stopped.Load() {
		now := time.Now()
		if r.pastEnd(now) {
			return last
		}
		measured := !now.Before(r.mstart)
		if measured && limit > 0 && r.next.Add(1) > limit {
			return last
		}
		s := u.Do(r.ctx, now)
		done := completed(&s)
		if r.late(done) {
			sh.addInFlight(now) // aborted by the stop, or completed after the end: discarded
			return last
		}
		if measured {
			sh.record(&s)
			last = done
		} else {
			sh.recordWarm()
		}
	}
	return last
}

// completed is when s's request completed: s.End, or now.
func completed(s *Sample) time.Time {
	if !s.End.IsZero() {
		return s.End
	}
	return time.Now()
}

// late reports whether a request that completed at done missed the
// measured phase: done is at or after its end, or after the run stopped.
// Its result is discarded, and the request counts as in flight at the end.
func (r *runner) late(done time.Time) bool {
	if r.pastEnd(done) {
		return true
	}
	if !r.stopped.Load() {
		return false
	}
	r.stopMu.Lock()
	at := r.stopAt
	r.stopMu.Unlock()
	return !done.Before(at)
}

// unsent counts ticket time t, taken by a worker that will not send it
// because the run stopped, when it was a measured ticket due before the
// stop (and before the end).
func (r *runner) unsent(sh *shard, t time.Time, measured bool) {
	r.stopMu.Lock()
	at := r.stopAt
	r.stopMu.Unlock()
	if !r.end.IsZero() && (at.IsZero() || r.end.Before(at)) {
		at = r.end
	}
	if measured && !at.IsZero() && t.Before(at) {
		sh.addUnsent()
	}
}

// pastEnd reports whether t is at or after the end of the measured
// phase; the first worker to notice stops the run (the timer that does so
// may be late on a busy machine, and completions after the end are not
// counted either way).
func (r *runner) pastEnd(t time.Time) bool {
	if r.end.IsZero() || t.Before(r.end) {
		return false
	}
	r.stop(StopDuration)
	return true
}

// openWorker takes the next scheduled ticket, waits for its intended time,
// and performs it; latency counts from the intended time, so time spent
// queued behind slow requests shows. A ticket already late by more than
// the timeout (the queue exceeds Rate×Timeout) is not sent but counted as
// a timeout, so the queue stays bounded.
func (r *runner) openWorker(u User, sh *shard) (last time.Time) {
	limit := r.opt.Requests
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for !r.stopped.Load() {
		k := r.next.Add(1) - 1
		if limit > 0 && k-r.k0 >= limit {
			return last
		}
		t := r.ticketTime(k)
		if !r.end.IsZero() && !t.Before(r.end) {
			return last // scheduled after the end; requests in flight go on until it
		}
		measured := k >= r.k0
		now := time.Now()
		if d := t.Sub(now); d > 0 {
			if timer == nil {
				timer = time.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			select {
			case <-timer.C:
			case <-r.ctx.Done():
				r.unsent(sh, t, measured)
				return last
			}
		} else if -d > r.opt.Timeout {
			if r.late(now) {
				r.unsent(sh, t, measured)
				return last
			}
			if measured {
				s := Sample{Latency: -d, Err: ErrTimeout, Detail: "queued longer than the timeout: requests scheduled faster than they complete"}
				sh.record(&s)
				last = now
			} else {
				sh.recordWarm()
			}
			continue
		}
		if r.stopped.Load() {
			r.unsent(sh, t, measured)
			return last
		}
		s := u.Do(r.ctx, t)
		done := completed(&s)
		if r.late(done) {
			sh.addInFlight(t) // its latency counts from t
			return last
		}
		if measured {
			sh.record(&s)
			last = done
		} else {
			sh.recordWarm()
		}
	}
	return last
}

// progress reports about once a second until finished is closed.
func (r *runner) progress(finished <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	h := newHist()
	var prevReqs int64
	prevAt := r.start
	prevWarm := true
	for {
		select {
		case <-finished:
			return
		case now := <-tick.C:
			reqs, errs, warm := totals(r.shards, h)
			p := Progress{Elapsed: now.Sub(r.mstart), Requests: reqs, Errors: errs}
			if now.Before(r.mstart) {
				p = Progress{Elapsed: now.Sub(r.start), Requests: warm, WarmUp: true}
			}
			if p.WarmUp != prevWarm {
				prevReqs, prevAt, prevWarm = 0, r.mstart, p.WarmUp
			}
			if dt := now.Sub(prevAt); dt > 0 {
				p.RPS = float64(p.Requests-prevReqs) / dt.Seconds()
			}
			prevReqs, prevAt = p.Requests, now
			if !p.WarmUp && h.TotalCount() > 0 {
				p.P99 = time.Duration(h.ValueAtQuantile(99)) * time.Microsecond
			}
			r.opt.Progress(p)
		}
	}
}
