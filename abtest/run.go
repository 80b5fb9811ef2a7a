package abtest

import (
	"context"
	"errors"
	"fmt"
)

// Arm is one of the two states compared.
type Arm int

// The two arms.
const (
	// A is the state before the step.
	A Arm = iota
	// B is the state with the step.
	B
)

func (a Arm) String() string {
	switch a {
	case A:
		return "A"
	case B:
		return "B"
	}
	return fmt.Sprintf("Arm(%d)", int(a))
}

func (a Arm) other() Arm { return 1 - a }

// Order is the order of a sequential Run's runs.
type Order int

// The orders.
const (
	// ABBA runs blocks of four, A B B A (B A A B when Start is B): within
	// a block both arms sit on average at the same time, so a drift that
	// is linear over the block (a machine warming up, a cache filling, a
	// neighbour's load growing) adds the same to both and cancels. Two
	// runs per arm per block; two switches per block, none between blocks
	// (A B B A A B B A). The default.
	ABBA Order = iota
	// Alternate runs A B A B ...: one run per arm per block, one switch
	// per run, and B always one run later than A, so a drift of d per
	// run biases the ratio by about d. Cheaper in runs per look, dearer
	// in switches, and blind to drift: prefer ABBA.
	Alternate
)

func (o Order) blockRuns() int {
	if o == Alternate {
		return 1
	}
	return 2
}

// pattern is one block, starting with the arm s.
func (o Order) pattern(s Arm) []Arm {
	if o == Alternate {
		return []Arm{s, s.other()}
	}
	return []Arm{s, s.other(), s.other(), s}
}

// Experiment is what a sequential Run drives: the caller's ways to put
// the system in each state and to measure it. Switching (apply, roll
// back, restart, warm up) is the caller's and may be as dear as it
// needs; Run only decides the order and when to stop, and switches only
// when the next run's arm differs from the current state.
type Experiment struct {
	// ToA puts the system in state A (the state before the step).
	ToA func(ctx context.Context) error
	// ToB puts the system in state B (the step applied).
	ToB func(ctx context.Context) error
	// Measure runs once in the current state and returns its score
	// (higher is better; finite and >= 0). arm says which state it is,
	// for the caller's records.
	Measure func(ctx context.Context, arm Arm) (float64, error)
}

// Sample is one measured run.
type Sample struct {
	Arm   Arm     `json:"arm"`
	Score float64 `json:"score"`
}

// Result is a sequential Run.
type Result struct {
	// Decision is the last look's, and the verdict.
	Decision Decision `json:"decision"`
	// Looks are every look's decisions, in order (the last is Decision).
	Looks []Decision `json:"looks"`
	// Runs are the runs in the order measured.
	Runs []Sample `json:"runs"`
	// State is the state the system was left in: Run does not switch
	// back at the end; keeping B or going back to A is the caller's.
	State Arm `json:"state"`
}

// Scores are the scores of one arm, in the order measured.
func (r *Result) Scores(arm Arm) []float64 {
	var out []float64
	for _, s := range r.Runs {
		if s.Arm == arm {
			out = append(out, s.Score)
		}
	}
	return out
}

// Look is one planned look of a sequential Run: after Runs runs per arm,
// decided at the two-sided level Alpha (a 1-Alpha interval).
type Look struct {
	Runs  int     `json:"runs"`
	Alpha float64 `json:"alpha"`
}

// Schedule is the stopping rule of a sequential Run, fixed before any
// run: where it looks and at which level.
//
// Looks are at block ends (every 2 runs per arm for ABBA, every run for
// Alternate) from MinRuns to MaxRuns runs per arm. Each look may stop the
// run with a verdict, so each is a chance of a false verdict; the overall
// error budget alpha = 1-Level is split over the looks so that the chances
// add up to at most alpha whatever the runs (Bonferroni's inequality:
// P(some look errs) <= the sum of the looks' alphas). The split, look by
// look in order: a look gets an equal share of what is left (left ÷ looks
// left); when that share is below the smallest p its runs can reach
// (2/C(2n, n) at n runs each: 4 against 4 cannot go below 2.86%), it gets
// exactly that smallest p if what is left covers it, or nothing
// otherwise, and a look that gets nothing is not a look. With the
// defaults (4 to 8 runs, ABBA, 95%): 2.86% at 4 runs each (all four B
// runs beyond all four A runs), then 1.07% at 6 and 1.07% at 8.
func Schedule(opt Options) ([]Look, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	return schedule(opt)
}

