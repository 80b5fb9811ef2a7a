package demo

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/internal/golden"
	"github.com/stacktune/stacktune/report"
)

// loopFixture is a loop result as Loop builds it: a baseline, a step
// that was not run, a failed and rolled-back step, and applied steps.
func loopFixture() *LoopResult {
	return &LoopResult{
		Stack: StackInfo{MariaDB: "10.11.19-MariaDB", Scale: 1, Runs: 3, DurationS: 30, Connections: 8, Cores: 2},
		Steps: []StepResult{
			{Label: "baseline", Scores: []float64{84, 86, 85}, Median: 85, XBaseline: 1, Findings: []StepFinding{}, RPS: 5.2, P99MS: 140},
			{Label: "my.cnf", Findings: []StepFinding{}, Skipped: "nothing to apply: no finding for this step"},
			{Label: "unix sockets", Findings: []StepFinding{{ID: "mysql-unix-socket", Title: "8 connections reach MySQL from this host over TCP port 3306",
				Evidence: []string{"established connections to local port 3306: 8 sockets (/proc/net/tcp and tcp6)"}, Change: "address: tcp(127.0.0.1:3306) → unix(/run/mysqld/mysqld.sock)", Source: "seed 000"}},
				Skipped: "the change failed and was rolled back: apply: activating app: refused"},
			{Label: "indexes", Scores: []float64{1875, 1573, 1643}, Median: 1643, XBaseline: 19.33, RPS: 59.6, P99MS: 591, Failed: 1,
				Applied: []string{"ddl: refapp.relations.ix_one_created_at absent → present (read back)"},
				Findings: []StepFinding{{ID: "index", Title: "refapp.relations (one, created_at)", Evidence: []string{"rows examined (EXPLAIN on a copy): 19642 → 35"},
					Change: "ALTER TABLE `refapp`.`relations` ADD INDEX `ix_one_created_at` (`one`, `created_at`), ALGORITHM=INPLACE, LOCK=NONE;", Source: "stacktune indexes"}}},
			{Label: "cache", Scores: []float64{1500, 1490, 1510}, Median: 1500, XBaseline: 17.65, RPS: 54, P99MS: 600,
				Applied:    []string{"app: cache_batch false → true (read back)"},
				RolledBack: "every run scored below the worst run of the step before (best 1510 < 1573): the change made it slower, so it was rolled back",
				Findings:   []StepFinding{{ID: "memcached-write-on-read", Title: "memcached gets 1.47 sets per hit", Evidence: []string{"cmd_set: 837 sets"}}}},
		},
		NotApplied: []StepFinding{{ID: "mysql-performance-schema", Title: "performance_schema is off | no digests <b>", Reason: "observability"}},
	}
}

func TestWriteLoop(t *testing.T) {
	chart := []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>`)
	cases := []struct{ name, format, file string }{
		{"text", report.Text, "loop.txt"},
		{"markdown", report.Markdown, "loop.md"},
		{"html", "html", "loop.html"},
		{"json", report.JSON, "loop.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteLoop(&b, loopFixture(), tc.format, chart, "loop.svg"); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.file), b.Bytes())
		})
	}
	if err := WriteLoop(&bytes.Buffer{}, loopFixture(), "csv", nil, ""); err == nil {
		t.Error("csv accepted")
	}
}

// TestLoopJSONShape pins the JSON the issue asks for:
// {"steps": [{"label", "scores", "median", "x_baseline", "findings"}]}.
func TestLoopJSONShape(t *testing.T) {
	var b bytes.Buffer
	if err := WriteLoop(&b, loopFixture(), report.JSON, nil, ""); err != nil {
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

func TestReportFormat(t *testing.T) {
	for path, want := range map[string]string{"r.md": report.Markdown, "R.HTML": "html", "x/r.htm": "html", "r.txt": ""} {
		got, err := ReportFormat(path)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("%s: %q %v", path, got, err)
		}
	}
	if _, err := ReportFormat("report"); err == nil || !strings.Contains(err.Error(), ".md or .html") {
		t.Errorf("no extension: %v", err)
	}
}

// TestWriteLoopEarlyFailure: a loop that failed before its baseline (a
// throwaway server slow to start) or after it renders in every format,
// so the caller can print the real error.
func TestWriteLoopEarlyFailure(t *testing.T) {
	baselineOnly := &LoopResult{Steps: []StepResult{{Label: "baseline", Scores: []float64{0, 0, 0}, Failed: 3, Findings: []StepFinding{}}}}
	for name, r := range map[string]*LoopResult{"no steps": {}, "nil steps": {Steps: nil}, "baseline only": baselineOnly} {
		for _, format := range LoopFormats {
			t.Run(name+"/"+format, func(t *testing.T) {
				if err := WriteLoop(&bytes.Buffer{}, r, format, nil, ""); err != nil {
					t.Fatal(err)
				}
				if _, err := r.Chart(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
