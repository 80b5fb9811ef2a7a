// Package benchrun is `stacktune bench`: it runs a load test (a plain URL or
// a scenario file) one or more times with package loadgen, scores each run
// like a contest benchmarker (package scenario) and summarises the runs
// (min, median, max). The CLI stores the runs with package history.
//
// Options.Load.MaxDuration (default loadgen.DefaultMaxDuration, 10m)
// bounds the whole of Run, every run and warm-up together: runs whose
// warm-up and duration cannot fit are refused before anything starts, each
// run gets only the time left, and a run the bound stops ends Run with a
// *BoundError.
//
// A scenario's pre_run hook (scenario.Scenario.RunPreRun) runs before each
// run, and its warm-up, within the same bound; the time it took is in
// RunResult.PreRun, never in the score. A hook that fails fails its run
// with the hook's message, and no load is sent in that run (RunResult.Stopped
// is "pre_run"); the next run, if any, calls the hook again.
//
// Responses slower than their step's slow_after are counted per step
// (Step.Slow, RunResult.Slow) and scored by the scenario (its
// penalties.slow and fail_if.slow_rate).
//
// The requests a run left unsent (the open model's backlog) or in flight at
// its end are in RunResult.Unsent and InFlight. The unsent ones and the
// stalled ones in flight (RunResult.Stalled: older at the end than the
// longest request the run completed, or all when none completed) count
// against the pass thresholds (see scenario.FailIf); the others in flight
// were cut by the end of the run. URL passwords and query values never
// reach the summary or an error: they are masked as "user:***@" and
// "?token=***" (loadgen.MaskURL).
package benchrun

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/scenario"
)

// Options configures Run. Exactly one of URL and Scenario is set.
type Options struct {
	URL      string
	Scenario string // path of a YAML or TOML scenario file
	// BaseURL overrides the scenario's base_url.
	BaseURL string
	// Load shapes every run; its MaxDuration bounds the whole of Run (all
	// runs together), not each run.
	Load  loadgen.Options
	Runs  int // default 1, at most 100
	Label string
	Seed  uint64
	// Progress is called about once a second with the run number (from 1).
	Progress func(run int, p loadgen.Progress)
}

// LatencyMS is a latency summary in milliseconds.
type LatencyMS struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

func ms(l loadgen.Latency) LatencyMS {
	f := msOf
	return LatencyMS{Mean: f(l.Mean), P50: f(l.P50), P90: f(l.P90), P99: f(l.P99), Max: f(l.Max)}
}

