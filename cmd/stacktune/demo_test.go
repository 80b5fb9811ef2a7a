package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/history"
)

// TestDemoLoop runs `stacktune demo` shortened (one 3 s run per step) on
// the real reference stack and checks what the loop did, not how fast it
// went: every step applied through a journaled transaction and read back,
// the files on disk changed as the report says, the runs are in the
// history under their labels, and the report file holds the table and the
// chart.
func TestDemoLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole reference stack")
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "w")
	reportPath := filepath.Join(dir, "report.html")
	out, errOut, err := run(t, "", "demo", "--quick", "--runs", "1", "--duration", "3s", "--format", "json", "--dir", work, "--report", reportPath)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var res struct {
		Steps []struct {
			Label     string    `json:"label"`
			Scores    []float64 `json:"scores"`
			Median    float64   `json:"median"`
			XBaseline float64   `json:"x_baseline"`
			Findings  []struct {
				ID     string `json:"id"`
				Change string `json:"change"`
			} `json:"findings"`
			Applied    []string `json:"applied"`
			Skipped    string   `json:"skipped"`
			ApplyID    string   `json:"apply_id"`
			RolledBack string   `json:"rolled_back"`
		} `json:"steps"`
		NotApplied []struct{ ID, Reason string } `json:"not_applied"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	byLabel := map[string]int{}
	for i, s := range res.Steps {
		byLabel[s.Label] = i
		if s.Skipped != "" && !strings.HasPrefix(s.Skipped, "nothing to apply") {
			t.Errorf("step %s: %s", s.Label, s.Skipped)
		}
		if s.Skipped == "" && (len(s.Scores) != 1 || s.Median <= 0 || s.XBaseline <= 0) {
			t.Errorf("step %s measured %v (median %v, x %v)", s.Label, s.Scores, s.Median, s.XBaseline)
		}
	}
	if len(res.Steps) == 0 || res.Steps[0].Label != "baseline" || res.Steps[0].XBaseline != 1 {
		t.Fatalf("steps %+v", res.Steps)
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

	// The files say what the report says: a step's change is on disk
	// unless the loop rolled it back for making things slower.
	// A step rolled back in the first round may be tried again after the
	// second audit: what is on disk is the last application's outcome.
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
		{"unix sockets", "app.json", `@unix(`, app},
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
	txs, err := apply.History(filepath.Join(work, "apply"))
	if err != nil || len(txs) == 0 {
		t.Fatalf("apply journal: %v %v", txs, err)
	}
	for _, tx := range txs {
		i, ok := byLabel[tx.Label]
		if !ok {
			t.Errorf("transaction %s is labelled %q, no step's label", tx.ID, tx.Label)
			continue
		}
		want := "applied"
		if res.Steps[i].RolledBack != "" {
			want = "rolled-back"
		}
		if tx.State != want {
			t.Errorf("transaction %s (%s) is %s, want %s: %s", tx.ID, tx.Label, tx.State, want, tx.Error)
		}
	}

	// Every run is in the history under its step's label.
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
	for _, s := range res.Steps {
		if s.Skipped == "" && labels[s.Label] != 1 {
			t.Errorf("history has %d runs labelled %q", labels[s.Label], s.Label)
		}
	}

	html, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"score transitions", "<svg", "<td>baseline</td>", "Not applied"} {
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
		{"runs bound", "at most 20", []string{"demo", "--runs", "50"}},
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
