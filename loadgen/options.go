package loadgen

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Options bounds and shapes a run. See the package documentation for the
// two models and how the bounds combine.
type Options struct {
	// NoEventLoops runs closed-model URL plans on one goroutine per user
	// instead of the epoll event loops (to compare the two engines; the
	// open model and scenarios always use goroutines).
	NoEventLoops bool
	// Connections is the number of virtual users, each with its own User
	// (and so its own connection or session). Default 10; at most
	// MaxConnections and what the open-files limit allows (see
	// CheckConnections).
	Connections int
	// Duration is the measured duration, after WarmUp. At least one of
	// Duration and Requests must be > 0, else Run refuses (unbounded).
	Duration time.Duration
	// Requests is the number of measured requests to complete (successful
	// or not); 0 means no count bound. At most MaxRequests.
	Requests int64
	// Rate > 0 selects the open model: this many requests per second are
	// scheduled at evenly spaced intended times and latency is measured
	// from the intended time (coordinated omission corrected, as wrk2
	// does). 0 selects the closed model (like wrk and ab): every user
	// issues its requests back to back.
	Rate float64
	// KeepAlive reuses connections (wrk's default); false opens a
	// connection per request (ab's default, fills TIME_WAIT). Users read it
	// through the context; a URLWorkload must have been built with the same
	// setting (Run refuses a mismatch).
	KeepAlive bool
	// Timeout bounds each request; default 10s. Users read it through the
	// context with RequestTimeout.
	Timeout time.Duration
	// WarmUp runs the same load this long first; its results are
	// discarded (counted only in Result.WarmUpRequests).
	WarmUp time.Duration
	// MaxDuration is the hard safety bound on the whole run (warm-up
	// included), whatever else is set; default 10m. Run refuses a
	// WarmUp+Duration beyond it.
	MaxDuration time.Duration
	// Progress, when set, is called about once a second from one
	// goroutine, never after Run returns.
	Progress func(Progress)
}

// Progress is a snapshot of a running measurement.
type Progress struct {
	// Elapsed is the time since the measured phase started (since the
	// warm-up started while WarmUp is true).
	Elapsed          time.Duration
	Requests, Errors int64
	// RPS is the completion rate over the last report interval.
	RPS float64
	// P99 is the 99th percentile latency so far.
	P99 time.Duration
	// WarmUp is true during the warm-up phase; its counts are discarded.
	WarmUp bool
}

// Latency summarises a latency distribution (HDR histogram, 1µs..60s, 3
// significant digits; values beyond are clamped).
type Latency struct{ Mean, P50, P90, P99, Max time.Duration }

// StepResult is the outcome of one step of the plan.
type StepResult struct {
	Name             string
	Requests, Errors int64
	ErrorsByKind     map[ErrKind]int64
	RPS              float64
	Latency          Latency
	Bytes            int64
	// Details holds the first few distinct error details of each kind,
	// prefixed with the kind ("timeout: ...").
	Details []string
}

// Result is the outcome of a run's measured phase.
type Result struct {
	// Started is when the measured phase started.
	Started time.Time
	// Elapsed is the measured phase's length: from its start to the
	// bound that stopped it, or to the last completion when the Requests
	// bound ended it.
	Elapsed time.Duration
	// Requests counts completed requests (successful or failed); Errors
	// the failed ones, also by kind.
	Requests, Errors int64
	ErrorsByKind     map[ErrKind]int64
	RPS              float64
	// Latency covers the requests that got a response, and the timeouts
	// (so a stalled server shows); other errors have no latency.
	Latency     Latency
	Bytes       int64
	Steps       []StepResult
	Model       string // "closed" or "open"
	Connections int
	Rate        float64
	// Stopped says which bound ended the run: "duration", "requests",
	// "canceled" or "max-duration".
	Stopped string
	// WarmUpRequests counts the requests completed during warm-up
	// (discarded from everything else).
	WarmUpRequests int64
	// Unsent (open model) counts the measured requests scheduled before
	// the run stopped (and before the end of Duration) that were never
	// sent: the queue left behind, the backlog. Requests that waited
	// longer than the timeout were counted as timeouts instead. Always 0
	// in the closed model, which has no schedule.
	Unsent int64
	// InFlight counts the requests sent (in the measured phase or the
	// warm-up) that had not completed when the measured phase ended, at
	// the end of Duration or at the stop: they were aborted, or completed
	// too late, and are in none of the other counts. Both models; 0 when
	// the Requests bound ended the run, which waits for every request.
	// Requests + Unsent + InFlight is every request scheduled (open
	// model, without warm-up) or started (closed model).
	InFlight int64
	// Stalled counts the requests of InFlight that stalled: older at the
	// end (end − start, the start being the origin of their latency) than
	// StalledAfter, or all of them when no request completed (Requests
	// 0: a server that never answers). The others were cut by the end of
	// the run, as every connection of a closed run normally has a request
	// out when it ends: a completed request took as long, so they are
	// counted in InFlight but not taken as failures by the server.
	Stalled int64
	// StalledAfter is the age bound of Stalled: the longest latency
	// (Sample.Latency) of the measured requests, errors included, so it
	// can exceed Latency.Max; 0 when none completed.
	StalledAfter time.Duration
}

