package diagnose

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/slowlog"
)

// Attribution bounds.
const (
	// attributeClasses is how many of the top classes are attributed.
	attributeClasses = 10
	// attributeEndpoints is how many endpoints (by requests) are fitted
	// one by one; the others are fitted together as "(other requests)".
	attributeEndpoints = 12
	// minShare is the smallest share of a class an endpoint is listed
	// with.
	minShare = 0.05
)

// otherRequests names the endpoints fitted together.
const otherRequests = "(other requests)"

// attributionMethod says how the estimate is made, for the report.
const attributionMethod = "estimate: the run's window is cut into %s steps; in each, the class's calls (slow log) and each endpoint's requests (access log) are counted, " +
	"and calls = background + Σ k × requests is fitted by non-negative least squares over the steps; k is the estimated calls per request of an endpoint (with its 90%% range over 200 fits on resampled steps), " +
	"k × its requests its part of the class's calls, and the class's time is split in the same parts. It needs the endpoints' request counts to vary from step to step " +
	"independently (a scenario picking pages at random does); pages always requested together cannot be told apart, and R² says how well the fit explains the calls. " +
	"A class is given an endpoint only when R² is at least 0.5 and the top endpoint's range stays above 0; otherwise its endpoint is unknown (a trace run measures it)"

// classSeries counts the calls of the top classes per step of the window,
// from the slow log's section written during the run.
func classSeries(ctx context.Context, path string, start, end int64, w window, classes []digest.Class) (map[string][]float64, error) {
	want := map[string]string{} // fingerprint → class ID
	for i, c := range classes {
		if i >= attributeClasses {
			break
		}
		want[c.Fingerprint] = c.ID
	}
	out := map[string][]float64{}
	for _, id := range want {
		out[id] = make([]float64, w.n)
	}
	f, _, err := input.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var p slowlog.Parser
	var fp []byte
	_, err = slowlog.Split(chunk.WithContext(ctx, io.NewSectionReader(f, start, end-start)), chunk.Options{}, func(c slowlog.Chunk) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.ParseSplit(c, func(ev *slowlog.Event) {
			fp = fingerprint.Append(fp[:0], ev.Query)
			id, ok := want[string(fp)]
			if !ok {
				return
			}
			if i := w.index(ev.Time); i >= 0 {
				out[id][i]++
			}
		})
		return nil
	})
	return out, err
}

// attribute fits each top class's calls per step to the endpoints'
// requests per step (see the package documentation).
func attribute(classes []digest.Class, calls map[string][]float64, reqs *requestSeries, w window) *Attribution {
	a := &Attribution{Method: fmt.Sprintf(attributionMethod, w.step), BucketS: w.step.Seconds(), Buckets: w.n, Endpoints: []string{}, Classes: []ClassAttribution{}}
	// The endpoints with the most requests, one column each; the rest
	// summed in one.
	type ep struct {
		key string
		n   float64
	}
	var eps []ep
	for k, s := range reqs.counts {
		eps = append(eps, ep{k, sum(s)})
	}
	sort.Slice(eps, func(i, j int) bool {
		if eps[i].n != eps[j].n {
			return eps[i].n > eps[j].n
		}
		return eps[i].key < eps[j].key
	})
	var cols [][]float64
	other := make([]float64, w.n)
	hasOther := false
	for i, e := range eps {
		if i < attributeEndpoints {
			a.Endpoints = append(a.Endpoints, e.key)
			cols = append(cols, reqs.counts[e.key])
			continue
		}
		hasOther = true
		for t, v := range reqs.counts[e.key] {
			other[t] += v
		}
	}
	if hasOther {
		a.Endpoints = append(a.Endpoints, otherRequests)
		cols = append(cols, other)
	}
	ones := make([]float64, w.n)
	for i := range ones {
		ones[i] = 1
	}
	cols = append(cols, ones) // the background
	for i, c := range classes {
		if i >= attributeClasses {
			break
		}
		y := calls[c.ID]
		ca := ClassAttribution{ID: c.ID, Fingerprint: c.Fingerprint, Calls: int64(sum(y)), Endpoints: []EndpointShare{}}
		switch {
		case ca.Calls == 0:
			ca.Note = "no call in the window's steps"
		case len(a.Endpoints) == 0:
			ca.Note = "no request in the access log's window"
		case w.n < 3:
			ca.Note = fmt.Sprintf("the window has %d steps: too few to fit", w.n)
		}
		if ca.Note != "" {
			a.Classes = append(a.Classes, ca)
			continue
		}
		beta := nnls(cols, y)
		ca.R2 = r2(cols, beta, y)
		lo, hi := bootstrapBetas(cols, y, uint64(i+1))
		total := sum(y)
		for j, key := range a.Endpoints {
			part := beta[j] * sum(cols[j])
			share := part / total
			if share < minShare {
				continue
			}
			ca.Endpoints = append(ca.Endpoints, EndpointShare{Endpoint: key, CallsPerRequest: round(beta[j], 2), Low: round(lo[j], 2), High: round(hi[j], 2),
				Share: round(share, 3), TimeS: round(share*timeInSeries(c, total), 6)})
		}
		ca.Background = round(beta[len(beta)-1]*float64(w.n)/total, 3)
		sort.SliceStable(ca.Endpoints, func(i, j int) bool { return ca.Endpoints[i].Share > ca.Endpoints[j].Share })
		ca.Confident = confident(ca)
		a.Classes = append(a.Classes, ca)
	}
	return a
}

