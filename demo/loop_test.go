package demo

import "testing"

func TestSlower(t *testing.T) {
	cases := []struct {
		name      string
		cur, prev []float64
		want      bool
	}{
		{"all below and 20% down", []float64{80, 78, 82}, []float64{100, 98, 101}, true},
		{"overlapping runs", []float64{80, 99, 82}, []float64{100, 98, 101}, false},
		{"all below but only 5% down: noise", []float64{95, 94, 96}, []float64{100, 98, 101}, false},
		{"faster", []float64{200, 210, 190}, []float64{100, 98, 101}, false},
		{"no previous step", []float64{1}, nil, false},
		{"one run each, 50% down", []float64{50}, []float64{100}, true},
	}
	for _, c := range cases {
		if got := slower(c.cur, c.prev); got != c.want {
			t.Errorf("%s: slower = %v", c.name, got)
		}
	}
}
