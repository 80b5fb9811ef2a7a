package abtest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// machine simulates a bench on a noisy machine: run i of the session in
// state arm scores mean[arm] × (1 + noise·N(0,1)) × (1 + drift·i/16),
// a multiplicative noise and a linear drift over the session (drift 0.3:
// +30% by the sixteenth run), seeded; the other fields add the troubles
// of real machines.
type machine struct {
	meanA, meanB float64
	noise, drift float64
	// cold, when set, costs the score this fraction on the first run
	// after each switch (a restart's cold caches, no warm-up).
	cold float64
	// toggle, when set, costs this fraction while a hidden setting is
	// on; every switch flips it (a switch that does not restore the state
	// it claims to).
	toggle float64
	on     bool
	// round, when set, rounds scores to a multiple of it (ties).
	round float64
	// spike is the chance that a run is hit by a neighbour and scores
	// half.
	spike float64

	rng      *rand.Rand
	i        int
	state    Arm
	switched bool
	switches int
}

func newMachine(seed uint64, m machine) *machine {
	m.rng = rand.New(rand.NewPCG(seed, 0xabcdef))
	return &m
}

func (m *machine) experiment() Experiment {
	to := func(a Arm) func(context.Context) error {
		return func(context.Context) error {
			m.state, m.switched = a, true
			m.switches++
			m.on = !m.on
			return nil
		}
	}
	return Experiment{ToA: to(A), ToB: to(B), Measure: m.measure}
}

func (m *machine) measure(_ context.Context, arm Arm) (float64, error) {
	mu := m.meanA
	if arm == B {
		mu = m.meanB
	}
	v := mu * (1 + m.noise*m.rng.NormFloat64()) * (1 + m.drift*float64(m.i)/16)
	if m.switched {
		v *= 1 - m.cold
		m.switched = false
	}
	if m.on {
		v *= 1 - m.toggle
	}
	if m.spike > 0 && m.rng.Float64() < m.spike {
		v /= 2
	}
	if m.round > 0 {
		v = math.Round(v/m.round) * m.round
	}
	m.i++
	return max(v, 0), nil
}

// TestRunSimulated runs the sequential test on simulated machines, many
// seeds per case, and checks how often it reaches each verdict. The
// figures are logged (go test -v -run TestRunSimulated).
func TestRunSimulated(t *testing.T) {
	cases := []struct {
		name string
		m    machine
		opt  Options
		n    int // experiments
		// want is the verdict expected in at least minRate of the
		// experiments.
		want    Verdict
		minRate float64
		// never, when set, is a verdict allowed in at most maxRate.
		never   Verdict
		maxRate float64
	}{
		// The false-positive rate: the schedule bounds it by 5%; 1000
		// experiments measure it (the binomial standard error at 5% is
		// 0.7%, so 1% of slack).
		{name: "A against A", m: machine{meanA: 100, meanB: 100, noise: 0.05}, n: 1000, want: WithinNoise, minRate: 0.94},
		{name: "A against A, scores with many ties", m: machine{meanA: 100, meanB: 100, noise: 0.01, round: 1}, n: 1000, want: WithinNoise, minRate: 0.94},
		{name: "A against A, a busy machine (one run in ten at half speed)", m: machine{meanA: 100, meanB: 100, noise: 0.05, spike: 0.1}, n: 1000, want: WithinNoise, minRate: 0.94},
		{name: "A against A, alternate", m: machine{meanA: 100, meanB: 100, noise: 0.05}, opt: Options{Order: Alternate, MinRuns: 3}, n: 1000, want: WithinNoise, minRate: 0.94},
		// Power.
		{name: "20% better, 5% noise", m: machine{meanA: 100, meanB: 120, noise: 0.05}, n: 300, want: Better, minRate: 0.99},
		{name: "40% worse, 5% noise", m: machine{meanA: 100, meanB: 60, noise: 0.05}, n: 300, want: Worse, minRate: 0.99},
		{name: "46x to 28x, 15% noise", m: machine{meanA: 46, meanB: 28, noise: 0.15}, n: 300, want: Worse, minRate: 0.95},
		// A sound change too small for the noise is kept (not worse),
		// not rolled back: a verdict in the wrong direction is within
		// the 2.5% one side of the budget allows.
		{name: "5% better, 15% noise: not rolled back", m: machine{meanA: 100, meanB: 105, noise: 0.15}, n: 300, never: Worse, maxRate: 0.025},
		// A drift of +30% over the session and no effect: interleaving
		// keeps it out of the verdict.
		{name: "drift, no effect, ABBA", m: machine{meanA: 100, meanB: 100, noise: 0.03, drift: 0.3}, n: 300, want: WithinNoise, minRate: 0.95},
		{name: "drift, no effect, starting in B", m: machine{meanA: 100, meanB: 100, noise: 0.03, drift: 0.3}, opt: Options{Start: B}, n: 300, want: WithinNoise, minRate: 0.95},
		{name: "drift and 20% better", m: machine{meanA: 100, meanB: 120, noise: 0.03, drift: 0.3}, n: 300, want: Better, minRate: 0.95},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			count := map[Verdict]int{}
			runs := 0
			for seed := range uint64(c.n) {
				m := newMachine(seed, c.m)
				opt := c.opt
				opt.Seed = seed
				res, err := Run(context.Background(), m.experiment(), opt)
				if err != nil {
					t.Fatal(err)
				}
				count[res.Decision.Verdict]++
				runs += res.Decision.RunsA
			}
			n := float64(c.n)
			t.Logf("%s: %d better, %d worse, %d within noise of %d; %.1f runs per arm on average",
				c.name, count[Better], count[Worse], count[WithinNoise], c.n, float64(runs)/n)
			if c.want != "" && float64(count[c.want])/n < c.minRate {
				t.Errorf("%q in %.1f%% of the experiments, want at least %.1f%%", c.want, 100*float64(count[c.want])/n, 100*c.minRate)
			}
			if c.never != "" && float64(count[c.never])/n > c.maxRate {
				t.Errorf("%q in %.1f%% of the experiments, want at most %.1f%%", c.never, 100*float64(count[c.never])/n, 100*c.maxRate)
			}
		})
	}
}

