package diagnose

import (
	"strings"
	"testing"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/sqltag"
)

// TestWithCutEstimates: an estimated N+1 stays beside the measured ones
// only for a class the per-request view neither measured nor attributed
// (its calls mostly in requests the run's end cut).
func TestWithCutEstimates(t *testing.T) {
	const friend = "select * from relations where one = ? and another = ?"
	const entry = "select * from entries where id = ?"
	class := func(fp string, calls int64, attributed ...int64) reqtrace.Class {
		c := reqtrace.Class{Fingerprint: fp, Calls: calls}
		for _, a := range attributed {
			c.Endpoints = append(c.Endpoints, reqtrace.ClassEndpoint{Endpoint: "GET /", Calls: a})
		}
		return c
	}
	cases := []struct {
		name      string
		measured  []nplusone.Pattern
		estimated []nplusone.Pattern
		classes   []reqtrace.Class
		want      []string // fingerprints, in order
		cut       int      // how many carry the cut note
	}{
		{name: "measured wins over its estimate",
			measured: []nplusone.Pattern{{Fingerprint: friend}}, estimated: []nplusone.Pattern{{Fingerprint: friend}},
			classes: []reqtrace.Class{class(friend, 100, 100)}, want: []string{friend}},
		{name: "written otherwise (id=? against id = ?): still the same class",
			measured: []nplusone.Pattern{{Fingerprint: entry}}, estimated: []nplusone.Pattern{{Fingerprint: "select * from entries where id=?"}},
			want: []string{entry}},
		{name: "attributed but not an N+1 per request: no estimate",
			estimated: []nplusone.Pattern{{Fingerprint: entry}}, classes: []reqtrace.Class{class(entry, 100, 30, 20)}, want: nil},
		{name: "mostly in cut requests: the estimate, noted",
			measured: []nplusone.Pattern{{Fingerprint: friend}}, estimated: []nplusone.Pattern{{Fingerprint: entry, Note: "estimated"}},
			classes: []reqtrace.Class{class(friend, 100, 100), class(entry, 100, 49)}, want: []string{friend, entry}, cut: 1},
		{name: "unseen by the per-request view: the estimate, noted",
			estimated: []nplusone.Pattern{{Fingerprint: entry}}, want: []string{entry}, cut: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := withCutEstimates(c.measured, c.estimated, &reqtrace.Report{Classes: c.classes})
			var fps []string
			cut := 0
			for _, n := range got {
				fps = append(fps, n.Fingerprint)
				if strings.Contains(n.Note, "requests the end of the run cut") {
					cut++
					if strings.HasPrefix(n.Note, ";") {
						t.Errorf("note starts with a separator: %q", n.Note)
					}
				}
			}
			if strings.Join(fps, "|") != strings.Join(c.want, "|") || cut != c.cut {
				t.Errorf("got %q with %d cut notes, want %q with %d", fps, cut, c.want, c.cut)
			}
		})
	}
}

