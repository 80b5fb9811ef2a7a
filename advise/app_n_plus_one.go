package advise

import (
	"fmt"
	"time"

	"github.com/stacktune/stacktune/changeset"
)

// app-n-plus-one: a statement run once per row of a page, the same
// statement many times in one request: the loop that the ISUCON5
// runner-up and the smartphone game backend found in code and in an APM's per-URL SQL counts, and that made one
// page of the ISUCON5 qualifier write-up's app run a thousand friendship checks.
var appNPlusOne = ruleFunc{"app-n-plus-one", LayerApp, checkAppNPlusOne}

// nPlusOneCritical is the share of its request's time from which an N+1
// is critical.
const nPlusOneCritical = 0.5

func checkAppNPlusOne(c *Context) []Finding {
	var out []Finding
	src := c.Opt.NPlusOneSource
	for _, n := range c.Opt.NPlusOne {
		if n.Endpoint == "" || n.Fingerprint == "" || n.PerRequest <= 0 {
			continue
		}
		sev := Warning
		if n.RequestShare >= nPlusOneCritical {
			sev = Critical
		}
		per := fmt.Sprintf("%.1f", n.PerRequest)
		evs := []Evidence{ev("calls per request", per, "", src)}
		if n.Max >= 0 {
			evs = append(evs, ev("most calls in one request", fmt.Sprint(n.Max), "", src))
		}
		evs = append(evs, ev("requests of "+n.Endpoint, fmt.Sprint(n.Requests), "", src),
			ev("its time per request", fmtDur(n.TimePerRequestS), "", src))
		if n.RequestShare > 0 {
			evs = append(evs, ev("share of the request's time", fmt.Sprintf("%.0f%%", 100*n.RequestShare), "", src+" and the request times"))
		}
		evs = append(evs, ev("its time in the run", fmtDur(n.TimeS), "", src), ev("sample", clipText(n.Sample, 300), "", src))
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
			Effect:   effect,
			Risk:     changeset.Risk{Note: "a change to the application's code: the page must show the same rows (check it with the bench's content checks)"},
			Source:   "the ISUCON5 runner-up's write-up and the smartphone game backend's write-up (queries issued in a loop made one query; New Relic's SQL calls per request), the ISUCON5 qualifier write-up (isFriend per row)",
			NPlusOne: &n,
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
