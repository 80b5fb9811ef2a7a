package diagnose

import (
	"strings"
	"testing"

	"github.com/stacktune/stacktune/reqtrace"
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
		measured  []NPlusOne
		estimated []NPlusOne
		classes   []reqtrace.Class
		want      []string // fingerprints, in order
		cut       int      // how many carry the cut note
	}{
		{name: "measured wins over its estimate",
			measured: []NPlusOne{{Fingerprint: friend}}, estimated: []NPlusOne{{Fingerprint: friend}},
			classes: []reqtrace.Class{class(friend, 100, 100)}, want: []string{friend}},
		{name: "written otherwise (id=? against id = ?): still the same class",
			measured: []NPlusOne{{Fingerprint: entry}}, estimated: []NPlusOne{{Fingerprint: "select * from entries where id=?"}},
			want: []string{entry}},
		{name: "attributed but not an N+1 per request: no estimate",
			estimated: []NPlusOne{{Fingerprint: entry}}, classes: []reqtrace.Class{class(entry, 100, 30, 20)}, want: nil},
		{name: "mostly in cut requests: the estimate, noted",
			measured: []NPlusOne{{Fingerprint: friend}}, estimated: []NPlusOne{{Fingerprint: entry, Note: "estimated"}},
			classes: []reqtrace.Class{class(friend, 100, 100), class(entry, 100, 49)}, want: []string{friend, entry}, cut: 1},
		{name: "unseen by the per-request view: the estimate, noted",
			estimated: []NPlusOne{{Fingerprint: entry}}, want: []string{entry}, cut: 1},
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
