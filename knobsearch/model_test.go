package knobsearch

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLatinHypercube(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, d = 10, 6
	pts := latinHypercube(r, n, d, 20)
	if len(pts) != n {
		t.Fatalf("%d points", len(pts))
	}
	for j := 0; j < d; j++ {
		var cells []int
		for _, p := range pts {
			if p[j] < 0 || p[j] >= 1 {
				t.Fatalf("coordinate %f", p[j])
			}
			cells = append(cells, int(p[j]*n))
		}
		slices.Sort(cells)
		for i, c := range cells {
			if c != i {
				t.Fatalf("dimension %d: cells %v, want one point in each of 0..%d", j, cells, n-1)
			}
		}
	}
	// Maximin: the chosen design spreads at least as well as a single
	// random one, on average.
	better := 0
	for s := uint64(0); s < 20; s++ {
		a := minDistance(latinHypercube(rand.New(rand.NewPCG(s, 1)), n, d, 50))
		b := minDistance(latinHypercube(rand.New(rand.NewPCG(s, 2)), n, d, 1))
		if a >= b {
			better++
		}
	}
	if better < 17 {
		t.Errorf("maximin beat a single design in %d of 20", better)
	}
}

func TestRanksAndSpearman(t *testing.T) {
	if got := ranks([]float64{10, 30, 20, 20}); !slices.Equal(got, []float64{1, 4, 2.5, 2.5}) {
		t.Errorf("ranks %v", got)
	}
	knobs := []Knob{{Name: "up"}, {Name: "down"}, {Name: "flat"}, {Name: "noise"}}
	var obs []observation
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 12; i++ {
		x := float64(i) / 12
		obs = append(obs, observation{point: []float64{x, 1 - x, 0.5, r.Float64()}, score: 100 + 50*x*x})
	}
	imp := rankKnobs(knobs, obs)
	if imp[0].Knob != "up" && imp[0].Knob != "down" || math.Abs(imp[0].Rho) < 0.999 {
		t.Errorf("importance %v", imp)
	}
	for _, x := range imp {
		switch x.Knob {
		case "up":
			if x.Rho < 0.999 {
				t.Errorf("up: rho %f (a monotone effect is rank correlation 1)", x.Rho)
			}
		case "down":
			if x.Rho > -0.999 {
				t.Errorf("down: rho %f", x.Rho)
			}
		case "flat":
			if x.Rho != 0 {
				t.Errorf("flat: rho %f", x.Rho)
			}
		}
	}
	if imp[3].Knob != "flat" && imp[2].Knob != "flat" {
		t.Errorf("flat ranked %v", imp)
	}
}

// TestTPEBeatsRandom: on a smooth two-knob surface with one enum, TPE's
// proposals after a few random points find a better point than as many
// random draws, in most of 30 seeded runs.
func TestTPEBeatsRandom(t *testing.T) {
	knobs := []Knob{{Name: "x", Kind: Float, Min: 0, Max: 1}, {Name: "y", Kind: Float, Min: 0, Max: 1}, {Name: "e", Kind: Enum, Values: []string{"a", "b", "c", "d"}}}
	f := func(p []float64) float64 {
		bonus := 0.0
		if int(p[2]*4) == 2 {
			bonus = 0.3
		}
		return -math.Pow(p[0]-0.8, 2) - math.Pow(p[1]-0.25, 2) + bonus
	}
	const initial, budget = 6, 20
	wins := 0
	for seed := uint64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		var obs []observation
		for i := 0; i < initial; i++ {
			p := []float64{r.Float64(), r.Float64(), r.Float64()}
			obs = append(obs, observation{point: p, score: f(p)})
		}
		random := slices.Clone(obs)
		m := &tpe{r: r, gamma: 0.25, candidates: 24}
		for i := 0; i < budget; i++ {
			p, _, ok := m.propose(knobs, []int{0, 1, 2}, obs, []float64{0.5, 0.5, 0.5}, func([]float64) bool { return true })
			if !ok {
				t.Fatal("no proposal")
			}
			obs = append(obs, observation{point: p, score: f(p)})
			q := []float64{r.Float64(), r.Float64(), r.Float64()}
			random = append(random, observation{point: q, score: f(q)})
		}
		best := func(os []observation) float64 {
			b := math.Inf(-1)
			for _, o := range os {
				b = math.Max(b, o.score)
			}
			return b
		}
		if best(obs) > best(random) {
			wins++
		}
	}
	if wins < 22 {
		t.Errorf("TPE beat random sampling in %d of 30 runs", wins)
	}
}

// TestTPERespectsAccept: a proposal is never a point accept refuses, and
// the knobs not searched keep the base's coordinates.
func TestTPERespectsAccept(t *testing.T) {
	knobs := []Knob{{Name: "x", Kind: Float, Min: 0, Max: 1}, {Name: "y", Kind: Float, Min: 0, Max: 1}}
	r := rand.New(rand.NewPCG(7, 7))
	var obs []observation
	for i := 0; i < 8; i++ {
		p := []float64{r.Float64(), r.Float64()}
		obs = append(obs, observation{point: p, score: p[0]})
	}
	for i := 0; i < 50; i++ {
		p, _, ok := (&tpe{r: r, gamma: 0.25, candidates: 24}).propose(knobs, []int{0}, obs, []float64{0.3, 0.42}, func(x []float64) bool { return x[0] < 0.6 })
		if !ok {
			continue
		}
		if p[0] >= 0.6 || p[1] != 0.42 {
			t.Fatalf("proposal %v", p)
		}
	}
	if _, _, ok := (&tpe{r: r, gamma: 0.25, candidates: 24}).propose(knobs, []int{0}, obs, []float64{0, 0}, func([]float64) bool { return false }); ok {
		t.Error("a proposal when nothing is accepted")
	}
}

func TestKnobValues(t *testing.T) {
	bp := Knob{Name: "innodb_buffer_pool_size", Kind: Size, Min: 128 * mib, Max: 4 * gib, Log: true, Step: 128 * mib}
	for _, u := range []float64{0, 0.3, 0.77, 1} {
		v := bp.value(u)
		n, _ := number(v)
		if int64(n)%(128*mib) != 0 || n < bp.Min || n > bp.Max {
			t.Errorf("value(%f) = %s", u, v)
		}
		back, ok := bp.unit(v)
		if !ok || bp.value(back) != v {
			t.Errorf("unit(%s) = %f, back to %s", v, back, bp.value(back))
		}
	}
	if bp.value(0) != "134217728" || bp.value(1) != "4294967296" {
		t.Errorf("ends %s %s", bp.value(0), bp.value(1))
	}
	e := Knob{Kind: Enum, Values: []string{"OFF", "ON"}}
	if e.value(0.2) != "OFF" || e.value(0.99) != "ON" || e.value(1) != "ON" {
		t.Error("enum values")
	}
	if u, ok := e.unit("1"); !ok || e.value(u) != "ON" {
		t.Errorf("enum unit of 1: %f %v", u, ok)
	}
	if _, ok := bp.unit("1"); ok {
		t.Error("a value below the range has a coordinate")
	}
}
