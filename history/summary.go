package history

import (
	"encoding/json"
	"time"

	"github.com/stacktune/stacktune/benchrun"
)

// FromSummary turns a bench summary into one history record per run.
func FromSummary(s *benchrun.Summary) []Run {
	runs := s.Runs
	if len(runs) == 0 {
		runs = []benchrun.RunResult{s.RunResult}
	}
	ms := func(v float64) time.Duration { return time.Duration(v * 1e6) }
	var out []Run
	for _, r := range runs {
		details, _ := json.Marshal(r) // plain data: cannot fail
		out = append(out, Run{
			Label: s.Label, Started: r.Started, Target: s.Target, Scenario: s.Scenario,
			Score: r.Score, Passed: r.Passed, Requests: r.Requests, Errors: r.Errors, RPS: r.RPS,
			P50: ms(r.LatencyMS.P50), P90: ms(r.LatencyMS.P90), P99: ms(r.LatencyMS.P99), Max: ms(r.LatencyMS.Max),
			Details: details,
		})
	}
	return out
}
