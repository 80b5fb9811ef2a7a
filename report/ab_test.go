package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/tune"
)

func TestAB(t *testing.T) {
	d := &abtest.Decision{Level: 0.95, Reason: "better: the interval lies above 1"}
	for _, tc := range []struct {
		name   string
		r      *tune.ABResult
		format string
		has    []string
		hasNot []string
	}{
		{"better, text", &tune.ABResult{Ratio: 4.9, Interval: [2]float64{4.27, 5.4}, Decision: tune.CodeBetter, Detectable: 0.116, Test: d,
			A: []float64{62, 68}, B: []float64{290, 323}, LabelA: "main", LabelB: "fix-n1", State: "b"}, Text,
			[]string{"Result: fix-n1 against main, interleaved: 4.90x (95% interval 4.27x to 5.40x): better, 2 runs each; it could tell about ±12% from noise",
				"Runs of main: 62 / 68", "The stack is left as fix-n1"}, nil},
		{"noise floor within noise, text", &tune.ABResult{Ratio: 4.9, Interval: [2]float64{4.27, 5.4}, Decision: tune.CodeBetter, Detectable: 0.116, Test: d,
			LabelA: "main", LabelB: "fix-n1", Noise: &tune.NoiseTry{RunS: 1, Runs: 8, Interval: [2]float64{0.94, 1.07}, Width: 0.07, Verdict: abtest.WithinNoise,
				Causes: []tune.NoiseCause{{Code: tune.CauseWarmUp, Value: 0.61}}}}, Text,
			[]string{"Noise floor (A against itself, 8 runs of 1s): within noise (interval 0.94x to 1.07x); it could tell about ±7% from noise; seen: the first run scored 0.61x the others (a warm-up effect)"},
			[]string{"told apart"}},
		{"A told apart from itself, markdown", &tune.ABResult{Ratio: 1.3, Interval: [2]float64{1.1, 1.5}, Decision: tune.CodeBetter, Test: d, LabelA: "a", LabelB: "b",
			Noise: &tune.NoiseTry{RunS: 0.5, Runs: 8, Interval: [2]float64{1.12, 1.4}, Verdict: abtest.Better,
				Causes: []tune.NoiseCause{{Code: tune.CauseToldApart, Value: 1.25}, {Code: tune.CauseOtherProcesses, Value: 1.9,
					Processes: []collect.ProcessUse{{PID: 42, Comm: "<b>make", Cores: 0.97}}}}}}, Markdown,
			[]string{"A was told apart from itself, so a verdict on B may be the measurement's bias", "other work on the host used 1.9 cores, the busiest: &lt;b>make (pid 42) 0.97"},
			[]string{"<b>"}},
		{"hostile labels, markdown", &tune.ABResult{Ratio: 1, Interval: [2]float64{0.9, 1.1}, Decision: tune.CodeWithinNoise, Detectable: 0.1, Test: d,
			LabelA: "<script>|x", LabelB: "a\x1b[2Jb", State: "a"}, Markdown,
			[]string{"within noise", `&lt;script>\|x`}, []string{"<script>", "\x1b"}},
		{"no upper end, json", &tune.ABResult{Ratio: 1, Interval: [2]float64{0.5, math.Inf(1)}, Decision: tune.CodeWithinNoise, LabelA: "a", LabelB: "b"}, JSON,
			[]string{`"interval": [`, `null`, `"decision": "within_noise"`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := AB(&b, tc.r, tc.format); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, h := range tc.has {
				if !strings.Contains(out, h) {
					t.Errorf("lacks %q:\n%s", h, out)
				}
			}
			for _, h := range tc.hasNot {
				if strings.Contains(out, h) {
					t.Errorf("holds %q:\n%s", h, out)
				}
			}
		})
	}
}