func schedule(opt Options) ([]Look, error) {
	bs := opt.Order.blockRuns()
	var ns []int
	for n := bs; n <= opt.MaxRuns; n += bs {
		if n >= opt.MinRuns {
			ns = append(ns, n)
		}
	}
	if len(ns) == 0 {
		return nil, fmt.Errorf("abtest: no block of %d runs per arm ends between %d and %d runs", bs, opt.MinRuns, opt.MaxRuns)
	}
	left := 1 - opt.Level
	var looks []Look
	for i, n := range ns {
		share := left / float64(len(ns)-i)
		floor := smallestP(n, n)
		switch {
		case floor <= share:
		case floor <= left:
			share = floor
		default:
			continue
		}
		looks = append(looks, Look{Runs: n, Alpha: share})
		left -= share
	}
	if len(looks) == 0 {
		return nil, fmt.Errorf("abtest: %d runs per arm cannot reach a %s level (the smallest Mann-Whitney p at %d each is %.4f): raise MaxRuns",
			opt.MaxRuns, pct(opt.Level), ns[len(ns)-1], smallestP(ns[len(ns)-1], ns[len(ns)-1]))
	}
	return looks, nil
}

// Run measures A and B interleaved in blocks (opt.Order) and looks after
// each block from opt.MinRuns runs per arm on (Schedule): it stops at
// the first look whose verdict is not WithinNoise, or at the last look
// (opt.MaxRuns), whose verdict stands. On an error from the experiment
// it returns what was measured so far with the error.
func Run(ctx context.Context, e Experiment, opt Options) (*Result, error) {
	if e.ToA == nil || e.ToB == nil || e.Measure == nil {
		return nil, errors.New("abtest: the experiment needs ToA, ToB and Measure")
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	looks, err := schedule(opt)
	if err != nil {
		return nil, err
	}
	res := &Result{State: opt.Start}
	block := opt.Order.pattern(opt.Start)
	n := 0 // runs per arm at block ends
	for li, look := range looks {
		for n < look.Runs {
			for _, arm := range block {
				if err := ctx.Err(); err != nil {
					return res, err
				}
				if arm != res.State {
					to := e.ToA
					if arm == B {
						to = e.ToB
					}
					if err := to(ctx); err != nil {
						return res, fmt.Errorf("abtest: switching to %s: %w", arm, err)
					}
					res.State = arm
				}
				score, err := e.Measure(ctx, arm)
				if err != nil {
					return res, fmt.Errorf("abtest: measuring %s (run %d): %w", arm, len(res.Runs)+1, err)
				}
				res.Runs = append(res.Runs, Sample{Arm: arm, Score: score})
			}
			n += opt.Order.blockRuns()
		}
		where := fmt.Sprintf("look %d of %d (%d runs each)", li+1, len(looks), n)
		d, err := decide(res.Scores(A), res.Scores(B), look.Alpha, opt, where)
		if err != nil {
			return res, err
		}
		res.Looks = append(res.Looks, d)
		res.Decision = d
		if d.Verdict != WithinNoise {
			break
		}
		if li == len(looks)-1 {
			res.Decision.Reason = fmt.Sprintf("no decision at the most runs allowed (%d each): %s", n, d.Reason)
		}
	}
	return res, nil
}

// NoiseFloor runs state A against itself, the same way Run runs A
// against B: the second arm is A again, reached through toA (so the
// switch's own disturbance, a restart or a cold cache, is measured as
// the noise it is). Its Decision must be WithinNoise; its interval is the
// noise floor, the smallest change this setup can tell apart (an
// interval of [0.93, 1.08] means changes within about ±8% are
// invisible). Any other verdict means the measurement is biased (a
// switch that changes the state, a warm-up missing, a drift the order
// does not cancel), or is the 1-Level chance of a false verdict: the
// Reason says so. measure receives A or B to tell the two copies apart.
func NoiseFloor(ctx context.Context, toA func(context.Context) error, measure func(context.Context, Arm) (float64, error), opt Options) (*Result, error) {
	res, err := Run(ctx, Experiment{ToA: toA, ToB: toA, Measure: measure}, opt)
	if err != nil {
		return res, err
	}
	if res.Decision.Verdict != WithinNoise {
		res.Decision.Reason = "A against itself was told apart, so the measurement is biased or this is the chance of a false verdict; " + res.Decision.Reason
	} else {
		res.Decision.Reason = "A against itself: " + res.Decision.Reason
	}
	return res, nil
}
