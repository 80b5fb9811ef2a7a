package abtest

import (
	"math"
	"math/rand/v2"
	"slices"
)

// ratio is b/a for medians: 0/0 is 1 (both arms scored nothing: no
// difference) and b/0 is +Inf. Only bootstrap resamples reach these cases;
// Compare refuses an A whose own median is 0.
func ratio(b, a float64) float64 {
	switch {
	case a > 0:
		return b / a
	case b == 0:
		return 1
	default:
		return math.Inf(1)
	}
}

// bootstrap is the percentile bootstrap of the ratio of medians
// median(B)/median(A): resamples times, each arm is resampled with
// replacement to its own size independently, and the ratio of the two
// resampled medians is kept. The interval is the (alpha/2, 1-alpha/2)
// quantiles of those ratios: with R resamples, the sorted ratios at
// indexes floor(alpha/2·R) and ceil((1-alpha/2)·R)-1. Deterministic for a
// seed.
type bootstrap struct {
	resamples int
	seed      uint64
}

func (bs bootstrap) interval(a, b []float64, alpha float64) (lo, hi float64) {
	sa, sb := slices.Clone(a), slices.Clone(b)
	slices.Sort(sa)
	slices.Sort(sb)
	// The second PCG word is a fixed constant: the seed alone decides
	// the stream.
	rng := rand.New(rand.NewPCG(bs.seed, 0x9e3779b97f4a7c15))
	ca, cb := make([]int, len(sa)), make([]int, len(sb))
	rs := make([]float64, bs.resamples)
	for i := range rs {
		rs[i] = ratio(resampledMedian(sb, cb, rng), resampledMedian(sa, ca, rng))
	}
	r := float64(len(rs))
	li := int(math.Floor(alpha / 2 * r))
	hi2 := int(math.Ceil((1-alpha/2)*r)) - 1
	li = min(max(li, 0), len(rs)-1)
	hi2 = min(max(hi2, li), len(rs)-1)
	// The upper quantile first: selecting it leaves everything below it
	// in rs[:hi2], where the lower one is then selected.
	hiv := nth(rs, hi2)
	return nth(rs[:hi2+1], li), hiv
}

// resampledMedian draws len(sorted) values of sorted with replacement and
// returns their median, in O(n): the draws are counted per index, and the
// middle order statistics are found by walking the counts (sorted is in
// order, so the k-th smallest draw is the index where the running count
// passes k). counts is scratch space of the same length.
func resampledMedian(sorted []float64, counts []int, rng *rand.Rand) float64 {
	n := len(sorted)
	clear(counts)
	if n <= 1<<16 {
		// Two draws per 64 random bits: the index is the high half of
		// a 32-bit random number times n (Lemire's multiply-shift),
		// which favours some indexes by at most n/2³² (under 2e-5 for
		// n <= 65536): nothing a percentile at 10000 resamples can see.
		un := uint64(n)
		for i := 0; i < n; i += 2 {
			r := rng.Uint64()
			counts[(r&0xffffffff)*un>>32]++
			if i+1 < n {
				counts[(r>>32)*un>>32]++
			}
		}
	} else {
		for range n {
			counts[rng.IntN(n)]++
		}
	}
	lo, hi := (n-1)/2, n/2 // 0-based ranks of the middle draws
	var vlo, vhi float64
	seen := 0
	for i, c := range counts {
		if c == 0 {
			continue
		}
		next := seen + c
		if seen <= lo && lo < next {
			vlo = sorted[i]
		}
		if seen <= hi && hi < next {
			vhi = sorted[i]
			break
		}
		seen = next
	}
	return (vlo + vhi) / 2
}

