package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/golden"
	"github.com/stacktune/stacktune/tune"
)

// loopFixture is a loop result as tune.Run builds it for the demo: a
// baseline with its noise floor, a step that was not run, a failed step,
// a kept step with its decision, a step rolled back as slower, and the
// restart check.
func loopFixture() *tune.Result {
	return &tune.Result{
		Stack: tune.Stack{MariaDB: "MariaDB 10.11.19", Scale: 1, MinRuns: 4, Runs: 8, DurationS: 10, Connections: 8, Cores: 2},
		NoiseFloor: &abtest.Decision{Verdict: abtest.WithinNoise, RatioMedian: 1.01, CILow: 0.97, CIHigh: 1.05, Level: 0.9714, PValue: 0.69, RunsA: 4, RunsB: 4,
			Reason: "A against itself: within noise: median ratio 1.01, 97% interval [0.97, 1.05]"},
		Restart: &tune.RestartCheck{Restarted: []string{"mysql", "app"}, Held: []string{"indexes"}, Lost: map[string]string{"my.cnf": "tmp_table_size is 16M, wanted 64M <x>"},
			ColdScore: 1200, WarmScore: 1610, Warmed: []string{"relations.PRIMARY", "relations.ix_one_created_at"}},
		Steps: []tune.StepResult{
			{Label: "baseline", Scores: []float64{84, 86, 85}, Median: 85, XBaseline: 1, Findings: []tune.Finding{}, RPS: 5.2, P99MS: 140},
			{Label: "my.cnf", Findings: []tune.Finding{}, Skipped: "nothing to apply: no finding for this step"},
			{Label: "unix sockets", Findings: []tune.Finding{{ID: "mysql-unix-socket", Title: "8 connections reach MySQL from this host over TCP port 3306",
				Evidence: []string{"established connections to local port 3306: 8 sockets (/proc/net/tcp and tcp6)"}, Change: "address: tcp(127.0.0.1:3306) → unix(/run/mysqld/mysqld.sock)", Source: "seed 000"}},
				Skipped: "the change failed and was rolled back: apply: activating app: refused"},
			{Label: "indexes", Scores: []float64{1875, 1573, 1643, 1700}, Before: []float64{85, 84, 86, 85}, Median: 1671,
				Decision: &abtest.Decision{Verdict: abtest.Better, RatioMedian: 19.6, CILow: 18.2, CIHigh: 22.1, Level: 0.9714, PValue: 0.0286, RunsA: 4, RunsB: 4}, XBaseline: 19.33, RPS: 59.6, P99MS: 591, Failed: 1,
				Applied: []string{"ddl: refapp.relations.ix_one_created_at absent → present (read back)"},
				Findings: []tune.Finding{{ID: "index", Title: "refapp.relations (one, created_at)", Evidence: []string{"rows examined (EXPLAIN on a copy): 19642 → 35"},
					Change: "ALTER TABLE `refapp`.`relations` ADD INDEX `ix_one_created_at` (`one`, `created_at`), ALGORITHM=INPLACE, LOCK=NONE;", Source: "stacktune indexes"}}},
			{Label: "cache", Scores: []float64{1500, 1490, 1510}, Median: 1500, XBaseline: 17.65, RPS: 54, P99MS: 600,
				Applied:    []string{"app: cache_batch false → true (read back)"},
				RolledBack: "slower: worse: median ratio 0.90",
				Findings:   []tune.Finding{{ID: "memcached-write-on-read", Title: "memcached gets 1.47 sets per hit", Evidence: []string{"cmd_set: 837 sets"}}}},
		},
		NotApplied: []tune.Finding{{ID: "mysql-performance-schema", Title: "performance_schema is off | no digests <b>", Reason: "observability"}},
	}
}

func TestLoop(t *testing.T) {
	cases := []struct{ name, format, file string }{
		{"text", Text, "loop.txt"},
		{"markdown", Markdown, "loop.md"},
		{"html", "html", "loop.html"},
		{"json", JSON, "loop.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Loop(&b, loopFixture(), tc.format, "loop.svg"); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "loop", tc.file), b.Bytes())
		})
	}
	if err := Loop(&bytes.Buffer{}, loopFixture(), "csv", ""); err == nil {
		t.Error("csv accepted")
	}
}

// TestLoopJSONShape pins the JSON the issue asks for:
// {"steps": [{"label", "scores", "median", "x_baseline", "findings"}]}.
func TestLoopJSONShape(t *testing.T) {
	var b bytes.Buffer
	if err := Loop(&b, loopFixture(), JSON, ""); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Steps []map[string]json.RawMessage `json:"steps"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Steps) != 5 {
		t.Fatalf("%d steps", len(got.Steps))
	}
	for _, s := range got.Steps {
		for _, k := range []string{"label", "scores", "median", "x_baseline", "findings"} {
			if _, ok := s[k]; !ok {
				t.Errorf("step without %q: %s", k, b.String())
			}
		}
	}
}

func TestLoopReportFormat(t *testing.T) {
	for path, want := range map[string]string{"r.md": Markdown, "R.HTML": "html", "x/r.htm": "html", "r.txt": ""} {
		got, err := LoopReportFormat(path)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("%s: %q %v", path, got, err)
		}
	}
	if _, err := LoopReportFormat("report"); err == nil || !strings.Contains(err.Error(), ".md or .html") {
		t.Errorf("no extension: %v", err)
	}
}

// TestLoopEarlyFailure: a loop that failed before its baseline (a
// throwaway server slow to start) or after it renders in every format,
// so the caller can print the real error.
func TestLoopEarlyFailure(t *testing.T) {
	baselineOnly := &tune.Result{Steps: []tune.StepResult{{Label: "baseline", Scores: []float64{0, 0, 0}, Failed: 3, Findings: []tune.Finding{}}}}
	for name, r := range map[string]*tune.Result{"no steps": {}, "nil steps": {Steps: nil}, "baseline only": baselineOnly, "nil": nil} {
		for _, format := range LoopFormats {
			t.Run(name+"/"+format, func(t *testing.T) {
				if err := Loop(&bytes.Buffer{}, r, format, ""); err != nil {
					t.Fatal(err)
				}
				if _, err := LoopChart(r); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestLoopChart: the chart of the recorded runs is an SVG naming each
// step; a loop without runs has none.
func TestLoopChart(t *testing.T) {
	r := loopFixture()
	if chart, err := LoopChart(r); err != nil || chart != nil {
		t.Errorf("no runs: %d bytes, %v", len(chart), err)
	}
	r.Runs = []history.Run{{Label: "baseline", Score: 85, Passed: true}, {Label: "indexes", Score: 1643, Passed: true}}
	chart, err := LoopChart(r)
	if err != nil {
		t.Fatal(err)
	}
	text := svgText(t, chart)
	for _, want := range []string{"1. baseline", "2. indexes", scoreChartTitle} {
		if !strings.Contains(text, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}
