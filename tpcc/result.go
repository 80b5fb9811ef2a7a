package tpcc

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Result is a run's outcome.
type Result struct {
	Warehouses int   `json:"warehouses"`
	Sizes      Sizes `json:"sizes"`
	// SpecSizes is false for a scaled-down load: its figures are not
	// TPC-C figures.
	SpecSizes  bool `json:"spec_sizes"`
	Terminals  int  `json:"terminals"`
	ThinkTimes bool `json:"think_times"`
	// Procedures: the transactions ran as stored procedures.
	Procedures bool          `json:"procedures,omitempty"`
	WarmUp     time.Duration `json:"warmup_ns"`
	Duration   time.Duration `json:"duration_ns"`
	Started    time.Time     `json:"started"`
	Ended      time.Time     `json:"ended"`

	// Outages are the times the server went away during the run (a
	// transaction lost its connection and no new one could be opened),
	// the last one without an end when the server was not back by the
	// end of the run. Up is the part of the measured interval the server
	// was there: Duration less the outages.
	Outages []Outage      `json:"outages,omitempty"`
	Up      time.Duration `json:"up_ns"`

	// TpmC is New-Order transactions completed per minute of the
	// measured interval the server was up (Up; the 1% rolled back on
	// purpose included: they complete as the spec wants), 0 when it was
	// never up; TpmTotal all five.
	TpmC     float64 `json:"tpmc"`
	TpmTotal float64 `json:"tpm_total"`
	// Efficiency is TpmC over the most the warehouses' terminals can
	// enter with keying and think times (12.86 per warehouse), in
	// percent; only with ThinkTimes.
	Efficiency float64 `json:"efficiency_pct,omitempty"`

	Transactions []TxStats `json:"transactions"`
	// MixOK says every kind reached its minimum share (clause 5.2.3),
	// but for the terminals' last, partly dealt decks (TxStats.MixOK);
	// ResponseTimesOK that every kind's 90th percentile is within its
	// limit (clause 5.2.5.3).
	MixOK           bool `json:"mix_ok"`
	ResponseTimesOK bool `json:"response_times_ok"`

	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	Retries   int64 `json:"retries"`
	Deadlocks int64 `json:"deadlocks"`
	LockWaits int64 `json:"lock_wait_timeouts"`
	// Notes say what makes the figures less than a TPC-C result.
	Notes []string `json:"notes,omitempty"`
}

// TxStats is one transaction kind's part of a run.
type TxStats struct {
	Name       string  `json:"name"`
	Completed  int64   `json:"completed"`
	RolledBack int64   `json:"rolled_back,omitempty"`
	Failed     int64   `json:"failed"`
	Retries    int64   `json:"retries"`
	Deadlocks  int64   `json:"deadlocks"`
	LockWaits  int64   `json:"lock_wait_timeouts"`
	Skipped    int64   `json:"skipped_districts,omitempty"`
	Mix        float64 `json:"mix_pct"`
	MinMix     float64 `json:"min_mix_pct"`
	// MixOK: the share reached the minimum, but for what the terminals'
	// last, partly dealt decks can leave short.
	MixOK bool `json:"mix_ok"`
	// Response times in seconds.
	Avg   float64 `json:"rt_avg_s"`
	P50   float64 `json:"rt_p50_s"`
	P90   float64 `json:"rt_p90_s"`
	P99   float64 `json:"rt_p99_s"`
	Max   float64 `json:"rt_max_s"`
	Limit float64 `json:"rt_limit_p90_s"`
	// OverLimit is how many took longer than the limit; LimitOK that
	// the 90th percentile is within it.
	OverLimit int64    `json:"over_limit"`
	LimitOK   bool     `json:"limit_ok"`
	Errors    []string `json:"errors,omitempty"`
}

