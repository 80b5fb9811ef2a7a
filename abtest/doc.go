// Package abtest decides whether a change (B) made a benchmark score
// better or worse than the state before it (A), on a machine whose
// scores are noisy and drift, and says how sure it is.
//
// # The problem
//
// A bench score moves from run to run for reasons that have nothing to
// do with the change: other processes, CPU frequency, caches, the
// machine warming up. Three runs of A followed later by three runs of B
// cannot separate the change from that noise. Worse, A's runs and B's
// runs were taken at different times: if the machine got slower or
// faster in between (drift), the whole drift is credited to the change.
//
// # Interleaving (Run)
//
// Run measures A and B in turns, through three functions the caller
// gives it: put the system in state A, put it in state B, measure once.
// Switching (applying or rolling back a change, restarting, warming up)
// is the caller's and may cost what it costs; Run only chooses the order
// and when to stop, and switches only when the next run needs the other
// state.
//
// The default order is ABBA blocks: A B B A A B B A ... Within each
// block A's two runs sit at positions 1 and 4 and B's at 2 and 3, the
// same average time, so anything that grows or shrinks steadily over the
// session adds the same amount to both arms and cancels. It also needs
// only two switches per block (none between blocks). The blocks start
// with the state the system is in (Options.Start: B A A B when the step
// was just applied), so the first run needs no switch. Alternate (A B A
// B) is offered too, but B is then always one run later than A and a
// drift biases the result by one run's worth.
//
// Interleaving removes drift's bias, not its noise: a strong drift makes
// both arms more spread out and the interval wider. It also assumes a
// run does not depend on the runs before it beyond the current state:
// the caller must warm up after a switch if a switch leaves caches cold
// (ABBA puts as many cold first runs in each arm, so they do not bias the
// verdict, but they widen the interval a lot).
//
// # The interval: ratio of medians, bootstrapped
//
// The effect is stated as the ratio median(B)/median(A): 1.20 means B's
// typical run scores 20% more. Medians, because one run spoiled by a
// neighbour should not move the answer.
//
// How sure are we of that ratio? The bootstrap answers by pretending the
// runs we have are the whole population: it draws, with replacement, as
// many runs as each arm has, computes the ratio of the two medians of the
// draw, and repeats this 10000 times (Options.Resamples). The spread of
// those ratios shows how much the ratio could move by the luck of which
// runs happened. The 95% interval (Options.Level) is the range between the
// 2.5th and the 97.5th percentile of the 10000 ratios (the percentile
// method: the sorted ratios at indexes floor(0.025·R) and
// ceil(0.975·R)-1). The draws come from a generator seeded with
// Options.Seed, so the same runs and seed always give the same interval;
// between seeds the bounds move by about half a percent at most at
// 10000 resamples.
// BCa, the corrected bootstrap, was not used: its correction estimates
// how the median changes when one run is left out, which with four to
// eight runs is too coarse to trust.
//
// # The second opinion: Mann-Whitney
//
// With few runs the bootstrap interval is too narrow (the runs we have
// never show the whole spread of the machine): simulated with A and B
// the same state, the 95% interval alone excludes 1 in 11% of the
// experiments at 3 runs each and 7% at 4 (32% at 2); from 5 runs on it
// stays at or under 5%. So it is not trusted alone. The second opinion
// is the Mann-Whitney U test, which only looks at the order of the runs:
// put all runs in one list from lowest to highest score and ask whether
// B's runs are bunched at one end more than chance would bunch them. When A and B are the same state, every way of
// labelling which runs are B's is equally likely, so the chance of a
// given bunching can be counted exactly: that is the p value. Up to 50
// runs in all it is counted exactly, ties included (runs with equal
// scores share their rank, and the count is over the ties as they are);
// beyond, the normal approximation with the usual corrections for ties
// and for continuity is used. The test agrees with the values published
// by SciPy, R and the tables of critical values (see the tests).
//
// Counting also shows what few runs can prove. With 3 runs against 3,
// even when every B run beats every A run, the chance of that order is
// 2 in 20: p = 0.10. No test that only trusts the runs can reach 5% with
// three runs each, which is why the demo's old three-run rule could
// neither prove a step worse nor keep noise from rolling a good step
// back. With 4 against 4 the smallest p is 2/70 = 2.9%; with 6 against 6
// it is 0.2%.
//
// # The verdict
//
//   - better: the whole interval is above 1 + Options.MinEffect (default
//     0; 0.05 asks for at least 5%) and Mann-Whitney's p is at or below
//     1-Level, B's runs bunched high;
//   - worse: the whole interval is below 1, and p likewise, B bunched low;
//   - within noise: anything else. It does not prove B equal to A: the
//     interval says how big a difference could still hide in the noise.
//
// Both opinions must agree. Under "no difference" Mann-Whitney's error
// rate is known exactly, so requiring it keeps the rate of false verdicts
// at or below 1-Level whatever the bootstrap does; the interval adds the
// size of the effect. Decision states all of it: the verdict, the ratio,
// the interval and its level, the p value, the runs of each arm and a
// sentence with the numbers.
//
// # Adaptive runs and the stopping rule
//
// Run starts with Options.MinRuns per arm (default 4), looks, and adds a
// block when the look is undecided, up to Options.MaxRuns (default 8).
// Looking several times and stopping at the first "decided" gives chance
// several tries: at 5% per look, three looks would be wrong more than 5%
// of the time. So the 5% is shared between the looks before any run
// (Schedule), and the chances of the looks add up to at most 5% whatever
// the runs (Bonferroni's inequality): each look gets an equal share of
// what is left, except that a look whose runs cannot reach that share
// gets exactly the smallest p its runs can reach, if what is left covers
// it (and is skipped otherwise). With the defaults:
//
//	look 1, 4 runs each: 2.86% (every B run beyond every A run), a 97.14% interval
//	look 2, 6 runs each: 1.07%, a 98.93% interval
//	look 3, 8 runs each: 1.07%, a 98.93% interval
//
// Each look's Decision carries its own level. The run stops at the first
// look whose verdict is better or worse; after the last look, within
// noise stands.
//
// Measured by simulation (the tests; go test -v -run TestRunSimulated),
// with ABBA and the defaults: when A and B are the same state, a verdict
// other than within noise came out in 46 of 1000 experiments (4.6%; 3.3%
// over 20000), under the 5% bound; 1.4% with scores full of ties, 3.0%
// with one run in ten hit by a neighbour at half speed.
// A 20% improvement under 5% noise was called better in every one of 300
// experiments (4997 of 5000 in a longer run, 94% of them at the first
// look, after 8 runs); a 10% improvement under 5% noise in 75%, a 20%
// one under 15% noise in 34% (such noise needs more runs); a drop
// from 46 to 28 under 15% noise was called worse in 99%. With a drift of
// +30% over the session and no effect, ABBA said within noise every
// time, where all of A's runs followed by all of B's called it better
// 999 times in 1000.
//
// # The noise floor (NoiseFloor)
//
// NoiseFloor runs A against A: the same state twice, switched the same
// way. It must say within noise (by chance it will not, at most 5% of the
// time), and its interval is the noise floor of the setup: [0.93, 1.08]
// means changes within about ±8% are invisible here. A verdict other than
// within noise there means the measurement itself is biased, for example
// a switch that does not really bring back the same state.
package abtest
