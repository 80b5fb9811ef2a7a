package report

import (
	"strings"
	"testing"

	"github.com/stacktune/stacktune/fixplan"
)

func TestFixLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		fix  fixplan.Fix
		want []string
	}{
		{"measured", fixplan.Fix{Kind: fixplan.KindNPlusOne, Endpoint: "GET /", CallsPerRequest: 292, MsPerRequest: 48.2, RequestShare: 0.61},
			[]string{"GET / runs it 292 times per request: 48.2 ms per request, 61.0% of the request's time", "the one query: not built"}},
		{"estimated: time unknown", fixplan.Fix{Kind: fixplan.KindNPlusOne, Endpoint: "GET /", CallsPerRequest: 10.7},
			[]string{"GET / runs it 10.7 times per request (its time per request is not measured)"}},
		{"endpoint unknown", fixplan.Fix{Kind: fixplan.KindNPlusOne, Rewrite: &fixplan.Rewrite{Check: fixplan.CheckDifferentRows, Calls: 15, Differs: 3}},
			[]string{"the endpoint that runs it is not known", "does NOT give what the loop returned: call 3 of 15"}},
		{"calls unknown", fixplan.Fix{Kind: fixplan.KindNPlusOne, Endpoint: "GET /x", Rewrite: &fixplan.Rewrite{Check: fixplan.CheckUnchecked, Unchecked: fixplan.UncheckedShape, Error: "a SELECT with JOIN"}},
			[]string{"GET /x runs it (its calls per request are not known)", "unchecked: the statement is not a SELECT whose WHERE is an AND/OR of column = value: a SELECT with JOIN"}},
		{"hot function", fixplan.Fix{Kind: fixplan.KindHotFunction, Endpoint: "GET /work/burn", Function: "refapp.burnCPU", CPUShare: 0.97, MsPerRequest: 19.4, RequestShare: 0.8},
			[]string{"GET /work/burn spends 97.0% of its app CPU in refapp.burnCPU itself: 19.4 ms per request, 80.0% of the request's time"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(fixLines(&tc.fix), "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("no %q in\n%s", w, got)
				}
			}
		})
	}
}
