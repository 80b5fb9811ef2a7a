package tpcc

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/stacktune/stacktune/history"
)

// HistoryRun is the run as a record of the run history, so `stacktune
// history` draws the score transitions of a tuning session (the 2015 tpcc-mysql contest's
// chart): the score is tpmC; requests and errors are transactions;
// req/s is tpmTotal per second; the latencies are New-Order's. target
// names the server (without a password); label says what was tried.
func (r *Result) HistoryRun(label, target string) history.Run {
	details, _ := json.Marshal(r) // plain data: cannot fail
	h := history.Run{
		Label: label, Started: r.Started, Target: target, Scenario: r.ScenarioName(),
		Score: r.TpmC, Passed: r.Completed > 0 && r.ResponseTimesOK && r.MixOK && r.Failed == 0 && len(r.Outages) == 0,
		Requests: r.Completed, Errors: r.Failed, RPS: r.TpmTotal / 60, Details: details,
		Command: history.CommandTPCC, ScenarioHash: history.ScenarioHash([]byte(r.ScenarioName()), ""), Duration: r.Duration,
	}
	if !h.Passed {
		h.Failure = "tpmC run outside TPC-C's conditions (response times, mix, failures or outages)"
	}
	for _, t := range r.Transactions {
		if t.Name == NewOrder.String() {
			d := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
			h.P50, h.P90, h.P99, h.Max = d(t.P50), d(t.P90), d(t.P99), d(t.Max)
		}
	}
	return h
}

// ScenarioName names the workload in the history: "tpcc 10w", with the
// terminals ("tpcc 10w 16c", or "tpcc 10w think" with keying and think
// times), "sp" when the transactions ran as stored procedures and
// "tiny" for a scaled-down load, so runs that cannot be
// compared are not drawn as one series.
func (r *Result) ScenarioName() string {
	s := fmt.Sprintf("tpcc %dw", r.Warehouses)
	if r.ThinkTimes {
		s += " think"
	} else {
		s += fmt.Sprintf(" %dc", r.Terminals)
	}
	if r.Procedures {
		s += " sp"
	}
	if !r.SpecSizes {
		s += " tiny"
	}
	return s
}
