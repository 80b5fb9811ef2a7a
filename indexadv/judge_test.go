package indexadv

import (
	"strings"
	"testing"
)

// TestJudge: an index is proven by time, or by rows examined when it is
// not slower; fewer rows at a higher time is no proof.
func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after measurement
		ok            bool
		why           string
	}{
		{"rows halved, time halved", measurement{rows: 1000, ms: 4}, measurement{rows: 1, ms: 2}, true, ""},
		{"rows halved, time the same", measurement{rows: 1000, ms: 4}, measurement{rows: 10, ms: 4.2}, true, ""},
		{"rows halved, too fast to time", measurement{rows: 1000, ms: 0.05}, measurement{rows: 1, ms: 0.2}, true, ""},
		{"rows halved, slower", measurement{rows: 1000, ms: 4}, measurement{rows: 400, ms: 6}, false, "halved the rows examined (1000 -> 400) but took longer on the copy (4.00 ms -> 6.00 ms)"},
		{"rows not halved, time cut by 30%", measurement{rows: 1000, ms: 10}, measurement{rows: 900, ms: 6}, true, ""},
		{"time cut by 30% of a trifle", measurement{rows: 1000, ms: 0.1}, measurement{rows: 900, ms: 0.05}, false, "did not halve"},
		{"neither", measurement{rows: 1000, ms: 10}, measurement{rows: 800, ms: 9}, false, "did not halve"},
		{"worse on both", measurement{rows: 1000, ms: 10}, measurement{rows: 2000, ms: 20}, false, "did not halve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, ok := judge(tc.before, tc.after)
			if ok != tc.ok || !strings.HasPrefix(why, tc.why) || (tc.why == "") != (why == "") {
				t.Errorf("judge(%+v, %+v) = %q, %v; want %q…, %v", tc.before, tc.after, why, ok, tc.why, tc.ok)
			}
		})
	}
}
