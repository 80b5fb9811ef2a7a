package report

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/stacktune/stacktune/history"
)

// historySampleLabels are the tick labels of historySample, as charts
// show them.
var historySampleLabels = []string{
	"1. baseline", "2. add index on relations", "3. N+1 fix in GET /api/isu", "4. baseline (again)",
	"5. nginx で静的ファイル配信", "6. (no label)", "7. cache | *all* the_things",
}

func drawChart(t *testing.T, runs []history.Run, kind string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := TransitionsChart(&b, history.Transitions(runs), runs, kind); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestChartKind(t *testing.T) {
	for _, tc := range []struct {
		path, want string
		err        bool
	}{
		{"scores.svg", ChartSVG, false},
		{"/tmp/a.b/scores.PNG", ChartPNG, false},
		{"report.html", ChartHTML, false},
		{"report.htm", ChartHTML, false},
		{"scores.pdf", "", true},
		{"scores", "", true},
		{"svg", "", true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, err := ChartKind(tc.path)
			if got != tc.want || (err != nil) != tc.err {
				t.Errorf("ChartKind(%q) = %q, %v; want %q (error %v)", tc.path, got, err, tc.want, tc.err)
			}
		})
	}
}

func TestTransitionsChartErrors(t *testing.T) {
	runs := historySample()
	if err := TransitionsChart(io.Discard, history.Transitions(runs), runs, "pdf"); err == nil || !strings.Contains(err.Error(), "svg, png, html") {
		t.Errorf("unknown kind: %v", err)
	}
	for _, kind := range ChartKinds {
		if err := TransitionsChart(io.Discard, nil, nil, kind); !errors.Is(err, ErrNoSteps) {
			t.Errorf("%s of no steps: %v, want ErrNoSteps", kind, err)
		}
	}
}

// svgText returns the character data of every element of an SVG document,
// failing the test when it is not well-formed XML.
func svgText(t *testing.T, doc []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var text strings.Builder
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			text.Write(tok)
			text.WriteByte('\n')
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return text.String()
}

func TestSVGChart(t *testing.T) {
	text := svgText(t, drawChart(t, historySample(), ChartSVG))
	for _, want := range append(historySampleLabels, scoreChartTitle, "http://127.0.0.1:8080/", "score", "median", "failed run", "15000.5") {
		if !strings.Contains(text, want) {
			t.Errorf("SVG text lacks %q", want)
		}
	}
}

func TestSVGChartLongLabels(t *testing.T) {
	long := strings.Repeat("very long label ", 5)
	var pairs []any
	for i := 0; i < 12; i++ {
		pairs = append(pairs, long+string(rune('A'+i)), i*100)
	}
	text := svgText(t, drawChart(t, historyRunsOf(pairs...), ChartSVG))
	if strings.Contains(text, long) {
		t.Error("a long label was not shortened")
	}
	if want := string([]rune("1. " + long)[:maxTickLabel-1]) + "…"; !strings.Contains(text, want) {
		t.Errorf("shortened label missing:\n%s", text)
	}
}

func TestPNGChart(t *testing.T) {
	for _, tc := range []struct {
		name       string
		runs       []history.Run
		wantW      int
		wantHeight int
	}{
		{"sample", historySample(), 960, 540},
		{"one run", historyRunsOf("only", 5), 960, 540},
		{"zero scores", historyRunsOf("!down", 0, "!down", 0), 960, 540},
		{"many steps widen the chart", historyRunsOf(manySteps(20)...), 20 * 80, 540},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := png.Decode(bytes.NewReader(drawChart(t, tc.runs, ChartPNG)))
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() != tc.wantW || b.Dy() != tc.wantHeight {
				t.Errorf("size %dx%d, want %dx%d", b.Dx(), b.Dy(), tc.wantW, tc.wantHeight)
			}
		})
	}
}

func manySteps(n int) []any {
	var pairs []any
	for i := 0; i < n; i++ {
		pairs = append(pairs, "step "+string(rune('a'+i)), 1000+i*50)
	}
	return pairs
}

var scriptSrc = regexp.MustCompile(`(?i)<script[^>]*\bsrc\s*=`)

