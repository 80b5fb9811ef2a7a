package tune

import (
	"strings"

	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/fixplan"
)

// Hot functions left to the user (Result.NotApplied): an endpoint's
// function with at least hotShare of its app CPU as its own, when that is
// at least hotRequestShare of the request's time and the endpoint has
// hotSamples samples; at most maxHot.
const (
	hotShare        = 0.25
	hotRequestShare = 0.05
	maxHot          = 5
	// hotSamples: an endpoint with fewer samples has no hot function
	// (a share of a handful of samples is noise).
	hotSamples = 20
	// HotFunction is the ID of a hot function's finding.
	HotFunction = "hot-function"
)

// addFixes gives each N+1 pattern left to the user its fix (the one
// query, checked, from the diagnosis's Rewrites) and adds the hot
// functions of the diagnosis's profile, each with the `stacktune ab`
// command that proves the change.
func (t *tuner) addFixes(p *Pick, out []Finding) []Finding {
	b := t.opt.Diagnose.Bench
	prove := fixplan.ProveCommand(b.Scenario, b.BaseURL, b.Load.Connections, b.Load.Duration)
	for _, n := range p.D.NPlusOne {
		if p.takenN[n.ID] {
			continue
		}
		title := NPlusOneFinding(n).Title
		for i := range out {
			if out[i].Fix != nil || out[i].Title != title {
				continue
			}
			perRequest := n.PerRequest
			if n.Source == diagnose.EndpointCutRequests {
				perRequest = 0 // a lower bound only (the finding's title says it), not the calls per request
			}
			out[i].Fix = &fixplan.Fix{Kind: fixplan.KindNPlusOne, Endpoint: n.Endpoint, CallsPerRequest: perRequest,
				RequestShare: n.RequestShare, MsPerRequest: n.TimePerRequestS * 1000, Rewrite: p.D.Rewrites[n.Fingerprint], Prove: prove}
			break
		}
	}
	return append(out, hotFunctions(p.D, prove)...)
}

// hotFunctions are the profile's hot functions (see hotShare).
func hotFunctions(d *diagnose.Result, prove string) []Finding {
	var out []Finding
	if d.Requests == nil || d.Requests.Profile == nil {
		return out
	}
	for _, e := range d.Requests.Endpoints {
		if e.Usage == nil || e.RequestMsPerRequest <= 0 || e.CPUSamples < hotSamples {
			continue
		}
		for _, f := range e.TopFunctions {
			if len(out) >= maxHot {
				return out
			}
			ms := f.Share * e.AppCPUMsPerRequest
			if f.Share < hotShare || ms/e.RequestMsPerRequest < hotRequestShare || !ownCode(f.Name) {
				continue
			}
			out = append(out, Finding{ID: HotFunction, Title: f.Name, Evidence: []string{}, Reason: LeftAppCode, Source: "the diagnosis's trace run (" + d.Requests.Profile.Sampler + ")",
				Fix: &fixplan.Fix{Kind: fixplan.KindHotFunction, Endpoint: e.Endpoint, Function: f.Name, CPUShare: f.Share,
					MsPerRequest: ms, RequestShare: ms / e.RequestMsPerRequest, Prove: prove}})
		}
	}
	return out
}

// ownCode says a function is the app's or a library's it calls, not the
// runtime's or the kernel's (their time is the caller's to cut).
func ownCode(name string) bool {
	for _, p := range []string{"runtime.", "syscall.", "internal/", "[", "__", "entry_SYSCALL"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return name != ""
}