// TestWithCutEstimatesEndpoint: an estimated N+1 that names no endpoint
// takes the one whose cut requests the per-request view saw most of its
// calls in, with their calls per request as a lower bound, said so; else
// it stays unknown. Never measured.
func TestWithCutEstimatesEndpoint(t *testing.T) {
	const loop = "select count(?) from relations where (one = ? and another = ?) or (one = ? and another = ?)"
	const id = "0123456789ABCDEF"
	class := func(calls int64, cut ...reqtrace.CutEndpoint) reqtrace.Class {
		return reqtrace.Class{ID: "merged", IDs: []string{id}, Fingerprint: loop, Calls: calls, Unattributed: calls, CutEndpoints: cut}
	}
	cutEp := func(ep string, calls, reqs int64, total int64) reqtrace.CutEndpoint {
		return reqtrace.CutEndpoint{Endpoint: ep, Calls: calls, CutRequests: reqs, PerRequestMin: round(float64(calls)/float64(reqs), 2), Share: round(float64(calls)/float64(total), 4)}
	}
	unknown := nplusone.Pattern{ID: id, Fingerprint: loop, Source: EndpointUnknown, Calls: 16433}
	cases := []struct {
		name      string
		estimated nplusone.Pattern
		class     reqtrace.Class
		// want: the endpoint, calls per request, share, source; note what
		// the note must say.
		endpoint   string
		perRequest float64
		share      float64
		source     string
		note       []string
	}{
		{name: "mostly in the cut requests of one endpoint: named, a lower bound",
			estimated: unknown, class: class(16000, cutEp("GET /{$}", 15500, 10, 16000)),
			endpoint: "GET /{$}", perRequest: 1550, share: 0.9688, source: EndpointCutRequests,
			note: []string{"15500 of its 16000 calls", "requests the end of the run cut", "10 requests of GET /{$}", "at least 1550 calls per request"}},
		{name: "split across two endpoints, the top one holds most: the top one",
			estimated: unknown, class: class(100, cutEp("GET /", 60, 4, 100), cutEp("GET /b", 30, 2, 100)),
			endpoint: "GET /", perRequest: 15, share: 0.6, source: EndpointCutRequests, note: []string{"at least 15 calls per request"}},
		{name: "split across two endpoints, neither holds most: unknown",
			estimated: unknown, class: class(100, cutEp("GET /", 45, 3, 100), cutEp("GET /b", 40, 2, 100)),
			source: EndpointUnknown, note: []string{"requests the end of the run cut", "estimated"}},
		{name: "half in one endpoint's cut requests is not most: unknown",
			estimated: unknown, class: class(100, cutEp("GET /", 50, 2, 100)),
			source: EndpointUnknown},
		{name: "past the bound of endpoints: no endpoint's name, unknown",
			estimated: unknown, class: class(100, cutEp(reqtrace.OtherEndpoint, 90, 3, 100)),
			source: EndpointUnknown},
		{name: "an estimate that names its endpoint keeps it",
			estimated: nplusone.Pattern{ID: id, Fingerprint: loop, Source: EndpointEstimated, Endpoint: "GET /x", PerRequest: 7, EndpointShare: 0.9},
			class:     class(100, cutEp("GET /", 90, 3, 100)),
			endpoint:  "GET /x", perRequest: 7, share: 0.9, source: EndpointEstimated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := withCutEstimates(nil, []nplusone.Pattern{c.estimated}, &reqtrace.Report{Classes: []reqtrace.Class{c.class}})
			if len(got) != 1 {
				t.Fatalf("%d patterns: %+v", len(got), got)
			}
			n := got[0]
			if n.Endpoint != c.endpoint || n.PerRequest != c.perRequest || n.EndpointShare != c.share || n.Source != c.source {
				t.Errorf("endpoint %q, %v per request, share %v, source %q; want %q, %v, %v, %q", n.Endpoint, n.PerRequest, n.EndpointShare, n.Source,
					c.endpoint, c.perRequest, c.share, c.source)
			}
			if n.Source == EndpointMeasured || n.Requests != 0 || n.Max != 0 {
				t.Errorf("claims a measurement: %+v", n)
			}
			for _, w := range c.note {
				if !strings.Contains(n.Note, w) {
					t.Errorf("note %q does not say %q", n.Note, w)
				}
			}
		})
	}
}

// TestRankCutRequests: the reference app's home page outlasts the trace
// run, so its N+1's calls fall in cut requests and the per-second fit
// cannot name the endpoint: the ranked class and the N+1 take the endpoint
// of the cut requests, a lower bound per request, and say so, never
// measured.
func TestRankCutRequests(t *testing.T) {
	const fp = "select count(?) from relations where (one = ? and another = ?) or (one = ? and another = ?)"
	const id = "8D5F4E3A2B1C0D9E"
	r := &Result{
		Digest: &digest.Report{Classes: []digest.Class{{ID: id, Fingerprint: fp, Count: 16433, TimeTotal: 60, RowsSentTotal: 16433}}},
		Indexes: &indexadv.Result{Queries: []indexadv.QueryReport{{ID: id, Fingerprint: fp, Sample: "SELECT COUNT(1) FROM relations WHERE ...",
			NPlusOne: &nplusone.Pattern{Calls: 16433, RowsPerCall: 1, Problem: "N+1 pattern: called 16433 times for about one row each"}}}},
		Attribution: &Attribution{Classes: []ClassAttribution{{ID: id, Fingerprint: fp, Calls: 16433, R2: 0.2,
			Endpoints: []EndpointShare{{Endpoint: "GET /", Share: 1, CallsPerRequest: 900}}}}},
		Requests: &reqtrace.Report{Classes: []reqtrace.Class{{ID: "merged", IDs: []string{id}, Fingerprint: fp, Calls: 3000, Unattributed: 3000,
			CutEndpoints: []reqtrace.CutEndpoint{{Endpoint: "GET /{$}", Calls: 2990, CutRequests: 2, PerRequestMin: 1495, Share: 0.9967}}}}},
	}
	r.rank()
	if len(r.Classes) != 1 || r.Classes[0].Endpoint != "GET /{$}" || r.Classes[0].EndpointSource != EndpointCutRequests || r.Classes[0].CallsPerRequest != 1495 {
		t.Errorf("class %+v", r.Classes)
	}
	if len(r.NPlusOne) != 1 {
		t.Fatalf("N+1 %+v", r.NPlusOne)
	}
	n := r.NPlusOne[0]
	if n.Endpoint != "GET /{$}" || n.Source != EndpointCutRequests || n.PerRequest != 1495 || n.Calls != 16433 || !strings.Contains(n.Note, "at least 1495 calls per request") {
		t.Errorf("N+1 %+v", n)
	}
	var details []string
	for _, h := range r.Hotspots {
		details = append(details, h.Details...)
	}
	all := strings.Join(details, "\n")
	for _, w := range []string{"from GET /{$} (in its requests the end of the trace run cut: 100% of its calls, at least 1495 per request)", "N+1 of GET /{$}: 2990 of its 3000 calls"} {
		if !strings.Contains(all, w) {
			t.Errorf("hotspots do not say %q:\n%s", w, all)
		}
	}
}