// msOf is d in milliseconds, to the microsecond.
func msOf(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// Step is one step of a run.
type Step struct {
	Name         string           `json:"name"`
	Requests     int64            `json:"requests"`
	Errors       int64            `json:"errors"`
	ErrorsByKind map[string]int64 `json:"errors_by_kind"`
	RPS          float64          `json:"rps"`
	LatencyMS    LatencyMS        `json:"latency_ms"`
	Bytes        int64            `json:"bytes"`
	Details      []string         `json:"error_details,omitempty"`
	// SlowAfterMS is the step's slow_after (0: none), and Slow its
	// responses that took longer.
	SlowAfterMS float64 `json:"slow_after_ms,omitempty"`
	Slow        int64   `json:"slow,omitempty"`
}

// PreRun is what a scenario's pre_run hook did before a run: reported,
// never scored.
type PreRun struct {
	// What is "POST http://127.0.0.1:8080/initialize" or "command ./init.sh".
	What      string  `json:"what"`
	ElapsedMS float64 `json:"elapsed_ms"`
	// Status is the HTTP status (0 for a command, or without a response).
	Status int `json:"status,omitempty"`
	// Error says why the hook failed; empty when it succeeded.
	Error string `json:"error,omitempty"`
}

// RunResult is one run: the shape of `stacktune bench --format json`
// (for several runs, of the median run, with the others under "runs").
type RunResult struct {
	Score        float64          `json:"score"`
	Passed       bool             `json:"passed"`
	FailReasons  []string         `json:"fail_reasons,omitempty"`
	Requests     int64            `json:"requests"`
	Errors       int64            `json:"errors"`
	ErrorsByKind map[string]int64 `json:"errors_by_kind"`
	RPS          float64          `json:"rps"`
	LatencyMS    LatencyMS        `json:"latency_ms"`
	Steps        []Step           `json:"steps"`
	Started      time.Time        `json:"started"`
	ElapsedS     float64          `json:"elapsed_s"`
	Model        string           `json:"model"`
	Connections  int              `json:"connections"`
	Rate         float64          `json:"rate,omitempty"`
	KeepAlive    bool             `json:"keepalive"`
	// Stopped is the bound that ended the run (loadgen.Result.Stopped), or
	// "pre_run" when the pre_run hook failed and no load was sent.
	Stopped string `json:"stopped"`
	// Unsent counts the requests the open model scheduled in the run
	// that were never sent (the backlog); InFlight the requests still out
	// when the run ended. Neither is in Requests or Errors: Requests +
	// Unsent + InFlight is every request scheduled (open model) or
	// started (closed model).
	Unsent   int64 `json:"unsent"`
	InFlight int64 `json:"in_flight"`
	// Stalled counts the requests of InFlight older at the end than
	// StalledAfterMS, the longest latency of the completed requests, or
	// all of them when none completed (see loadgen.Result.Stalled). The
	// unsent and stalled requests count as failed in ErrorRate, and
	// together against the unfinished limit; the other requests in
	// flight were cut by the end of the run and count in neither.
	Stalled        int64   `json:"stalled"`
	StalledAfterMS float64 `json:"stalled_after_ms"`
	// ErrorRate is (Errors + Unsent + Stalled) / (Requests + Unsent +
	// Stalled), what the error-rate threshold is checked against.
	ErrorRate float64 `json:"error_rate"`
	// Slow counts the responses slower than their step's slow_after, and
	// SlowRate their share of the requests of those steps (what
	// fail_if.slow_rate is checked against).
	Slow     int64   `json:"slow,omitempty"`
	SlowRate float64 `json:"slow_rate,omitempty"`
	// PreRun is what the scenario's pre_run hook did before the run.
	PreRun *PreRun `json:"pre_run,omitempty"`
	// Engine is the load engine that measured the run when it was not
	// stacktune's own ("locust", "k6": stacktune bench import).
	Engine string `json:"engine,omitempty"`
}

// StoppedPreRun is RunResult.Stopped of a run whose pre_run hook failed.
const StoppedPreRun = "pre_run"

// Spread is the min, median and max of a figure over the runs.
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// Summary is what Run returns.
type Summary struct {
	RunResult
	Target   string      `json:"target"`
	Scenario string      `json:"scenario,omitempty"`
	Label    string      `json:"label,omitempty"`
	Runs     []RunResult `json:"runs,omitempty"`
	// Spreads are over the runs, when there are several.
	Spreads map[string]Spread `json:"spreads,omitempty"`
}

// BoundError is returned when Options.Load.MaxDuration, the bound on the
// whole of Run, refuses runs or stops one. errors.Is(err,
// loadgen.ErrMaxDuration) holds.
type BoundError struct {
	// Bound is the bound on the whole of Run.
	Bound time.Duration
	// Run (from 1) is the run stopped or refused; 0 when the runs were
	// refused before any started. Runs is how many were asked for.
	Run, Runs int
	// Refused says run Run was not started: the bound left only Left,
	// not more than Need (warm-up + duration; 0 for a run bounded by its
	// request count). Otherwise the bound stopped run Run.
	Refused    bool
	Need, Left time.Duration
}

func (e *BoundError) Error() string {
	what := fmt.Sprintf("the %v bound on the whole bench (all runs together)", e.Bound)
	switch {
	case e.Run == 0:
		runs := "1 run"
		if e.Runs != 1 {
			runs = fmt.Sprintf("%d runs", e.Runs)
		}
		return fmt.Sprintf("%s × (warm-up + duration %v, plus about %v each to start and stop) exceed %s", runs, e.Need, runOverhead, what)
	case e.Refused && e.Need > 0:
		return fmt.Sprintf("%s leaves %v, not more than run %d of %d needs (warm-up + duration %v)", what, e.Left.Round(time.Millisecond), e.Run, e.Runs, e.Need)
	case e.Refused:
		return fmt.Sprintf("%s was used up before run %d of %d", what, e.Run, e.Runs)
	}
	return fmt.Sprintf("run %d of %d stopped at %s", e.Run, e.Runs, what)
}

// Unwrap makes errors.Is(err, loadgen.ErrMaxDuration) hold.
func (e *BoundError) Unwrap() error { return loadgen.ErrMaxDuration }

// runOverhead is what Run allows per run, beyond its warm-up and
// duration, to create its users, start and stop, when it checks the runs
// against the bound up front.
var runOverhead = time.Second

// maskedError masks URLs in an error's message (loadgen.MaskCredentials:
// passwords and query values) and keeps the error for errors.Is and
// errors.As.
type maskedError struct{ err error }

func (e *maskedError) Error() string { return loadgen.MaskCredentials(e.err.Error()) }
func (e *maskedError) Unwrap() error { return e.err }

// MaskError returns err with URL passwords and query values masked in
// its message ("user:***@", "?token=***"); nil stays nil.
func MaskError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*maskedError); ok {
		return err
	}
	return &maskedError{err}
}