// result sums the terminals' stats.
func (r *runner) result(terminals int, end time.Time) *Result {
	res := &Result{Warehouses: r.info.Warehouses, Sizes: r.info.Sizes, SpecSizes: r.info.Sizes.Spec(),
		Terminals: terminals, ThinkTimes: r.opt.ThinkTimes, Procedures: r.opt.Procedures, WarmUp: r.opt.WarmUp, Duration: r.opt.Duration,
		Started: r.start, Ended: end, MixOK: true, ResponseTimesOK: true}
	var sum [numKinds]stats
	for i := range r.perTerm {
		for k := range sum {
			sum[k].add(&r.perTerm[i][k])
		}
	}
	var away time.Duration
	res.Outages, away = r.avail.away(r.measureFrom, r.measureTo)
	res.Up = r.opt.Duration - away
	minutes := res.Up.Minutes()
	for _, k := range Kinds {
		res.Completed += sum[k].done
	}
	for _, k := range Kinds {
		s := &sum[k]
		t := TxStats{Name: k.String(), Completed: s.done, RolledBack: s.rolledBack, Failed: s.failed,
			Retries: s.retries, Deadlocks: s.deadlocks, LockWaits: s.lockWaits, Skipped: s.skipped,
			MinMix: 100 * minMix[k], Limit: rtLimit[k], OverLimit: s.overLimit, Errors: s.errSamples}
		if res.Completed > 0 {
			t.Mix = 100 * float64(s.done) / float64(res.Completed)
		}
		if s.done > 0 {
			t.Avg = s.rtSum / float64(s.done)
			t.P50 = s.rt.Quantile(0.50, s.rtMin, s.rtMax)
			t.P90 = s.rt.Quantile(0.90, s.rtMin, s.rtMax)
			t.P99 = s.rt.Quantile(0.99, s.rtMin, s.rtMax)
			t.Max = s.rtMax
		}
		t.LimitOK = s.done > 0 && t.P90 <= t.Limit
		if !t.LimitOK {
			res.ResponseTimesOK = false
		}
		// Every full deck a terminal dealt holds the mix exactly; only
		// its last deck, partly dealt when the run ends, can leave a kind
		// short, by at most its cards in a deck. The check allows that
		// and no more: a kind below it lost transactions (failures,
		// retries given up).
		if res.Completed > 0 {
			slack := 100 * float64(deckCards[k]*terminals) / float64(res.Completed)
			t.MixOK = t.Mix+slack >= t.MinMix
		}
		if !t.MixOK {
			res.MixOK = false
		}
		res.Failed += s.failed
		res.Retries += s.retries
		res.Deadlocks += s.deadlocks
		res.LockWaits += s.lockWaits
		res.Transactions = append(res.Transactions, t)
	}
	if minutes > 0 {
		res.TpmC = float64(sum[NewOrder].done) / minutes
		res.TpmTotal = float64(res.Completed) / minutes
	}
	if r.opt.ThinkTimes && r.info.Warehouses > 0 {
		res.Efficiency = 100 * res.TpmC / (MaxTpmCPerWarehouse * float64(r.info.Warehouses))
	}
	if !res.SpecSizes {
		res.Notes = append(res.Notes, fmt.Sprintf("scaled-down load (%d items, %d customers per district): not a TPC-C result", r.info.Sizes.Items, r.info.Sizes.Customers))
	}
	if !r.opt.ThinkTimes {
		res.Notes = append(res.Notes, "no keying or think times: a throughput figure (tpcc-mysql style), not a TPC-C result")
	}
	if res.Completed == 0 {
		res.Notes = append(res.Notes, "no transaction completed in the measured interval")
	}
	return res
}

// ServerLost describes the outages of a run for a message, nil when the
// server stayed up: when it went away (and how far into the measured
// interval), when it came back or that it did not, and what the rates
// are over.
func (res *Result) ServerLost() error {
	if len(res.Outages) == 0 {
		return nil
	}
	measured := res.Started.Add(res.WarmUp)
	var parts []string
	for _, o := range res.Outages {
		p := fmt.Sprintf("at %s (%s)", o.From.Format("15:04:05.0"), offset(o.From.Sub(measured)))
		if o.To.IsZero() {
			p += ", not back by the end of the run"
		} else {
			p += fmt.Sprintf(", back after %.1f s", o.To.Sub(o.From).Seconds())
		}
		parts = append(parts, p+": "+o.Error)
	}
	rates := fmt.Sprintf("tpmC and tpmTotal are over the %.1f s of %.1f s measured it was up", res.Up.Seconds(), res.Duration.Seconds())
	if res.Up <= 0 {
		rates = "no tpmC: it was away for the whole measured interval"
	}
	return fmt.Errorf("%w %s; %s", ErrServerLost, strings.Join(parts, "; then "), rates)
}

// offset says where t (from the start of the measured interval) falls.
func offset(d time.Duration) string {
	if d < 0 {
		return fmt.Sprintf("%.1f s before the measured interval, in the warm-up", -d.Seconds())
	}
	return fmt.Sprintf("%.1f s into the measured interval", d.Seconds())
}

// ErrServerLost is Run's error when the server went away during the
// run (Result.Outages): the result is still returned, its rates over the
// time the server was up, and it is no measurement of the server.
var ErrServerLost = errors.New("tpcc: the server went away during the run:")
