package ledger

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/history"
)

func run(label string, score float64) history.Run {
	return history.Run{Label: label, Score: score, Passed: true, Command: history.CommandBench, ScenarioHash: "h1",
		DataReset: "POST /initialize", Duration: 30 * time.Second}
}

func view(r history.Run, eps ...Endpoint) *View {
	return &View{Run: r, Endpoints: eps}
}

func TestVerdict(t *testing.T) {
	noisy := &history.Session{ID: 3, Noise: 0.05}
	tests := []struct {
		name       string
		edit       func(a, b *View)
		comparable bool
		codes      string
	}{
		{name: "same load", edit: func(a, b *View) {}, comparable: true, codes: ReasonNoiseUnknown},
		{name: "another scenario", edit: func(a, b *View) { b.Run.ScenarioHash = "h2" }, codes: ReasonScenarioDiffers + "," + ReasonNoiseUnknown},
		{name: "a run before the ledger", edit: func(a, b *View) { a.Run.ScenarioHash = "" }, codes: ReasonScenarioUnknown + "," + ReasonNoiseUnknown},
		{name: "another data reset", edit: func(a, b *View) { b.Run.DataReset = "" }, codes: ReasonDataResetDiffers + "," + ReasonNoiseUnknown},
		{name: "durations 20% apart", edit: func(a, b *View) { b.Run.Duration = 24 * time.Second }, codes: ReasonDurationDiffers + "," + ReasonNoiseUnknown},
		{name: "durations 5% apart", edit: func(a, b *View) { b.Run.Duration = 28500 * time.Millisecond }, comparable: true, codes: ReasonNoiseUnknown},
		{name: "a failed run", edit: func(a, b *View) { b.Run.Passed, b.Run.Failure = false, "errors" }, codes: ReasonRunFailed + "," + ReasonNoiseUnknown},
		{name: "a collector failed", edit: func(a, b *View) { a.CollectorErrors = []string{"nginx: no access"} }, codes: ReasonCollectorFailed + "," + ReasonNoiseUnknown},
		{name: "within the noise floor", edit: func(a, b *View) {
			a.Session, b.Session = noisy, noisy
			a.Run.Session, b.Run.Session = 3, 3
			b.Run.Score = a.Run.Score * 1.04
		}, comparable: true, codes: ReasonWithinNoise + "," + ReasonSameSession},
		{name: "beyond the noise floor", edit: func(a, b *View) {
			a.Session, b.Session = noisy, noisy
			b.Run.Score = a.Run.Score * 1.5
		}, comparable: true, codes: ""},
		{name: "another commit", edit: func(a, b *View) { a.Run.AppCommit, b.Run.AppCommit = "aaa", "bbb" }, comparable: true,
			codes: ReasonNoiseUnknown + "," + ReasonCommitDiffers},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := view(run("a", 1000)), view(run("b", 1000))
			tc.edit(a, b)
			c := Compare(a, b)
			var codes []string
			for _, r := range c.Verdict.Reasons {
				codes = append(codes, r.Code)
			}
			if c.Verdict.Comparable != tc.comparable || strings.Join(codes, ",") != tc.codes {
				t.Errorf("comparable %v %v, want %v %s", c.Verdict.Comparable, codes, tc.comparable, tc.codes)
			}
		})
	}
}

// TestCompareOrder: the endpoint whose total time changed most comes
// first, whichever way it changed; one run's only endpoint is marked.
func TestCompareOrder(t *testing.T) {
	a := view(run("a", 1000),
		Endpoint{Source: SourceBench, Name: "GET /", Count: 100, Total: 10},
		Endpoint{Source: SourceBench, Name: "GET /friends", Count: 50, Total: 5},
		Endpoint{Source: SourceBench, Name: "GET /gone", Count: 5, Total: 0.5},
		Endpoint{Source: SourceBench, Name: "GET /home", Count: 10, Total: 5})
	// GET /home's total is the same in B, over ten times the requests:
	// each took a tenth of the time (a closed loop keeps the sum of the
	// totals fixed), 45 s less for B's 100 requests.
	b := view(run("b", 2000),
		Endpoint{Source: SourceBench, Name: "GET /home", Count: 100, Total: 5},
		Endpoint{Source: SourceBench, Name: "GET /", Count: 100, Total: 11},
		Endpoint{Source: SourceBench, Name: "GET /friends", Count: 50, Total: 1},
		Endpoint{Source: SourceBench, Name: "GET /new", Count: 5, Total: 0.7})
	a.Classes = []Class{{ID: "1", Fingerprint: "select a", Total: 1}, {ID: "2", Fingerprint: "select b", Total: 3}}
	b.Classes = []Class{{ID: "1", Fingerprint: "select a", Total: 1.5}, {ID: "2", Fingerprint: "select b", Total: 0.2}}
	a.Functions = []Function{{Name: "f", Self: 1, Total: 10}}
	b.Functions = []Function{{Name: "f", Self: 1, Total: 30}, {Name: "g", Self: 2, Total: 2}}
	c := Compare(a, b)
	var names []string
	for _, d := range c.Endpoints {
		names = append(names, d.Name+":"+d.Missing)
	}
	if got := strings.Join(names, ","); got != "GET /home:,GET /friends:,GET /:,GET /new:a,GET /gone:b" {
		t.Errorf("endpoints %s", got)
	}
	if c.Endpoints[0].Delta != -45 || c.Endpoints[1].Delta != -4 {
		t.Errorf("delta %v", c.Endpoints[0].Delta)
	}
	if c.Classes[0].Source != "2" || c.Classes[1].Source != "1" {
		t.Errorf("classes %+v", c.Classes)
	}
	if c.Functions[0].Name != "f" || c.Functions[0].Delta != 20 {
		t.Errorf("functions %+v", c.Functions)
	}
}

