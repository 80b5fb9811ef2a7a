package tpcc

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// gen draws the spec's random values (clause 4.3.2): uniform integers
// and decimals, alphanumeric and numeric strings, zip codes, the
// "ORIGINAL" marker, customer last names and NURand. It is not safe for
// concurrent use: every loader unit and every terminal has its own,
// seeded, so a load is the same data every time.
type gen struct {
	r *rand.Rand
	c constants
}

// constants are the C values of NURand (clause 2.1.6): one per A, drawn
// once. cLast is the load's for C_LAST; a run uses another value whose
// distance from the load's obeys clause 2.1.6.1.
type constants struct {
	cLast, cID, olIID int
}

func newGen(seed1, seed2 uint64, c constants) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed1, seed2)), c: c}
}

// loadConstants are the C values a load uses, from its seed.
func loadConstants(seed uint64) constants {
	r := rand.New(rand.NewPCG(seed, 0x7470_6363))
	return constants{cLast: r.IntN(256), cID: r.IntN(1024), olIID: r.IntN(8192)}
}

// runConstants are the run's C values: C_LAST differs from the load's by
// a delta in [65, 119] other than 96 and 112 (clause 2.1.6.1), so the
// names a run asks for are not the load's most frequent ones; C_ID and
// C_OL_I_ID may be anything.
func runConstants(load constants, r *rand.Rand) constants {
	var delta int
	for {
		delta = 65 + r.IntN(55)
		if delta != 96 && delta != 112 {
			break
		}
	}
	// cLast = load ± delta within [0, 255].
	c := load.cLast + delta
	if c > 255 {
		c = load.cLast - delta
	}
	return constants{cLast: c, cID: r.IntN(1024), olIID: r.IntN(8192)}
}

// validRunDelta reports whether run's C_LAST may follow load's.
func validRunDelta(load, run int) bool {
	d := run - load
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

// intn is a uniform integer in [lo, hi].
func (g *gen) intn(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

// nurand is NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y -
// x + 1)) + x, with C the constant for A.
func (g *gen) nurand(a, x, y int) int {
	var c int
	switch a {
	case 255:
		c = g.c.cLast
	case 1023:
		c = g.c.cID
	case 8191:
		c = g.c.olIID
	}
	return ((g.intn(0, a)|g.intn(x, y))+c)%(y-x+1) + x
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// astring appends a random alphanumeric string of length lo..hi. The
// spec asks for at least 26 lower and 26 upper case characters and 10
// digits: alnum is exactly those, so no value ever needs quoting in SQL
// or escaping in LOAD DATA.
func (g *gen) astring(b []byte, lo, hi int) []byte {
	n := g.intn(lo, hi)
	for i := 0; i < n; i++ {
		b = append(b, alnum[g.r.IntN(len(alnum))])
	}
	return b
}

// nstring appends a random numeric string of length lo..hi.
func (g *gen) nstring(b []byte, lo, hi int) []byte {
	n := g.intn(lo, hi)
	for i := 0; i < n; i++ {
		b = append(b, byte('0'+g.r.IntN(10)))
	}
	return b
}

// zip appends a zip code: 4 random digits and "11111".
func (g *gen) zip(b []byte) []byte {
	b = g.nstring(b, 4, 4)
	return append(b, "11111"...)
}

// data appends i_data or s_data: a random string of 26..50 characters,
// 10% of them with "ORIGINAL" at a random position.
func (g *gen) data(b []byte) []byte {
	start := len(b)
	b = g.astring(b, 26, 50)
	if g.r.IntN(10) == 0 {
		n := len(b) - start
		at := start + g.r.IntN(n-8+1)
		copy(b[at:], "ORIGINAL")
	}
	return b
}

// decimal appends a uniform decimal in [lo, hi] with the given number of
// decimal places (lo and hi are in units of 10^-places).
func (g *gen) decimal(b []byte, lo, hi, places int) []byte {
	return appendFixed(b, int64(g.intn(lo, hi)), places)
}

// appendFixed appends v·10^-places with exactly places decimals.
func appendFixed(b []byte, v int64, places int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	p := int64(math.Pow10(places))
	b = strconv.AppendInt(b, v/p, 10)
	if places == 0 {
		return b
	}
	b = append(b, '.')
	frac := strconv.FormatInt(v%p, 10)
	for i := len(frac); i < places; i++ {
		b = append(b, '0')
	}
	return append(b, frac...)
}

// syllables make customer last names (clause 4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastName is the last name of number n (0..999): one syllable per digit.
func lastName(n int) string {
	return syllables[n/100] + syllables[n/10%10] + syllables[n%10]
}

// lastNameNumber draws the number of a last name for a run or the load:
// NURand(255, 0, max) where max is 999, or fewer when a scaled-down load
// has fewer than 1000 customers per district (every number then names
// someone).
func (g *gen) lastNameNumber(customers int) int {
	return g.nurand(255, 0, min(999, customers-1))
}

// perm is a random permutation of 1..n.
func (g *gen) perm(n int) []int {
	p := make([]int, n)
	for i, v := range g.r.Perm(n) {
		p[i] = v + 1
	}
	return p
}

// thinkTime is a think time: -ln(r) × mean, r uniform in (0, 1], cut at
// ten times the mean (clause 5.2.5.4).
func (g *gen) thinkTime(mean float64) float64 {
	r := 1 - g.r.Float64() // (0, 1]
	return math.Min(-math.Log(r)*mean, 10*mean)
}
