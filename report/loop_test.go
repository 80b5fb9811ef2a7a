package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/demo/loopresult"
	"github.com/stacktune/stacktune/internal/golden"
)

// loopFixture is a loop result as demo.Loop builds it: a baseline, a step
// that was not run, a failed and rolled-back step, and applied steps.
func loopFixture() *loopresult.Result {
	return &loopresult.Result{
		Stack: loopresult.Stack{MariaDB: "10.11.19-MariaDB", Scale: 1, Runs: 3, DurationS: 30, Connections: 8, Cores: 2},
		Steps: []loopresult.Step{
			{Label: "baseline", Scores: []float64{84, 86, 85}, Median: 85, XBaseline: 1, Findings: []loopresult.Finding{}, RPS: 5.2, P99MS: 140},
			{Label: "my.cnf", Findings: []loopresult.Finding{}, Skipped: "nothing to apply: no finding for this step"},
			{Label: "unix sockets", Findings: []loopresult.Finding{{ID: "mysql-unix-socket", Title: "8 connections reach MySQL from this host over TCP port 3306",
				Evidence: []string{"established connections to local port 3306: 8 sockets (/proc/net/tcp and tcp6)"}, Change: "address: tcp(127.0.0.1:3306) → unix(/run/mysqld/mysqld.sock)", Source: "seed 000"}},
				Skipped: "the change failed and was rolled back: apply: activating app: refused"},
			{Label: "indexes", Scores: []float64{1875, 1573, 1643}, Median: 1643, XBaseline: 19.33, RPS: 59.6, P99MS: 591, Failed: 1,
				Applied: []string{"ddl: refapp.relations.ix_one_created_at absent → present (read back)"},
				Findings: []loopresult.Finding{{ID: "index", Title: "refapp.relations (one, created_at)", Evidence: []string{"rows examined (EXPLAIN on a copy): 19642 → 35"},
					Change: "ALTER TABLE `refapp`.`relations` ADD INDEX `ix_one_created_at` (`one`, `created_at`), ALGORITHM=INPLACE, LOCK=NONE;", Source: "stacktune indexes"}}},
			{Label: "cache", Scores: []float64{1500, 1490, 1510}, Median: 1500, XBaseline: 17.65, RPS: 54, P99MS: 600,
				Applied:    []string{"app: cache_batch false → true (read back)"},
				RolledBack: "every run scored below the worst run of the step before (best 1510 < 1573): the change made it slower, so it was rolled back",
				Findings:   []loopresult.Finding{{ID: "memcached-write-on-read", Title: "memcached gets 1.47 sets per hit", Evidence: []string{"cmd_set: 837 sets"}}}},
		},
		NotApplied: []loopresult.Finding{{ID: "mysql-performance-schema", Title: "performance_schema is off | no digests <b>", Reason: "observability"}},
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
	baselineOnly := &loopresult.Result{Steps: []loopresult.Step{{Label: "baseline", Scores: []float64{0, 0, 0}, Failed: 3, Findings: []loopresult.Finding{}}}}
	for name, r := range map[string]*loopresult.Result{"no steps": {}, "nil steps": {Steps: nil}, "baseline only": baselineOnly, "nil": nil} {
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
