package engines

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/scenario"
)

// k6Summary is what ImportK6 reads of a k6 summary: the legacy
// --summary-export file ({"metrics": {"name": {"count": 1, "rate": 2}}})
// and the data handleSummary receives ({"metrics": {"name": {"values":
// {...}}}, "state": {"testRunDurationMs": ...}}) both fit.
type k6Summary struct {
	Metrics map[string]json.RawMessage `json:"metrics"`
	State   *struct {
		TestRunDurationMs float64 `json:"testRunDurationMs"`
	} `json:"state"`
}

// k6Values are a metric's values, flattened.
type k6Values map[string]float64

func parseK6Metric(raw json.RawMessage) (k6Values, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if v, ok := m["values"]; ok {
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, err
		}
	}
	out := k6Values{}
	for k, v := range m {
		if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
			continue // not a number: thresholds, a type, ...
		}
		var f float64
		if err := json.Unmarshal(v, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			// 1e999 does not fit a float64: an error, not a
			// value left out (a count left out is 0).
			return nil, fmt.Errorf("%s %s is not a finite number", k, v)
		}
		out[k] = f
	}
	return out, nil
}

// ImportK6 reads a k6 summary of a script K6 exported: the per-step
// counters and trends, stacktune_latency for the run's latency, and
// dropped_iterations (the open model's iterations k6 could not start in
// time) as unsent requests. The elapsed time is the summary's test run
// duration, or stacktune_requests' count over its rate.
func ImportK6(path string, s *scenario.Scenario, opt ImportOptions) (*Imported, error) {
	b, err := readBounded(path)
	if err != nil {
		return nil, fmt.Errorf("k6 summary: %w", err)
	}
	return k6Import(path, b, s, opt)
}

func k6Import(name string, b []byte, s *scenario.Scenario, opt ImportOptions) (*Imported, error) {
	var sum k6Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		return nil, fmt.Errorf("%s: %w (%w)", name, err, ErrFormat)
	}
	if sum.Metrics == nil {
		return nil, fmt.Errorf("%s: no \"metrics\": not a k6 summary: %w", name, ErrFormat)
	}
	if len(sum.Metrics) > MaxRows {
		return nil, fmt.Errorf("%s: more than %d metrics (engines.MaxRows): %w", name, MaxRows, ErrFormat)
	}
	vals := map[string]k6Values{}
	for k, raw := range sum.Metrics {
		v, err := parseK6Metric(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: metric %s: %w (%w)", name, k, err, ErrFormat)
		}
		for stat, f := range v {
			if f < 0 && stat != "value" {
				return nil, fmt.Errorf("%s: metric %s: %s %v is negative: %w", name, k, stat, f, ErrFormat)
			}
		}
		vals[k] = v
	}
	if _, ok := vals["stacktune_requests"]; !ok {
		return nil, fmt.Errorf("%s: no stacktune_requests metric: not the summary of a script stacktune exported (or no request was made): %w", name, ErrFormat)
	}
	// Every stacktune_NN_ metric must name a step of this scenario.
	names := s.StepNames()
	for k := range vals {
		rest, ok := strings.CutPrefix(k, "stacktune_")
		if !ok || len(rest) < 3 || rest[0] < '0' || rest[0] > '9' {
			continue
		}
		var i int
		if _, err := fmt.Sscanf(rest, "%d_", &i); err != nil || i >= len(names) {
			return nil, fmt.Errorf("%s: metric %s: scenario %s has %d steps: import the summary of this scenario's export: %w", name, k, s.Name, len(names), ErrFormat)
		}
	}
	count := func(metric string) (int64, error) {
		v, ok := vals[metric]
		if !ok {
			return 0, nil
		}
		n, err := floatCount(v["count"])
		if err != nil {
			return 0, fmt.Errorf("%s: metric %s: count %w: %w", name, metric, err, ErrFormat)
		}
		return n, nil
	}
	latency := func(metric string) (loadgen.Latency, error) {
		v := vals[metric]
		var l loadgen.Latency
		for _, c := range []struct {
			stat string
			d    *time.Duration
		}{{"avg", &l.Mean}, {"med", &l.P50}, {"p(90)", &l.P90}, {"p(99)", &l.P99}, {"max", &l.Max}} {
			var err error
			if *c.d, err = msDuration(v[c.stat]); err != nil {
				return l, fmt.Errorf("%s: metric %s: %s %w: %w", name, metric, c.stat, err, ErrFormat)
			}
		}
		return l, nil
	}
	r := newResult(s, opt)
	im := &Imported{Engine: "k6", Result: r, Slow: make([]int64, len(r.Steps))}
	for i := range r.Steps {
		st := &r.Steps[i]
		var err error
		if st.Requests, err = count(k6Metric(i, "requests")); err != nil {
			return nil, err
		}
		for _, k := range errorKinds {
			n, err := count(k6Metric(i, "fail_"+string(k)))
			if err != nil {
				return nil, err
			}
			if n > 0 {
				st.ErrorsByKind[k] = n
				st.Errors += n // a few kinds, each at most maxCount
			}
		}
		if st.Errors > st.Requests {
			return nil, fmt.Errorf("%s: step %s: %d failures of %d requests: %w", name, st.Name, st.Errors, st.Requests, ErrFormat)
		}
		if st.Bytes, err = count(k6Metric(i, "bytes")); err != nil {
			return nil, err
		}
		if im.Slow[i], err = count(k6Metric(i, "slow")); err != nil {
			return nil, err
		}
		if st.Latency, err = latency(k6Metric(i, "latency")); err != nil {
			return nil, err
		}
	}
	var err error
	if r.Latency, err = latency("stacktune_latency"); err != nil {
		return nil, err
	}
	if r.Unsent, err = count("dropped_iterations"); err != nil {
		return nil, err
	}
	total, err := count("stacktune_requests")
	if err != nil {
		return nil, err
	}
	switch rate := vals["stacktune_requests"]["rate"]; {
	case sum.State != nil && sum.State.TestRunDurationMs != 0:
		if r.Elapsed, err = msDuration(sum.State.TestRunDurationMs); err != nil {
			return nil, fmt.Errorf("%s: state: testRunDurationMs %w: %w", name, err, ErrFormat)
		}
	case rate > 0:
		if r.Elapsed, err = secDuration(float64(total) / rate); err != nil {
			return nil, fmt.Errorf("%s: the run's length, stacktune_requests' count %d over its rate %v: %w: %w", name, total, rate, err, ErrFormat)
		}
	}
	if err := finish(name, r); err != nil {
		return nil, err
	}
	if r.Requests != total {
		return nil, fmt.Errorf("%s: the steps' requests add up to %d, stacktune_requests says %d: %w", name, r.Requests, total, ErrFormat)
	}
	return im, nil
}