// TestClassTimesCutAndCounted: a class's endpoint with counted requests
// is measured there, even when more of its calls were in that endpoint's
// cut requests; another endpoint's cut requests holding most calls name
// that one.
func TestClassTimesCutAndCounted(t *testing.T) {
	const fp = "select * from relations where one = ?"
	const id = "00000000000000AA"
	d := &digest.Report{Classes: []digest.Class{{ID: id, Fingerprint: fp, Count: 100, TimeTotal: 1}}}
	cases := []struct {
		name     string
		counted  []reqtrace.ClassEndpoint
		endpoint string
		source   string
		perReq   float64
	}{
		{"counted in the same endpoint: measured", []reqtrace.ClassEndpoint{{Endpoint: "GET /", Calls: 30, PerRequest: 30, Share: 0.3}}, "GET /", EndpointMeasured, 30},
		{"counted elsewhere: the cut requests' endpoint", []reqtrace.ClassEndpoint{{Endpoint: "GET /b", Calls: 30, PerRequest: 3, Share: 0.3}}, "GET /", EndpointCutRequests, 35},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := &reqtrace.Report{Classes: []reqtrace.Class{{ID: "m", IDs: []string{id}, Fingerprint: fp, Calls: 100, Endpoints: c.counted, Unattributed: 70,
				CutEndpoints: []reqtrace.CutEndpoint{{Endpoint: "GET /", Calls: 70, CutRequests: 2, PerRequestMin: 35, Share: 0.7}}}}}
			got := classTimes(d, nil, nil, 0, rep)
			if len(got) != 1 || got[0].Endpoint != c.endpoint || got[0].EndpointSource != c.source || got[0].CallsPerRequest != c.perReq {
				t.Errorf("%+v", got)
			}
		})
	}
}

// TestRankTaggedSample: an N+1 the estimate cannot place and no
// per-request view saw is named by its sampled statement's route tag, its
// calls per request not counted; a sample without tags leaves it unknown.
func TestRankTaggedSample(t *testing.T) {
	const fp = "select id, user_id, private, title, body, created_at from entries where id = ?"
	const id = "1A2B3C4D5E6F7A8B"
	const commenter = "SELECT * FROM entries WHERE id = 7 /*action='index',route='GET%20%2F%7B%24%7D',traceparent='00-234eb5bbe6b0d946ad2889b6163da7a0-7584600764e0386a-01'*/"
	logged := []httpprof.Endpoint{{Method: "GET", Path: "/", Count: 10}, {Method: "GET", Path: "/friends", Count: 5}}
	for _, tc := range []struct {
		name, sample, endpoint, source string
		access                         []httpprof.Endpoint
	}{
		{"sqlcommenter route", commenter, "GET /{$}", EndpointTaggedSample, nil},
		// The access log's name for the one endpoint the route matches.
		{"route named as the access log names it", commenter, "GET /", EndpointTaggedSample, logged},
		{"route matching no logged endpoint", commenter, "GET /{$}", EndpointTaggedSample, logged[1:]},
		{"marginalia controller and action", "SELECT * FROM entries WHERE id = 7 /*controller:entries,action:show*/", "entries#show", EndpointTaggedSample, logged},
		{"no tags", "SELECT * FROM entries WHERE id = 7", "", EndpointUnknown, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{HTTP: &httpprof.Report{Endpoints: tc.access},
				Digest: &digest.Report{Classes: []digest.Class{{ID: id, Fingerprint: fp, Count: 1000, TimeTotal: 2, RowsSentTotal: 1000}}},
				Indexes: &indexadv.Result{Queries: []indexadv.QueryReport{{ID: id, Fingerprint: fp, Sample: tc.sample,
					NPlusOne: &nplusone.Pattern{Calls: 1000, RowsPerCall: 1, Problem: "N+1 pattern: called 1000 times for about one row each"}}}},
			}
			r.rank()
			if len(r.NPlusOne) != 1 {
				t.Fatalf("N+1 %+v", r.NPlusOne)
			}
			n := r.NPlusOne[0]
			if n.Endpoint != tc.endpoint || n.Source != tc.source || n.PerRequest != 0 {
				t.Errorf("N+1 endpoint %q source %q per request %v, want %q %q and none", n.Endpoint, n.Source, n.PerRequest, tc.endpoint, tc.source)
			}
			if route := sqltag.Parse([]byte(tc.sample)).Endpoint(); tc.endpoint != "" && !strings.Contains(n.Note, "tag names the route "+route+" ") {
				t.Errorf("note %q", n.Note)
			}
		})
	}
}