// TestLoad records a bench run with artefacts and a profile and reads it
// back: the bench's steps as endpoints, the access log's, the digest's
// classes, the profile's functions; a broken artefact is a problem, not
// a failure; the session's decision reaches the comparison.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	s, err := history.Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sess, _ := s.StartSession(ctx, history.CommandAB, "x")
	s.AddDecision(ctx, sess, history.Decision{LabelA: "a", LabelB: "b", Outcome: "better", Ratio: 2})
	details, _ := json.Marshal(benchrun.RunResult{Steps: []benchrun.Step{{Name: "home", Requests: 10, LatencyMS: benchrun.LatencyMS{Mean: 20, P50: 15, P99: 90}}}})
	add := func(label string, arts ...history.Artefact) int64 {
		r := run(label, 100)
		r.Details, r.Session, r.Artefacts = details, sess, arts
		if _, err := s.Add(ctx, &r); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	ida := add("a",
		history.Artefact{Kind: history.ArtefactHTTP, Data: []byte(`{"endpoints":[{"method":"GET","path":"/","count":10,"time_total_s":0.3,"time_p50_s":0.02,"time_p99_s":0.1,"status":{"5xx":1}}]}`)},
		history.Artefact{Kind: history.ArtefactDigest, Data: []byte(`{"classes":[{"id":"ABC","fingerprint":"select ?","count":4,"time_total_s":0.1,"time_p95_s":0.05}]}`)},
		history.Artefact{Kind: history.ArtefactProfile, Data: []byte("main;serve;query 7\nmain;serve 3\nbad line\n")},
		history.Artefact{Kind: history.ArtefactFindings, Data: []byte(`{not json`)},
		history.Artefact{Kind: history.ArtefactSnapshot, Data: []byte(`{"collector_errors":[{"collector":"nginx","error":"no status page"}]}`)})
	idb := add("b")
	a, err := Load(ctx, s, ida)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Endpoints) != 2 || a.Endpoints[0].Source != SourceBench || a.Endpoints[0].Total != 0.2 || a.Endpoints[1].Name != "GET /" || a.Endpoints[1].Errors != 1 {
		t.Errorf("endpoints %+v", a.Endpoints)
	}
	if len(a.Classes) != 1 || a.Classes[0].P95 != 0.05 {
		t.Errorf("classes %+v", a.Classes)
	}
	if len(a.Functions) != 3 || a.Functions[0].Name != "main" || a.Functions[0].Total != 10 || a.Flame.Value != 10 {
		t.Errorf("functions %+v", a.Functions)
	}
	if len(a.Problems) != 1 || !strings.HasPrefix(a.Problems[0], "findings: ") {
		t.Errorf("problems %q", a.Problems)
	}
	if len(a.CollectorErrors) != 1 {
		t.Errorf("collector errors %q", a.CollectorErrors)
	}
	b, err := Load(ctx, s, idb)
	if err != nil {
		t.Fatal(err)
	}
	c := Compare(a, b)
	if c.Decision == nil || c.Decision.Outcome != "better" {
		t.Errorf("decision %+v", c.Decision)
	}
	if _, err := Load(ctx, s, 999); err == nil {
		t.Error("a missing run loaded")
	}
}

func TestFolded(t *testing.T) {
	tests := []struct {
		name, in string
		fns      string
		err      bool
	}{
		{name: "stacks", in: "a;b;c 5\na;b 2\na;d 1\n", fns: "a:0/8,b:2/7,c:5/5,d:1/1"},
		{name: "recursion counts once in total", in: "a;a;a 4\n", fns: "a:4/4"},
		{name: "bad lines skipped", in: "junk\na;b x\na;b -1\na 3\n", fns: "a:3/3"},
		{name: "nothing", in: "junk\n", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fns, root, err := Folded([]byte(tc.in))
			if (err != nil) != tc.err {
				t.Fatalf("err %v", err)
			}
			if tc.err {
				return
			}
			var got []string
			for _, f := range fns {
				got = append(got, f.Name+":"+itoa(f.Self)+"/"+itoa(f.Total))
			}
			sortStrings(got)
			if strings.Join(got, ",") != tc.fns || root == nil {
				t.Errorf("functions %v, want %s", got, tc.fns)
			}
		})
	}
}

func FuzzFolded(f *testing.F) {
	for _, s := range []string{"a;b;c 5\na;b 2\n", "a;a;a 4", "junk", "", ";;; 1", "a 99999999999999999999", "a;b 1\r\nc 2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fns, root, err := Folded(data)
		if err != nil {
			return
		}
		var self int64
		for _, fn := range fns {
			if fn.Self < 0 || fn.Total < fn.Self {
				t.Fatalf("function %+v", fn)
			}
			self += fn.Self
		}
		if root == nil || root.Value <= 0 {
			t.Fatalf("root %+v", root)
		}
	})
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
