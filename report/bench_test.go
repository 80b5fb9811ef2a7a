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
