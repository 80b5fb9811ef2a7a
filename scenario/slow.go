package scenario

import (
	"sync"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

// Tally is what the users of one run count that loadgen's Result does not
// hold: the slow responses of each step (responses, whatever their status
// or check, that took longer than the step's slow_after). Plan.Run makes
// one per run; read it with Slow once loadgen.Run has returned.
//
// It counts the responses the Result counts: those of the measured phase
// (sent at or after Result.Started, not in the warm-up) that completed
// before its end (not in flight at the end). Its users cannot know when the
// measured phase starts, so each keeps its slow responses individually only
// while that is uncertain (between its creation and its first request, plus
// the warm-up: the run starts in between), counts the later ones, and holds
// back its last one until its next request shows it completed in time.
type Tally struct {
	steps int

	mu     sync.Mutex
	warmUp time.Duration // the run's, from Workload.Check
	users  []*userTally
}

type slowEvent struct {
	step           int
	intended, done time.Time
}

// userTally is one user's part of a Tally, written only by the goroutine
// driving the user.
type userTally struct {
	created time.Time
	warmUp  time.Duration
	first   time.Time // intended time of the user's first request
	started bool
	counts  []int64     // measured and completed in time
	window  []slowEvent // sent while it is uncertain whether that is in the warm-up
	last    slowEvent   // measured; completed in time unless the run ended under it
	hasLast bool
}

func newTally(steps int) *Tally { return &Tally{steps: steps} }

// check records the run's warm-up (loadgen calls Workload.Check before it
// creates the users).
func (t *Tally) check(opt loadgen.Options) error {
	t.mu.Lock()
	t.warmUp = opt.WarmUp
	t.mu.Unlock()
	return nil
}

func (t *Tally) newUser() *userTally {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := &userTally{created: time.Now(), warmUp: t.warmUp, counts: make([]int64, t.steps)}
	t.users = append(t.users, u)
	return u
}

// begin is called as a request starts: the user's previous request
// completed in time, since loadgen asked for another.
func (u *userTally) begin(intended time.Time) {
	if !u.started {
		u.started, u.first = true, intended
	}
	if u.hasLast {
		u.counts[u.last.step]++
		u.hasLast = false
	}
}

// slow records a slow response of step, sent at intended (the time loadgen
// passed to Do) and complete at done.
func (u *userTally) slow(step int, intended, done time.Time) {
	if step < 0 || step >= len(u.counts) {
		return
	}
	// The run started (loadgen's start, before its warm-up) after this
	// user was created and at or before its first request's intended
	// time; the measured phase starts warmUp later.
	switch ev := (slowEvent{step, intended, done}); {
	case intended.Before(u.created.Add(u.warmUp)):
		// in the warm-up
	case intended.Before(u.first.Add(u.warmUp)):
		u.window = append(u.window, ev)
	default:
		u.last, u.hasLast = ev, true
	}
}

// Slow returns the slow responses of each step (Workload order) among the
// requests r counts; r is the result of the run whose workload came with t.
func (t *Tally) Slow(r *loadgen.Result) []int64 {
	out := make([]int64, t.steps)
	if r == nil {
		return out
	}
	end := r.Started.Add(r.Elapsed)
	// A request bound ends the run at its last completion, which counts;
	// otherwise completions at or after the end were discarded.
	inclusive := r.Stopped == loadgen.StopRequests
	inTime := func(done time.Time) bool { return done.Before(end) || (inclusive && done.Equal(end)) }
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, u := range t.users {
		for i, n := range u.counts {
			out[i] += n
		}
		for _, ev := range u.window {
			if !ev.intended.Before(r.Started) && inTime(ev.done) {
				out[ev.step]++
			}
		}
		if u.hasLast && inTime(u.last.done) {
			out[u.last.step]++
		}
	}
	return out
}
