package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/internal/browsertest"
	"github.com/stacktune/stacktune/internal/skip"
	"github.com/stacktune/stacktune/refstack/workload"
	"github.com/stacktune/stacktune/report"
)

// hostileQueries are strings a query, a database or a user name can
// carry into the digest demo's page: markup, a terminal escape and
// bidirectional controls.
var hostileQueries = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	"\x1b[2J\x1b]0;pwned\x07",
	"users\u202e/txt.exe\u2066x\u2069",
}

// digestDemoFixture is a digest demo's result without the servers: the
// slow log's digest is a real slow log's, performance_schema's holds the
// hostile strings in a class's fingerprint, sample, database and user,
// and the workload's first error.
func digestDemoFixture(t *testing.T) *DigestResult {
	t.Helper()
	in, c, err := input.Open("../../testdata/slowlogs/slow014.log", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	agg, stats, err := digest.FromSlowLogs(context.Background(), []input.Input{in}, digest.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := agg.Report(digest.ReportOptions{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	slow.FillSkipped(stats)
	slow.Overall.Inputs = []string{"slow.log"}

	h := strings.Join(hostileQueries, " ")
	med := 0.004
	pfs := &digest.Report{
		Source:  "performance_schema",
		Overall: digest.Overall{Events: 120, Classes: 2, ClassesShown: 2, TimeTotal: 0.9, IntervalSeconds: 1.5, QPS: 80},
		Classes: []digest.Class{
			{Rank: 1, ID: "DEADBEEF00112233", Fingerprint: "select * from `" + hostileQueries[0] + "` where a = ?",
				StatementType: "SELECT", Sample: "SELECT * FROM t WHERE a = '" + h + "'\n\tAND b = 1", SampleDB: hostileQueries[3],
				Count: 100, Share: 0.75, TimeTotal: 0.675, TimeAvg: 0.00675, TimeMax: 0.02, TimeMedian: &med, TimeP95: &med,
				Databases: map[string]int64{hostileQueries[3]: 100}, Users: map[string]int64{hostileQueries[1]: 100}},
			{Rank: 2, ID: "0011223344556677", Fingerprint: "update users set nick_name = ? where id = ? -- " + hostileQueries[2],
				StatementType: "UPDATE", Sample: "UPDATE users SET nick_name = '" + hostileQueries[1] + "' WHERE id = 1",
				Count: 20, Share: 0.25, TimeTotal: 0.225, TimeAvg: 0.01125, TimeMax: 0.03,
				Databases: map[string]int64{"demo": 20}, Users: map[string]int64{"demo": 20}},
		},
		Skipped: digest.Skipped{Reasons: skip.Counts{}},
	}
	return &DigestResult{
		Server:            "10.11.19-MariaDB",
		Workload:          workload.Result{Pages: 40, Queries: 520, Errors: 1, Elapsed: 1500 * time.Millisecond, FirstError: "Error 1064: near '" + h + "'"},
		SlowLog:           slow,
		PerformanceSchema: pfs,
	}
}

// TestDigestHTMLPage: the demo's two digests are one page, each in its
// section with its own anchors.
func TestDigestHTMLPage(t *testing.T) {
	res := digestDemoFixture(t)
	var b bytes.Buffer
	if err := report.WriteHTMLPage(&b, DigestHTMLPage(res)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`<section id="slowlog">`, `<section id="pfs">`, `id="slowlog-chart"`, `id="pfs-chart"`,
		`id="slowlog-class-1"`, `id="pfs-class-2"`, "Digest of the slow log", "Digest of performance_schema over the same run"} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if n := strings.Count(out, "<html"); n != 1 {
		t.Errorf("%d <html> elements", n)
	}
	if n := strings.Count(out, `id="chart"`); n != 0 {
		t.Errorf("%d anchors left unprefixed", n)
	}
	if strings.Contains(out, "\t") {
		t.Error("a tab in the HTML source")
	}
	if err := report.WriteHTMLPage(&b, DigestHTMLPage(nil)); err != nil {
		t.Errorf("no result: %v", err)
	}
}

// TestDigestHTMLInBrowser loads the digest demo's page in headless
// Chromium: it must load offline without a console error, warning or
// exception, request nothing, hold no script, image or event handler
// whatever the queries said, draw both digests' charts, and show the
// hostile strings as text (cleaned). The screenshot is copied to
// $TMPDIR/stacktune-screens/demo-digest.png.
func TestDigestHTMLInBrowser(t *testing.T) {
	b := browsertest.Start(t)
	dir := t.TempDir()
	var page bytes.Buffer
	if err := report.WriteHTMLPage(&page, DigestHTMLPage(digestDemoFixture(t))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "demo-digest.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p := b.Open(t, path)
	if got := p.Problems(); len(got) > 0 {
		t.Errorf("the page reported problems: %v", got)
	}
	if got := p.OtherRequests(); len(got) > 0 {
		t.Errorf("the page made requests: %q", got)
	}
	for _, sel := range []string{"script", "img", "iframe", "object", "embed", "link", "base", "form", "a", "[src]", "[href]", "[style]"} {
		if n := p.Count(t, sel); n > 0 {
			t.Errorf("%d elements match %s", n, sel)
		}
	}
	var handlers int
	p.Eval(t, `[...document.querySelectorAll("*")].filter(e => [...e.attributes].some(a => a.name.toLowerCase().startsWith("on"))).length`, &handlers)
	if handlers > 0 {
		t.Errorf("%d elements with an event handler attribute", handlers)
	}
	for _, sec := range []string{"slowlog", "pfs"} {
		if n := p.Count(t, "#"+sec+" svg.chart rect.bar"); n == 0 {
			t.Errorf("no bars drawn in %s", sec)
		}
		if w, h := p.Size(t, "#"+sec+" svg.chart"); w <= 0 || h <= 0 {
			t.Errorf("%s chart is %v x %v", sec, w, h)
		}
	}
	text := p.Text(t, "body")
	for _, h := range hostileQueries {
		if !strings.Contains(text, report.Clean(h)) {
			t.Errorf("the page does not show %q", report.Clean(h))
		}
	}
	for _, want := range []string{"stacktune demo: query digests", "Digest of the slow log", "Digest of performance_schema over the same run"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	shot := filepath.Join(dir, "demo-digest.png")
	p.Screenshot(t, shot)
	screens := filepath.Join(os.TempDir(), "stacktune-screens")
	if err := os.MkdirAll(screens, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screens, "demo-digest.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", filepath.Join(screens, "demo-digest.png"))
}
