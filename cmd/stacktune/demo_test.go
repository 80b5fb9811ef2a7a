package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/tune"
)

// TestDemoLoop runs `stacktune demo` shortened (1 s runs, one look at 4
// runs per state) on the real reference stack and checks what the loop
// did, not how fast it went: every step applied through a journaled
// transaction, measured interleaved with the state before it and decided
// with an interval, the files on disk as the decisions say, every run of
// both states in the history under its label, the noise floor and the
// restart check in the result, and the report file with the table and the
// chart.
func TestDemoLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole reference stack")
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "w")
	reportPath := filepath.Join(dir, "report.html")
	out, errOut, err := run(t, "", "demo", "--quick", "--min-runs", "4", "--max-runs", "4", "--duration", "1s", "--format", "json", "--dir", work, "--report", reportPath)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var res struct {
		Steps []struct {
			Label     string    `json:"label"`
			Scores    []float64 `json:"scores"`
			Before    []float64 `json:"before_scores"`
			Median    float64   `json:"median"`
			XBaseline float64   `json:"x_baseline"`
			Decision  *struct {
				Verdict string `json:"verdict"`
			} `json:"decision"`
			Findings []struct {
				ID     string `json:"id"`
				Change string `json:"change"`
			} `json:"findings"`
			Applied    []string `json:"applied"`
			Skipped    string   `json:"skipped"`
			ApplyID    string   `json:"apply_id"`
			RolledBack string   `json:"rolled_back"`
		} `json:"steps"`
		NotApplied []struct {
			ID     string `json:"id"`
			Reason string `json:"reason"`
			Fix    *struct {
				Kind     string `json:"kind"`
				Endpoint string `json:"endpoint"`
				Prove    string `json:"prove"`
				Rewrite  *struct {
					Query string `json:"query"`
					Check string `json:"check"`
				} `json:"rewrite"`
			} `json:"fix"`
		} `json:"not_applied"`
		NoiseFloor *struct {
			Verdict string `json:"verdict"`
		} `json:"noise_floor"`
		Noise *struct {
			Tries []struct {
				Runs int `json:"runs"`
			} `json:"tries"`
		} `json:"noise"`
		Restart *struct {
			Restarted []string          `json:"restarted"`
			Held      []string          `json:"held"`
			Lost      map[string]string `json:"lost"`
		} `json:"restart_check"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	byLabel := map[string]int{}
	for i, s := range res.Steps {
		byLabel[s.Label] = i
		if s.Skipped != "" && s.Skipped != "nothing_to_apply" {
			t.Errorf("step %s: %s", s.Label, s.Skipped)
		}
		// A kept step chains its ratio; one rolled back has none (the
		// stack is as before it): with 1 s runs on a busy host, a step
		// the full demo finds within noise can be told worse, which the
		// loop rightly undoes.
		if s.Skipped == "" && i > 0 && (len(s.Scores) != 4 || len(s.Before) != 4 || s.Decision == nil || (s.RolledBack == "") != (s.XBaseline > 0)) {
			t.Errorf("step %s measured %v against %v (decision %+v, rolled back %q, x %v)", s.Label, s.Scores, s.Before, s.Decision, s.RolledBack, s.XBaseline)
		}
	}
	if len(res.Steps) == 0 || res.Steps[0].Label != "baseline" || res.Steps[0].XBaseline != 1 || len(res.Steps[0].Scores) != 8 {
		t.Fatalf("steps %+v", res.Steps)
	}
	if res.NoiseFloor == nil || res.NoiseFloor.Verdict == "" {
		t.Errorf("no noise floor: %+v", res.NoiseFloor)
	}
	for _, want := range []string{"unix sockets", "nginx", "indexes", "cache", "N+1 queries"} {
		i, ok := byLabel[want]
		if !ok {
			t.Errorf("no step %q", want)
			continue
		}
		s := res.Steps[i]
		if s.Skipped != "" || s.ApplyID == "" || len(s.Findings) == 0 {
			t.Errorf("step %q did not apply: %+v", want, s)
		}
	}
	if s := res.Steps[byLabel["indexes"]]; !strings.Contains(strings.Join(s.Applied, "\n"), "absent → (`") {
		t.Errorf("indexes applied %v", s.Applied)
	}

	// The files say what the decisions say: a step's change is on disk
	// unless the loop rolled it back for making things slower. A step
	// rolled back in the first round may be tried again after the second
	// audit: what is on disk is the last application's outcome.
	kept := func(label string) bool {
		for i := len(res.Steps) - 1; i >= 0; i-- {
			s := res.Steps[i]
			if (s.Label == label || s.Label == label+" (2nd audit)") && s.Skipped == "" {
				return s.RolledBack == ""
			}
		}
		return true
	}
	app, _ := os.ReadFile(filepath.Join(work, "app", "app.json"))
	conf, _ := os.ReadFile(filepath.Join(work, "nginx", "nginx.conf"))
	for _, c := range []struct {
		step, file, want string
		text             []byte
	}{
		{"unix sockets", "app.json", `"listen": "unix:`, app},
		{"unix sockets", "nginx.conf", "server unix:", conf},
		{"cache", "app.json", `"cache_batch": true`, app},
		{"N+1 queries", "app.json", `"friend_set": true`, app},
		{"nginx", "nginx.conf", "keepalive 32;", conf},
		{"nginx", "nginx.conf", "proxy_http_version 1.1;", conf},
	} {
		if got := strings.Contains(string(c.text), c.want); got != kept(c.step) {
			t.Errorf("step %q kept %v, but %s has %s: %v\n%s", c.step, kept(c.step), c.file, c.want, got, c.text)
		}
	}
	// The journal: every transaction belongs to a step; the newest of
	// each step is applied when the step was kept and rolled back when it
	// was not (the older ones are the A/B test's switches).
	txs, err := apply.History(filepath.Join(work, "apply"))
	if err != nil || len(txs) == 0 {
		t.Fatalf("apply journal: %v %v", txs, err)
	}
	newest := map[string]bool{}
	for _, tx := range txs { // newest first
		i, ok := byLabel[tx.Label]
		if !ok {
			t.Errorf("transaction %s is labelled %q, no step's label", tx.ID, tx.Label)
			continue
		}
		if tx.State != "applied" && tx.State != "rolled-back" {
			t.Errorf("transaction %s (%s) is %s: %s", tx.ID, tx.Label, tx.State, tx.Error)
		}
		if newest[tx.Label] {
			continue
		}
		newest[tx.Label] = true
		want := "applied"
		if res.Steps[i].RolledBack != "" {
			want = "rolled-back"
		}
		if string(tx.State) != want {
			t.Errorf("the last transaction of %s (%s) is %s, want %s", tx.Label, tx.ID, tx.State, want)
		}
	}
	// The restart check restarted the server and the app and found every
	// kept step in force.
	if rc := res.Restart; rc == nil || len(rc.Lost) > 0 || !slices.Contains(rc.Restarted, "app") || len(rc.Held) == 0 {
		t.Errorf("restart check: %+v", res.Restart)
	}

	// Every run is in the history under its step's label, both states.
	st, err := history.Open(filepath.Join(work, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]int{}
	for _, r := range runs {
		labels[r.Label]++
	}
	for i, s := range res.Steps {
		want := len(s.Scores)
		if i == 0 && res.Noise != nil {
			// A noise floor wider than the limit is measured again: the
			// baseline's runs are every try's, its scores the last's.
			want = 0
			for _, try := range res.Noise.Tries {
				want += try.Runs
			}
		}
		if s.Skipped == "" && (labels[s.Label] != want || labels[s.Label+" (before)"] != len(s.Before)) {
			t.Errorf("history has %d runs labelled %q and %d before it; the step has %d and %d", labels[s.Label], s.Label, labels[s.Label+" (before)"], want, len(s.Before))
		}
	}

	html, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	// The first diagnosis's trace run profiled the app in this process:
	// the home page (its N+1 loop) has app CPU, DB time and a top
	// function of the app's own code, and the report shows the table and
	// an inline flame graph.
	var prof struct {
		First struct {
			Requests struct {
				Profile *struct {
					Sampler string           `json:"sampler"`
					Skipped map[string]int64 `json:"skipped"`
				} `json:"profile"`
				Endpoints []struct {
					Endpoint     string  `json:"endpoint"`
					AppCPU       float64 `json:"app_cpu_ms_per_request"`
					DB           float64 `json:"db_ms_per_request"`
					TopFunctions []struct {
						Name string `json:"name"`
					} `json:"top_functions"`
				} `json:"endpoints"`
			} `json:"requests"`
		} `json:"first_diagnosis"`
	}
	if err := json.Unmarshal([]byte(out), &prof); err != nil {
		t.Fatal(err)
	}
	if p := prof.First.Requests.Profile; p == nil || p.Sampler != "pprof" || p.Skipped[string(appcpu.SkippedUnlabelled.Code())] == 0 {
		t.Errorf("the trace run's profile: %+v", p)
	}
	// What is left to the user comes with its fix: the N+1 patterns the
	// app has no switch for, their one query checked on the server, and
	// the ab line with the demo's scenario.
	fixes := 0
	for _, f := range res.NotApplied {
		if f.Fix == nil {
			continue
		}
		fixes++
		if f.Fix.Endpoint == "" || !strings.Contains(f.Fix.Prove, "stacktune ab --a '<") || !strings.Contains(f.Fix.Prove, "--scenario "+filepath.Join(work, "scenario.yaml")) {
			t.Errorf("fix of %s: %+v", f.ID, f.Fix)
		}
		if f.Fix.Kind == "n_plus_one" && (f.Fix.Rewrite == nil || f.Fix.Rewrite.Check == "different_rows") {
			t.Errorf("the one query of %s: %+v", f.ID, f.Fix.Rewrite)
		} else if f.Fix.Rewrite != nil {
			t.Logf("%s in %s: %s (%s)", f.ID, f.Fix.Endpoint, f.Fix.Rewrite.Query, f.Fix.Rewrite.Check)
		}
	}
	if fixes == 0 {
		t.Errorf("nothing left to the user has a fix: %+v", res.NotApplied)
	}
	home := false
	for _, e := range prof.First.Requests.Endpoints {
		if e.Endpoint != "GET /" {
			continue
		}
		home = true
		if e.AppCPU <= 0 || e.DB <= 0 || len(e.TopFunctions) == 0 {
			t.Errorf("home page: app CPU %.2f ms, DB %.2f ms, top functions %v", e.AppCPU, e.DB, e.TopFunctions)
		}
	}
	if !home {
		t.Errorf("no home page in the trace run: %+v", prof.First.Requests.Endpoints)
	}
	for _, want := range []string{"score transitions", "<svg", "<td>baseline</td>", "Not applied", "Noise floor", "Restart check", "Decision: ", `id="app-cpu"`, "app CPU ms"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestDemoFlags(t *testing.T) {
	cases := []struct {
		name, want string
		args       []string
	}{
		{"report extension", ".md or .html", []string{"demo", "--report", "r.txt"}},
		{"format", "csv", []string{"demo", "--format", "csv"}},
		{"runs bound", "at most 20", []string{"demo", "--max-runs", "50"}},
		{"duration bound", "at most 10m", []string{"demo", "--duration", "1h"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, "", tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestWriteDemoReport: the report and its chart land in a directory that
// did not exist, the report naming the chart beside it.
func TestWriteDemoReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	res := &tune.Result{Runs: []history.Run{{Label: "baseline", Score: 85, Passed: true}, {Label: "indexes", Score: 1643, Passed: true}}}
	// The first diagnosis's trace run profiled the app: its flame graph
	// goes beside the report.
	res.First = &diagnose.Result{Requests: &reqtrace.Report{Profile: &appcpu.Profile{Sampler: "pprof", Symbols: appcpu.SymbolsGo},
		Endpoints: []reqtrace.Endpoint{{Endpoint: "GET /", Usage: &appcpu.Usage{Endpoint: "GET /", ProfiledRequests: 3, AppCPUMsPerRequest: 12,
			TopFunctions: []appcpu.Function{{Name: "refapp.(*Server).index", Share: 0.6, TotalShare: 0.9}},
			Stacks:       []appcpu.Stack{{Frames: []string{"net/http.(*conn).serve", "refapp.(*Server).index"}, Ms: 36}}}}}}}
	var stderr strings.Builder
	if err := writeDemoReport(res, filepath.Join(dir, "demo.md"), "markdown", &stderr); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "demo.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "demo.svg") {
		t.Errorf("the report does not name its chart:\n%s", md)
	}
	if !strings.Contains(string(md), "](demo.flame/01-GET.svg)") || !strings.Contains(string(md), "refapp.(\\*Server).index") {
		t.Errorf("the report does not show the app's CPU and its flame graph:\n%s", md)
	}
	if svg, err := os.ReadFile(filepath.Join(dir, "demo.flame", "01-GET.svg")); err != nil || !strings.Contains(string(svg), "refapp.(*Server).index") {
		t.Errorf("flame graph: %v", err)
	}
	if svg, err := os.ReadFile(filepath.Join(dir, "demo.svg")); err != nil || !strings.Contains(string(svg), "<svg") {
		t.Errorf("chart: %v", err)
	}
	if !strings.Contains(stderr.String(), "report written to") {
		t.Errorf("stderr: %q", stderr.String())
	}
}
