package stats

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		name string
		in   []float64
		want float64
	}{
		{"none", nil, 0},
		{"one", []float64{7}, 7},
		{"odd count, unsorted", []float64{3, 1, 2}, 2},
		{"even count: the mean of the two middle values", []float64{4, 1, 3, 2}, 2.5},
		{"two", []float64{10, 11}, 10.5},
		{"ties", []float64{5, 5, 1, 5}, 5},
		{"duplicates in the middle", []float64{5, 5, 1, 9}, 5},
		{"negative values", []float64{-3, -1, -2, 10}, -1.5},
		{"infinity in the tail", []float64{1, 2, math.Inf(1)}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			if got := Median(in); got != tc.want {
				t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
			}
			if !slices.Equal(in, tc.in) {
				t.Errorf("Median changed its input: %v, was %v", in, tc.in)
			}
			sorted := slices.Sorted(slices.Values(tc.in))
			if got := SortedMedian(sorted); got != tc.want {
				t.Errorf("SortedMedian(%v) = %v, want %v", sorted, got, tc.want)
			}
		})
	}
}

func TestMedianDurations(t *testing.T) {
	cases := []struct {
		name string
		in   []time.Duration
		want time.Duration
	}{
		{"none", nil, 0},
		{"odd count", []time.Duration{3 * time.Second, time.Second, 2 * time.Second}, 2 * time.Second},
		{"even count", []time.Duration{time.Second, 2 * time.Second}, 1500 * time.Millisecond},
		{"even count, odd sum: rounded toward zero", []time.Duration{1, 2}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Median(tc.in); got != tc.want {
				t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}
