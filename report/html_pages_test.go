package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/browsertest"
	"github.com/stacktune/stacktune/tune"
)

// The demo loop's and the history's pages, in htmlPages with the others.

// hostileMarkup are strings a log, a server or a label can carry, as the
// loop's findings and the history's labels carry them in these pages:
// markup, a terminal escape, and bidirectional controls.
var hostileMarkup = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	"\x1b[2J\x1b]0;pwned\x07 cleared",
	"/admin\u202e/txt.exe\u2066x\u2069",
}

// loopHostileFixture is loopFixture with the hostile strings in a step's
// label, a finding's ID, title, evidence, change and source, what changed,
// a rollback reason and a finding not applied.
func loopHostileFixture() *tune.Result {
	r := loopFixture()
	r.History = "/tmp/history.db"
	script, img, esc, bidi := hostileMarkup[0], hostileMarkup[1], hostileMarkup[2], hostileMarkup[3]
	r.Steps = append(r.Steps, tune.StepResult{
		Label: "N+1 queries " + script, Scores: []float64{4100, 4230, 3990}, Median: 4100, XBaseline: 48.24, RPS: 140.5, P99MS: 95,
		Applied:    []string{"app: friend_set false → true (read back) " + img},
		RolledBack: tune.UndoSlower, Why: "slower? " + esc,
		Findings: []tune.Finding{{ID: "n-plus-one" + bidi, Title: "GET /friends runs one query per friend " + script,
			Evidence: append([]string{"query: SELECT * FROM users WHERE id = ? (1000 calls per page)"}, hostileMarkup...),
			Change:   "friend_set: false → true; " + img, Source: "refapp " + esc}},
	})
	r.NotApplied = append(r.NotApplied, tune.Finding{ID: "sysctl" + img, Title: script, Reason: tune.LeftReason("host-wide " + bidi)})
	return r
}

// historyHostile is historySample with two more steps whose labels carry
// markup (a label's controls show as spaces).
func historyHostile() []history.Run {
	runs := historySample()
	last := runs[len(runs)-1].Started
	for i, l := range []string{hostileMarkup[0], hostileMarkup[1]} {
		runs = append(runs, history.Run{Label: l, Started: last.Add(time.Duration(i+1) * time.Minute),
			Target: "http://127.0.0.1:8080/", Score: 17000 + float64(i)*500, Passed: true, Requests: 170000, RPS: 1700})
	}
	return runs
}

// TestHistoryEChartsInBrowser loads the history's ECharts page (`stacktune
// history --chart FILE.html`) in headless Chromium: ECharts inlined, it
// must load offline without a console error, warning or exception,
// request nothing, draw its chart on a canvas of the page's size (pixels
// that are not the background), and the hostile labels must not add an
// element.
func TestHistoryEChartsInBrowser(t *testing.T) {
	b := browsertest.Start(t)
	dir := t.TempDir()
	runs := historyHostile()
	path := filepath.Join(dir, "history-echarts.html")
	if err := os.WriteFile(path, drawChart(t, runs, ChartHTML), 0o644); err != nil {
		t.Fatal(err)
	}
	p := b.Open(t, path)
	if got := p.Problems(); len(got) > 0 {
		t.Errorf("the page reported problems: %v", got)
	}
	if got := p.OtherRequests(); len(got) > 0 {
		t.Errorf("the page made requests: %q", got)
	}
	// One script carries ECharts, one the chart's options.
	if n := p.Count(t, "script"); n != 2 {
		t.Errorf("%d scripts, want ECharts and the chart's", n)
	}
	for _, sel := range []string{"img", "iframe", "object", "embed", "link", "base", "form", "a", "[onerror]", "[onload]", "[src]", "[href]"} {
		if n := p.Count(t, sel); n > 0 {
			t.Errorf("%d elements match %s", n, sel)
		}
	}
	wpx, hpx := scoreChartSize(len(history.Transitions(runs)))
	if w, h := p.Size(t, "#"+echartsChartID+" canvas"); w != float64(wpx) || h != float64(hpx) {
		t.Errorf("chart canvas is %v x %v, want %d x %d", w, h, wpx, hpx)
	}
	// The canvas is drawn: bars, points and labels are pixels that are
	// not transparent or white.
	var drawn int
	p.Eval(t, `(c => { const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let n = 0;
		for (let i = 0; i < d.length; i += 4) if (d[i+3] > 0 && (d[i] < 250 || d[i+1] < 250 || d[i+2] < 250)) n++; return n })(document.querySelector("#`+echartsChartID+` canvas"))`, &drawn)
	if drawn < 10000 {
		t.Errorf("%d pixels drawn on the chart's canvas", drawn)
	}
	// The chart knows every step, hostile labels as they are.
	var labels []string
	p.Eval(t, `echarts.getInstanceByDom(document.getElementById("`+echartsChartID+`")).getOption().xAxis[0].data`, &labels)
	steps := history.Transitions(runs)
	if len(labels) != len(steps) {
		t.Fatalf("x axis %q, want %d steps", labels, len(steps))
	}
	if want := "8. " + hostileMarkup[0]; strings.ReplaceAll(labels[7], "\u200b", "") != want {
		t.Errorf("label %q, want %q", labels[7], want)
	}
	if w, h := p.Size(t, "body"); w <= 0 || h <= 0 {
		t.Errorf("body is %v x %v", w, h)
	}
	shot := filepath.Join(dir, "history-echarts.png")
	p.Screenshot(t, shot)
	copyFile(t, shot, filepath.Join(screensDir, "history-echarts.png"))
}

// TestTransitionsHTMLPage checks what the history's page says besides its
// golden file: the runs' target and dates, a run per row, and the note of
// an undefined baseline.
func TestTransitionsHTMLPage(t *testing.T) {
	runs := historySample()
	p := TransitionsHTMLPage(history.Transitions(runs), runs)
	if got := strings.Join(p.Summary, "\n"); !strings.Contains(got, "http://127.0.0.1:8080/, 2025-11-01") || !strings.Contains(got, "17 runs in 7 steps") {
		t.Errorf("summary %q", got)
	}
	if len(p.Notes) != 0 {
		t.Errorf("notes %q", p.Notes)
	}
	last := p.Sections[len(p.Sections)-1]
	if rows := len(last.Blocks[0].(HTMLTable).Rows); last.ID != "runs" || rows != len(runs) {
		t.Errorf("last section %q with %d rows, want the %d runs", last.ID, rows, len(runs))
	}
	zero := historyRunsOf("!broken app", 0, "fixed", 1000)
	var b bytes.Buffer
	if err := Transitions(&b, history.Transitions(zero), HTML); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ratios against it are undefined") {
		t.Error("no note of the undefined baseline")
	}
	if strings.Contains(b.String(), `id="runs"`) {
		t.Error("Transitions lists runs it was not given")
	}
}
