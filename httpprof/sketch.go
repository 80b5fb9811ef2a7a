package httpprof

import (
	"math"
	"sort"
)

// sketchK is how many hashes a distinct-value sketch keeps.
const sketchK = 32

// sketch estimates how many distinct values a learned position has, and
// keeps a few of them as examples, in fixed memory and independently of the
// order values arrive in or how workers split them (a "k minimum values"
// sketch): it keeps the sketchK smallest 64-bit hashes of the values seen,
// and the values behind the smallest maxExamples of them.
type sketch struct {
	hashes   []uint64 // sorted ascending, at most sketchK
	examples []exampleValue
}

type exampleValue struct {
	hash  uint64
	value string
}

func hashBytes(b []byte) uint64 {
	// FNV-1a, then a final mix so that short, similar values spread.
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// add records one value.
func (s *sketch) add(v []byte) { s.addHash(hashBytes(v), v, "") }

func (s *sketch) addHash(h uint64, v []byte, vs string) {
	n := len(s.hashes)
	if n == sketchK && h >= s.hashes[n-1] {
		return
	}
	i := sort.Search(n, func(i int) bool { return s.hashes[i] >= h })
	if i < n && s.hashes[i] == h {
		return
	}
	s.hashes = append(s.hashes, 0)
	copy(s.hashes[i+1:], s.hashes[i:])
	s.hashes[i] = h
	if len(s.hashes) > sketchK {
		s.hashes = s.hashes[:sketchK]
	}
	if i < maxExamples {
		if vs == "" {
			vs = string(v)
		}
		j := sort.Search(len(s.examples), func(j int) bool { return s.examples[j].hash >= h })
		s.examples = append(s.examples, exampleValue{})
		copy(s.examples[j+1:], s.examples[j:])
		s.examples[j] = exampleValue{h, vs}
		if len(s.examples) > maxExamples {
			s.examples = s.examples[:maxExamples]
		}
	}
}

// merge adds o's values.
func (s *sketch) merge(o *sketch) {
	ex := map[uint64]string{}
	for _, e := range o.examples {
		ex[e.hash] = e.value
	}
	for _, h := range o.hashes {
		v, ok := ex[h]
		if !ok {
			v = "?" // beyond o's examples: only its hash is known
		}
		s.addHash(h, nil, v)
	}
}

// distinct estimates the number of distinct values: exact below sketchK.
func (s *sketch) distinct() int {
	n := len(s.hashes)
	if n < sketchK {
		return n
	}
	return int(math.Round(float64(sketchK-1) / (float64(s.hashes[n-1]) / math.MaxUint64)))
}

// values lists the examples.
func (s *sketch) values() []string {
	out := make([]string, len(s.examples))
	for i, e := range s.examples {
		out[i] = e.value
	}
	return out
}