// Run performs opt.Runs runs and summarises them. An error comes with the
// summary of the runs done when a run was stopped (canceled, or by the
// bound on the whole of Run); its message never holds a URL password.
func Run(ctx context.Context, opt Options) (*Summary, error) {
	s, err := run(ctx, opt)
	return s, MaskError(err)
}

func run(ctx context.Context, opt Options) (*Summary, error) {
	start := time.Now()
	if (opt.URL == "") == (opt.Scenario == "") {
		return nil, errors.New("give either a URL or a scenario file")
	}
	runs := opt.Runs
	if runs <= 0 {
		runs = 1
	}
	if runs > 100 {
		return nil, fmt.Errorf("%d runs: at most 100", runs)
	}
	bound := opt.Load.MaxDuration
	if bound == 0 {
		bound = loadgen.DefaultMaxDuration
	}
	if bound < 0 {
		return nil, fmt.Errorf("negative MaxDuration %v", bound)
	}
	need := opt.Load.WarmUp + opt.Load.Duration
	if need > 0 && need+runOverhead > bound/time.Duration(runs) {
		return nil, &BoundError{Bound: bound, Runs: runs, Need: need}
	}
	deadline := start.Add(bound)
	var (
		// workload returns the workload of the next run and its scorer.
		workload func() (loadgen.Workload, func(*loadgen.Result) scenario.ScoreResult)
		sc       *scenario.Scenario
		target   = opt.URL
		scName   string
	)
	if opt.Scenario != "" {
		var err error
		sc, err = scenario.Load(opt.Scenario)
		if err != nil {
			return nil, err
		}
		if opt.BaseURL != "" {
			if err := sc.SetBaseURL(opt.BaseURL); err != nil {
				return nil, err
			}
		}
		plan, err := sc.Plan(scenario.WorkloadOptions{Timeout: opt.Load.Timeout, KeepAlive: opt.Load.KeepAlive, Seed: opt.Seed, ThinkTime: opt.Load.Rate == 0})
		if err != nil {
			return nil, err
		}
		workload = func() (loadgen.Workload, func(*loadgen.Result) scenario.ScoreResult) {
			w, tally := plan.Run()
			return w, func(r *loadgen.Result) scenario.ScoreResult { return sc.ScoreRun(r, tally) }
		}
		target, scName = sc.BaseURL, sc.Name
	} else {
		plan, err := loadgen.URLWorkload(opt.URL, loadgen.URLOptions{KeepAlive: opt.Load.KeepAlive, Timeout: opt.Load.Timeout})
		if err != nil {
			return nil, err
		}
		scorer := func(r *loadgen.Result) scenario.ScoreResult {
			return scenario.Score(r, scenario.DefaultScoring, []float64{1})
		}
		workload = func() (loadgen.Workload, func(*loadgen.Result) scenario.ScoreResult) { return plan, scorer }
	}
	s := &Summary{Target: loadgen.MaskURL(target), Scenario: scName, Label: loadgen.MaskCredentials(opt.Label)}
	// stopped ends Run with the runs done so far, if any.
	stopped := func(err error) (*Summary, error) {
		if len(s.Runs) == 0 {
			return nil, err
		}
		s.finish()
		return s, err
	}
	for i := 1; i <= runs; i++ {
		lo := opt.Load
		left := time.Until(deadline)
		if left <= 0 || (need > 0 && left <= need) {
			return stopped(&BoundError{Bound: bound, Run: i, Runs: runs, Refused: true, Need: need, Left: max(left, 0)})
		}
		var hook *PreRun
		if sc != nil && sc.PreRun != nil {
			hctx, cancel := context.WithDeadline(ctx, deadline)
			started := time.Now()
			hr, herr := sc.RunPreRun(hctx)
			cancel()
			hook = preRun(hr, herr)
			switch {
			case herr != nil && ctx.Err() != nil:
				return stopped(fmt.Errorf("run %d of %d: %w", i, runs, herr))
			case herr != nil && !time.Now().Before(deadline):
				return stopped(&BoundError{Bound: bound, Run: i, Runs: runs})
			case herr != nil:
				s.Runs = append(s.Runs, hookFailed(started, herr, hook, lo))
				continue
			}
			left = time.Until(deadline)
			if left <= 0 || (need > 0 && left <= need) {
				return stopped(&BoundError{Bound: bound, Run: i, Runs: runs, Refused: true, Need: need, Left: max(left, 0)})
			}
		}
		lo.MaxDuration = left
		if opt.Progress != nil {
			n := i
			lo.Progress = func(p loadgen.Progress) { opt.Progress(n, p) }
		}
		plan, scorer := workload()
		res, err := loadgen.Run(ctx, plan, lo)
		if res != nil {
			rr := runResult(res, scorer(res), lo.KeepAlive)
			rr.PreRun = hook
			if sc != nil {
				for j, d := range sc.SlowAfters() {
					if j < len(rr.Steps) && d > 0 {
						rr.Steps[j].SlowAfterMS = msOf(d)
					}
				}
			}
			s.Runs = append(s.Runs, rr)
		}
		if errors.Is(err, loadgen.ErrMaxDuration) {
			return stopped(&BoundError{Bound: bound, Run: i, Runs: runs})
		}
		if err != nil {
			if len(s.Runs) == 0 {
				return nil, err
			}
			return stopped(fmt.Errorf("run %d of %d: %w", i, runs, err))
		}
	}
	s.finish()
	return s, nil
}

