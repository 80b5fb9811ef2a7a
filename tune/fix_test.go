package tune

import (
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/fixplan"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/reqtrace"
)

// TestAddFixes: each N+1 left to the user carries its endpoint, calls per
// request, share of the request's time, its checked one query and the
// ab command with the user's scenario; the profile's hot functions of the
// app's own code are added, the runtime's and the small ones are not.
func TestAddFixes(t *testing.T) {
	rw := &fixplan.Rewrite{Query: "SELECT one, another FROM relations WHERE ...", Check: fixplan.CheckSameRows, Calls: 292}
	d := &diagnose.Result{
		NPlusOne: []nplusone.Pattern{
			{ID: "A1", Fingerprint: "select count(?) from relations where ...", Endpoint: "GET /", PerRequest: 292, RequestShare: 0.6, TimePerRequestS: 0.048, Source: nplusone.Measured},
			{ID: "B2", Fingerprint: "select x from y where id = ?", Endpoint: "GET /other", PerRequest: 20, Source: nplusone.Measured},
		},
		Rewrites: map[string]*fixplan.Rewrite{"select count(?) from relations where ...": rw},
		Requests: &reqtrace.Report{Profile: &appcpu.Profile{Sampler: "pprof"}, Endpoints: []reqtrace.Endpoint{
			{Endpoint: "GET /work/burn", Usage: &appcpu.Usage{CPUSamples: 200, RequestMsPerRequest: 25, AppCPUMsPerRequest: 20, TopFunctions: []appcpu.Function{
				{Name: "refapp.burnCPU", Share: 0.97}, {Name: "runtime.mallocgc", Share: 0.3}}}},
			{Endpoint: "GET /few", Usage: &appcpu.Usage{CPUSamples: 3, RequestMsPerRequest: 2, AppCPUMsPerRequest: 1, TopFunctions: []appcpu.Function{{Name: "refapp.few", Share: 1}}}},
			{Endpoint: "GET /work/wait", Usage: &appcpu.Usage{CPUSamples: 50, RequestMsPerRequest: 200, AppCPUMsPerRequest: 0.5, TopFunctions: []appcpu.Function{{Name: "refapp.wait", Share: 0.9}}}},
		}},
	}
	p := newPick(d, false)
	p.takenN["B2"] = true // a step took it
	tu := &tuner{opt: Options{Diagnose: diagnose.Options{Bench: benchrun.Options{Scenario: "/srv/shop.yaml", Load: loadgen.Options{Connections: 8, Duration: 10 * time.Second}}}}}
	out := tu.addFixes(p, p.notApplied())
	var n, hot []Finding
	for _, f := range out {
		switch {
		case f.Fix == nil:
		case f.Fix.Kind == fixplan.KindNPlusOne:
			n = append(n, f)
		case f.Fix.Kind == fixplan.KindHotFunction:
			hot = append(hot, f)
		}
	}
	if len(n) != 1 || n[0].Fix.Endpoint != "GET /" || n[0].Fix.CallsPerRequest != 292 || n[0].Fix.RequestShare != 0.6 || n[0].Fix.MsPerRequest != 48 || n[0].Fix.Rewrite != rw {
		t.Fatalf("N+1 fixes: %+v", n)
	}
	if !strings.Contains(n[0].Fix.Prove, "stacktune ab --a '<") || !strings.Contains(n[0].Fix.Prove, "--scenario /srv/shop.yaml --connections 8 --duration 10s") {
		t.Errorf("prove: %s", n[0].Fix.Prove)
	}
	if len(hot) != 1 || hot[0].Title != "refapp.burnCPU" || hot[0].Fix.Endpoint != "GET /work/burn" || hot[0].Fix.CPUShare != 0.97 {
		t.Fatalf("hot functions: %+v", hot)
	}
	if got, want := hot[0].Fix.RequestShare, 0.97*20/25; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("hot function's share of the request %v, want %v", got, want)
	}
}
