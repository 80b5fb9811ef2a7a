package abtest_test

import (
	"context"
	"fmt"

	"github.com/stacktune/stacktune/abtest"
)

func ExampleCompare() {
	before := []float64{1510, 1490, 1533, 1502, 1480, 1521}
	after := []float64{1630, 1702, 1655, 1689, 1610, 1671}
	d, err := abtest.Compare(before, after, abtest.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: B/A = %.3f, %.0f%% interval [%.3f, %.3f], p = %.4f, %d+%d runs\n",
		d.Verdict, d.RatioMedian, 100*d.Level, d.CILow, d.CIHigh, d.PValue, d.RunsA, d.RunsB)
	// Output: better: B/A = 1.104, 95% interval [1.073, 1.130], p = 0.0022, 6+6 runs
}

func ExampleRun() {
	// A stand-in for a real system: switching applies or rolls back the
	// change, measuring runs the bench once.
	state := abtest.A
	scores := map[abtest.Arm][]float64{
		abtest.A: {100, 97, 103, 99},
		abtest.B: {121, 118, 124, 120},
	}
	next := map[abtest.Arm]int{}
	e := abtest.Experiment{
		ToA: func(context.Context) error { state = abtest.A; return nil },
		ToB: func(context.Context) error { state = abtest.B; return nil },
		Measure: func(_ context.Context, arm abtest.Arm) (float64, error) {
			v := scores[state][next[state]%4]
			next[state]++
			return v, nil
		},
	}
	res, err := abtest.Run(context.Background(), e, abtest.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Runs {
		fmt.Print(r.Arm)
	}
	fmt.Println()
	fmt.Println(res.Decision.Verdict, res.Decision.RunsA, res.Decision.RunsB)
	// Output:
	// ABBAABBA
	// better 4 4
}
