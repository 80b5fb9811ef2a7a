package knobsearch

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// latinHypercube returns n points in [0, 1]^d, a Latin hypercube (each
// dimension's n values fall one in each of n equal strata) chosen among
// tries random ones for the largest smallest distance between two points
// (maximin), so the screening samples spread over the whole space and
// every knob is seen across its whole range.
func latinHypercube(r *rand.Rand, n, d, tries int) [][]float64 {
	var best [][]float64
	bestDist := -1.0
	for t := 0; t < max(1, tries); t++ {
		pts := make([][]float64, n)
		for i := range pts {
			pts[i] = make([]float64, d)
		}
		for j := 0; j < d; j++ {
			perm := r.Perm(n)
			for i := 0; i < n; i++ {
				pts[i][j] = (float64(perm[i]) + r.Float64()) / float64(n)
			}
		}
		if dist := minDistance(pts); dist > bestDist {
			best, bestDist = pts, dist
		}
	}
	return best
}

func minDistance(pts [][]float64) float64 {
	m := math.Inf(1)
	for i := range pts {
		for j := i + 1; j < len(pts); j++ {
			m = math.Min(m, distance(pts[i], pts[j]))
		}
	}
	return m
}

func distance(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// Importance is how strongly one knob's value went with the score over
// the trials so far.
type Importance struct {
	Knob string `json:"knob"`
	// Rho is Spearman's rank correlation between the knob's value and
	// the score (-1..1; positive: higher values scored more); Abs ranks.
	Rho    float64 `json:"rho"`
	Trials int     `json:"trials"`
}

// rankKnobs orders the knobs by |Spearman's rho| between each knob's
// coordinate and the score over the observations (failed trials count
// as the lowest score). Rank correlation, because it only assumes that
// more of a knob helps or hurts steadily, not linearly, and one noisy
// trial moves it less than it moves a fitted slope; with n screening
// samples its noise is about 1/sqrt(n-1), so the ranking separates the
// knobs that matter a lot (the buffer pool, under a budget) from the
// rest, not the rest among themselves.
func rankKnobs(knobs []Knob, obs []observation) []Importance {
	scores := make([]float64, len(obs))
	for i, o := range obs {
		scores[i] = o.score
	}
	sr := ranks(scores)
	out := make([]Importance, len(knobs))
	for j := range knobs {
		xs := make([]float64, len(obs))
		for i, o := range obs {
			xs[i] = o.point[j]
		}
		out[j] = Importance{Knob: knobs[j].Name, Rho: pearson(ranks(xs), sr), Trials: len(obs)}
	}
	sort.SliceStable(out, func(a, b int) bool { return math.Abs(out[a].Rho) > math.Abs(out[b].Rho) })
	return out
}

// ranks are the average ranks (1-based) of vs, ties sharing their mean
// rank.
func ranks(vs []float64) []float64 {
	idx := make([]int, len(vs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case vs[a] < vs[b]:
			return -1
		case vs[a] > vs[b]:
			return 1
		}
		return 0
	})
	out := make([]float64, len(vs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && vs[idx[j+1]] == vs[idx[i]] {
			j++
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			out[idx[k]] = r
		}
		i = j + 1
	}
	return out
}

// pearson is the correlation of xs and ys (0 when either is constant).
func pearson(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}
