package advise

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/nplusone"
)

func TestAppNPlusOne(t *testing.T) {
	friend := nplusone.Pattern{Endpoint: "GET /", Fingerprint: "select count(?) from relations where (one = ? and another = ?) or (one = ? and another = ?)",
		Sample: "SELECT COUNT(1) FROM relations WHERE (one = 7 AND another = 3) OR (one = 3 AND another = 7)", PerRequest: 292, Max: 292, Requests: 11,
		TimePerRequestS: 0.0557, RequestShare: 0.32, TimeS: 0.613, Rewrite: "load the set once per request"}
	const src = "a trace run through stacktune's MySQL proxy"
	heavy := friend
	heavy.RequestShare = 0.8
	untied := friend
	untied.Max = -1
	runRuleCases(t, appNPlusOne, []ruleCase{
		{name: "none measured", fires: false},
		{name: "the friend check per row", opt: Options{NPlusOne: []nplusone.Pattern{friend}, NPlusOneSource: src}, fires: true, check: func(t *testing.T, fs []Finding) {
			f := fs[0]
			if f.Severity != Warning || f.Layer != LayerApp || !strings.Contains(f.Title, "GET /") || !strings.Contains(f.Title, "292.0 times per request") {
				t.Errorf("%+v", f)
			}
			if f.Change == nil || f.Change.Kind != changeset.App || f.Change.Target != "GET /" || f.Change.To != "load the set once per request" {
				t.Errorf("change %+v", f.Change)
			}
			if !strings.Contains(f.Effect, "55.7ms per request (32% of its time)") {
				t.Errorf("effect %q", f.Effect)
			}
			if f.NPlusOne == nil || !reflect.DeepEqual(*f.NPlusOne, friend) {
				t.Errorf("the finding carries %+v, want the pattern it was given", f.NPlusOne)
			}
		}},
		{name: "most of the request's time", opt: Options{NPlusOne: []nplusone.Pattern{heavy}, NPlusOneSource: src}, fires: true, check: func(t *testing.T, fs []Finding) {
			if fs[0].Severity != Critical {
				t.Errorf("severity %s", fs[0].Severity)
			}
		}},
		{name: "the most in one request unknown", opt: Options{NPlusOne: []nplusone.Pattern{untied}, NPlusOneSource: src}, fires: true, check: func(t *testing.T, fs []Finding) {
			for _, e := range fs[0].Evidence {
				if e.What == "most calls in one request" {
					t.Errorf("evidence of an unknown maximum: %+v", e)
				}
			}
		}},
		{name: "no endpoint", opt: Options{NPlusOne: []nplusone.Pattern{{Fingerprint: "select ?", PerRequest: 20}}}, fires: false},
	})
}