// nth puts the k-th smallest of vs (0-based) at vs[k], everything
// before it no larger and everything after no smaller, and returns it:
// quickselect, O(len(vs)) on average, instead of sorting every
// resample for two quantiles.
func nth(vs []float64, k int) float64 {
	lo, hi := 0, len(vs)-1
	for lo < hi {
		// Median of three as the pivot.
		mid := lo + (hi-lo)/2
		if vs[mid] < vs[lo] {
			vs[mid], vs[lo] = vs[lo], vs[mid]
		}
		if vs[hi] < vs[lo] {
			vs[hi], vs[lo] = vs[lo], vs[hi]
		}
		if vs[hi] < vs[mid] {
			vs[hi], vs[mid] = vs[mid], vs[hi]
		}
		pivot := vs[mid]
		i, j := lo, hi
		for i <= j {
			for vs[i] < pivot {
				i++
			}
			for vs[j] > pivot {
				j--
			}
			if i <= j {
				vs[i], vs[j] = vs[j], vs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return vs[k]
		}
	}
	return vs[k]
}

// mwResult is a Mann-Whitney U test of B against A.
type mwResult struct {
	// U counts the pairs (a, b) with b > a, ties counting one half:
	// from 0 (every B below every A) to len(a)·len(b).
	U float64
	// P is two-sided: twice the smaller tail, at most 1.
	P float64
	// Exact says whether P comes from the exact permutation distribution
	// (ties included) rather than the normal approximation.
	Exact bool
}

// exactLimit is the largest total number of runs for which the exact
// distribution is computed. Beyond it the normal approximation is within
// a fraction of a percent, and the subset counts (C(50, 25) ≈ 1.3e14)
// would no longer be exact in a float64.
const exactLimit = 50

// mannWhitney tests whether B's scores tend to be larger or smaller than
// A's. Ranks are midranks (ties share the mean of their positions). For
// len(a)+len(b) <= exactLimit (and not forced to the approximation) the p
// value is exact: the rank sum of B is compared with its distribution
// over every way of choosing which len(b) of the pooled runs are B's,
// with the ties as observed (the conditional permutation test, which is
// what "exact" means with ties). Otherwise it is the normal approximation
// with the tie correction of the variance and a continuity correction of
// 1/2.
func mannWhitney(a, b []float64, forceNormal bool) mwResult {
	m, n := len(a), len(b)
	N := m + n
	type obs struct {
		v   float64
		isB bool
	}
	all := make([]obs, 0, N)
	for _, v := range a {
		all = append(all, obs{v, false})
	}
	for _, v := range b {
		all = append(all, obs{v, true})
	}
	slices.SortStableFunc(all, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	// Doubled midranks are integers: a tie group spanning 1-based
	// positions i..j has midrank (i+j)/2.
	r2 := make([]int, N)
	var tieTerm float64 // Σ (t³ - t) over tie groups
	w2 := 0             // doubled rank sum of B
	for i := 0; i < N; {
		j := i
		for j+1 < N && all[j+1].v == all[i].v {
			j++
		}
		t := float64(j - i + 1)
		tieTerm += t*t*t - t
		for k := i; k <= j; k++ {
			r2[k] = (i + 1) + (j + 1)
			if all[k].isB {
				w2 += r2[k]
			}
		}
		i = j + 1
	}
	u := float64(w2)/2 - float64(n*(n+1))/2
	res := mwResult{U: u}
	if N <= exactLimit && !forceNormal {
		res.Exact = true
		res.P = exactP(r2, n, w2)
		return res
	}
	mu := float64(m*n) / 2
	fN := float64(N)
	v := float64(m*n) / 12 * ((fN + 1) - tieTerm/(fN*(fN-1)))
	if v <= 0 {
		res.P = 1
		return res
	}
	z := (math.Abs(u-mu) - 0.5) / math.Sqrt(v)
	if z < 0 {
		z = 0
	}
	res.P = min(1, math.Erfc(z/math.Sqrt2))
	return res
}

// exactP is the two-sided p value of the doubled rank sum w2 of a subset
// of size n of the doubled ranks r2, against the distribution over all
// C(len(r2), n) subsets (counted by dynamic programming over the runs:
// ways[k][s] is how many k-subsets of the runs seen so far sum to s).
func exactP(r2 []int, n, w2 int) float64 {
	total := 0
	for _, v := range r2 {
		total += v
	}
	ways := make([][]float64, n+1)
	for k := range ways {
		ways[k] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for i, v := range r2 {
		for k := min(i+1, n); k >= 1; k-- {
			prev, cur := ways[k-1], ways[k]
			for s := total; s >= v; s-- {
				cur[s] += prev[s-v]
			}
		}
	}
	var all, low, high float64
	for s, c := range ways[n] {
		all += c
		if s <= w2 {
			low += c
		}
		if s >= w2 {
			high += c
		}
	}
	return min(1, 2*min(low, high)/all)
}

// smallestP is the smallest two-sided exact p value Mann-Whitney can give
// with m and n runs and no ties: every run of one arm beyond every run of
// the other, 2/C(m+n, n). A look whose level is below it can never
// decide.
func smallestP(m, n int) float64 {
	c := 1.0
	for i := 1; i <= n; i++ {
		c = c * float64(m+i) / float64(i)
	}
	return min(1, 2/c)
}
