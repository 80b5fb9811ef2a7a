package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/stacktune/stacktune/benchrun"
)

// BenchFormats are the formats Bench renders.
var BenchFormats = []string{Text, JSON}

func msDur(v float64) string { return Duration(v / 1e3) }

// Bench renders a load-test summary.
func Bench(w io.Writer, s *benchrun.Summary, format string) error {
	if s == nil {
		s = &benchrun.Summary{}
	}
	switch format {
	case JSON:
		return WriteJSON(w, s)
	case Text, "":
	default:
		return CheckFormat(format, BenchFormats...)
	}
	ew := &errWriter{w: w}
	what := s.Target
	if s.Scenario != "" {
		what = fmt.Sprintf("scenario %s on %s", s.Scenario, s.Target)
	}
	model := fmt.Sprintf("closed model, %d connections", s.Connections)
	if s.Model == "open" {
		model = fmt.Sprintf("open model at %s requests/s (latency from the intended send time), %d connections", PerSecond(s.Rate), s.Connections)
	}
	ka := "keep-alive"
	if !s.KeepAlive {
		ka = "a new connection per request"
	}
	ew.printf("# %s: %s, %s, %s\n", what, model, ka, Duration(s.ElapsedS))
	if s.Label != "" {
		ew.printf("# label: %s\n", s.Label)
	}
	if s.Engine != "" {
		ew.printf("# measured by %s, scored by stacktune\n", s.Engine)
	}
	if h := s.PreRun; h != nil {
		if h.Error != "" {
			ew.printf("# pre-run: %s failed after %s (not scored)\n", h.What, msDur(h.ElapsedMS))
		} else if h.Status != 0 {
			ew.printf("# pre-run: %s: status %d in %s (not scored)\n", h.What, h.Status, msDur(h.ElapsedMS))
		} else {
			ew.printf("# pre-run: %s in %s (not scored)\n", h.What, msDur(h.ElapsedMS))
		}
	}
	verdict := "PASSED"
	if !s.Passed {
		verdict = "FAILED: " + strings.Join(s.FailReasons, "; ")
	}
	ew.printf("# score %s, %s\n", trimFloat(s.Score), verdict)
	if sp, ok := s.Spreads["score"]; ok {
		rps := s.Spreads["rps"]
		p99 := s.Spreads["latency_p99_ms"]
		ew.printf("# %d runs: score min %s / median %s / max %s; req/s %s / %s / %s; p99 %s / %s / %s\n", len(s.Runs),
			trimFloat(sp.Min), trimFloat(sp.Median), trimFloat(sp.Max), PerSecond(rps.Min), PerSecond(rps.Median), PerSecond(rps.Max),
			msDur(p99.Min), msDur(p99.Median), msDur(p99.Max))
	}
	ew.printf("# requests %s (%s/s), errors %s", Count(s.Requests), PerSecond(s.RPS), Count(s.Errors))
	if len(s.ErrorsByKind) > 0 {
		ew.printf(" (%s)", countsLine(s.ErrorsByKind, 0))
	}
	if s.Unsent != 0 || s.InFlight != 0 || s.Stalled != 0 {
		ew.printf(", unsent %s, in flight at the end %s (%s stalled)", Count(s.Unsent), Count(s.InFlight), Count(s.Stalled))
	}
	ew.printf("\n# latency: mean %s, p50 %s, p90 %s, p99 %s, max %s\n", msDur(s.LatencyMS.Mean), msDur(s.LatencyMS.P50),
		msDur(s.LatencyMS.P90), msDur(s.LatencyMS.P99), msDur(s.LatencyMS.Max))
	slowSteps := false
	var slowOf int64
	for _, st := range s.Steps {
		if st.SlowAfterMS > 0 {
			slowSteps = true
			slowOf += st.Requests
		}
	}
	if slowSteps {
		ew.printf("# slow: %s responses over their step's slow_after (%s of %s requests)\n", Count(s.Slow), Percent(s.SlowRate), Count(slowOf))
	}
	ew.printf("\n")
	sw := sectionWriter{e: ew}
	heads := []string{"Requests", "Req/s", "Errors", "p50", "p90", "p99", "Max", "Bytes", "Step"}
	if slowSteps {
		// Slow responses and the step's slow_after ("-" for a step without).
		heads = []string{"Requests", "Req/s", "Errors", "Slow", "After", "p50", "p90", "p99", "Max", "Bytes", "Step"}
	}
	var rows [][]string
	for _, st := range s.Steps {
		row := []string{Count(st.Requests), PerSecond(st.RPS), Count(st.Errors)}
		if slowSteps {
			slow, after := "-", "-"
			if st.SlowAfterMS > 0 {
				slow, after = Count(st.Slow), msDur(st.SlowAfterMS)
			}
			row = append(row, slow, after)
		}
		rows = append(rows, append(row, msDur(st.LatencyMS.P50), msDur(st.LatencyMS.P90), msDur(st.LatencyMS.P99),
			msDur(st.LatencyMS.Max), Bytes(st.Bytes), st.Name))
	}
	sw.table(heads, strings.Repeat(string(colRight), len(heads)-1)+string(colLeft), rows)
	var details []string
	for _, st := range s.Steps {
		for _, d := range st.Details {
			details = append(details, st.Name+": "+d)
		}
	}
	if len(details) > 0 {
		sort.Strings(details)
		ew.printf("\nFirst errors:\n")
		sw.list(details)
	}
	return ew.err
}

func trimFloat(v float64) string {
	if v == float64(int64(v)) {
		return Count(int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

// ProgressLine renders one live progress line for a terminal.
func ProgressLine(run, runs int, elapsed, total time.Duration, requests, errors int64, rps float64, p99 time.Duration, warmUp bool) string {
	phase := ""
	if warmUp {
		phase = " warm-up"
	}
	of := ""
	if runs > 1 {
		of = fmt.Sprintf("run %d/%d ", run, runs)
	}
	bound := ""
	if total > 0 {
		bound = "/" + Duration(total.Seconds())
	}
	return fmt.Sprintf("%s%s%s%s  %s req  %s req/s  %s errors  p99 %s", of, Duration(elapsed.Seconds()), bound, phase,
		Count(requests), PerSecond(rps), Count(errors), Duration(p99.Seconds()))
}
