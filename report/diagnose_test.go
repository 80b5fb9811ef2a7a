package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/internal/browsertest"
	"github.com/stacktune/stacktune/internal/golden"
	"github.com/stacktune/stacktune/internal/skip"
)

// diagnoseFixture is a real diagnosis: package diagnose's TestDiagnoseStack
// (a sandbox MariaDB, a test app with a scan and an N+1 behind nginx, one
// 8 s scenario run), saved as JSON.
func diagnoseFixture(t testing.TB) *diagnose.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "diagnose", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r diagnose.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// diagnoseHostile is the fixture with s in every string that comes from
// a server, a log or the user: target, endpoints, fingerprints, samples,
// DDL, users and hosts, findings, notes, variables.
func diagnoseHostile(t testing.TB, s string) *diagnose.Result {
	r := diagnoseFixture(t)
	r.Bench.Target += s
	r.Bench.Scenario = s
	r.Server += s
	r.Capture.How += s
	r.Capture.Changed[0].Before = s
	r.Capture.Leftovers = []string{"SET GLOBAL x = '" + s + "';"}
	r.Capture.Restored = false
	r.Notes = append(r.Notes, s)
	r.AccessLogs = []string{"/var/log/" + s}
	for i := range r.Hotspots {
		r.Hotspots[i].What += s
		r.Hotspots[i].Details = append(r.Hotspots[i].Details, s)
	}
	for i := range r.Endpoints {
		r.Endpoints[i].Path += s
		r.Endpoints[i].Method = s
	}
	for i := range r.Classes {
		r.Classes[i].Fingerprint += s
		r.Classes[i].Endpoint += s
	}
	for i := range r.Attribution.Classes {
		r.Attribution.Classes[i].Fingerprint += s
		for j := range r.Attribution.Classes[i].Endpoints {
			r.Attribution.Classes[i].Endpoints[j].Endpoint += s
		}
	}
	r.Attribution.Classes = append(r.Attribution.Classes, diagnose.ClassAttribution{Fingerprint: s, Note: s})
	for i := range r.NPlusOne {
		r.NPlusOne[i].Sample += s
		r.NPlusOne[i].Endpoint += s
		r.NPlusOne[i].Note = s
	}
	for i := range r.Indexes.Proposals {
		r.Indexes.Proposals[i].DDL += " /* " + s + " ``` */"
		r.Indexes.Proposals[i].Reasons = append(r.Indexes.Proposals[i].Reasons, s)
	}
	if q := r.Requests; q != nil {
		q.Method += s
		q.Notes = append(q.Notes, s)
		q.Skipped[skip.Code(s)] = 1
		for i := range q.Endpoints {
			q.Endpoints[i].Endpoint += s
			for j := range q.Endpoints[i].Classes {
				q.Endpoints[i].Classes[j].Fingerprint += s
			}
		}
		for i := range q.Classes {
			q.Classes[i].Fingerprint += s
			for j := range q.Classes[i].Endpoints {
				q.Classes[i].Endpoints[j].Endpoint += s
			}
		}
	}
	for i := range r.NPlusOne {
		r.NPlusOne[i].Problem += s
		r.NPlusOne[i].Rewrite += s
	}
	r.IndexError = s
	for i := range r.Audit.Findings {
		r.Audit.Findings[i].Title += s
	}
	r.ConnCheck.Error = s
	for i := range r.ConnCheck.Groups {
		r.ConnCheck.Groups[i].User += s
		r.ConnCheck.Groups[i].Host += s
	}
	return r
}

// TestDiagnoseGolden renders the real diagnosis in every format and
// compares each with its reviewed golden file.
func TestDiagnoseGolden(t *testing.T) {
	r := diagnoseFixture(t)
	for _, f := range DiagnoseFormats {
		t.Run(f, func(t *testing.T) {
			var b bytes.Buffer
			if err := Diagnose(&b, r, f); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "diagnose", "diagnose."+f), b.Bytes())
		})
	}
}

// TestDiagnoseSections: the report says what the issue asks of it, in
// order, in text and Markdown: the ranking (slow page and its class
// first), the per-request view measured by the trace run, the estimate
// said to be the fallback with its method, the N+1 with its page, calls
// per request and rewrite, the proven index with its evidence, the audit
// (with the N+1), the connections not captured with the fix, the capture
// put back.
func TestDiagnoseSections(t *testing.T) {
	r := diagnoseFixture(t)
	for _, f := range []string{Text, Markdown} {
		var b bytes.Buffer
		if err := Diagnose(&b, r, f); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		pos := 0
		for _, want := range []string{
			"Where the time goes", "GET /item", "select id, name from items where code = ?", "of wall×conns",
			"Endpoints by total time", "Query classes by total time",
			"Which endpoint runs which SQL, per request (trace run: mysqlproxy)", "GET /friends", "30 per request (max 30, in 67 of 67 requests)",
			"Which endpoints the top classes belong to (estimate: the fallback", "non-negative least squares",
			"N+1 patterns", "GET /friends runs select id, name, bio from users where id = ? 30.0 times per request", "Rewrite: one query for all the rows",
			"Proven indexes", "ADD INDEX", "rows examined 59,317 → 20",
			"Audit findings (12)", "N+1 queries in GET /friends", "The slow query log is off",
			"Connections not captured", "--app-restart", "held@127.0.0.1",
			"What the capture changed", "long_query_time: 10.000000 → 0.000000 during the run → 10.000000 after",
		} {
			if f == Markdown {
				want = mdEscape(want)
			}
			i := strings.Index(out[pos:], want)
			if i < 0 {
				t.Errorf("%s: no %q after byte %d", f, want, pos)
				continue
			}
			pos += i + len(want)
		}
	}
}