// MaxRequests is the largest Options.Requests Run accepts.
const MaxRequests = 100_000_000

// Defaults applied by Run.
const (
	DefaultConnections = 10
	DefaultTimeout     = 10 * time.Second
	DefaultMaxDuration = 10 * time.Minute
)

// ErrMaxDuration is returned (with the partial result) when
// Options.MaxDuration stopped a run before its own bound.
var ErrMaxDuration = errors.New("loadgen: stopped at the MaxDuration safety bound")

// withDefaults validates opt and fills in defaults.
func (opt Options) withDefaults() (Options, error) {
	if opt.Connections == 0 {
		opt.Connections = DefaultConnections
	}
	if opt.Timeout == 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.MaxDuration == 0 {
		opt.MaxDuration = DefaultMaxDuration
	}
	switch {
	case opt.Connections < 0:
		return opt, fmt.Errorf("loadgen: Connections %d: must be positive", opt.Connections)
	case opt.Duration < 0 || opt.WarmUp < 0 || opt.Timeout < 0 || opt.MaxDuration < 0:
		return opt, errors.New("loadgen: negative Duration, WarmUp, Timeout or MaxDuration")
	case opt.Requests < 0:
		return opt, fmt.Errorf("loadgen: Requests %d: must not be negative", opt.Requests)
	case opt.Requests > MaxRequests:
		return opt, fmt.Errorf("loadgen: Requests %d: more than the limit of %d", opt.Requests, int64(MaxRequests))
	case opt.Duration == 0 && opt.Requests == 0:
		return opt, errors.New("loadgen: unbounded run: set Duration or Requests")
	case opt.Rate < 0 || opt.Rate != opt.Rate:
		return opt, fmt.Errorf("loadgen: Rate %v: must be positive (open model) or 0 (closed model)", opt.Rate)
	case opt.Rate > 1e9:
		return opt, fmt.Errorf("loadgen: Rate %v: more than 1e9 requests/s", opt.Rate)
	case opt.WarmUp+opt.Duration > opt.MaxDuration:
		return opt, fmt.Errorf("loadgen: WarmUp+Duration %v exceeds MaxDuration %v: raise MaxDuration", opt.WarmUp+opt.Duration, opt.MaxDuration)
	case opt.WarmUp >= opt.MaxDuration:
		return opt, fmt.Errorf("loadgen: WarmUp %v leaves nothing of MaxDuration %v", opt.WarmUp, opt.MaxDuration)
	}
	if err := CheckConnections(opt.Connections); err != nil {
		return opt, fmt.Errorf("loadgen: %w", err)
	}
	return opt, nil
}

type optionsKey struct{}

// runSettings is what Run hands users through the context of Do.
type runSettings struct {
	timeout   time.Duration
	keepAlive bool
}

// RequestTimeout returns the per-request timeout of the run whose context
// ctx is (Options.Timeout, defaulted), or DefaultTimeout outside a run.
// Users must bound each Do by it.
func RequestTimeout(ctx context.Context) time.Duration {
	if s, ok := ctx.Value(optionsKey{}).(*runSettings); ok {
		return s.timeout
	}
	return DefaultTimeout
}

// KeepAlive returns Options.KeepAlive of the run whose context ctx is, and
// true outside a run.
func KeepAlive(ctx context.Context) bool {
	if s, ok := ctx.Value(optionsKey{}).(*runSettings); ok {
		return s.keepAlive
	}
	return true
}
