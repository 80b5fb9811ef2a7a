package inventory

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// maxName is the longest host name (DNS's 253 bytes): a pattern whose
// names would be longer is refused before any is built.
const maxName = 253

// letters are Ansible's string.ascii_letters: a letter range runs through
// them in this order, so [x:B] is x y z A B.
const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// hostRange is one [START:END] or [START:END:STEP] of a host pattern:
// the values lo + i*step for i below count (for letters, indexes into
// letters), each written at least width digits wide.
type hostRange struct {
	letters         bool
	lo, step, count uint64
	// over is set for [0:18446744073709551615], one more value than a
	// uint64 counts.
	over  bool
	width int
	// maxLen is the length of its longest value.
	maxLen int
}

// hostPattern is a host pattern cut into literal text and ranges:
// lits[0] range[0] lits[1] ... range[n-1] lits[n].
type hostPattern struct {
	lits   []string
	ranges []hostRange
	// count is the number of names (the product of the ranges' counts);
	// over is set when that product passes what a uint64 holds.
	count uint64
	over  bool
	// maxLen is the length of its longest name.
	maxLen int
}

// tooManyError is a pattern that expands to more names than its limit.
type tooManyError struct {
	count uint64 // names; 0 when over
	over  bool   // more than a uint64 holds
	limit int
}

func (e *tooManyError) Error() string {
	return fmt.Sprintf("expands to %s hosts, more than %d", e.countText(), e.limit)
}

func (e *tooManyError) Unwrap() error { return ErrTooLarge }

// parsePattern cuts a host pattern into its literals and ranges, every
// count, bound and length in checked arithmetic: nothing is expanded.
func parsePattern(s string) (*hostPattern, error) {
	p := &hostPattern{count: 1}
	for {
		i := strings.IndexByte(s, '[')
		if i < 0 {
			if strings.IndexByte(s, ']') >= 0 {
				return nil, errors.New("']' without '['")
			}
			p.lits = append(p.lits, s)
			break
		}
		if strings.IndexByte(s[:i], ']') >= 0 {
			return nil, errors.New("']' without '['")
		}
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			return nil, errors.New("range without its closing ]")
		}
		j += i
		r, err := parseRange(s[i+1 : j])
		if err != nil {
			return nil, err
		}
		p.lits = append(p.lits, s[:i])
		p.ranges = append(p.ranges, r)
		if hi, lo := bits.Mul64(p.count, r.count); hi != 0 || r.over {
			p.over = true
		} else {
			p.count = lo
		}
		s = s[j+1:]
	}
	for _, l := range p.lits {
		p.maxLen += len(l)
	}
	for _, r := range p.ranges {
		// Each term is at most maxName (parseRange) or a literal of a
		// line, so the sum stays far from overflowing an int.
		p.maxLen += r.maxLen
	}
	if p.maxLen > maxName {
		return nil, fmt.Errorf("its names would be up to %d bytes long, more than a host name's %d", p.maxLen, maxName)
	}
	return p, nil
}

// parseRange reads "01:10", "a:f" or "0:10:2" as Ansible does: an empty
// start is 0, a zero-padded start pads every value to its length and
// must be as long as the end, letters run through a-z then A-Z.
func parseRange(spec string) (hostRange, error) {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return hostRange{}, fmt.Errorf("[%s]: a range is [START:END] or [START:END:STEP]", short(spec))
	}
	step := uint64(1)
	if len(parts) == 3 {
		s, err := strconv.ParseUint(parts[2], 10, 64)
		if err != nil || s < 1 {
			return hostRange{}, fmt.Errorf("[%s]: the step must be an integer from 1 to %d", short(spec), uint64(math.MaxUint64))
		}
		step = s
	}
	lo, hi := parts[0], parts[1]
	if lo == "" {
		lo = "0"
	}
	if hi == "" {
		return hostRange{}, fmt.Errorf("[%s]: the range has no end", short(spec))
	}
	a, b := strings.IndexByte(letters, lo[0]), strings.IndexByte(letters, hi[0])
	if len(lo) == 1 && len(hi) == 1 && a >= 0 && b >= 0 {
		if a > b {
			return hostRange{}, fmt.Errorf("[%s]: start after end", short(spec))
		}
		return hostRange{letters: true, lo: uint64(a), step: step, count: uint64(b-a)/step + 1, maxLen: 1}, nil
	}
	if len(lo) > maxName || len(hi) > maxName {
		return hostRange{}, fmt.Errorf("[%s]: a bound longer than a host name", short(spec))
	}
	x, err1 := strconv.ParseUint(lo, 10, 64)
	y, err2 := strconv.ParseUint(hi, 10, 64)
	if err1 != nil || err2 != nil {
		if isDigits(lo) && isDigits(hi) {
			return hostRange{}, fmt.Errorf("[%s]: a bound past %d", short(spec), uint64(math.MaxUint64))
		}
		return hostRange{}, fmt.Errorf("[%s]: want numbers or single letters", short(spec))
	}
	if x > y {
		return hostRange{}, fmt.Errorf("[%s]: start after end", short(spec))
	}
	r := hostRange{lo: x, step: step, count: (y-x)/step + 1}
	if r.count == 0 { // (MaxUint64-0)/1 + 1 wrapped
		r.count, r.over = math.MaxUint64, true
	}
	if len(lo) > 1 && lo[0] == '0' {
		if len(lo) != len(hi) {
			return hostRange{}, fmt.Errorf("[%s]: a zero-padded range's start and end must be as long as each other", short(spec))
		}
		r.width = len(lo)
	}
	// The last value is at most y; its digits, or the padding.
	r.maxLen = max(r.width, len(strconv.FormatUint(y, 10)))
	return r, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// names builds the pattern's names in Ansible's order (the last range
// turning fastest), at most limit of them: more is a *tooManyError before
// any name is built. Its cost is linear in the bytes it returns.
func (p *hostPattern) names(limit int) ([]string, error) {
	if limit < 0 {
		limit = 0
	}
	if p.over || p.count > uint64(limit) {
		return nil, &tooManyError{count: p.count, over: p.over, limit: limit}
	}
	out := make([]string, 0, p.count)
	idx := make([]uint64, len(p.ranges))
	buf := make([]byte, 0, p.maxLen)
	for range p.count {
		buf = buf[:0]
		for k, r := range p.ranges {
			buf = append(buf, p.lits[k]...)
			// idx[k] < r.count, so idx[k]*step <= END - START.
			v := r.lo + idx[k]*r.step
			if r.letters {
				buf = append(buf, letters[v])
				continue
			}
			for d := digits(v); d < r.width; d++ {
				buf = append(buf, '0')
			}
			buf = strconv.AppendUint(buf, v, 10)
		}
		buf = append(buf, p.lits[len(p.ranges)]...)
		out = append(out, string(buf))
		for k := len(idx) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < p.ranges[k].count {
				break
			}
			idx[k] = 0
		}
	}
	return out, nil
}

// digits is how many decimal digits v has.
func digits(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// expand expands the ranges of a host pattern, at most limit names.
func expand(pattern string, limit int) ([]string, error) {
	p, err := parsePattern(pattern)
	if err != nil {
		return nil, err
	}
	return p.names(limit)
}

// countText is the count for a message.
func (e *tooManyError) countText() string {
	if e.over {
		return "more than " + strconv.FormatUint(math.MaxUint64, 10)
	}
	return strconv.FormatUint(e.count, 10)
}