func TestHTMLChart(t *testing.T) {
	page := string(drawChart(t, historySample(), ChartHTML))
	for _, want := range append(historySampleLabels, scoreChartTitle, "http://127.0.0.1:8080/", `"failed run"`, "echarts.init(") {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if m := scriptSrc.FindString(page); m != "" {
		t.Errorf("page loads a script: %s", m)
	}
	for _, host := range []string{"go-echarts.github.io", "cdn.jsdelivr.net", "unpkg.com"} {
		if strings.Contains(page, host) {
			t.Errorf("page names %s", host)
		}
	}
	js, err := echartsJS()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, js) {
		t.Error("page does not inline ECharts")
	}
}

func TestHTMLChartLabelCannotEndTheScript(t *testing.T) {
	runs := historyRunsOf("</script><script>alert(1)</script>", 1, "<!-- x", 2)
	page := string(drawChart(t, runs, ChartHTML))
	js, _ := echartsJS()
	rest := strings.Replace(page, js, "", 1)
	// Scripts: the inlined ECharts and the chart's own.
	if n := strings.Count(strings.ToLower(rest), "</script"); n != 2 {
		t.Errorf("%d </script> tags outside ECharts, want 2", n)
	}
	if strings.Contains(rest, "<!--") {
		t.Error("a label opened an HTML comment")
	}
	if !strings.Contains(rest, "<\u200b/script><script>alert(1)<\u200b/script>") {
		t.Error("the label is not shown")
	}
}

func TestHTMLChartDeterministic(t *testing.T) {
	a, b := drawChart(t, historySample(), ChartHTML), drawChart(t, historySample(), ChartHTML)
	if !bytes.Equal(a, b) {
		t.Error("two renderings of the same runs differ")
	}
}

// TestEChartsAsset checks the embedded library against the hash in
// assets/README.md.
func TestEChartsAsset(t *testing.T) {
	f, err := os.Open("assets/echarts-5.6.0.min.js.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, zr); err != nil {
		t.Fatal(err)
	}
	const want = "bf4a223524e40b77c304bec67e1222cf551f14880cf42c69dc046558e11c07b1"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("echarts.min.js sha256 %s, want %s", got, want)
	}
}

func TestMatchChartRuns(t *testing.T) {
	runs := historySample()
	steps := history.Transitions(runs)
	if _, ok := matchChartRuns(steps, runs); !ok {
		t.Error("the runs the steps came from do not match")
	}
	for name, other := range map[string][]history.Run{
		"none":           nil,
		"one short":      runs[:len(runs)-1],
		"one extra":      append(historySample(), history.Run{Label: "x"}),
		"different runs": historyRunsOf("a", 1, "b", 2),
	} {
		if _, ok := matchChartRuns(steps, other); ok {
			t.Errorf("%s: matched", name)
		}
	}
	// Unmatched runs still chart, every point as a run.
	c := newScoreChart(steps, historyRunsOf("a", 1))
	if c.passed != nil {
		t.Error("passed marks from runs that do not match")
	}
}

func TestChartSubtitle(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs []history.Run
		want string
	}{
		{"none", nil, ""},
		{"one target, one day", historySample(), "http://127.0.0.1:8080/, 2025-11-01"},
		{"scenario", []history.Run{{Target: "http://u:p@h/", Scenario: "login", Started: historyT0}}, "http://h/, scenario login, 2025-11-01"},
		{"mixed targets, several days", []history.Run{{Target: "http://a/", Started: historyT0}, {Target: "http://b/", Started: historyT0.AddDate(0, 0, 2)}}, "2025-11-01 to 2025-11-03"},
		{"no times", []history.Run{{Target: "http://a/"}}, "http://a/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := chartSubtitle(tc.runs); got != tc.want {
				t.Errorf("chartSubtitle = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestChartDrawable(t *testing.T) {
	p := plot.New()
	sty := p.X.Tick.Label
	face := sty.Handler.Cache().Lookup(sty.Font, sty.Font.Size)
	for _, tc := range []struct{ in, want string }{
		{"add index", "add index"},
		{"N+1 fix | *x* é ü …", "N+1 fix | *x* é ü …"},
		{"nginx で静的", "nginx ???"},
	} {
		if got := chartDrawable(face, tc.in); got != tc.want {
			t.Errorf("chartDrawable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
