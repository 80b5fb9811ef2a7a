package report

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/internal/browsertest"
	"github.com/stacktune/stacktune/internal/golden"
)

// The HTML fixtures: testdata/html/hostile-access.log and
// hostile-access-b.log are JSON-lines access logs (nginx escape=json) of
// the same site twice, with other request times, whose paths, query
// strings and user agents carry markup (<script>, "><img src=x
// onerror=...>, <svg/onload=...>), terminal escapes and bidirectional
// controls, as an attacker can put them in a request line.
const (
	hostileLogA = "testdata/html/hostile-access.log"
	hostileLogB = "testdata/html/hostile-access-b.log"
)

// hostilePaths are the endpoints of the hostile logs as they came from
// the log: the page must show each as text (cleaned as Clean does).
var hostilePaths = []string{
	`/x"><script>alert(1)</script>`,
	`/a/"><img src=x onerror=alert(1)>`,
	"/esc\x1b[2J\x1b]0;pwned\x07",
	"/admin\u202e/txt.exe\u2066x\u2069",
}

// profileLog profiles access logs as `stacktune http` does (format
// detected from the first lines, one worker), the inputs named by their
// base names.
func profileLog(t testing.TB, paths ...string) *httpprof.Report {
	t.Helper()
	var inputs []input.Input
	var names []string
	for _, p := range paths {
		in, c, err := input.Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		inputs = append(inputs, in)
		names = append(names, filepath.Base(p))
	}
	first, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	parser, err := accesslog.Detect(bytes.SplitAfter(first, []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	res, err := httpprof.FromLogs(context.Background(), inputs, parser, httpprof.LogOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := res.Report(parser, httpprof.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep.Overall.Inputs = names
	return rep
}

func slowLogDigest(t testing.TB, limit int, paths ...string) *digest.Report {
	t.Helper()
	var inputs []input.Input
	var names []string
	for _, p := range paths {
		in, c, err := input.Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		inputs = append(inputs, in)
		names = append(names, filepath.Base(p))
	}
	agg, stats, err := digest.FromSlowLogs(context.Background(), inputs, digest.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := agg.Report(digest.ReportOptions{Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	rep.FillSkipped(stats)
	rep.Overall.Inputs = names
	return rep
}

// htmlPage is one page the HTML tests render.
type htmlPage struct {
	name   string
	render func(w io.Writer) error
	// charted: the page has a chart with bars.
	charted bool
	// visible are strings the page must show as text, raw (the page shows
	// them cleaned).
	visible []string
}

// htmlGoldenElsewhere are the pages whose golden file another test owns
// (the rest are testdata/html/NAME.html).
var htmlGoldenElsewhere = map[string]string{"requests-profiled": filepath.Join("testdata", "requests", "profiled.html")}

// htmlPages are the pages under test: a digest of real slow logs, a
// profile of a real access log, the hostile access logs' profile and
// comparison, the kitchen-sink reports of the other formats' hostile
// tests, and the skeleton with every kind of block.
func htmlPages(t testing.TB) []htmlPage {
	dig := slowLogDigest(t, 8, "../testdata/slowlogs/slow014.log", "../testdata/slowlogs/slow023.log",
		"../testdata/slowlogs/slow002.log", "../testdata/slowlogs/slow006.log")
	access := profileLog(t, "../accesslog/testdata/logs/nginx-timed.log")
	hostA, hostB := profileLog(t, hostileLogA), profileLog(t, hostileLogB)
	diff := httpprof.Diff(hostA, hostB)
	return []htmlPage{
		{"digest", func(w io.Writer) error { return Digest(w, dig, HTML) }, true, []string{"Query digest", dig.Classes[0].ID}},
		{"http", func(w io.Writer) error { return HTTP(w, access, HTML) }, true, []string{"Access-log profile", "/api/v1/users/:num"}},
		{"http-hostile", func(w io.Writer) error { return HTTP(w, hostA, HTML) }, true, hostilePaths},
		{"httpdiff-hostile", func(w io.Writer) error { return HTTPDiff(w, diff, HTML, 0) }, true, hostilePaths},
		{"digest-kitchensink", func(w io.Writer) error { return Digest(w, hostileDigest(kitchenSink), HTML) }, true, []string{kitchenSink}},
		{"http-kitchensink", func(w io.Writer) error { return HTTP(w, hostileHTTP(kitchenSink), HTML) }, true, []string{kitchenSink}},
		{"skeleton", func(w io.Writer) error { return WriteHTMLPage(w, skeletonPage()) }, true, []string{"Every block", "runs"}},
		{"empty", func(w io.Writer) error { return HTTP(w, nil, HTML) }, false, []string{"No endpoints."}},
		{"loop", func(w io.Writer) error { return Loop(w, loopHostileFixture(), HTML, "") }, true,
			append([]string{"score transitions", "memcached gets 1.47 sets per hit", "performance_schema is off | no digests <b>"}, hostileMarkup...)},
		{"loop-empty", func(w io.Writer) error { return Loop(w, nil, HTML, "") }, false, []string{"No step was measured."}},
		{"requests-profiled", func(w io.Writer) error { return Requests(w, profiledFixture(t), HTML) }, false, []string{"Where each endpoint's time goes", "main.main"}},
		{"history", func(w io.Writer) error {
			runs := historyHostile()
			return WriteHTMLPage(w, TransitionsHTMLPage(history.Transitions(runs), runs))
		}, true, []string{"Score transitions", "nginx で静的ファイル配信", "cache | *all* the_things", hostileMarkup[0], hostileMarkup[1]}},
	}
}

// skeletonPage uses every block of the page skeleton, as other reports
// (the demo's, the history's) will.
func skeletonPage() *HTMLPage {
	return &HTMLPage{
		Title:   "Every block",
		Summary: []string{"one line of summary", "another, with <markup> & \x1b[1mescapes\x1b[0m"},
		Notes:   []string{"a note\non two lines\twith a tab"},
		Sections: []HTMLSection{
			{Title: "Scores", ID: "scores <x>", Blocks: []HTMLBlock{
				HTMLText("Median score per step, each run a dot; the last step lost time (negative)."),
				HTMLBarChart{Caption: "Score by step", Bars: []HTMLBar{
					{Label: "baseline", Value: 550, Text: "550", Points: []float64{527, 550, 570}},
					{Label: "indexes", Value: 10640, Text: "10640 (19.35x)", Points: []float64{8882, 10640, 11092}},
					{Label: "N+1 queries", Value: 47463, Text: "47463 (86.30x)", Points: []float64{50412, 43440, 47463}},
				}},
				HTMLBarChart{Caption: "Change per step", Bars: []HTMLBar{
					{Label: "faster", Value: 3.5, Text: "+3.5s"},
					{Label: "slower, with a label far longer than the label column shows", Value: -1.25, Text: "-1.25s"},
					{Label: "same", Value: 0, Text: "0"},
				}},
			}},
			{Title: "Steps", Blocks: []HTMLBlock{
				HTMLTable{Caption: "runs", Columns: []HTMLColumn{{Head: "#", Numeric: true}, {Head: "step"}, {Head: "change", Code: true}},
					Rows: [][]string{{"1", "baseline", "-"}, {"2", "indexes", "ALTER TABLE t ADD INDEX (a)"}, {"3"}}},
				HTMLTable{Caption: "nothing here", Columns: []HTMLColumn{{Head: "a"}}, Empty: "No rows."},
				HTMLList("first item", "second <item>"),
				HTMLSection{Title: "A nested section", Blocks: []HTMLBlock{
					HTMLPre("SELECT *\n\tFROM t\n WHERE a = '</pre><script>alert(1)</script>'"),
					HTMLSection{Title: "Nested deeper", Blocks: []HTMLBlock{HTMLSection{Title: "and deeper still (h4)"}}},
				}},
			}},
		},
	}
}

func renderPage(t testing.TB, p htmlPage) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := p.render(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestHTMLGolden compares every page under test with its reviewed golden
// file in testdata/html.
func TestHTMLGolden(t *testing.T) {
	for _, p := range htmlPages(t) {
		t.Run(p.name, func(t *testing.T) {
			path, ok := htmlGoldenElsewhere[p.name]
			if !ok {
				path = filepath.Join("testdata", "html", p.name+".html")
			}
			golden.Check(t, path, renderPage(t, p))
		})
	}
}

// htmlElements and htmlAttrs are every element and attribute the pages
// may hold: anything else was injected.
var (
	htmlElements = map[string]bool{"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true,
		"h1": true, "h2": true, "h3": true, "h4": true, "p": true, "ul": true, "li": true, "pre": true, "section": true,
		"div": true, "table": true, "caption": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
		"figure": true, "figcaption": true, "footer": true,
		"svg": true, "g": true, "rect": true, "text": true, "line": true, "circle": true}
	htmlAttrs = map[string]bool{"lang": true, "charset": true, "http-equiv": true, "content": true, "name": true,
		"class": true, "id": true, "xmlns": true, "role": true, "aria-label": true, "width": true, "height": true,
		"viewbox": true, "x": true, "y": true, "x1": true, "y1": true, "x2": true, "y2": true, "cx": true, "cy": true,
		"r": true, "text-anchor": true}
)

// TestHTMLMarkup parses every page as a browser would (x/net/html) and
// checks that it holds only the elements and attributes the templates
// write, that its text shows the log's strings cleaned, that no text
// comes out raw that Clean escapes, and that the source is one
// well-formed document without tabs or data-borne line starts.
func TestHTMLMarkup(t *testing.T) {
	for _, p := range htmlPages(t) {
		t.Run(p.name, func(t *testing.T) {
			out := renderPage(t, p)
			checkClean(t, string(out), false)
			if bytes.Contains(out, []byte("\t")) {
				t.Error("a tab in the HTML source")
			}
			if n := bytes.Count(out, []byte("<html")); n != 1 {
				t.Errorf("%d <html> elements", n)
			}
			doc, err := html.Parse(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			var walk func(n *html.Node)
			walk = func(n *html.Node) {
				switch n.Type {
				case html.ElementNode:
					if !htmlElements[n.Data] {
						t.Errorf("element <%s>", n.Data)
					}
					for _, a := range n.Attr {
						if !htmlAttrs[strings.ToLower(a.Key)] {
							t.Errorf("attribute %s=%q on <%s>", a.Key, a.Val, n.Data)
						}
					}
				case html.TextNode:
					if n.Parent == nil || n.Parent.Data != "style" {
						text.WriteString(n.Data)
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(doc)
			for _, v := range p.visible {
				if !strings.Contains(text.String(), Clean(v)) {
					t.Errorf("the page's text does not show %q", Clean(v))
				}
			}
			checkClean(t, text.String(), true) // tabs of pre-formatted text are text
		})
	}
}

// TestHTMLHostileStrings renders each hostile string of the other formats'
// tests in every field of a digest, a profile and a comparison: the
// markup stays the templates' own, and the text shows each string once
// cleaned.
func TestHTMLHostileStrings(t *testing.T) {
	for _, h := range append(hostile, struct{ name, s string }{"markup", `"><img src=x onerror=alert(1)><script>alert(1)</script></pre></title></style><!--`}) {
		for _, r := range renderers {
			if r.name != "digest" && r.name != "http" && r.name != "httpdiff" {
				continue
			}
			t.Run(h.name+"/"+r.name, func(t *testing.T) {
				var b bytes.Buffer
				if err := r.render(&b, r.hostile(h.s), HTML); err != nil {
					t.Fatal(err)
				}
				doc, err := html.Parse(&b)
				if err != nil {
					t.Fatal(err)
				}
				var text strings.Builder
				var walk func(n *html.Node)
				walk = func(n *html.Node) {
					if n.Type == html.ElementNode && !htmlElements[n.Data] {
						t.Errorf("element <%s>", n.Data)
					}
					if n.Type == html.ElementNode {
						for _, a := range n.Attr {
							if !htmlAttrs[strings.ToLower(a.Key)] {
								t.Errorf("attribute %s on <%s>", a.Key, n.Data)
							}
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
				if !strings.Contains(text.String(), Clean(h.s)) {
					t.Errorf("the text does not show %q", Clean(h.s))
				}
			})
		}
	}
}

var svgNumber = regexp.MustCompile(`^-?[0-9]+\.[0-9]$`)

// TestHTMLBarChart checks the chart's geometry: bars in proportion,
// negative ones left of a zero line, points on their rows, labels cut,
// and no NaN or infinity in the SVG.
func TestHTMLBarChart(t *testing.T) {
	c := HTMLBarChart{Bars: []HTMLBar{
		{Label: "a", Value: 2, Points: []float64{1, 3}},
		{Label: "b", Value: -1},
		{Label: strings.Repeat("x", 100), Value: math.NaN()},
		{Label: "d", Value: math.Inf(1)},
	}}
	v := c.htmlNode(2).Chart
	if len(v.Bars) != 4 {
		t.Fatalf("%d bars", len(v.Bars))
	}
	num := func(s string) float64 {
		if !svgNumber.MatchString(s) {
			t.Fatalf("SVG number %q", s)
		}
		var f float64
		for _, c := range strings.TrimPrefix(s, "-") {
			if c != '.' {
				f = f*10 + float64(c-'0')
			}
		}
		f /= 10
		if strings.HasPrefix(s, "-") {
			f = -f
		}
		return f
	}
	// The scale runs from -1 to 3 (a point): zero is at a quarter.
	trackX, trackW := num(v.Bars[0].TrackX), num(v.Bars[0].TrackW)
	zero := trackX + trackW/4
	if !v.ZeroLine || math.Abs(num(v.ZeroX)-zero) > 0.1 {
		t.Errorf("zero line at %s (shown %v), want %.1f", v.ZeroX, v.ZeroLine, zero)
	}
	if x, w := num(v.Bars[0].X), num(v.Bars[0].W); math.Abs(x-zero) > 0.1 || math.Abs(w-trackW/2) > 0.1 {
		t.Errorf("bar a at %v width %v, want %v width %v", x, w, zero, trackW/2)
	}
	if x, w := num(v.Bars[1].X), num(v.Bars[1].W); math.Abs(x-trackX) > 0.1 || math.Abs(w-trackW/4) > 0.1 || v.Bars[1].Class != "bar neg" {
		t.Errorf("bar b at %v width %v class %q, want %v width %v, negative", x, w, v.Bars[1].Class, trackX, trackW/4)
	}
	if w := num(v.Bars[2].W); w != 0 {
		t.Errorf("NaN bar width %v", w)
	}
	if w := num(v.Bars[3].W); w != 0 {
		t.Errorf("infinite bar width %v", w)
	}
	if len(v.Bars[0].Points) != 2 || math.Abs(num(v.Bars[0].Points[1].CX)-(trackX+trackW)) > 0.1 {
		t.Errorf("points %v", v.Bars[0].Points)
	}
	if got := v.Bars[2].Label; got != strings.Repeat("x", HTMLChartLabelMax-1)+"…" {
		t.Errorf("long label %q", got)
	}
	if got := v.Bars[2].Tip; got != strings.Repeat("x", 100) {
		t.Errorf("tooltip %q, want the whole label", got)
	}
	var b bytes.Buffer
	if err := WriteHTMLPage(&b, &HTMLPage{Sections: []HTMLSection{{Blocks: []HTMLBlock{c}}}}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
		t.Error("NaN or Inf in the SVG")
	}

	// Positive values only: no zero line, the largest bar full length,
	// Max extends the scale.
	v = HTMLBarChart{Bars: []HTMLBar{{Label: "a", Value: 1}, {Label: "b", Value: 0.5}}, Max: 2}.htmlNode(2).Chart
	if v.ZeroLine {
		t.Error("a zero line without negative values")
	}
	if w, tw := num(v.Bars[0].W), num(v.Bars[0].TrackW); math.Abs(w-tw/2) > 0.1 {
		t.Errorf("bar 1 of max 2 is %v of %v", w, tw)
	}
	if v := (HTMLBarChart{}).htmlNode(2).Chart; len(v.Bars) != 0 || v.Empty != "Nothing to chart." {
		t.Errorf("empty chart %+v", v)
	}
}

// screensDir is where the browser tests copy their screenshots for people
// to look at.
var screensDir = filepath.Join(os.TempDir(), "stacktune-screens")

// TestHTMLInBrowser loads every page under test in headless Chromium
// (internal/browsertest): it must load offline without a console error,
// warning or exception, request nothing, hold no script, image or event
// handler (whatever its logs said), draw its charts, and show the log's
// strings as text. Screenshots are written to a temporary directory and
// copied to $TMPDIR/stacktune-screens.
func TestHTMLInBrowser(t *testing.T) {
	b := browsertest.Start(t)
	dir := t.TempDir()
	for _, pg := range htmlPages(t) {
		t.Run(pg.name, func(t *testing.T) {
			path := filepath.Join(dir, pg.name+".html")
			if err := os.WriteFile(path, renderPage(t, pg), 0o644); err != nil {
				t.Fatal(err)
			}
			p := b.Open(t, path)
			if got := p.Problems(); len(got) > 0 {
				t.Errorf("the page reported problems: %v", got)
			}
			if got := p.OtherRequests(); len(got) > 0 {
				t.Errorf("the page made requests: %q", got)
			}
			for _, sel := range []string{"script", "img", "iframe", "object", "embed", "link", "base", "form", "a", "[onerror]", "[onload]", "[src]", "[href]", "[style]"} {
				if n := p.Count(t, sel); n > 0 {
					t.Errorf("%d elements match %s", n, sel)
				}
			}
			var handlers int
			p.Eval(t, `[...document.querySelectorAll("*")].filter(e => [...e.attributes].some(a => a.name.toLowerCase().startsWith("on"))).length`, &handlers)
			if handlers > 0 {
				t.Errorf("%d elements with an event handler attribute", handlers)
			}
			var svgDocs int
			p.Eval(t, `document.querySelectorAll("svg").length`, &svgDocs)
			if pg.charted {
				if n := p.Count(t, "svg.chart rect.bar"); n == 0 {
					t.Error("no bars drawn")
				}
				for i := range svgDocs {
					var box struct{ W, H float64 }
					p.Eval(t, `(r => ({W: r.width, H: r.height}))(document.querySelectorAll("svg")[`+strconv.Itoa(i)+`].getBoundingClientRect())`, &box)
					if box.W <= 0 || box.H <= 0 {
						t.Errorf("svg %d is %v x %v", i, box.W, box.H)
					}
				}
				// Every bar's label and value are drawn inside the chart.
				var outside []string
				p.Eval(t, `[...document.querySelectorAll("svg.chart")].flatMap(s => { const r = s.getBoundingClientRect();
					return [...s.querySelectorAll("text")].filter(t => { const b = t.getBoundingClientRect();
						return b.left < r.left - 0.5 || b.right > r.right + 0.5 }).map(t => t.textContent) })`, &outside)
				if len(outside) > 0 {
					t.Errorf("chart texts drawn outside their chart: %q", outside)
				}
			}
			if w, h := p.Size(t, "body"); w <= 0 || h <= 0 {
				t.Errorf("body is %v x %v", w, h)
			}
			text := p.Text(t, "body")
			for _, v := range pg.visible {
				if !strings.Contains(text, Clean(v)) {
					t.Errorf("the page does not show %q", Clean(v))
				}
			}
			if title := p.Text(t, "h1"); title == "" {
				t.Error("no heading")
			}
			shot := filepath.Join(dir, pg.name+".png")
			p.Screenshot(t, shot)
			copyFile(t, shot, filepath.Join(screensDir, pg.name+".png"))
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", to)
}
