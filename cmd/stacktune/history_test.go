package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/history"
)

// historyFixture records runs of three labels, one carrying markup, and
// returns the database's path.
func historyFixture(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "history.db")
	st, err := history.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2025, 11, 1, 10, 0, 0, 0, time.UTC)
	for i, r := range []struct {
		label string
		score float64
	}{{"baseline", 1000}, {"baseline", 1040}, {"indexes", 4100}, {`<script>alert(1)</script>`, 9000}} {
		run := &history.Run{Label: r.label, Started: t0.Add(time.Duration(i) * time.Minute), Target: "http://127.0.0.1:8080/",
			Score: r.score, Passed: true, Requests: int64(r.score) * 10, RPS: r.score / 10, P99: 20 * time.Millisecond}
		if _, err := st.Add(context.Background(), run); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestHistoryHTML: `stacktune history --format html` prints one
// self-contained page (no script, the chart as inline SVG, every run), and
// --chart FILE.html still writes the ECharts page beside it.
func TestHistoryHTML(t *testing.T) {
	db := historyFixture(t)
	chart := filepath.Join(t.TempDir(), "scores.html")
	out, _, err := run(t, "", "history", "--history", db, "--format", "html", "--chart", chart)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "Content-Security-Policy", `<svg class="chart"`, "4 runs in 3 steps: http://127.0.0.1:8080/, 2025-11-01",
		`<section id="runs">`, "&lt;script&gt;alert(1)&lt;/script&gt;"} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Count(out, "<html") != 1 || strings.Contains(out, "<script") {
		t.Errorf("not one page without script:\n%s", out)
	}
	page, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "echarts.init") || !strings.Contains(string(page), "<script>alert(1)<\u200b/script>") {
		t.Errorf("the chart is not the ECharts page with the label kept in its script")
	}
	if _, _, err := run(t, "", "history", "--history", db, "--format", "csv"); err == nil || !strings.Contains(err.Error(), "html") {
		t.Errorf("--format csv: %v, want the formats listed", err)
	}
}