// TestDiagnoseHostile puts hostile strings in every field a server, a
// log or the user fills: text and Markdown show them cleaned, JSON keeps
// them escaped, HTML holds only the template's elements and shows them
// as text.
func TestDiagnoseHostile(t *testing.T) {
	markup := `"><img src=x onerror=alert(1)><script>alert(1)</script></pre></title></style><!--`
	for _, s := range []string{kitchenSink, markup} {
		r := diagnoseHostile(t, s)
		for _, f := range []string{Text, Markdown} {
			var b bytes.Buffer
			if err := Diagnose(&b, r, f); err != nil {
				t.Fatal(err)
			}
			checkClean(t, b.String(), false)
			if f == Markdown && strings.Contains(mdOutsideCode(b.String()), "<script>") {
				t.Error("raw markup in Markdown outside code")
			}
		}
		var js bytes.Buffer
		if err := Diagnose(&js, r, JSON); err != nil {
			t.Fatal(err)
		}
		checkClean(t, js.String(), false)
		var back diagnose.Result
		enc, _ := json.Marshal(s)
		var want string
		json.Unmarshal(enc, &want)
		if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Notes[len(back.Notes)-1] != want {
			t.Errorf("JSON round trip: %v %q", err, back.Notes)
		}
		var h bytes.Buffer
		if err := Diagnose(&h, r, HTML); err != nil {
			t.Fatal(err)
		}
		doc, err := html.Parse(&h)
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode {
				if !htmlElements[n.Data] {
					t.Errorf("element <%s>", n.Data)
				}
				for _, a := range n.Attr {
					if !htmlAttrs[strings.ToLower(a.Key)] {
						t.Errorf("attribute %s on <%s>", a.Key, n.Data)
					}
				}
			}
			if n.Type == html.TextNode && (n.Parent == nil || n.Parent.Data != "style") {
				text.WriteString(n.Data)
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
		if !strings.Contains(text.String(), Clean(s)) {
			t.Errorf("the page does not show %q", Clean(s))
		}
		checkClean(t, text.String(), true)
	}
}

// TestDiagnoseEmpty: nothing measured, nil parts, every format.
func TestDiagnoseEmpty(t *testing.T) {
	for _, r := range []*diagnose.Result{nil, {}} {
		for _, f := range DiagnoseFormats {
			var b bytes.Buffer
			if err := Diagnose(&b, r, f); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			if b.Len() == 0 {
				t.Errorf("%s: nothing written", f)
			}
		}
	}
	if err := Diagnose(&bytes.Buffer{}, nil, "csv"); err == nil || !strings.Contains(err.Error(), "html") {
		t.Errorf("csv: %v", err)
	}
}

// TestDiagnoseHTMLInBrowser loads the page in headless Chromium: no
// console problem, no request, the chart drawn with a bar per hotspot,
// and the hostile page adds no element.
func TestDiagnoseHTMLInBrowser(t *testing.T) {
	b := browsertest.Start(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		r    *diagnose.Result
	}{{"real", diagnoseFixture(t)}, {"hostile", diagnoseHostile(t, `"><img src=x onerror=alert(1)><script>alert(1)</script>`)}} {
		var page bytes.Buffer
		if err := Diagnose(&page, c.r, HTML); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, c.name+".html")
		if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		p := b.Open(t, path)
		if got := p.Problems(); len(got) > 0 {
			t.Errorf("%s: the page reported problems: %v", c.name, got)
		}
		if got := p.OtherRequests(); len(got) > 0 {
			t.Errorf("%s: the page made requests: %q", c.name, got)
		}
		if n := p.Count(t, "script, img"); n != 0 {
			t.Errorf("%s: %d script or img elements", c.name, n)
		}
		if n := p.Count(t, "#where svg rect"); n < len(c.r.Hotspots) {
			t.Errorf("%s: %d bars for %d hotspots", c.name, n, len(c.r.Hotspots))
		}
		if txt := p.Text(t, "#classes"); !strings.Contains(txt, "select id, name from items where code = ?") {
			t.Errorf("%s: the classes section shows %q", c.name, txt)
		}
	}
}

// mdOutsideCode is Markdown without its fenced blocks and code spans,
// where markup is shown as it is.
func mdOutsideCode(md string) string {
	var out strings.Builder
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") {
			fence = t[:strings.IndexFunc(t, func(r rune) bool { return r != '`' })]
			continue
		}
		parts := strings.Split(line, "`")
		for i, p := range parts {
			if i%2 == 0 {
				out.WriteString(p)
			}
		}
		out.WriteString("\n")
	}
	return out.String()
}