// preRun reports a hook's result; nil without a hook.
func preRun(hr *scenario.HookResult, err error) *PreRun {
	if hr == nil {
		if err == nil {
			return nil
		}
		return &PreRun{Error: loadgen.MaskCredentials(err.Error())}
	}
	p := &PreRun{What: loadgen.MaskCredentials(hr.What), ElapsedMS: msOf(hr.Elapsed), Status: hr.Status}
	if err != nil {
		p.Error = loadgen.MaskCredentials(err.Error())
	}
	return p
}

// hookFailed is a run whose pre_run hook failed: no load was sent.
func hookFailed(started time.Time, err error, hook *PreRun, lo loadgen.Options) RunResult {
	model, conns := "closed", lo.Connections
	if lo.Rate > 0 {
		model = "open"
	}
	if conns == 0 {
		conns = loadgen.DefaultConnections
	}
	return RunResult{
		FailReasons:  []string{loadgen.MaskCredentials(err.Error()) + " (no load sent)"},
		ErrorsByKind: map[string]int64{}, Started: started, Model: model, Connections: conns, Rate: lo.Rate,
		KeepAlive: lo.KeepAlive, Stopped: StoppedPreRun, PreRun: hook,
	}
}

func runResult(r *loadgen.Result, sc scenario.ScoreResult, keepAlive bool) RunResult {
	out := RunResult{
		Score: sc.Score, Passed: sc.Passed, FailReasons: sc.Reasons,
		Requests: r.Requests, Errors: r.Errors, ErrorsByKind: kinds(r.ErrorsByKind), RPS: r.RPS,
		LatencyMS: ms(r.Latency), Started: r.Started, ElapsedS: r.Elapsed.Seconds(), Model: r.Model,
		Connections: r.Connections, Rate: r.Rate, KeepAlive: keepAlive, Stopped: r.Stopped,
		Unsent: r.Unsent, InFlight: r.InFlight, Stalled: r.Stalled, StalledAfterMS: msOf(r.StalledAfter), ErrorRate: sc.ErrorRate,
		Slow: sc.Slow, SlowRate: sc.SlowRate,
	}
	for _, st := range r.Steps {
		details := make([]string, len(st.Details))
		for i, d := range st.Details {
			details[i] = loadgen.MaskCredentials(d)
		}
		if len(details) == 0 {
			details = nil
		}
		out.Steps = append(out.Steps, Step{Name: loadgen.MaskCredentials(st.Name), Requests: st.Requests, Errors: st.Errors,
			ErrorsByKind: kinds(st.ErrorsByKind), RPS: st.RPS, LatencyMS: ms(st.Latency), Bytes: st.Bytes, Details: details,
			Slow: sc.SlowByStep[st.Name]})
	}
	return out
}

