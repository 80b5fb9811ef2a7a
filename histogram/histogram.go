// Package histogram is a bounded-memory latency histogram: log-linear buckets
// (2^5 per power of two of microseconds, so a quantile is within about 3%),
// only the span of buckets in use allocated, exact merging. Query digests and
// HTTP endpoint profiles keep one per class instead of every sample. The
// zero value is ready; a Histogram is not safe for concurrent use.
package histogram

import "math"

// subBits sets the histogram resolution: 2^subBits buckets per power of two.
const subBits = 5

// maxBucket bounds the index: 2^47 µs is over four years.
const maxBucket = 1 + 48<<subBits

// Histogram counts durations (seconds) in log-linear buckets over
// microseconds: bucket 0 holds values under 1 µs, bucket 1+e<<subBits+m holds
// values in [2^e·(1+m/32), 2^e·(1+(m+1)/32)) µs. Only the range of buckets in
// use is allocated. The zero value is empty and ready.
type Histogram struct {
	lo     int      // index of counts[0]
	counts []uint32 // counts for buckets lo .. lo+len(counts)-1
	n      int64
}

func bucketOf(sec float64) int {
	us := sec * 1e6
	if !(us >= 1) { // also catches NaN
		return 0
	}
	bits := math.Float64bits(us)
	exp := int(bits>>52&0x7ff) - 1023
	mant := int(bits >> (52 - subBits) & (1<<subBits - 1))
	b := 1 + exp<<subBits + mant
	if b >= maxBucket {
		return maxBucket - 1
	}
	return b
}

// bucketBounds returns the bucket's range in seconds.
func bucketBounds(b int) (lo, hi float64) {
	if b == 0 {
		return 0, 1e-6
	}
	b--
	exp, mant := b>>subBits, b&(1<<subBits-1)
	base := math.Ldexp(1, exp)
	step := base / (1 << subBits)
	return (base + float64(mant)*step) / 1e6, (base + float64(mant+1)*step) / 1e6
}

// Add counts one duration.
func (h *Histogram) Add(sec float64) { h.addN(bucketOf(sec), 1) }

func (h *Histogram) addN(b int, n uint32) {
	switch {
	case len(h.counts) == 0:
		h.lo = b
		h.counts = append(h.counts[:0], 0)
	case b < h.lo:
		grow := h.lo - b
		nc := make([]uint32, len(h.counts)+grow, len(h.counts)+grow+8)
		copy(nc[grow:], h.counts)
		h.counts, h.lo = nc, b
	case b >= h.lo+len(h.counts):
		for b >= h.lo+len(h.counts) {
			h.counts = append(h.counts, 0)
		}
	}
	h.counts[b-h.lo] += n
	h.n += int64(n)
}

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		if c != 0 {
			h.addN(o.lo+i, c)
		}
	}
}

// Count is the number of values added.
func (h *Histogram) Count() int64 { return h.n }

// Quantile returns the value at quantile q (0..1): the midpoint of the bucket
// holding the ceil(q·n)-th smallest value, clamped to [min, max] (the exact
// extremes, which the caller tracks).
func (h *Histogram) Quantile(q, min, max float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for i, c := range h.counts {
		seen += int64(c)
		if seen >= rank {
			lo, hi := bucketBounds(h.lo + i)
			v := (lo + hi) / 2
			return math.Min(math.Max(v, min), max)
		}
	}
	return max
}
