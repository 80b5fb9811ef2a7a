package tpcc

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLastName(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{0, "BARBARBAR"},
		{371, "PRICALLYOUGHT"}, // the spec's example (clause 4.3.2.3)
		{999, "EINGEINGEING"},
		{40, "BARPRESBAR"},
	} {
		if got := lastName(c.n); got != c.want {
			t.Errorf("lastName(%d) = %s, want %s", c.n, got, c.want)
		}
	}
}

func TestNURandRangeAndSkew(t *testing.T) {
	g := newGen(1, 2, constants{cLast: 7, cID: 100, olIID: 5000})
	counts := make([]int, 3001)
	for i := 0; i < 300000; i++ {
		v := g.nurand(1023, 1, 3000)
		if v < 1 || v > 3000 {
			t.Fatalf("NURand(1023, 1, 3000) = %d", v)
		}
		counts[v]++
	}
	// Non-uniform: the busiest customer is chosen far more often than
	// the uniform 100 times.
	most := 0
	for _, c := range counts {
		most = max(most, c)
	}
	if most < 300 {
		t.Errorf("busiest customer chosen %d times in 300000: NURand looks uniform", most)
	}
	for i := 0; i < 10000; i++ {
		if v := g.nurand(8191, 1, 100000); v < 1 || v > 100000 {
			t.Fatalf("NURand(8191, 1, 100000) = %d", v)
		}
		if v := g.lastNameNumber(3000); v < 0 || v > 999 {
			t.Fatalf("last name number %d", v)
		}
		if v := g.lastNameNumber(60); v < 0 || v > 59 {
			t.Fatalf("last name number %d with 60 customers", v)
		}
	}
}

func TestRunConstantsDelta(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for load := 0; load < 256; load++ {
		for i := 0; i < 20; i++ {
			run := runConstants(constants{cLast: load}, r)
			if run.cLast < 0 || run.cLast > 255 || !validRunDelta(load, run.cLast) {
				t.Fatalf("load C_LAST %d, run %d: delta not in [65, 119] \\ {96, 112}", load, run.cLast)
			}
		}
	}
	for _, c := range []struct {
		load, run int
		ok        bool
	}{{0, 65, true}, {0, 64, false}, {0, 96, false}, {10, 122, false}, {200, 81, true}, {0, 119, true}, {0, 120, false}} {
		if got := validRunDelta(c.load, c.run); got != c.ok {
			t.Errorf("validRunDelta(%d, %d) = %v", c.load, c.run, got)
		}
	}
}

func TestDeckMix(t *testing.T) {
	term := &terminal{g: newGen(5, 6, constants{})}
	for round := 0; round < 3; round++ {
		var n [numKinds]int
		for i := 0; i < 100; i++ {
			n[term.draw()]++
		}
		if n != deckCards {
			t.Fatalf("round %d: 100 draws gave %v, want exactly %v", round, n, deckCards)
		}
	}
	// Shuffled, not in card order: the first ten cards are not all
	// New-Orders.
	term2 := &terminal{g: newGen(7, 8, constants{})}
	same := 0
	for i := 0; i < 10; i++ {
		if term2.draw() == NewOrder {
			same++
		}
	}
	if same == 10 {
		t.Error("the deck is not shuffled")
	}
}

func TestMaxTpmCPerWarehouse(t *testing.T) {
	// 60 s over the mix-weighted cycle (keying + mean think), times the
	// New-Order share and ten terminals.
	cycle := 0.0
	for k := range deckCards {
		cycle += float64(deckCards[k]) / 100 * (keying[k] + thinkMean[k])
	}
	got := 60 / cycle * float64(deckCards[NewOrder]) / 100 * 10
	if math.Abs(got-MaxTpmCPerWarehouse) > 0.01 {
		t.Errorf("the times give %.3f tpmC per warehouse, the constant says %.2f", got, MaxTpmCPerWarehouse)
	}
}

func TestThinkTimeBounded(t *testing.T) {
	g := newGen(9, 10, constants{})
	sum := 0.0
	for i := 0; i < 100000; i++ {
		v := g.thinkTime(12)
		if v < 0 || v > 120 {
			t.Fatalf("think time %f outside [0, 120]", v)
		}
		sum += v
	}
	if mean := sum / 100000; mean < 11 || mean > 13 {
		t.Errorf("mean think time %.2f, want about 12", mean)
	}
}

func TestAppendFixed(t *testing.T) {
	for _, c := range []struct {
		v      int64
		places int
		want   string
	}{{1234, 2, "12.34"}, {5, 2, "0.05"}, {-1000, 2, "-10.00"}, {2000, 4, "0.2000"}, {7, 0, "7"}, {100, 2, "1.00"}} {
		if got := appendFixedString(c.v, c.places); got != c.want {
			t.Errorf("appendFixed(%d, %d) = %s, want %s", c.v, c.places, got, c.want)
		}
	}
}

func TestDataOriginal(t *testing.T) {
	g := newGen(11, 12, constants{})
	orig := 0
	for i := 0; i < 10000; i++ {
		b := g.data(nil)
		if len(b) < 26 || len(b) > 50 {
			t.Fatalf("data of %d characters", len(b))
		}
		for j := 0; j+8 <= len(b); j++ {
			if string(b[j:j+8]) == "ORIGINAL" {
				orig++
				break
			}
		}
	}
	if orig < 800 || orig > 1200 {
		t.Errorf("%d of 10000 hold ORIGINAL, want about 1000", orig)
	}
}

func TestSizesValidate(t *testing.T) {
	for name, s := range map[string]Sizes{
		"few items":        {Items: 10, Customers: 3000, NewOrders: 900},
		"no new orders":    {Items: 1000, Customers: 60, NewOrders: 0},
		"all new":          {Items: 1000, Customers: 60, NewOrders: 60},
		"no customers":     {Items: 1000, Customers: 0, NewOrders: 0},
		"absurd customers": {Items: 1000, Customers: 1 << 30, NewOrders: 10},
	} {
		if s.Validate() == nil {
			t.Errorf("%s: %+v accepted", name, s)
		}
	}
	for _, s := range []Sizes{SpecSizes, TinySizes} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

// TestOrderLines: New-Order's lines for its procedure, in lock order
// (supply warehouse, item) with their keyed numbers, in fixed widths.
func TestOrderLines(t *testing.T) {
	for _, c := range []struct {
		name string
		in   newOrderInput
		want string
	}{
		{"one line", newOrderInput{items: []orderItem{{i: 7, supplyW: 1, qty: 5}}}, "01" + "000007" + "00001" + "05"},
		{"lock order keeps the keyed numbers", newOrderInput{items: []orderItem{{i: 900, supplyW: 2, qty: 10}, {i: 100001, supplyW: 1, qty: 1}, {i: 3, supplyW: 2, qty: 9}}},
			"02" + "100001" + "00001" + "01" + "03" + "000003" + "00002" + "09" + "01" + "000900" + "00002" + "10"},
		{"the widest values", newOrderInput{items: []orderItem{{i: 999999, supplyW: 32767, qty: 99}}}, "01" + "999999" + "32767" + "99"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := orderLines(c.in); got != c.want || len(got) != lineWidth*len(c.in.items) {
				t.Errorf("orderLines = %q, want %q", got, c.want)
			}
		})
	}
}