// TestBlockedOrderFooled: the same drift as above, measured the way the
// demo measured before (all of A's runs, then all of B's, A A A A B B B
// B ...), makes a change that does nothing look better.
func TestBlockedOrderFooled(t *testing.T) {
	const n = 1000
	fooled := 0
	for seed := range uint64(n) {
		m := newMachine(seed, machine{meanA: 100, meanB: 100, noise: 0.03, drift: 0.3})
		var a, b []float64
		for range 8 {
			v, _ := m.measure(context.Background(), A)
			a = append(a, v)
		}
		for range 8 {
			v, _ := m.measure(context.Background(), B)
			b = append(b, v)
		}
		d, err := Compare(a, b, Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if d.Verdict == Better {
			fooled++
		}
	}
	t.Logf("A A A A A A A A B B B B B B B B with +30%% drift and no effect: %d of %d called better", fooled, n)
	if fooled < 900 {
		t.Errorf("the blocked order was fooled only %d times of %d", fooled, n)
	}
}

// TestRunOrder checks the order of the runs, where Run switches and
// where it stops.
func TestRunOrder(t *testing.T) {
	cases := []struct {
		name     string
		m        machine
		opt      Options
		order    string
		switches int
		state    Arm
		verdict  Verdict
	}{
		{"ABBA, clear effect: stops at the first look", machine{meanA: 100, meanB: 200, noise: 0.01}, Options{},
			"ABBAABBA", 4, A, Better},
		{"starting in B: BAAB", machine{meanA: 100, meanB: 200, noise: 0.01}, Options{Start: B},
			"BAABBAAB", 4, B, Better},
		{"no effect: up to the last look", machine{meanA: 100, meanB: 100, noise: 0.05}, Options{},
			"ABBAABBAABBAABBA", 8, A, WithinNoise},
		{"alternate", machine{meanA: 100, meanB: 200, noise: 0.01}, Options{Order: Alternate},
			"ABABABAB", 7, B, Better},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMachine(3, c.m)
			res, err := Run(context.Background(), m.experiment(), c.opt)
			if err != nil {
				t.Fatal(err)
			}
			var order strings.Builder
			for _, r := range res.Runs {
				order.WriteString(r.Arm.String())
			}
			if order.String() != c.order || m.switches != c.switches || res.State != c.state || res.Decision.Verdict != c.verdict {
				t.Errorf("order %s, %d switches, left in %s, %s; want %s, %d, %s, %s",
					order.String(), m.switches, res.State, res.Decision.Verdict, c.order, c.switches, c.state, c.verdict)
			}
			if res.Decision != res.Looks[len(res.Looks)-1] && res.Decision.Verdict != WithinNoise {
				t.Error("the decision is not the last look's")
			}
			if c.verdict == WithinNoise && !strings.HasPrefix(res.Decision.Reason, "no decision at the most runs allowed (8 each): look 3 of 3") {
				t.Errorf("reason %q", res.Decision.Reason)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	ok := func(context.Context) error { return nil }
	boom := errors.New("boom")
	cases := []struct {
		name    string
		e       Experiment
		ctx     func() context.Context
		is      error
		partial int // runs returned with the error
	}{
		{"a NaN score", Experiment{ToA: ok, ToB: ok, Measure: func(context.Context, Arm) (float64, error) { return math.NaN(), nil }}, nil, ErrInput, 8},
		{"A scores 0", Experiment{ToA: ok, ToB: ok, Measure: func(_ context.Context, a Arm) (float64, error) { return float64(a), nil }}, nil, ErrInput, 8},
		{"measure fails", Experiment{ToA: ok, ToB: ok, Measure: func(context.Context, Arm) (float64, error) { return 0, boom }}, nil, boom, 0},
		{"switch fails", Experiment{ToA: ok, ToB: func(context.Context) error { return boom }, Measure: func(context.Context, Arm) (float64, error) { return 1, nil }}, nil, boom, 1},
		{"cancelled", Experiment{ToA: ok, ToB: ok, Measure: func(context.Context, Arm) (float64, error) { return 1, nil }},
			func() context.Context { ctx, cancel := context.WithCancel(context.Background()); cancel(); return ctx }, context.Canceled, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			if c.ctx != nil {
				ctx = c.ctx()
			}
			res, err := Run(ctx, c.e, Options{})
			if !errors.Is(err, c.is) {
				t.Fatalf("err = %v, want %v", err, c.is)
			}
			if res == nil || len(res.Runs) != c.partial {
				t.Errorf("result %+v, want %d runs kept", res, c.partial)
			}
		})
	}
	if _, err := Run(context.Background(), Experiment{}, Options{}); err == nil {
		t.Error("an experiment without functions accepted")
	}
}

// TestNoiseFloor: A against itself says within noise, and its interval
// is the noise floor; a switch that does not put the system back in the
// same state is caught.
func TestNoiseFloor(t *testing.T) {
	cases := []struct {
		name    string
		m       machine
		want    Verdict
		maxHalf float64 // the interval's half-width is at most this
		reason  string
	}{
		{"5% noise", machine{meanA: 100, meanB: 100, noise: 0.05}, WithinNoise, 0.12, "A against itself: no decision"},
		{"1% noise", machine{meanA: 100, meanB: 100, noise: 0.01}, WithinNoise, 0.025, "A against itself: no decision"},
		// The first run after each switch loses 30%: ABBA puts as many
		// of those in each arm, so no bias, but the floor widens to
		// about ±35% (a warm-up after each switch is what keeps it
		// narrow).
		{"cold caches after every switch", machine{meanA: 100, meanB: 100, noise: 0.01, cold: 0.3}, WithinNoise, 0.4, "A against itself: no decision"},
		// The switch leaves a setting behind every other time: the
		// second copy of A is not A.
		{"a switch that does not restore the state", machine{meanA: 100, meanB: 100, noise: 0.01, toggle: 0.2}, Worse, 1, "A against itself was told apart"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMachine(11, c.m)
			e := m.experiment()
			res, err := NoiseFloor(context.Background(), e.ToA, e.Measure, Options{Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			d := res.Decision
			t.Logf("%s: %s", c.name, d.Reason)
			if d.Verdict != c.want || !strings.HasPrefix(d.Reason, c.reason) {
				t.Errorf("%s: %s", d.Verdict, d.Reason)
			}
			if c.want == WithinNoise && (d.CILow > 1 || d.CIHigh < 1 || d.CIHigh-d.CILow > 2*c.maxHalf) {
				t.Errorf("noise floor [%.3f, %.3f], want 1 inside and a half-width under %v", d.CILow, d.CIHigh, c.maxHalf)
			}
		})
	}
}
