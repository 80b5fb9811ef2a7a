package advise

import (
	"fmt"
	"time"

	"github.com/stacktune/stacktune/changeset"
)

// NPlusOne is a statement one endpoint runs many times per request, as
// measured per request (a trace run or the statements' tags): the input of
// the rule app-n-plus-one.
type NPlusOne struct {
	// Endpoint runs Fingerprint (a pt-query-digest fingerprint; Sample is
	// one statement of it).
	Endpoint    string `json:"endpoint"`
	Fingerprint string `json:"fingerprint"`
	Sample      string `json:"sample"`
	// PerRequest is its calls per request of the endpoint, Max the most
	// in one request (-1: unknown), Requests the endpoint's requests.
	PerRequest float64 `json:"per_request"`
	Max        int64   `json:"max"`
	Requests   int64   `json:"requests"`
	// TimePerRequestS is its time per request, RequestShare that over the
	// endpoint's request time (0: unknown), TimeS its time in the run.
	TimePerRequestS float64 `json:"time_per_request_s"`
	RequestShare    float64 `json:"request_share"`
	TimeS           float64 `json:"time_s"`
	// Rewrite says how to make it one query; Source how it was measured
	// ("a trace run through the proxy", "the statements' tags").
	Rewrite string `json:"rewrite"`
	Source  string `json:"source"`
}

// app-n-plus-one: a statement run once per row of a page, the same
// statement many times in one request: the loop that seeds 001 and 004
// found in code and in an APM's per-URL SQL counts, and that made one
// page of seed 000's app run a thousand friendship checks.
var appNPlusOne = ruleFunc{"app-n-plus-one", LayerApp, checkAppNPlusOne}

// nPlusOneCritical is the share of its request's time from which an N+1
// is critical.
const nPlusOneCritical = 0.5

func checkAppNPlusOne(c *Context) []Finding {
	var out []Finding
	for _, n := range c.Opt.NPlusOne {
		if n.Endpoint == "" || n.Fingerprint == "" || n.PerRequest <= 0 {
			continue
		}
		sev := Warning
		if n.RequestShare >= nPlusOneCritical {
			sev = Critical
		}
		per := fmt.Sprintf("%.1f", n.PerRequest)
		evs := []Evidence{ev("calls per request", per, "", n.Source)}
		if n.Max >= 0 {
			evs = append(evs, ev("most calls in one request", fmt.Sprint(n.Max), "", n.Source))
		}
		evs = append(evs, ev("requests of "+n.Endpoint, fmt.Sprint(n.Requests), "", n.Source),
			ev("its time per request", fmtDur(n.TimePerRequestS), "", n.Source))
		if n.RequestShare > 0 {
			evs = append(evs, ev("share of the request's time", fmt.Sprintf("%.0f%%", 100*n.RequestShare), "", n.Source+" and the request times"))
		}
		evs = append(evs, ev("its time in the run", fmtDur(n.TimeS), "", n.Source), ev("sample", clipText(n.Sample, 300), "", n.Source))
		effect := fmt.Sprintf("one round trip instead of %s per request of %s: up to %s per request", per, n.Endpoint, fmtDur(n.TimePerRequestS))
		if n.RequestShare > 0 {
			effect += fmt.Sprintf(" (%.0f%% of its time)", 100*n.RequestShare)
		}
		effect += " less, minus the one query's own cost"
		out = append(out, Finding{
			Title:    fmt.Sprintf("N+1 queries in %s: %s, %s times per request", n.Endpoint, clipText(n.Fingerprint, 120), per),
			Severity: sev,
			Evidence: evs,
			Change: &changeset.Change{Kind: changeset.App, Target: n.Endpoint, Name: "queries per request",
				From: fmt.Sprintf("%s × %s", per, clipText(n.Fingerprint, 120)), To: n.Rewrite, Direction: Decrease},
			Effect: effect,
			Risk:   changeset.Risk{Note: "a change to the application's code: the page must show the same rows (check it with the bench's content checks)"},
			Source: "seeds 001 and 004 (queries issued in a loop made one query; New Relic's SQL calls per request), seed 000 (isFriend per row)",
		})
	}
	return out
}

// fmtDur formats seconds for evidence.
func fmtDur(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond).String()
}

// clipText cuts s to n bytes with an ellipsis.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
