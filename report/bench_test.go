package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/benchrun"
)

// TestBenchUnfinishedLine: the "# requests" line shows the requests left
// unsent, in flight at the end and stalled whenever one is non-zero, after
// the errors by kind, with grouped counts.
func TestBenchUnfinishedLine(t *testing.T) {
	tests := []struct {
		name string
		run  benchrun.RunResult
		want string // the whole "# requests" line
	}{
		{name: "nothing unfinished: no counts",
			run:  benchrun.RunResult{Requests: 1200, RPS: 40},
			want: "# requests 1,200 (40/s), errors 0"},
		{name: "in flight cut by the end, none stalled",
			run:  benchrun.RunResult{Requests: 240, RPS: 8, InFlight: 8},
			want: "# requests 240 (8/s), errors 0, unsent 0, in flight at the end 8 (0 stalled)"},
		{name: "saturated open model, after the errors by kind",
			run: benchrun.RunResult{Requests: 10, RPS: 3.3, Errors: 2, ErrorsByKind: map[string]int64{"timeout": 2},
				Unsent: 2_999_980, InFlight: 10, Stalled: 10},
			want: "# requests 10 (3.3/s), errors 2 (timeout: 2), unsent 2,999,980, in flight at the end 10 (10 stalled)"},
		{name: "server never answers",
			run:  benchrun.RunResult{InFlight: 4, Stalled: 4},
			want: "# requests 0 (0/s), errors 0, unsent 0, in flight at the end 4 (4 stalled)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Bench(&b, &benchrun.Summary{RunResult: tt.run, Target: "http://h/"}, Text); err != nil {
				t.Fatal(err)
			}
			var got string
			for _, line := range strings.Split(b.String(), "\n") {
				if strings.HasPrefix(line, "# requests ") {
					got = line
				}
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q\nin\n%s", got, tt.want, b.String())
			}
		})
	}
}

// TestBenchPreRunAndSlow: the pre-run hook's line, the slow responses'
// line and the Slow and After columns show only when a run has them.
func TestBenchPreRunAndSlow(t *testing.T) {
	steps := []benchrun.Step{
		{Name: "home", Requests: 150, SlowAfterMS: 3000, Slow: 3},
		{Name: "post", Requests: 50},
	}
	tests := []struct {
		name string
		run  benchrun.RunResult
		want []string // lines (or their starts, ending in "…") in order
		not  []string // in no line
	}{
		{name: "neither: the output as before",
			run:  benchrun.RunResult{Requests: 200, Steps: []benchrun.Step{{Name: "home", Requests: 200}}},
			want: []string{"  Requests  Req/s  Errors  p50  p90  p99  Max  Bytes  Step"},
			not:  []string{"# pre-run", "# slow", "Slow"}},
		{name: "HTTP hook",
			run:  benchrun.RunResult{Requests: 1, PreRun: &benchrun.PreRun{What: "POST http://h/initialize", ElapsedMS: 1234.5, Status: 200}},
			want: []string{"# pre-run: POST http://h/initialize: status 200 in 1.23s (not scored)"}},
		{name: "command hook",
			run:  benchrun.RunResult{Requests: 1, PreRun: &benchrun.PreRun{What: "command ./init.sh --all", ElapsedMS: 80}},
			want: []string{"# pre-run: command ./init.sh --all in 80.0ms (not scored)"}},
		{name: "failed hook",
			run: benchrun.RunResult{FailReasons: []string{"pre_run POST http://h/initialize: status 500, want 200 (no load sent)"},
				PreRun: &benchrun.PreRun{What: "POST http://h/initialize", ElapsedMS: 12, Status: 500, Error: "pre_run POST http://h/initialize: status 500, want 200"}},
			want: []string{"# pre-run: POST http://h/initialize failed after 12.0ms (not scored)",
				"# score 0, FAILED: pre_run POST http://h/initialize: status 500, want 200 (no load sent)"}},
		{name: "slow responses",
			run: benchrun.RunResult{Requests: 200, Slow: 3, SlowRate: 0.02, Steps: steps},
			want: []string{"# slow: 3 responses over their step's slow_after (2.0% of 150 requests)",
				"  Requests  Req/s  Errors  Slow  After  p50  p90  p99  Max  Bytes  Step",
				"       150      0       0     3  3.00s    0    0    0    0    0 B  home",
				"        50      0       0     -      -    0    0    0    0    0 B  post"}},
		{name: "hostile hook text is cleaned",
			run:  benchrun.RunResult{PreRun: &benchrun.PreRun{What: "command ./x\x1b[2J\nrm", ElapsedMS: 1}},
			want: []string{"# pre-run: command ./x…"},
			not:  []string{"\x1b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Bench(&b, &benchrun.Summary{RunResult: tt.run, Target: "http://h/"}, Text); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(b.String(), "\n")
			i := 0
			for _, want := range tt.want {
				for ; i < len(lines); i++ {
					if lines[i] == want || (strings.HasSuffix(want, "…") && strings.HasPrefix(lines[i], strings.TrimSuffix(want, "…"))) {
						break
					}
				}
				if i == len(lines) {
					t.Errorf("no line %q (in order) in\n%s", want, b.String())
					return
				}
			}
			for _, no := range tt.not {
				if strings.Contains(b.String(), no) {
					t.Errorf("output has %q:\n%s", no, b.String())
				}
			}
		})
	}
}
