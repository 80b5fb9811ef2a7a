package reqtrace

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/fingerprint"
)

// TestJoinCutEndpoints: the calls of a class in requests the end of a
// trace run cut are counted apart, by the cut requests' endpoint, with
// those requests: the endpoint of a class run mostly by requests slower
// than the run is long is still known.
func TestJoinCutEndpoints(t *testing.T) {
	const loop = "SELECT COUNT(1) FROM relations WHERE (one = 8 AND another = 78) OR (one = 78 AND another = 8)"
	const other = "SELECT * FROM users WHERE id = 1"
	// stmts are n statements of text on conn, one a millisecond from ms.
	stmts := func(b *builder, conn uint64, ms float64, n int, text string) []traceStmt {
		var out []traceStmt
		for i := range n {
			out = append(out, ts(b, conn, ms+float64(i), ms+float64(i)+0.5, text))
		}
		return out
	}
	type run struct {
		reqs []Request
		sts  func(b *builder) []traceStmt
	}
	cases := []struct {
		name string
		run  run
		// want are the loop class's cut endpoints, its calls and its
		// unattributed calls; counted the endpoints counted.
		want         []CutEndpoint
		calls, unatt int64
		counted      []string
	}{
		{
			name: "most calls in the cut requests of one endpoint",
			run: run{
				reqs: []Request{
					{Method: "GET", Path: "/a", Endpoint: "GET /a", Start: at(0), End: at(10)},
					{Method: "GET", Path: "/", Endpoint: "GET /", Start: at(20), End: at(40), Cut: true},
					{Method: "GET", Path: "/", Endpoint: "GET /", Start: at(100), End: at(120), Cut: true},
				},
				sts: func(b *builder) []traceStmt {
					out := stmts(b, 1, 1, 2, loop)
					out = append(out, stmts(b, 2, 21, 5, loop)...)
					return append(out, stmts(b, 3, 101, 3, loop)...)
				},
			},
			want:    []CutEndpoint{{Endpoint: "GET /", Calls: 8, CutRequests: 2, PerRequestMin: 4, Share: 0.8}},
			calls:   10,
			unatt:   8,
			counted: []string{"GET /a"},
		},
		{
			name: "split across two endpoints' cut requests, one of which never ran it",
			run: run{
				reqs: []Request{
					{Method: "GET", Path: "/", Endpoint: "GET /", Start: at(0), End: at(20), Cut: true},
					{Method: "GET", Path: "/b", Endpoint: "GET /b", Start: at(30), End: at(50), Cut: true},
					{Method: "GET", Path: "/b", Endpoint: "GET /b", Start: at(60), End: at(80), Cut: true},
				},
				sts: func(b *builder) []traceStmt {
					out := stmts(b, 1, 1, 3, loop)
					out = append(out, stmts(b, 2, 31, 3, loop)...)
					return append(out, stmts(b, 3, 61, 2, other)...)
				},
			},
			want: []CutEndpoint{
				{Endpoint: "GET /", Calls: 3, CutRequests: 1, PerRequestMin: 3, Share: 0.5},
				{Endpoint: "GET /b", Calls: 3, CutRequests: 2, PerRequestMin: 1.5, Share: 0.5},
			},
			calls: 6,
			unatt: 6,
		},
		{
			name: "a statement past the cut's grace is no request's",
			run: run{
				reqs: []Request{{Method: "GET", Path: "/", Endpoint: "GET /", Start: at(0), End: at(10), Cut: true}},
				sts: func(b *builder) []traceStmt {
					out := stmts(b, 1, 1, 2, loop)
					return append(out, stmts(b, 1, 10+float64(cutGrace.Milliseconds())+5, 1, loop)...)
				},
			},
			want:  []CutEndpoint{{Endpoint: "GET /", Calls: 2, CutRequests: 1, PerRequestMin: 2, Share: 0.6667}},
			calls: 3,
			unatt: 3,
		},
		{
			name: "no cut request",
			run: run{
				reqs: []Request{{Method: "GET", Path: "/", Endpoint: "GET /", Start: at(0), End: at(10)}},
				sts:  func(b *builder) []traceStmt { return stmts(b, 1, 1, 3, loop) },
			},
			calls:   3,
			counted: []string{"GET /"},
		},
	}
	id := fingerprint.MergedID(fingerprint.Fingerprint(loop))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder(Options{NPlusOne: 2})
			b.join(tc.run.reqs, tc.run.sts(b), 0)
			rep := b.report(SourceProxy, "")
			var got *Class
			for i := range rep.Classes {
				if rep.Classes[i].ID == id {
					got = &rep.Classes[i]
				}
			}
			if got == nil {
				t.Fatalf("no class %s in %+v", id, rep.Classes)
			}
			if !reflect.DeepEqual(got.CutEndpoints, tc.want) {
				t.Errorf("cut endpoints\n%+v\nwant\n%+v", got.CutEndpoints, tc.want)
			}
			if got.Calls != tc.calls || got.Unattributed != tc.unatt {
				t.Errorf("calls %d unattributed %d, want %d and %d", got.Calls, got.Unattributed, tc.calls, tc.unatt)
			}
			var counted []string
			for _, e := range rep.Endpoints {
				counted = append(counted, e.Endpoint)
			}
			if !reflect.DeepEqual(counted, tc.counted) {
				t.Errorf("endpoints counted %v, want %v (a cut request is not counted)", counted, tc.counted)
			}
		})
	}
}

// TestTagsInFlightCutEndpoints: for tags, the requests left in flight at
// the end (Options.DropLast) are counted apart by endpoint, as a trace
// run's cut requests.
func TestTagsInFlightCutEndpoints(t *testing.T) {
	const q = "SELECT COUNT(1) FROM relations WHERE (one = 1 AND another = 2) OR (one = 2 AND another = 1) /*route='GET%20%2F',traceparent='00-TRACE-0000000000000001-01'*/"
	b := newBuilder(Options{NPlusOne: 2, DropLast: 2})
	s := newTagSink(b)
	trace := func(n int) string { return fmt.Sprintf("%032x", n) }
	ms := 0.0
	for r, calls := range []int{2, 4, 6} { // the last two are in flight at the end
		for range calls {
			s.statement(rawStmt{start: at(ms), end: at(ms + 0.5), text: []byte(strings.Replace(q, "TRACE", trace(r+1), 1))})
			ms++
		}
	}
	s.close()
	rep := b.report(SourceSlowLogTags, tagMethod)
	if rep.Requests != 1 || len(rep.Classes) != 1 {
		t.Fatalf("%d requests, classes %+v", rep.Requests, rep.Classes)
	}
	want := []CutEndpoint{{Endpoint: "GET /", Calls: 10, CutRequests: 2, PerRequestMin: 5, Share: 0.8333}}
	if c := rep.Classes[0]; !reflect.DeepEqual(c.CutEndpoints, want) || c.Unattributed != 10 {
		t.Errorf("cut endpoints %+v, unattributed %d; want %+v, 10", c.CutEndpoints, c.Unattributed, want)
	}
}
