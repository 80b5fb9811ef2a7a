package report

import (
	"bytes"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/golden"
	"github.com/stacktune/stacktune/ledger"
)

// The served pages (stacktune serve) add links, forms and one script of
// their own to the elements of the HTML reports.
var (
	serveElements = map[string]bool{"nav": true, "a": true, "form": true, "input": true, "label": true, "button": true, "script": true, "span": true, "title": true}
	serveAttrs    = map[string]bool{"href": true, "method": true, "action": true, "type": true, "value": true, "src": true, "defer": true, "data-events": true}
)

// servePages renders every served page with s in every string a run, a
// session, an artefact or a verdict carries.
func servePages(s string) map[string]*ServePage {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	run := func(id int64, label string, score float64) history.Run {
		return history.Run{ID: id, Label: label, Started: t0.Add(time.Duration(id) * time.Minute), Target: "http://127.0.0.1/" + s,
			Scenario: s, Score: score, Passed: id%2 == 0, Command: "bench" + s, Failure: "errors " + s, ScenarioHash: s,
			DataReset: "POST /initialize " + s, Versions: map[string]string{"mysql" + s: "MariaDB " + s}, AppCommit: s,
			Duration: 30 * time.Second, Session: 7, Arm: "a" + s, Requests: 100, RPS: 10, P99: time.Millisecond}
	}
	sess := &history.Session{ID: 7, Command: "tune" + s, Label: s, Started: t0, Status: history.SessionRunning, Noise: 0.03,
		Decisions: []history.Decision{{LabelA: "A " + s, LabelB: "B " + s, Outcome: "better" + s, Ratio: 1.2, Low: 1.1, High: 1.3, Runs: 6, Kept: true}}}
	view := func(id int64, label string, total float64) *ledger.View {
		return &ledger.View{Run: run(id, label, 1000*float64(id)), Session: sess,
			Artefacts: []history.Artefact{{Kind: "digest" + s, Size: 10}, {Kind: "snapshot", Size: 1 << 30, TooLarge: true}},
			Endpoints: []ledger.Endpoint{{Source: ledger.SourceBench, Name: "GET /" + s, Count: 10, P50: 0.01, P99: 0.1, Total: total},
				{Source: ledger.SourceAccessLog + s, Name: s, Count: 3, Total: 0.2}},
			Classes:   []ledger.Class{{ID: "ABC" + s, Fingerprint: "select * from t where x = ? " + s, Count: 4, Total: 0.4}},
			Findings:  []ledger.Finding{{ID: "rule" + s, Title: s, Severity: "warning" + s, Layer: "mysql" + s}},
			Functions: []ledger.Function{{Name: "main." + s, Self: 5, Total: 10}},
			Flame: &ledger.Frame{Name: "all", Value: 10, Children: []*ledger.Frame{{Name: "main." + s + strings.Repeat("x", 200), Value: 10,
				Children: []*ledger.Frame{{Name: s, Value: 5}}}}},
			CollectorErrors: []string{"nginx: " + s}, Problems: []string{"profile: " + s},
			Hosts: []ledger.Host{{Name: "web1" + s, Role: "web" + s, OK: true, Layers: []string{"linux", "nginx" + s}, CollectorErrors: []string{s}},
				{Name: "db" + s, Role: "db", Stage: "connect" + s, Error: "refused " + s}}}
	}
	a, b := view(1, "before "+s, 2), view(2, "after "+s, 0.5)
	c := ledger.Compare(a, b)
	c.Decision = &sess.Decisions[0]
	runs := []history.Run{run(2, "after "+s, 2000), run(1, "before "+s, 1000)}
	return map[string]*ServePage{
		"serve-runs": ServeRunsPage(&ServeList{Runs: runs, Label: s, Commit: s, Scenario: s,
			Steps: history.Transitions([]history.Run{runs[1], runs[0]}), More: "/?before=1&label=" + url.QueryEscape(s)}),
		"serve-run":      ServeRunPage(a),
		"serve-diff":     ServeDiffPage(c),
		"serve-sessions": ServeSessionsPage([]history.Session{*sess}),
		"serve-session":  ServeSessionPage(sess, runs),
	}
}

// TestServePagesHostile renders the served pages with each hostile string
// of the other formats' tests, and markup, in every field: only the
// templates' elements and attributes, every link a path on the server,
// the one script the server's own, and the text shows each string
// cleaned.
func TestServePagesHostile(t *testing.T) {
	for _, h := range append(hostile, struct{ name, s string }{"markup", `"><img src=x onerror=alert(1)><script>alert(1)</script></pre></title></style><!--`},
		struct{ name, s string }{"javascript-url", "javascript:alert(1)"}) {
		for name, p := range servePages(h.s) {
			t.Run(h.name+"/"+name, func(t *testing.T) {
				var b bytes.Buffer
				if err := WriteServePage(&b, p); err != nil {
					t.Fatal(err)
				}
				checkServeMarkup(t, b.Bytes(), Clean(h.s))
			})
		}
	}
}

func checkServeMarkup(t *testing.T, page []byte, visible string) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if !htmlElements[n.Data] && !serveElements[n.Data] {
				t.Errorf("element <%s>", n.Data)
			}
			for _, a := range n.Attr {
				k := strings.ToLower(a.Key)
				if !htmlAttrs[k] && !serveAttrs[k] {
					t.Errorf("attribute %s=%q on <%s>", a.Key, a.Val, n.Data)
				}
				switch {
				case k == "href" || k == "action" || k == "data-events":
					if !strings.HasPrefix(a.Val, "/") || strings.HasPrefix(a.Val, "//") {
						t.Errorf("%s=%q on <%s>: not a path on the server", k, a.Val, n.Data)
					}
				case k == "src" && a.Val != "/static/live.js":
					t.Errorf("src=%q", a.Val)
				}
			}
			if n.Data == "script" && n.FirstChild != nil {
				t.Errorf("an inline script: %q", n.FirstChild.Data)
			}
		}
		if n.Type == html.TextNode && n.Parent != nil && n.Parent.Data != "style" {
			text.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if visible != "" && !strings.Contains(text.String(), visible) {
		t.Errorf("the text does not show %q", visible)
	}
}

// TestServePagesGolden compares the served pages, with markup in every
// field, with their reviewed golden files.
func TestServePagesGolden(t *testing.T) {
	for name, p := range servePages("<b>x</b>") {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteServePage(&b, p); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "html", name+".html"), b.Bytes())
		})
	}
}

func TestReasonText(t *testing.T) {
	for _, code := range []string{ledger.ReasonScenarioDiffers, ledger.ReasonScenarioUnknown, ledger.ReasonDataResetDiffers,
		ledger.ReasonDurationDiffers, ledger.ReasonRunFailed, ledger.ReasonCollectorFailed, ledger.ReasonWithinNoise,
		ledger.ReasonNoiseUnknown, ledger.ReasonCommitDiffers, ledger.ReasonSameSession} {
		if got := ReasonText(ledger.Reason{Code: code}); got == code || got == "" {
			t.Errorf("%s has no wording", code)
		}
	}
}
