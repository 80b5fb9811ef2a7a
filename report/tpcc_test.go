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
		Completed: 190, Failed: 3, Notes: []string{h}, Outages: []tpcc.Outage{{Error: h}}, Up: 30 * time.Second}
}

func hostileTPCCCheck(h string) *tpcc.CheckResult {
	return &tpcc.CheckResult{Warehouses: 1, Conditions: []tpcc.Condition{
		{Number: 1, Rule: h, Per: h, Checked: 2, Violations: 1, Examples: []string{h}},
		{Number: 2, Rule: "plain", Checked: 10},
		{Number: 11, Rule: h, Per: "district", NotChecked: h},
	}}
}

// TestTPCCRunServerGone: a run whose server went away says so first,
// when and whether it came back, and gives its rates only over the time
// the server was up, or none.
func TestTPCCRunServerGone(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.Local)
	tests := []struct {
		name    string
		outages []tpcc.Outage
		up      time.Duration
		want    []string
	}{
		{"gone in the measured interval", []tpcc.Outage{{From: start.Add(13 * time.Second), Error: "invalid connection"}}, 3 * time.Second,
			[]string{"SERVER WENT AWAY at 12:00:13.0 (3.00s into the measured interval), not back by the end of the run: invalid connection",
				"tpmC 1,235, tpmTotal 2,700 over the 3.00s of 60.0s measured the server was up"}},
		{"gone in the warm-up, back later", []tpcc.Outage{{From: start.Add(5 * time.Second), To: start.Add(75 * time.Second), Error: "connection refused"}}, 0,
			[]string{"SERVER WENT AWAY at 12:00:05.0 (5.00s before the measured interval, in the warm-up), back after 70.0s: connection refused",
				"no tpmC: the server was away for the whole measured interval"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hostileTPCCRun("x")
			r.Started, r.WarmUp, r.Outages, r.Up = start, 10*time.Second, tt.outages, tt.up
			var b bytes.Buffer
			if err := TPCCRun(&b, r, Text); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, want := range tt.want {
				if !strings.Contains(out, want) {
					t.Errorf("missing %q in:\n%s", want, out)
				}
			}
			if tt.up == 0 && strings.Contains(out, "tpmC 1,235") {
				t.Errorf("a tpmC for a run the server was never up for:\n%s", out)
			}
		})
	}
}

// TestTPCCCheckText: each condition says what it was checked for, how
// many broke it and which, or why it was not checked.
func TestTPCCCheckText(t *testing.T) {
	r := &tpcc.CheckResult{Warehouses: 1, Conditions: []tpcc.Condition{
		{Number: 1, Rule: "W_YTD = sum(D_YTD)", Per: "warehouse", Checked: 1},
		{Number: 6, Rule: "O_OL_CNT = rows in ORDER-LINE", Per: "order", Checked: 30000, Violations: 2,
			Examples: []string{"warehouse 1 district 2 order 1: o_ol_cnt 6, order lines 6 numbered 2 to 7", "warehouse 1 district 3 order 9: o_ol_cnt 4"}},
		{Number: 11, Rule: "rows in ORDER - rows in NEW-ORDER = 2100", Per: "district", NotChecked: "holds only as loaded"},
	}}
	for _, format := range []string{Text, Markdown} {
		var b bytes.Buffer
		if err := TPCCCheck(&b, r, format); err != nil {
			t.Fatal(err)
		}
		out := strings.ReplaceAll(b.String(), `\_`, "_") // Markdown's escapes
		for _, want := range []string{"conditions 1-11 (1 warehouses): BROKEN", "1 ok: W_YTD = sum(D_YTD) for each warehouse: 1 warehouse checked, 0 violations",
			"6 BROKEN: O_OL_CNT = rows in ORDER-LINE for each order: 30,000 orders checked, 2 violations", "order 1: o_ol_cnt 6, order lines 6 numbered 2 to 7",
			"11 not checked: rows in ORDER - rows in NEW-ORDER = 2100: holds only as loaded"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: missing %q in:\n%s", format, want, out)
			}
		}
	}
}

func hostileSearch(h string) *knobsearch.Result {
	cfg := knobsearch.Config{h: h, "innodb_buffer_pool_size": "1073741824"}
	return &knobsearch.Result{
		Workload: h,
		Audit:    cfg, AuditNotes: []string{h},
		Trials: []knobsearch.Trial{
			{N: 1, Phase: knobsearch.Phase(h), Label: h, Config: knobsearch.Config{}, Score: 10, Relative: 1, Summary: h},
			{N: 2, Phase: "model", Label: "model 1/2", Config: cfg, Error: h},
		},
		Skipped:    []knobsearch.Skipped{{Phase: knobsearch.Phase(h), Config: cfg, Why: h}, {Phase: "model", Why: h}},
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
