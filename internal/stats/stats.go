package stats

import "slices"

// Number is what the helpers summarise: float64 and the integer kinds
// (time.Duration among them).
type Number interface {
	~float64 | ~int64 | ~int
}

// Median returns the median of vs: the middle value, or the mean of the
// two middle values for an even count (for an integer kind, that mean
// rounded toward zero); 0 for none. vs is not modified.
func Median[T Number](vs []T) T {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return SortedMedian(s)
}

// SortedMedian is Median of s, which is already in ascending order (not
// checked); 0 for none.
func SortedMedian[T Number](s []T) T {
	n := len(s)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
