package history

import (
	"encoding/json"
	"strings"
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
			Details: details, Duration: time.Duration(r.ElapsedS * float64(time.Second)),
			Failure: failure(r),
		})
		if r.PreRun != nil {
			out[len(out)-1].DataReset = r.PreRun.What
		}
	}
	return out
}

// Meta is what a command knows of its runs beyond their results; Set
// writes it into each run it records.
type Meta struct {
	Command      string
	ScenarioHash string
	DataReset    string
	AppCommit    string
	Versions     map[string]string
	Session      int64
}

// Set fills r's ledger fields from m (the fields m has; r's own
// DataReset, when set, is kept).
func (m Meta) Set(r *Run) {
	if m.Command != "" {
		r.Command = m.Command
	}
	if m.ScenarioHash != "" {
		r.ScenarioHash = m.ScenarioHash
	}
	if m.DataReset != "" && r.DataReset == "" {
		r.DataReset = m.DataReset
	}
	if m.AppCommit != "" {
		r.AppCommit = m.AppCommit
	}
	if len(m.Versions) > 0 && len(r.Versions) == 0 {
		r.Versions = m.Versions
	}
	if m.Session != 0 {
		r.Session = m.Session
	}
}

func failure(r benchrun.RunResult) string {
	if r.Passed {
		return ""
	}
	if len(r.FailReasons) == 0 {
		return "failed"
	}
	return strings.Join(r.FailReasons, "; ")
}
