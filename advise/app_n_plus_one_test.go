package advise

import (
	"strings"
	"testing"

	"github.com/stacktune/stacktune/changeset"
)

func TestAppNPlusOne(t *testing.T) {
	friend := NPlusOne{Endpoint: "GET /", Fingerprint: "select count(?) from relations where (one = ? and another = ?) or (one = ? and another = ?)",
		Sample: "SELECT COUNT(1) FROM relations WHERE (one = 7 AND another = 3) OR (one = 3 AND another = 7)", PerRequest: 292, Max: 292, Requests: 11,
		TimePerRequestS: 0.0557, RequestShare: 0.32, TimeS: 0.613, Rewrite: "load the set once per request", Source: "a trace run through stacktune's MySQL proxy"}
	heavy := friend
	heavy.RequestShare = 0.8
	untied := friend
	untied.Max = -1
	runRuleCases(t, appNPlusOne, []ruleCase{
		{name: "none measured", fires: false},
		{name: "the friend check per row", opt: Options{NPlusOne: []NPlusOne{friend}}, fires: true, check: func(t *testing.T, fs []Finding) {
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
		}},
		{name: "most of the request's time", opt: Options{NPlusOne: []NPlusOne{heavy}}, fires: true, check: func(t *testing.T, fs []Finding) {
			if fs[0].Severity != Critical {
				t.Errorf("severity %s", fs[0].Severity)
			}
		}},
		{name: "the most in one request unknown", opt: Options{NPlusOne: []NPlusOne{untied}}, fires: true, check: func(t *testing.T, fs []Finding) {
			for _, e := range fs[0].Evidence {
				if e.What == "most calls in one request" {
					t.Errorf("evidence of an unknown maximum: %+v", e)
				}
			}
		}},
		{name: "no endpoint", opt: Options{NPlusOne: []NPlusOne{{Fingerprint: "select ?", PerRequest: 20}}}, fires: false},
	})
}
