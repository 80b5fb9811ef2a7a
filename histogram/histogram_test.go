package histogram

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// TestHistogramQuantiles checks the bounded histogram against exact
// percentiles of random samples spanning six decades: within the bucket
// width (1/32 of a power of two, about 3%).
func TestHistogramQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, dist := range []string{"uniform", "lognormal", "bimodal"} {
		t.Run(dist, func(t *testing.T) {
			var h, h2 Histogram
			var vals []float64
			for i := 0; i < 20000; i++ {
				var v float64
				switch dist {
				case "uniform":
					v = rng.Float64() * 0.1
				case "lognormal":
					v = math.Exp(rng.NormFloat64()*2) * 1e-3
				default:
					v = 50e-6
					if i%10 == 0 {
						v = 2.0
					}
				}
				vals = append(vals, v)
				if i%2 == 0 {
					h.Add(v)
				} else {
					h2.Add(v)
				}
			}
			h.Merge(&h2)
			sort.Float64s(vals)
			lo, hi := vals[0], vals[len(vals)-1]
			for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
				exact := vals[int(math.Ceil(q*float64(len(vals))))-1]
				got := h.Quantile(q, lo, hi)
				if math.Abs(got-exact) > exact*0.035+1e-6 {
					t.Errorf("p%v = %g, exact %g", q*100, got, exact)
				}
			}
		})
	}
}
