package knobsearch

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/tpcc"
)

// TPCC is the TPC-C workload: a tpcc run per trial, tpmC its score, from
// data the Reset function brings back to the same bytes.
type TPCC struct {
	// DB reaches the loaded TPC-C database.
	DB *sql.DB
	// Run shapes every run (duration, warm-up, connections).
	Run tpcc.RunOptions
	// ResetData brings the data back (a data dir restored, or a reload).
	ResetData func(ctx context.Context) error
	// History records every run under its label (nil: none); Target names
	// the server there (no password).
	History *history.Store
	Target  string
	// Last is the result of the last run (for reports).
	Last *tpcc.Result

	name string
}

var _ Workload = (*TPCC)(nil)

// NewTPCC reads the loaded scale for the workload's name.
func NewTPCC(ctx context.Context, w TPCC) (*TPCC, error) {
	info, err := tpcc.ReadInfo(ctx, w.DB)
	if err != nil {
		return nil, err
	}
	probe := tpcc.Result{Warehouses: info.Warehouses, SpecSizes: info.Sizes.Spec(), ThinkTimes: w.Run.ThinkTimes, Procedures: w.Run.Procedures, Terminals: w.Run.Connections}
	if probe.Terminals <= 0 {
		probe.Terminals = 2 * info.Warehouses
	}
	w.name = probe.ScenarioName()
	return &w, nil
}

// Name is "tpcc 10w 16c" ("tpcc 10w 16c sp" with stored procedures).
func (w *TPCC) Name() string { return w.name }

// Reset runs ResetData.
func (w *TPCC) Reset(ctx context.Context) error {
	if w.ResetData == nil {
		return nil
	}
	return w.ResetData(ctx)
}

// Measure runs TPC-C once.
func (w *TPCC) Measure(ctx context.Context, label string, observe func(context.Context)) (Measurement, error) {
	var wg sync.WaitGroup
	if observe != nil {
		wg.Add(1)
		go func() { defer wg.Done(); observe(ctx) }()
	}
	res, err := tpcc.Run(ctx, w.DB, w.Run)
	wg.Wait()
	if err != nil {
		return Measurement{}, err
	}
	w.Last = res
	if w.History != nil {
		h := res.HistoryRun(label, w.Target)
		h.Command, h.DataReset = history.CommandKnobSearch, "data reset before each trial"
		if _, err := w.History.Add(context.WithoutCancel(ctx), &h); err != nil {
			return Measurement{}, fmt.Errorf("recording the run: %w", err)
		}
	}
	p90 := 0.0
	for _, t := range res.Transactions {
		if t.Name == tpcc.NewOrder.String() {
			p90 = t.P90
		}
	}
	return Measurement{Score: res.TpmC, Passed: res.ResponseTimesOK && res.Failed == 0,
		Summary: fmt.Sprintf("tpmC %.0f, tpmTotal %.0f, New-Order p90 %.1f ms, %d deadlocks, %d failed", res.TpmC, res.TpmTotal, p90*1000, res.Deadlocks, res.Failed)}, nil
}

// HTTP is a scenario's (or a URL's) workload: one bench run per trial,
// its score the bench score. Its data is reset by the scenario's own
// pre_run hook.
type HTTP struct {
	Bench   benchrun.Options
	History *history.Store
}

var _ Workload = (*HTTP)(nil)

// Name is the scenario or the URL (shown as loadgen.MaskURL shows it:
// the name is in the report).
func (w *HTTP) Name() string {
	if w.Bench.Scenario != "" {
		return w.Bench.Scenario
	}
	return loadgen.MaskURL(w.Bench.URL)
}

// Reset does nothing: the scenario's pre_run resets the app.
func (w *HTTP) Reset(context.Context) error { return nil }

// Measure runs the scenario once.
func (w *HTTP) Measure(ctx context.Context, label string, observe func(context.Context)) (Measurement, error) {
	var wg sync.WaitGroup
	if observe != nil {
		wg.Add(1)
		go func() { defer wg.Done(); observe(ctx) }()
	}
	opt := w.Bench
	opt.Label, opt.Runs = label, 1
	sum, err := benchrun.Run(ctx, opt)
	wg.Wait()
	if err != nil {
		return Measurement{}, err
	}
	if w.History != nil {
		for _, h := range history.FromSummary(sum) {
			h.Command, h.ScenarioHash = history.CommandKnobSearch, history.ScenarioHash([]byte(w.Name()), "")
			if _, err := w.History.Add(context.WithoutCancel(ctx), &h); err != nil {
				return Measurement{}, fmt.Errorf("recording the run: %w", err)
			}
		}
	}
	return Measurement{Score: sum.Score, Passed: sum.Passed,
		Summary: fmt.Sprintf("score %.0f, %.1f req/s, p99 %.0f ms, %d errors", sum.Score, sum.RPS, sum.LatencyMS.P99, sum.Errors)}, nil
}
