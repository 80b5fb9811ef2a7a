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
		var f float64
		if json.Unmarshal(v, &f) == nil {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%s is not a finite number", k)
			}
			out[k] = f
		}
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
	if len(sum.Metrics) > maxRows {
		return nil, fmt.Errorf("%s: more than %d metrics: %w", name, maxRows, ErrFormat)
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
		c := v["count"]
		if c != math.Trunc(c) || c > 1e15 {
			return 0, fmt.Errorf("%s: metric %s: count %v is not a count: %w", name, metric, c, ErrFormat)
		}
		return int64(c), nil
	}
	latency := func(metric string) loadgen.Latency {
		v := vals[metric]
		return loadgen.Latency{Mean: msDur(v["avg"]), P50: msDur(v["med"]), P90: msDur(v["p(90)"]), P99: msDur(v["p(99)"]), Max: msDur(v["max"])}
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
				st.Errors += n
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
		st.Latency = latency(k6Metric(i, "latency"))
	}
	r.Latency = latency("stacktune_latency")
	var err error
	if r.Unsent, err = count("dropped_iterations"); err != nil {
		return nil, err
	}
	total, _ := count("stacktune_requests")
	switch {
	case sum.State != nil && sum.State.TestRunDurationMs > 0:
		r.Elapsed = msDur(sum.State.TestRunDurationMs)
	case vals["stacktune_requests"]["rate"] > 0:
		r.Elapsed = time.Duration(float64(total) / vals["stacktune_requests"]["rate"] * float64(time.Second))
	}
	finish(r)
	if r.Requests != total {
		return nil, fmt.Errorf("%s: the steps' requests add up to %d, stacktune_requests says %d: %w", name, r.Requests, total, ErrFormat)
	}
	return im, nil
}
