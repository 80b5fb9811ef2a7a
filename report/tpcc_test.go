package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/knobsearch"
	"github.com/stacktune/stacktune/tpcc"
)

func hostileTPCCRun(h string) *tpcc.Result {
	return &tpcc.Result{Warehouses: 2, Sizes: tpcc.TinySizes, Terminals: 4, Procedures: true, Duration: time.Minute, TpmC: 1234.5, TpmTotal: 2700,
		Transactions: []tpcc.TxStats{
			{Name: "New-Order", Completed: 100, RolledBack: 1, Mix: 44, MinMix: 0, MixOK: true, P90: 0.01, Limit: 5, LimitOK: true, Errors: []string{h}},
			{Name: "Payment", Completed: 90, Mix: 40, MinMix: 43, P90: 6, Limit: 5, Errors: []string{h, "x"}},
			{Name: "Delivery", Skipped: 3, MinMix: 4, Limit: 5},
		},
		Completed: 190, Failed: 3, Notes: []string{h}}
}

func hostileTPCCCheck(h string) *tpcc.CheckResult {
	return &tpcc.CheckResult{Warehouses: 1, Conditions: []tpcc.Condition{
		{Number: 1, Rule: h, Checked: 2, Violations: 1, Examples: []string{h}},
		{Number: 2, Rule: "plain", Checked: 10},
	}}
}

func hostileSearch(h string) *knobsearch.Result {
	cfg := knobsearch.Config{h: h, "innodb_buffer_pool_size": "1073741824"}
	return &knobsearch.Result{
		Workload: h,
		Audit:    cfg, AuditNotes: []string{h},
		Trials: []knobsearch.Trial{
			{N: 1, Phase: h, Label: h, Config: knobsearch.Config{}, Score: 10, Relative: 1, Summary: h},
			{N: 2, Phase: "model", Label: "model 1/2", Config: cfg, Error: h},
		},
		Skipped:    []knobsearch.Skipped{{Phase: h, Config: cfg, Why: h}, {Phase: "model", Why: h}},
		Importance: []knobsearch.Importance{{Knob: h, Rho: 0.5, Trials: 2}},
		Searched:   []string{h},
		Best:       0,
		Comparison: &knobsearch.Comparison{
			Arms:      []knobsearch.ArmScores{{Name: h, Config: cfg, Scores: []float64{1, 2}, Median: 1.5}},
			Decisions: []knobsearch.Decision{{A: h, B: "best", Decision: abtest.Decision{Verdict: abtest.WithinNoise, Reason: h}}},
		},
		ChangeSetFrom: "best", ChangeSetWhy: h,
		ChangeSet: &changeset.Set{Changes: []changeset.Change{{Kind: changeset.MySQLVariable, Name: h, From: h, To: h, Finding: h,
			Risk: &changeset.Risk{Restart: true}}}},
		Notes: []string{h},
	}
}

// TestTPCCRunText: the figures and verdicts a reader looks for.
func TestTPCCRunText(t *testing.T) {
	var b bytes.Buffer
	if err := TPCCRun(&b, hostileTPCCRun("boom"), Text); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"tpmC 1,235, tpmTotal 2,700", "Payment p90 6.00s > 5.00s", "Delivery none completed", "below the minimum share", "Payment 40.0% < 43%",
		"Delivery: 3 districts had no order to deliver", "New-Order error: boom", "scaled down, not TPC-C", "5.00s OVER",
		"4 connections, no keying or think times, transactions as stored procedures"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