// The estimate names an endpoint only when it separates them: its fit
// explains at least minR2 of the calls' variation from step to step, and
// the top endpoint's calls per request stay above 0 in at least 90% of
// the fits on resampled steps. Otherwise the endpoint is unknown: the
// busiest page in a run where every page is always in flight (ten
// connections on a 2 s page make the call rate flat over 1 s steps)
// cannot be told from the others by counts, and naming one would be a
// guess.
const (
	minR2             = 0.5
	bootstrapFits     = 200
	bootstrapQuantile = 0.05
)

func confident(ca ClassAttribution) bool {
	return ca.R2 >= minR2 && len(ca.Endpoints) > 0 && ca.Endpoints[0].Low > 0
}

// bootstrapBetas refits the model on the steps resampled with
// replacement and returns each coefficient's 5th and 95th percentiles:
// how far the per-request figures move with the steps that happened to
// be seen.
func bootstrapBetas(cols [][]float64, y []float64, seed uint64) (lo, hi []float64) {
	n, p := len(y), len(cols)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	fits := make([][]float64, p)
	rc := make([][]float64, p)
	for j := range rc {
		rc[j] = make([]float64, n)
	}
	ry := make([]float64, n)
	for range bootstrapFits {
		for t := range n {
			k := rng.IntN(n)
			ry[t] = y[k]
			for j := range p {
				rc[j][t] = cols[j][k]
			}
		}
		b := nnls(rc, ry)
		for j := range p {
			fits[j] = append(fits[j], b[j])
		}
	}
	lo, hi = make([]float64, p), make([]float64, p)
	for j := range p {
		sort.Float64s(fits[j])
		lo[j] = fits[j][int(bootstrapQuantile*float64(len(fits[j])))]
		hi[j] = fits[j][int((1-bootstrapQuantile)*float64(len(fits[j])-1))]
	}
	return lo, hi
}

// timeInSeries is the class's time over the calls counted in the steps
// (its average time × those calls).
func timeInSeries(c digest.Class, calls float64) float64 {
	return c.TimeAvg * calls
}

// nnls solves min ‖Σ_j β_j cols_j − y‖² with β ≥ 0 by cyclic coordinate
// descent on the normal equations: the problems here have a few columns
// and a few hundred rows.
func nnls(cols [][]float64, y []float64) []float64 {
	p := len(cols)
	g := make([][]float64, p) // XᵀX
	b := make([]float64, p)   // Xᵀy
	for i := range p {
		g[i] = make([]float64, p)
		for j := range p {
			g[i][j] = dot(cols[i], cols[j])
		}
		b[i] = dot(cols[i], y)
	}
	beta := make([]float64, p)
	for iter := 0; iter < nnlsIterations; iter++ {
		moved := 0.0
		for j := range p {
			if g[j][j] <= 0 {
				continue
			}
			grad := -b[j]
			for k := range p {
				grad += g[j][k] * beta[k]
			}
			nb := math.Max(0, beta[j]-grad/g[j][j])
			moved = math.Max(moved, math.Abs(nb-beta[j])*math.Sqrt(g[j][j]))
			beta[j] = nb
		}
		if moved < 1e-9*(1+math.Sqrt(dot(y, y))) {
			break
		}
	}
	return beta
}

// nnlsIterations bounds the coordinate descent's sweeps.
const nnlsIterations = 20000

// r2 is the coefficient of determination of the fit.
func r2(cols [][]float64, beta, y []float64) float64 {
	mean := sum(y) / float64(len(y))
	var res, tot float64
	for t := range y {
		pred := 0.0
		for j := range cols {
			pred += beta[j] * cols[j][t]
		}
		res += (y[t] - pred) * (y[t] - pred)
		tot += (y[t] - mean) * (y[t] - mean)
	}
	if tot == 0 {
		if res == 0 {
			return 1
		}
		return 0
	}
	return round(1-res/tot, 3)
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func sum(a []float64) float64 {
	s := 0.0
	for _, v := range a {
		s += v
	}
	return s
}

// round rounds v to n decimals (figures of a JSON report).
func round(v float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(v*p) / p
}
