package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/internal/golden"
	"github.com/stacktune/stacktune/reqtrace"
)

// profiledFixture is the trace fixture with a profile: a real perf
// recording (a Go program spinning in main.main) given to its first
// endpoint's requests.
func profiledFixture(t testing.TB) *reqtrace.Report {
	t.Helper()
	r := diagnoseFixture(t).Requests
	f, err := os.Open("../appcpu/testdata/go-spin.perfscript")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := appcpu.NewCapture("perf")
	t0 := time.Unix(1_700_000_000, 0)
	st, err := appcpu.ParsePerfScript(f, c, func(ns int64) time.Time { return t0.Add(time.Duration(ns)) })
	if err != nil {
		t.Fatal(err)
	}
	c.Symbols, c.PIDs = appcpu.SymbolsOf(st), []int{1863}
	first := r.Endpoints[0].Endpoint
	var reqs []appcpu.Request
	for i := range r.Endpoints[0].Requests {
		// The recording's 0.1 s shared by the endpoint's requests, one
		// after another.
		d := 100 * time.Millisecond / time.Duration(r.Endpoints[0].Requests)
		s := t0.Add(550*time.Second + 605*time.Millisecond + time.Duration(i)*d)
		reqs = append(reqs, appcpu.Request{Endpoint: first, Start: s, End: s.Add(d)})
	}
	p := appcpu.Attribute(c, reqs, map[string]appcpu.EndpointTimes{first: {DBMsPerRequest: r.Endpoints[0].DBTimeS * 1000}})
	for i := range p.Endpoints {
		p.Endpoints[i].FlameGraph = "flame/" + strings.NewReplacer(" ", "_", "/", "_").Replace(p.Endpoints[i].Endpoint) + ".svg"
		r.Endpoints[0].Usage = &p.Endpoints[i]
	}
	p.Endpoints = nil
	r.Profile = p
	return r
}

func TestProfileGolden(t *testing.T) {
	r := profiledFixture(t)
	if r.Endpoints[0].Usage == nil || r.Endpoints[0].AppCPUMsPerRequest <= 0 {
		t.Fatalf("fixture: %+v", r.Endpoints[0].Usage)
	}
	for _, f := range RequestsFormats {
		var b bytes.Buffer
		if err := Requests(&b, r, f); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "requests", "profiled."+f), b.Bytes())
		if f != JSON && !strings.Contains(b.String(), "main.main") {
			t.Errorf("%s: no main.main in the app-CPU section", f)
		}
	}
	var svg bytes.Buffer
	if err := FlameGraph(&svg, "GET /", r.Endpoints[0].Stacks); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "requests", "flame.svg"), svg.Bytes())
}

func TestFlameGraphHostile(t *testing.T) {
	for _, s := range []string{kitchenSink, "<script>alert(1)</script>", `"><svg onload=alert(1)>`} {
		stacks := []appcpu.Stack{{Frames: []string{"main", s, "leaf" + s}, Ms: 10}, {Frames: []string{"main", "other"}, Ms: 5}}
		var b bytes.Buffer
		if err := FlameGraph(&b, "title"+s, stacks); err != nil {
			t.Fatal(err)
		}
		var d bytes.Buffer
		if err := FlameDiffGraph(&d, "diff"+s, []appcpu.StackChange{{Frames: []string{"main", s}, BeforeMs: 3, AfterMs: 1}}); err != nil {
			t.Fatal(err)
		}
		for _, out := range []string{b.String(), d.String()} {
			if strings.Contains(out, "<script") || strings.Contains(out, "<svg onload") || strings.Count(out, "<svg") != 1 {
				t.Errorf("markup from the data got through:\n%s", out)
			}
			checkClean(t, out, false)
		}
		r := profiledFixture(t)
		r.Endpoints[0].Endpoint += s
		r.Endpoints[0].Stacks = stacks
		r.Endpoints[0].TopFunctions = appcpu.TopOf(stacks, 5)
		r.Profile.Notes = append(r.Profile.Notes, s)
		for _, f := range []string{Text, Markdown, HTML} {
			var o bytes.Buffer
			if err := Requests(&o, r, f); err != nil {
				t.Fatal(err)
			}
			if f == HTML && (strings.Contains(o.String(), "<script") || strings.Contains(o.String(), "<svg onload")) {
				t.Errorf("markup from the data got through the HTML page")
			}
			checkClean(t, o.String(), false)
		}
	}
}

func TestEndpointsDiffGolden(t *testing.T) {
	r := profiledFixture(t)
	before := []appcpu.Usage{*r.Endpoints[0].Usage}
	after := []appcpu.Usage{*r.Endpoints[0].Usage}
	after[0].ProfiledRequests *= 2 // the same CPU over twice the requests: every function halves
	after[0].AppCPUMsPerRequest /= 2
	v := &EndpointsDiffView{Before: "a.json", After: "b.json", Endpoints: appcpu.Diff(before, after), FlameGraphs: map[string]string{before[0].Endpoint: "diff.svg"}}
	if f := v.Endpoints[0].Functions; len(f) == 0 || f[0].DeltaMs >= 0 || f[0].AfterMs*2 != f[0].BeforeMs {
		t.Fatalf("functions %+v", f)
	}
	for _, f := range EndpointsDiffFormats {
		var b bytes.Buffer
		if err := EndpointsDiff(&b, v, f); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "requests", "diff."+f), b.Bytes())
	}
	var svg bytes.Buffer
	if err := FlameDiffGraph(&svg, "diff", v.Endpoints[0].Stacks); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "requests", "flamediff.svg"), svg.Bytes())
}
