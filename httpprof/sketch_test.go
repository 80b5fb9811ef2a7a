package httpprof

import (
	"fmt"
	"math"
	"testing"
)

func TestSketch(t *testing.T) {
	for _, n := range []int{1, 5, 31, 100, 10000, 200000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var whole, a, b sketch
			for i := 0; i < n; i++ {
				v := []byte(fmt.Sprintf("user-%d", i))
				whole.add(v)
				whole.add(v) // repeats do not count
				if i%3 == 0 {
					a.add(v)
				} else {
					b.add(v)
				}
			}
			a.merge(&b)
			if fmt.Sprint(a.hashes, a.values()) != fmt.Sprint(whole.hashes, whole.values()) {
				t.Fatalf("merged sketch differs from the whole one")
			}
			got := whole.distinct()
			if n < sketchK && got != n {
				t.Errorf("distinct %d, want exactly %d", got, n)
			}
			if err := math.Abs(float64(got-n)) / float64(n); err > 0.5 {
				t.Errorf("distinct %d for %d values (error %.0f%%)", got, n, err*100)
			}
			if len(whole.values()) != min(n, maxExamples) {
				t.Errorf("examples %v", whole.values())
			}
		})
	}
}
