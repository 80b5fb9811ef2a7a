package tune

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/loadgen"
)

// TestABLedger: an ab with a history records one session: every run with
// its arm and the caller's scenario hash, the decision, and the session
// ended; a failing switch ends it failed.
func TestABLedger(t *testing.T) {
	ctx := context.Background()
	url, fix := switchServer(t)
	hist, err := history.Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer hist.Close()
	opt := ABOptions{Bench: benchrun.Options{URL: url, Load: loadgen.Options{Connections: 1, Duration: 300 * time.Millisecond, KeepAlive: true, Timeout: time.Second}},
		AB: abtest.Options{MinRuns: 4, MaxRuns: 4}, LabelA: "n+1", LabelB: "fix", History: hist,
		Ledger: history.Meta{ScenarioHash: "feedface", AppCommit: "abc"}}
	opt.ToA, opt.ToB = cmd("rm", "-f", fix), cmd("touch", fix)
	res, err := AB(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := hist.Sessions(ctx, 10)
	if err != nil || len(ss) != 1 {
		t.Fatalf("sessions %v, %v", ss, err)
	}
	s := ss[0]
	if s.Command != history.CommandAB || s.Status != history.SessionDone || len(s.Decisions) != 1 {
		t.Fatalf("session %+v", s)
	}
	if d := s.Decisions[0]; d.LabelA != "n+1" || d.LabelB != "fix" || d.Outcome != string(res.Decision) || d.Runs != len(res.A)+len(res.B) {
		t.Errorf("decision %+v, result %+v", d, res)
	}
	runs, err := hist.List(ctx, history.ListFilter{Session: s.ID})
	if err != nil {
		t.Fatal(err)
	}
	arms := map[string]int{}
	for _, r := range runs {
		arms[r.Arm]++
		if r.Command != history.CommandAB || r.ScenarioHash != "feedface" || r.AppCommit != "abc" || r.Duration <= 0 {
			t.Errorf("run %+v", r)
		}
		if (r.Arm == "a") != (r.Label == "n+1") {
			t.Errorf("run labelled %q in arm %q", r.Label, r.Arm)
		}
	}
	if arms["a"] != len(res.A) || arms["b"] != len(res.B) {
		t.Errorf("arms %v, result has %d and %d runs", arms, len(res.A), len(res.B))
	}

	opt.ToB = cmd("false")
	if _, err := AB(ctx, opt); err == nil {
		t.Fatal("a failing switch did not fail the ab")
	}
	if ss, _ = hist.Sessions(ctx, 1); ss[0].Status != history.SessionFailed || ss[0].Ended.IsZero() {
		t.Errorf("the failed session: %+v", ss[0])
	}
}
