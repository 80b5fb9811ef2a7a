package abtest

import (
	"math"
	"testing"
)

// TestMannWhitneyTextbook checks the test against published values.
func TestMannWhitneyTextbook(t *testing.T) {
	cases := []struct {
		name        string
		a, b        []float64
		forceNormal bool
		wantU       float64
		wantP       float64
		tol         float64
	}{
		// SciPy's mannwhitneyu documentation (ages of males and
		// females): U1 = 17, exact p = 0.1111, asymptotic (with
		// continuity correction) p = 0.11134688653314041.
		{"scipy exact", []float64{20, 11, 17, 12}, []float64{19, 22, 16, 29, 24}, false, 17, 0.1111111111111111, 1e-12},
		{"scipy normal", []float64{20, 11, 17, 12}, []float64{19, 22, 16, 29, 24}, true, 17, 0.11134688653314041, 1e-9},
		// R's ?wilcox.test (Hollander & Wolfe, permeability of
		// membranes): W = 35, one-sided p = 0.1272, so two-sided 0.2544.
		{"R wilcox.test", []float64{1.15, 0.88, 0.90, 0.74, 1.21}, []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}, false, 35, 0.2544, 1e-4},
		// Complete separation: 2/C(n1+n2, n1).
		{"4 against 4 separated", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, false, 16, 2.0 / 70, 1e-12},
		{"3 against 3 separated", []float64{1, 2, 3}, []float64{5, 6, 7}, false, 9, 0.1, 1e-12},
		{"B below", []float64{5, 6, 7, 8}, []float64{1, 2, 3, 4}, false, 0, 2.0 / 70, 1e-12},
		// Everything tied: no evidence either way.
		{"all tied", []float64{3, 3, 3}, []float64{3, 3, 3}, false, 4.5, 1, 1e-12},
		{"all tied normal", []float64{3, 3, 3}, []float64{3, 3, 3}, true, 4.5, 1, 1e-12},
		// Two tie groups, B entirely in the upper one: the conditional
		// distribution puts 1 of C(8,4) = 70 subsets there.
		{"two tie groups", []float64{1, 1, 1, 1}, []float64{2, 2, 2, 2}, false, 16, 2.0 / 70, 1e-12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mannWhitney(c.a, c.b, c.forceNormal)
			if got.U != c.wantU || math.Abs(got.P-c.wantP) > c.tol {
				t.Errorf("U = %v, p = %.10f; want U = %v, p = %.10f", got.U, got.P, c.wantU, c.wantP)
			}
			if got.Exact == c.forceNormal {
				t.Errorf("exact = %v", got.Exact)
			}
		})
	}
}

// TestMannWhitneyCriticalValues: the largest U significant at 5%
// two-sided, as printed in the usual tables of critical values.
func TestMannWhitneyCriticalValues(t *testing.T) {
	cases := []struct{ n1, n2, crit int }{
		{3, 5, 0}, {3, 8, 2}, {4, 4, 0}, {4, 6, 2}, {4, 8, 4},
		{5, 5, 2}, {5, 8, 6}, {5, 10, 8}, {6, 6, 5}, {6, 9, 10},
		{7, 7, 8}, {7, 10, 14}, {8, 8, 13}, {8, 10, 17}, {10, 10, 23},
	}
	for _, c := range cases {
		crit := -1
		// Sample with U = u: B's first u values interleaved below A's.
		for u := 0; u <= c.n1*c.n2/2; u++ {
			a, b := withU(c.n1, c.n2, u)
			r := mannWhitney(a, b, false)
			if r.U != float64(u) {
				t.Fatalf("%d,%d: built U = %v, want %d", c.n1, c.n2, r.U, u)
			}
			if r.P <= 0.05 {
				crit = u
			}
		}
		if crit != c.crit {
			t.Errorf("n1=%d n2=%d: critical U = %d, table says %d", c.n1, c.n2, crit, c.crit)
		}
	}
}

// withU builds samples of sizes n1 (A) and n2 (B) whose U (pairs with B
// above A) is u: B starts entirely below A, and each of u steps moves
// one B value above one more A value. No two values are equal.
func withU(n1, n2, u int) (a, b []float64) {
	for i := range n1 {
		a = append(a, float64(10*(i+1)))
	}
	// Place B values: value v between A's ranks; count pairs above.
	pos := make([]int, n2) // how many A values each B value is above
	for k := 0; k < u; k++ {
		pos[n2-1-k%n2]++
	}
	for i, p := range pos {
		// Distinct values: ties among B's runs would change the
		// (conditional) distribution the tables assume.
		b = append(b, float64(10*p+5)+float64(i)/100)
	}
	return a, b
}

// TestMannWhitneyBruteForce compares the exact p value with a direct
// enumeration of every assignment of the pooled runs to B, with ties.
func TestMannWhitneyBruteForce(t *testing.T) {
	cases := []struct {
		name string
		a, b []float64
	}{
		{"no ties", []float64{3.1, 4.7, 1.2, 9.9}, []float64{5.5, 6.1, 2.2}},
		{"ties across arms", []float64{1, 2, 2, 3, 5}, []float64{2, 3, 3, 4}},
		{"heavy ties", []float64{100, 100, 101, 99, 100}, []float64{101, 101, 100, 102, 101, 100}},
		{"one run each", []float64{1}, []float64{2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mannWhitney(c.a, c.b, false)
			want := bruteP(c.a, c.b)
			if math.Abs(got.P-want) > 1e-12 {
				t.Errorf("p = %.12f, enumeration says %.12f", got.P, want)
			}
		})
	}
	// The normal approximation is close to the exact value at 20
	// against 20.
	var a, b []float64
	for i := range 20 {
		a = append(a, float64(i*7%23))
		b = append(b, float64(i*5%19)+3)
	}
	ex, nm := mannWhitney(a, b, false), mannWhitney(a, b, true)
	if math.Abs(ex.P-nm.P) > 0.01 {
		t.Errorf("20 against 20: exact p %.4f, normal %.4f", ex.P, nm.P)
	}
}

// bruteP enumerates every way of choosing which pooled runs are B's and
// counts U (pairs b > a, ties one half) for each.
func bruteP(a, b []float64) float64 {
	pool := append(append([]float64{}, a...), b...)
	u := func(a, b []float64) float64 {
		s := 0.0
		for _, x := range a {
			for _, y := range b {
				switch {
				case y > x:
					s++
				case y == x:
					s += 0.5
				}
			}
		}
		return s
	}
	obs := u(a, b)
	n := len(pool)
	var low, high, all float64
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != len(b) {
			continue
		}
		var xa, xb []float64
		for i, v := range pool {
			if mask&(1<<i) != 0 {
				xb = append(xb, v)
			} else {
				xa = append(xa, v)
			}
		}
		v := u(xa, xb)
		all++
		if v <= obs+1e-9 {
			low++
		}
		if v >= obs-1e-9 {
			high++
		}
	}
	return min(1, 2*min(low, high)/all)
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}
