// Package loadtest is `stacktune bench`: it runs a load test (a plain URL or
// a scenario file) one or more times with package loadgen, scores each run
// like a contest benchmarker (package scenario) and summarises the runs
// (min, median, max). The CLI stores the runs with package history.
package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
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
	Load    loadgen.Options
	Runs    int // default 1
	Label   string
	Seed    uint64
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
	f := func(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
	return LatencyMS{Mean: f(l.Mean), P50: f(l.P50), P90: f(l.P90), P99: f(l.P99), Max: f(l.Max)}
}

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
	Stopped      string           `json:"stopped"`
	Backlog      int64            `json:"backlog,omitempty"`
}

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

// Run performs opt.Runs runs and summarises them.
func Run(ctx context.Context, opt Options) (*Summary, error) {
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
	var (
		plan   loadgen.Plan
		scorer func(*loadgen.Result) scenario.ScoreResult
		target = opt.URL
		scName string
		err    error
	)
	if opt.Scenario != "" {
		sc, err := scenario.Load(opt.Scenario)
		if err != nil {
			return nil, err
		}
		if opt.BaseURL != "" {
			if err := sc.SetBaseURL(opt.BaseURL); err != nil {
				return nil, err
			}
		}
		plan, err = sc.Plan(scenario.PlanOptions{Timeout: opt.Load.Timeout, KeepAlive: opt.Load.KeepAlive, Seed: opt.Seed, ThinkTime: opt.Load.Rate == 0})
		if err != nil {
			return nil, err
		}
		scorer, target, scName = sc.Score, sc.BaseURL, sc.Name
	} else {
		plan, err = loadgen.URLPlan(opt.URL, loadgen.URLOptions{KeepAlive: opt.Load.KeepAlive, Timeout: opt.Load.Timeout})
		if err != nil {
			return nil, err
		}
		scorer = func(r *loadgen.Result) scenario.ScoreResult {
			return scenario.Score(r, scenario.DefaultScoring, []float64{1})
		}
	}
	s := &Summary{Target: stripCredentials(target), Scenario: scName, Label: opt.Label}
	for i := 1; i <= runs; i++ {
		lo := opt.Load
		if opt.Progress != nil {
			n := i
			lo.Progress = func(p loadgen.Progress) { opt.Progress(n, p) }
		}
		res, err := loadgen.Run(ctx, plan, lo)
		if res != nil {
			s.Runs = append(s.Runs, runResult(res, scorer(res), lo.KeepAlive))
		}
		if err != nil {
			if len(s.Runs) == 0 {
				return nil, err
			}
			s.finish()
			return s, fmt.Errorf("run %d of %d: %w", i, runs, err)
		}
	}
	s.finish()
	return s, nil
}

func runResult(r *loadgen.Result, sc scenario.ScoreResult, keepAlive bool) RunResult {
	out := RunResult{
		Score: sc.Score, Passed: sc.Passed, FailReasons: sc.Reasons,
		Requests: r.Requests, Errors: r.Errors, ErrorsByKind: kinds(r.ErrorsByKind), RPS: r.RPS,
		LatencyMS: ms(r.Latency), Started: r.Started, ElapsedS: r.Elapsed.Seconds(), Model: r.Model,
		Connections: r.Connections, Rate: r.Rate, KeepAlive: keepAlive, Stopped: r.Stopped, Backlog: r.Backlog,
	}
	for _, st := range r.Steps {
		out.Steps = append(out.Steps, Step{Name: st.Name, Requests: st.Requests, Errors: st.Errors,
			ErrorsByKind: kinds(st.ErrorsByKind), RPS: st.RPS, LatencyMS: ms(st.Latency), Bytes: st.Bytes, Details: st.Details})
	}
	return out
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

// stripCredentials drops user:password@ from a URL, so reports and the
// history never show a password.
func stripCredentials(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}
