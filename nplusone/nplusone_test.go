package nplusone

import (
	"encoding/json"
	"testing"
)

// TestPatternJSON: the JSON names are fixed, and what a producer leaves
// zero is left out, so each result shows what its producer found.
func TestPatternJSON(t *testing.T) {
	cases := []struct {
		name string
		p    Pattern
		want string
	}{
		{"detected from a digest's counts (indexadv)", Pattern{Calls: 5000, RowsPerCall: 1, Problem: "N+1 pattern"},
			`{"calls":5000,"rows_per_call":1,"problem":"N+1 pattern"}`},
		{"measured per request (reqtrace)", Pattern{Endpoint: "GET /", ID: "A", IDs: []string{"B"}, Fingerprint: "select ?", Sample: "SELECT 1", Source: Measured,
			Requests: 2, Flagged: -1, N: 10, PerRequest: 12.5, Max: -1, TimePerRequestS: 0.01, RequestShare: 0.5, Worst: "GET /", TimeS: 0.02, Rewrite: "IN (...)", Problem: "p"},
			`{"endpoint":"GET /","id":"A","ids":["B"],"fingerprint":"select ?","sample":"SELECT 1","source":"measured","requests":2,"flagged":-1,"n":10,"per_request_mean":12.5,"per_request_max":-1,"time_per_request_s":0.01,"request_share":0.5,"worst":"GET /","time_s":0.02,"rewrite":"IN (...)","problem":"p"}`},
		{"estimated (diagnose)", Pattern{ID: "A", Fingerprint: "select ?", Source: Estimated, Endpoint: "GET /", PerRequest: 3, Calls: 30, RowsPerCall: 1, TimeS: 1, EndpointShare: 1, Parent: "select * from t", Note: "n"},
			`{"endpoint":"GET /","id":"A","fingerprint":"select ?","source":"estimated","per_request_mean":3,"calls":30,"rows_per_call":1,"time_s":1,"endpoint_share":1,"parent":"select * from t","note":"n"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("JSON\n%s\nwant\n%s", b, tc.want)
			}
		})
	}
}
