package tune

import (
	"strings"
	"testing"

	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/nplusone"
)

// TestNPlusOneFindingTitle: the title says how the endpoint and its calls
// per request are known: measured, about (estimated), at least (seen in
// requests the run's end cut), or not at all.
func TestNPlusOneFindingTitle(t *testing.T) {
	const fp = "select count(?) from relations where one = ?"
	cases := []struct {
		name string
		n    nplusone.Pattern
		want string
	}{
		{"measured", nplusone.Pattern{Endpoint: "GET /", PerRequest: 12, Source: diagnose.EndpointMeasured, Fingerprint: fp},
			"N+1 queries in GET / (measured: 12 calls per request): " + fp},
		{"estimated", nplusone.Pattern{Endpoint: "GET /", PerRequest: 12, Source: diagnose.EndpointEstimated, Fingerprint: fp},
			"N+1 queries in GET / (about 12 calls per request): " + fp},
		{"in cut requests: a lower bound", nplusone.Pattern{Endpoint: "GET /{$}", PerRequest: 1550, Source: diagnose.EndpointCutRequests, Fingerprint: fp},
			"N+1 queries in GET /{$} (at least 1550 calls per request, in requests the run's end cut): " + fp},
		{"named by its sample's route tag", nplusone.Pattern{Endpoint: "GET /{$}", Source: diagnose.EndpointTaggedSample, Fingerprint: fp},
			"N+1 queries in GET /{$} (its statement's route tag; calls per request not counted): " + fp},
		{"unknown", nplusone.Pattern{Source: diagnose.EndpointUnknown, Fingerprint: fp},
			"N+1 queries in endpoint unknown: " + fp},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := NPlusOneFinding(c.n)
			if f.Title != c.want {
				t.Errorf("title %q, want %q", f.Title, c.want)
			}
			if !strings.HasSuffix(f.Source, "("+c.n.Source+")") {
				t.Errorf("source %q", f.Source)
			}
		})
	}
}
