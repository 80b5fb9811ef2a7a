package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/fixplan"
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
		Noise: &tune.Noise{Limit: 0.1, Width: 0.04, RunS: 20, Tries: []tune.NoiseTry{{RunS: 10, Runs: 8, Width: 0.16}, {RunS: 20, Runs: 8, Width: 0.04}},
			Causes: []tune.NoiseCause{{Code: tune.CauseOtherProcesses, Value: 1.2, Processes: []collect.ProcessUse{{PID: 4242, Comm: "go <b>", Cores: 0.9}}}, {Code: tune.CauseWarmUp, Value: 0.7}}},
		Restart: &tune.RestartCheck{Restarted: []string{"mysql", "app"}, Held: []string{"indexes"}, Lost: map[string]string{"my.cnf": "tmp_table_size is 16M, wanted 64M <x>"},
			ColdScore: 1200, WarmScore: 1610, Warmed: []string{"relations.PRIMARY", "relations.ix_one_created_at"}},
		Steps: []tune.StepResult{
			{Label: "baseline", Scores: []float64{84, 86, 85}, Median: 85, XBaseline: 1, Findings: []tune.Finding{}, RPS: 5.2, P99MS: 140},
			{Label: "my.cnf", Findings: []tune.Finding{}, Skipped: tune.SkipNothingToApply},
			{Label: "unix sockets", Findings: []tune.Finding{{ID: "mysql-unix-socket", Title: "8 connections reach MySQL from this host over TCP port 3306",
				Evidence: []string{"established connections to local port 3306: 8 sockets (/proc/net/tcp and tcp6)"}, Change: "address: tcp(127.0.0.1:3306) → unix(/run/mysqld/mysqld.sock)", Source: "the ISUCON5 qualifier write-up"}},
				Skipped: tune.SkipApplyFailed, Why: "apply: activating app: refused"},
			{Label: "indexes", Scores: []float64{1875, 1573, 1643, 1700}, Before: []float64{85, 84, 86, 85}, Median: 1671,
				Decision: &abtest.Decision{Verdict: abtest.Better, RatioMedian: 19.6, CILow: 18.2, CIHigh: 22.1, Level: 0.9714, PValue: 0.0286, RunsA: 4, RunsB: 4}, XBaseline: 19.33, RPS: 59.6, P99MS: 591, Failed: 1,
				Applied: []string{"ddl: refapp.relations.ix_one_created_at absent → present (read back)"},
				Findings: []tune.Finding{{ID: "index", Title: "refapp.relations (one, created_at)", Evidence: []string{"rows examined (EXPLAIN on a copy): 19642 → 35"},
					Change: "ALTER TABLE `refapp`.`relations` ADD INDEX `ix_one_created_at` (`one`, `created_at`), ALGORITHM=INPLACE, LOCK=NONE;", Source: "stacktune indexes"}}},
			{Label: "cache", Scores: []float64{1500, 1490, 1510}, Median: 1500, RPS: 54, P99MS: 600,
				Applied:    []string{"app: cache_batch false → true (read back)"},
				RolledBack: tune.UndoSlower, Why: "worse: median ratio 0.90",
				Findings: []tune.Finding{{ID: "memcached-write-on-read", Title: "memcached gets 1.47 sets per hit", Evidence: []string{"cmd_set: 837 sets"}}}},
		},
		NotApplied: []tune.Finding{{ID: "mysql-performance-schema", Title: "performance_schema is off | no digests <b>", Reason: "observability"}},
		Final: &tune.Final{Ratio: 18.9, Interval: [2]float64{17.1, 20.4}, Level: 0.9714, Decision: tune.CodeBetter, Detectable: 0.087,
			Original: []float64{86, 84, 85, 85}, Tuned: []float64{1610, 1702, 1598, 1655}, Steps: []string{"indexes"}},
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