// FromResult is the run of a result measured elsewhere (package engines)
// and scored by the scenario, as Run records its own: the steps' slow
// counts and slow_after come from sc and slowAfters (Workload order).
func FromResult(r *loadgen.Result, sc scenario.ScoreResult, keepAlive bool, slowAfters []time.Duration) RunResult {
	rr := runResult(r, sc, keepAlive)
	for j, d := range slowAfters {
		if j < len(rr.Steps) && d > 0 {
			rr.Steps[j].SlowAfterMS = msOf(d)
		}
	}
	return rr
}

// Summarize summarises runs measured elsewhere as Run summarises its own:
// the median run's figures, the spreads over several.
func Summarize(target, scenarioName, label string, runs []RunResult) *Summary {
	s := &Summary{Target: loadgen.MaskURL(target), Scenario: scenarioName, Label: loadgen.MaskCredentials(label), Runs: runs}
	if len(runs) > 0 {
		s.finish()
	}
	return s
}

func kinds(m map[loadgen.ErrKind]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}

// finish picks the median run (by score, then by req/s) as the summary's
// own figures and computes the spreads.
func (s *Summary) finish() {
	idx := make([]int, len(s.Runs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ra, rb := &s.Runs[idx[a]], &s.Runs[idx[b]]
		if ra.Score != rb.Score {
			return ra.Score < rb.Score
		}
		return ra.RPS < rb.RPS
	})
	s.RunResult = s.Runs[idx[(len(idx)-1)/2]]
	if len(s.Runs) == 1 {
		s.Runs = nil
		return
	}
	s.Spreads = map[string]Spread{
		"score":          spread(s.Runs, func(r *RunResult) float64 { return r.Score }),
		"rps":            spread(s.Runs, func(r *RunResult) float64 { return r.RPS }),
		"latency_p99_ms": spread(s.Runs, func(r *RunResult) float64 { return r.LatencyMS.P99 }),
		"errors":         spread(s.Runs, func(r *RunResult) float64 { return float64(r.Errors) }),
	}
	for _, r := range s.Runs {
		for _, st := range r.Steps {
			if st.SlowAfterMS > 0 {
				s.Spreads["slow"] = spread(s.Runs, func(r *RunResult) float64 { return float64(r.Slow) })
			}
		}
	}
}

func spread(runs []RunResult, f func(*RunResult) float64) Spread {
	vs := make([]float64, len(runs))
	for i := range runs {
		vs[i] = f(&runs[i])
	}
	sort.Float64s(vs)
	med := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		med = (vs[len(vs)/2-1] + med) / 2
	}
	return Spread{Min: vs[0], Median: med, Max: vs[len(vs)-1]}
}
