package knobsearch

import (
	"math"
	"math/rand/v2"
	"slices"
)

// observation is a trial as the model sees it: its coordinates in the
// whole space and its score (a failed trial scores below every other).
type observation struct {
	point []float64
	score float64
}

// tpe is the Tree-structured Parzen Estimator (Bergstra et al., "Algorithms
// for Hyper-Parameter Optimization", NIPS 2011), on the unit cube.
//
// It splits the observations at the gamma quantile of their scores into
// the good ones and the rest, models the density of each knob's value
// among the good, l(x), and among the rest, g(x), each as a Parzen
// (kernel) estimate, and proposes, among candidates drawn from l, the one
// that maximises l(x)/g(x): where good trials are dense and bad ones are
// not, which is where the expected improvement is largest. Knobs are
// modelled one by one (the "tree" has no conditional knobs here).
type tpe struct {
	r *rand.Rand
	// gamma is the share of observations called good (0.25).
	gamma float64
	// candidates drawn from l(x) per proposal (24).
	candidates int
}

// parzen is a one-dimensional density on [0, 1]: a mixture of normal
// kernels truncated to [0, 1], plus a wide prior kernel at 0.5, so a knob
// never has zero density anywhere; or, for an Enum of m values, smoothed
// frequencies of each value (one pseudo-count each).
type parzen struct {
	mu, sigma, mass []float64 // kernels; mass is each one's weight inside [0, 1]
	cats            []float64 // Enum: probability of each value
}

const (
	priorSigma = 1.0
	minSigma   = 0.03
)

func newParzen(values []float64, k *Knob) *parzen {
	p := &parzen{}
	if k.Kind == Enum {
		m := len(k.Values)
		p.cats = make([]float64, m)
		for i := range p.cats {
			p.cats[i] = 1
		}
		for _, u := range values {
			p.cats[min(int(u*float64(m)), m-1)]++
		}
		total := 0.0
		for _, c := range p.cats {
			total += c
		}
		for i := range p.cats {
			p.cats[i] /= total
		}
		return p
	}
	xs := slices.Clone(values)
	slices.Sort(xs)
	// Each kernel's width is the larger gap to its neighbours (the
	// borders count as neighbours), at least minSigma and at most 1:
	// kernels are narrow where good trials crowd and wide where they are
	// lone.
	for i, x := range xs {
		left, right := 0.0, 1.0
		if i > 0 {
			left = xs[i-1]
		}
		if i < len(xs)-1 {
			right = xs[i+1]
		}
		s := math.Min(math.Max(math.Max(x-left, right-x), minSigma), 1)
		p.add(x, s)
	}
	p.add(0.5, priorSigma)
	return p
}

func (p *parzen) add(mu, sigma float64) {
	p.mu = append(p.mu, mu)
	p.sigma = append(p.sigma, sigma)
	p.mass = append(p.mass, normCDF((1-mu)/sigma)-normCDF((0-mu)/sigma))
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// density is p(u).
func (p *parzen) density(u float64, m int) float64 {
	if p.cats != nil {
		return p.cats[min(int(u*float64(m)), m-1)]
	}
	d := 0.0
	for i := range p.mu {
		z := (u - p.mu[i]) / p.sigma[i]
		d += math.Exp(-z*z/2) / (p.sigma[i] * math.Sqrt(2*math.Pi) * p.mass[i])
	}
	return d / float64(len(p.mu))
}

// sample draws a value from p.
func (p *parzen) sample(r *rand.Rand, m int) float64 {
	if p.cats != nil {
		x, acc := r.Float64(), 0.0
		for i, c := range p.cats {
			acc += c
			if x < acc || i == len(p.cats)-1 {
				return (float64(i) + 0.5) / float64(m)
			}
		}
	}
	i := r.IntN(len(p.mu))
	for try := 0; try < 64; try++ {
		if v := p.mu[i] + p.sigma[i]*r.NormFloat64(); v >= 0 && v <= 1 {
			return v
		}
	}
	return math.Min(math.Max(p.mu[i], 0), 1)
}

// propose returns the next point to try: base (the incumbent's
// coordinates) with the dims searched drawn from the model of obs, the
// candidate of largest l/g among those accept takes. ok is false when no
// candidate was accepted (rejected counts those refused).
func (t *tpe) propose(knobs []Knob, dims []int, obs []observation, base []float64, accept func([]float64) bool) (best []float64, rejected int, ok bool) {
	sorted := slices.Clone(obs)
	slices.SortStableFunc(sorted, func(a, b observation) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	nGood := max(1, int(math.Ceil(t.gamma*float64(len(sorted)))))
	good, bad := sorted[:min(nGood, len(sorted))], sorted[min(nGood, len(sorted)):]
	ls := make([]*parzen, len(dims))
	gs := make([]*parzen, len(dims))
	for j, d := range dims {
		var gv, bv []float64
		for _, o := range good {
			gv = append(gv, o.point[d])
		}
		for _, o := range bad {
			bv = append(bv, o.point[d])
		}
		ls[j], gs[j] = newParzen(gv, &knobs[d]), newParzen(bv, &knobs[d])
	}
	bestScore := math.Inf(-1)
	drawn := 0
	for tried := 0; drawn < t.candidates && tried < 8*t.candidates; tried++ {
		x := slices.Clone(base)
		score := 0.0
		for j, d := range dims {
			m := len(knobs[d].Values)
			x[d] = ls[j].sample(t.r, m)
			score += math.Log(ls[j].density(x[d], m)) - math.Log(gs[j].density(x[d], m))
		}
		if !accept(x) {
			rejected++
			continue
		}
		drawn++
		if score > bestScore {
			best, bestScore = x, score
		}
	}
	return best, rejected, best != nil
}