// TestLoopSaysWhereTheDropInWent: tune on a user's stack says where the
// my.cnf drop-in went and why, in every format.
func TestLoopSaysWhereTheDropInWent(t *testing.T) {
	const why = "my.cnf drop-in: /srv/db/conf.d/99-stacktune.cnf (the server reads /srv/db/conf.d through '!includedir' in /srv/db/my.cnf:12; found from its command line --defaults-file=/srv/db/my.cnf, pid 1234)"
	r := loopFixture()
	r.Stack.Description, r.Stack.MySQLConf = "stacktune tune: the scenario shop.yaml", why
	for _, f := range []string{Text, Markdown, "html", JSON} {
		t.Run(f, func(t *testing.T) {
			var b bytes.Buffer
			if err := Loop(&b, r, f, ""); err != nil {
				t.Fatal(err)
			}
			want := why
			if f == "html" {
				want = strings.ReplaceAll(want, "'", "&#39;")
			}
			if !strings.Contains(b.String(), want) {
				t.Errorf("the report lacks %q:\n%s", want, b.String())
			}
		})
	}
}

// TestLoopProfiled: the loop report shows the first diagnosis's app-CPU
// table, top functions and flame graph (a file beside the Markdown
// report, inline in HTML); JSON keeps the figures.
func TestLoopProfiled(t *testing.T) {
	r := loopFixture()
	r.First = &diagnose.Result{Requests: profiledFixture(t)}
	// What is left to the user, with its fix: an N+1 whose one query was
	// checked, one whose loop could not be read, a hot function.
	prove := fixplan.ProveCommand("/srv/shop.yaml", "", 8, 10e9)
	r.NotApplied = append(r.NotApplied,
		tune.Finding{ID: "n-plus-one", Title: "N+1 queries in GET / (measured: 292 calls per request): select count(?) from relations where (one = ? and another = ?) or (one = ? and another = ?)",
			Change: "load the set once per request", Reason: tune.LeftAppCode,
			Fix: &fixplan.Fix{Kind: fixplan.KindNPlusOne, Endpoint: "GET /", CallsPerRequest: 292, RequestShare: 0.61, MsPerRequest: 48.2, Prove: prove,
				Rewrite: &fixplan.Rewrite{Query: "SELECT one, another FROM relations WHERE (one = 7 AND another IN (99, 82, 42)) OR (one IN (99, 82, 42) AND another = 7)",
					Keys: []string{"another", "one"}, Request: "trace:0000000700000000000000000000abcd", Calls: 292, Distinct: 96, Check: fixplan.CheckSameRows, LoopRows: 292, Rows: 7, Count: true}}},
		tune.Finding{ID: "n-plus-one", Title: "N+1 queries in GET /authors/:num (measured: 12 calls per request): select avg(rating) from reviews where book_id = ?",
			Reason: tune.LeftAppCode,
			Fix: &fixplan.Fix{Kind: fixplan.KindNPlusOne, Endpoint: "GET /authors/:num", CallsPerRequest: 12, MsPerRequest: 3.1, Prove: prove,
				Rewrite: &fixplan.Rewrite{Check: fixplan.CheckUnchecked, Unchecked: fixplan.UncheckedNoStatements}}},
		tune.Finding{ID: tune.HotFunction, Title: "main.render <b>|x", Evidence: []string{}, Reason: tune.LeftAppCode,
			Fix: &fixplan.Fix{Kind: fixplan.KindHotFunction, Endpoint: "GET /item", Function: "main.render <b>|x", CPUShare: 0.72, MsPerRequest: 14.4, RequestShare: 0.4, Prove: prove}})
	for _, tc := range []struct {
		name, format, file string
		want               []string
	}{
		{"text", Text, "profiled.txt", []string{"app CPU ms", "main.main", "flame graph: flame/", "one query: SELECT one, another FROM relations WHERE (one = 7 AND another IN (99, 82, 42))",
			"checked: the one query (7 rows) gives the same counts as the loop's 292 calls", "prove it:  stacktune ab --a '<deploy", "--scenario /srv/shop.yaml", "unchecked: no request's calls"}},
		{"markdown", Markdown, "profiled.md", []string{"| app CPU ms |", "main.main", "![flame graph of GET /item](flame/", "```sql\nSELECT one, another", "```sh\nstacktune ab"}},
		{"html", "html", "profiled.html", []string{`id="app-cpu"`, "main.main", "<svg", "stacktune ab --a", "main.render &lt;b&gt;"}},
		{"json", JSON, "profiled.json", []string{`"app_cpu_ms_per_request"`, `"top_functions"`, `"flame_graph"`, `"fix"`, `"check": "same_rows"`, `"prove"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Loop(&b, r, tc.format, "loop.svg"); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in the report", w)
				}
			}
			golden.Check(t, filepath.Join("testdata", "loop", tc.file), b.Bytes())
		})
	}
}
