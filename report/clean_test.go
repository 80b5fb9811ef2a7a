package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"html"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/capacity"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/fleet"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/internal/golden"
	"github.com/stacktune/stacktune/internal/skip"
	"github.com/stacktune/stacktune/knobsearch"
	"github.com/stacktune/stacktune/tpcc"
	"github.com/stacktune/stacktune/tune"
)

// unclean reads Clean's output back by its documented rule: \x and two hex
// digits is one byte, any other backslash is itself.
func unclean(s string) string {
	unhex := func(c byte) (byte, bool) {
		switch {
		case c >= '0' && c <= '9':
			return c - '0', true
		case c >= 'a' && c <= 'f':
			return c - 'a' + 10, true
		case c >= 'A' && c <= 'F':
			return c - 'A' + 10, true
		}
		return 0, false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			hi, ok1 := unhex(s[i+2])
			lo, ok2 := unhex(s[i+3])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestClean(t *testing.T) {
	cases := []struct {
		name, in, line, block string // block "" means the same as line
	}{
		{"plain", "SELECT a FROM t WHERE b = 'x' -- µs → é 日本", "SELECT a FROM t WHERE b = 'x' -- µs → é 日本", ""},
		{"empty", "", "", ""},
		{"esc clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, ""},
		{"osc title bel", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, ""},
		{"osc hyperlink st", "\x1b]8;;http://evil/\x1b\\x\x1b]8;;\x1b\\", `\x1b]8;;http://evil/\x1b\x5cx\x1b]8;;\x1b\`, ""},
		{"bel", "ding\a", `ding\x07`, ""},
		{"cr overwrite", "SELECT 1\rDROP TABLE t", `SELECT 1\x0dDROP TABLE t`, ""},
		{"crlf", "a\r\nb", `a\x0d\x0ab`, "a\\x0d\nb"},
		{"nul", "a\x00b", `a\x00b`, ""},
		{"tab newline", "a\tb\nc", `a\x09b\x0ac`, "a\tb\nc"},
		{"vt ff", "\v\f", `\x0b\x0c`, ""},
		{"del", "a\x7fb", `a\x7fb`, ""},
		{"c1 csi", "\u009b31m", `\xc2\x9b31m`, ""},
		{"c1 nel", "a\u0085b", `a\xc2\x85b`, ""},
		{"raw c1 byte", "\x9b31m", `\x9b31m`, ""},
		{"invalid utf8", "\xff\xfe(\xc3(", `\xff\xfe(\xc3(`, ""},
		{"truncated rune", "a\xe2\x80", `a\xe2\x80`, ""},
		{"surrogate", "\xed\xa0\x80", `\xed\xa0\x80`, ""},
		{"overlong slash", "\xc0\xaf", `\xc0\xaf`, ""},
		{"replacement char kept", "\uFFFD", "\uFFFD", ""},
		{"bidi override", "abc\u202Edef", `abc\xe2\x80\xaedef`, ""},
		{"bidi isolate", "\u2066x\u2069", `\xe2\x81\xa6x\xe2\x81\xa9`, ""},
		{"line separator", "a\u2028b", `a\xe2\x80\xa8b`, ""},
		{"backslash kept", `a\b\n\'c\`, `a\b\n\'c\`, ""},
		{"backslash x escaped", `\x1b`, `\x5cx1b`, ""},
		{"double backslash x", `\\x`, `\\x5cx`, ""},
		{"backslash before control", "\\\x1b", `\\x1b`, ""},
		{"upper X kept", `\X1b`, `\X1b`, ""},
		{"long run", strings.Repeat("\x1b\x07\x00", 300), strings.Repeat(`\x1b\x07\x00`, 300), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Clean(c.in); got != c.line {
				t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.line)
			}
			wantBlock := c.block
			if wantBlock == "" {
				wantBlock = c.line
			}
			if got := CleanBlock(c.in); got != wantBlock {
				t.Errorf("CleanBlock(%q) = %q, want %q", c.in, got, wantBlock)
			}
			for _, out := range []string{Clean(c.in), CleanBlock(c.in)} {
				if back := unclean(out); back != c.in {
					t.Errorf("unclean(%q) = %q, want the input %q", out, back, c.in)
				}
			}
		})
	}
}

// checkClean fails when out holds a byte a terminal could act on: a C0
// control other than newline (and tab when allowTab), DEL, a C1 control,
// a bidirectional control or invalid UTF-8.
func checkClean(t *testing.T, out string, allowTab bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("invalid UTF-8 in %q", out)
		return
	}
	for i, r := range out {
		bad := r == 0x7f || unsafeRune(r) || (r < 0x20 && r != '\n' && !(allowTab && r == '\t'))
		if bad {
			lo := max(0, i-30)
			hi := min(len(out), i+30)
			t.Errorf("byte %#x at %d: %q", r, i, out[lo:hi])
			return
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, h := range hostile {
		f.Add(h.s)
	}
	f.Add(`\x41\\x\`)
	f.Add("a\\\x1b|b\\|c_d*e`f<g__h")
	f.Add("a\tb\nc\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, keep := range []bool{false, true} {
			out := clean(s, keep)
			checkClean(t, out, keep)
			if !keep && strings.ContainsAny(out, "\t\n") {
				t.Errorf("Clean(%q) = %q keeps a tab or newline", s, out)
			}
			if back := unclean(out); back != s {
				t.Errorf("clean(%q, %v) = %q reads back as %q", s, keep, out, back)
			}
			if !strings.Contains(s, `\x`) && out != s {
				// Text with nothing to escape must come out unchanged.
				safe := true
				for i, r := range s {
					if r == 0x7f || unsafeRune(r) || (r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD")) ||
						(r < 0x20 && !(keep && (r == '\n' || r == '\t'))) {
						safe = false
					}
				}
				if safe {
					t.Errorf("clean(%q, %v) = %q changed safe text", s, keep, out)
				}
			}
		}

		// Markdown escaping still works on cleaned text: rendered, it
		// reads as Clean wrote the raw string.
		want := strings.ReplaceAll(Clean(s), "<", "&lt;")
		if got := mdRendered(Clean(mdEscape(s))); got != want {
			t.Errorf("mdEscape then Clean of %q renders as %q, want %q", s, got, want)
		}
		// HTML escaping loses nothing either.
		if got := html.UnescapeString(htmlEscape(Clean(s))); got != Clean(s) {
			t.Errorf("htmlEscape of Clean(%q) reads back as %q", s, got)
		}

		// JSON keeps the value (as encoding/json has it) and shows no
		// control raw.
		var b bytes.Buffer
		if err := WriteJSON(&b, s); err != nil {
			t.Fatal(err)
		}
		checkClean(t, b.String(), false)
		plain, _ := json.Marshal(s)
		var fromJSON, fromPlain string
		if err := json.Unmarshal(b.Bytes(), &fromJSON); err != nil {
			t.Fatalf("%s: %v", b.String(), err)
		}
		json.Unmarshal(plain, &fromPlain)
		if fromJSON != fromPlain {
			t.Errorf("WriteJSON(%q) decodes to %q, encoding/json to %q", s, fromJSON, fromPlain)
		}

		// The renderers' sinks: a profile whose every string is s, and
		// so every line but the notes' (left out) is one line whatever s
		// holds: it renders in as many lines as with a plain string.
		r, plainR := hostileHTTP(s), hostileHTTP("x")
		r.Notes, plainR.Notes = nil, nil
		for _, format := range []string{Text, Markdown, CSV} {
			var out, plainOut bytes.Buffer
			if err := HTTP(&out, r, format); err != nil {
				t.Fatal(err)
			}
			HTTP(&plainOut, plainR, format)
			checkClean(t, out.String(), false)
			if got, want := strings.Count(out.String(), "\n"), strings.Count(plainOut.String(), "\n"); got != want {
				t.Errorf("%s: %d lines, %d with a plain string:\n%s", format, got, want, out.String())
			}
		}
	})
}

// mdRendered applies CommonMark's backslash escapes (a backslash before
// ASCII punctuation is dropped) to plain Markdown text: how the text of a
// paragraph or table cell renders, entities aside.
func mdRendered(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// checkNoForgedLine fails when a line outside a Markdown code block starts
// with a line that only the input's own line breaks could have started.
// (The lines of a multi-line block are indented in text, so they pass.)
func checkNoForgedLine(t *testing.T, out, input string) {
	t.Helper()
	var forged []string
	for _, l := range strings.Split(input, "\n")[1:] {
		if len(l) >= 6 {
			forged = append(forged, l)
		}
	}
	if len(forged) == 0 {
		return
	}
	fenced := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		for _, f := range forged {
			if !fenced && strings.HasPrefix(l, f) {
				t.Errorf("line %q starts with %q from the input", l, f)
			}
		}
	}
}

func TestJSONEscapeControls(t *testing.T) {
	in := "\x1b[2J \x7f \u009b \u202e \u2028 \xff ok"
	var b bytes.Buffer
	if err := WriteJSON(&b, map[string]string{"q": in}); err != nil {
		t.Fatal(err)
	}
	want := `{
  "q": "\u001b[2J \u007f \u009b \u202e \u2028 \ufffd ok"
}
`
	if b.String() != want {
		t.Errorf("got %s, want %s", b.String(), want)
	}
	var back map[string]string
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	// Everything but the invalid byte, which encoding/json replaces with
	// U+FFFD, decodes back exactly.
	if got, want := back["q"], strings.Replace(in, "\xff", "\uFFFD", 1); got != want {
		t.Errorf("decoded %q, want %q", got, want)
	}
}

// TestMarkdownBrackets: the Markdown escaper writes a bracket pair with
// both brackets escaped, never only the opening one (an interval was
// written "\[0.92, 1.05]"), and what CommonMark renders is the text.
func TestMarkdownBrackets(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"interval", "97% interval [0.92, 1.05]", `97% interval \[0.92, 1.05\]`},
		{"my.cnf section", "my.cnf [mysqld]", `my.cnf \[mysqld\]`},
		{"link from a log line", "[click](http://evil.example/)", `\[click\](http://evil.example/)`},
		{"definition at a list item's start", "[x]: http://evil.example/", `\[x\]: http://evil.example/`},
		{"lone closing bracket", "a]b", `a\]b`},
		{"escaped by the data", `\[x\]`, `\\\[x\\\]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mdEscape(tc.in)
			if got != tc.want {
				t.Errorf("mdEscape(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if strings.Count(got, `\[`) != strings.Count(got, `\]`) && strings.Count(tc.in, "[") == strings.Count(tc.in, "]") {
				t.Errorf("mdEscape(%q) = %q escapes the brackets of a pair unlike", tc.in, got)
			}
			if r := mdRendered(got); r != tc.in {
				t.Errorf("mdEscape(%q) renders as %q", tc.in, r)
			}
		})
	}
}

// hostile are strings a log or a server could put in any field.
var hostile = []struct{ name, s string }{
	{"esc-clear-screen", "\x1b[2J\x1b[H"},
	{"osc-title-bel", "SELECT \"\x1b[2J\x1b]0;pwned\x07\""},
	{"osc-hyperlink-st", "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"},
	{"bel", "ding\a"},
	{"cr-overwrite", "SELECT 1\rDROP TABLE users; -- "},
	{"nul", "a\x00b"},
	{"c1-csi", "\u009b31mred\u009b0m"},
	{"raw-c1-byte", "/p\x9b31m"},
	{"invalid-utf8", "/\xff\xfe\xc3(\xed\xa0\x80"},
	{"del", "rub\x7fout"},
	{"newline-forge", "/x\nFORGED line\n# FORGED comment"},
	{"tab", "a\tb\t\tc"},
	{"form-feed-vt", "a\fb\vc"},
	{"bidi", "/admin\u202E/txt.exe"},
	{"backslash-x", `C:\x1b\path\`},
	{"markdown-csv-syntax", "a|b\\|c `d` *e* __f__ <b> \"g\",h\\"},
	{"long-run", strings.Repeat("\x1b\a\x00\x9b\u0085\r", 200)},
	{"all", kitchenSink},
}

// kitchenSink holds one of each, and Markdown and CSV syntax: the hostile
// golden files render it.
const kitchenSink = "SELECT \"\x1b[2J\x1b]0;pwned\x07\" ok\rEVIL \x00\u009b31m\x9b\xff\x7f a\tb x\nFORGED C:\\x1b\\ \u202etxt |`*_<,"

var (
	t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

func hostileDigest(h string) *digest.Report {
	med := 0.2
	return &digest.Report{
		Source: h,
		Overall: digest.Overall{Inputs: []string{h, "slow.log"}, Bytes: 1234, Events: 3, Classes: 3, ClassesShown: 2,
			TimeTotal: 1.5, FirstSeen: &t0, LastSeen: &t1, IntervalSeconds: 3600, QPS: 0.001, Filtered: 1},
		Classes: []digest.Class{
			{Rank: 1, ID: h, Fingerprint: "select " + h, StatementType: h, Sample: "SELECT '" + h + "'\n\tFROM t -- " + h + "\n",
				SampleDB: h, Count: 2, Share: 0.6, TimeTotal: 1, TimeMax: 0.8, TimeMedian: &med, TimeP95: &med,
				Plan: &digest.PlanCounts{Known: 2}, Databases: map[string]int64{h: 1, "db": 1}, Users: map[string]int64{h: 2},
				FirstSeen: &t0, LastSeen: &t1},
			// A class with only a first-seen time must not panic.
			{Rank: 2, ID: "AB", Fingerprint: h, Sample: h, Databases: map[string]int64{}, FirstSeen: &t0},
		},
		Skipped: digest.Skipped{Count: 1, Reasons: skip.Counts{skip.Code(h): 1}, UnknownFields: map[string]int64{h: 1},
			BadValues: map[string]int64{h: 1}},
		Notes: []string{h},
	}
}

func hostileHTTP(h string) *httpprof.Report {
	up := &httpprof.UpstreamTimes{Count: 1, Avg: 0.1}
	return &httpprof.Report{
		Format: h,
		Overall: httpprof.Overall{Inputs: []string{h}, Requests: 10, Endpoints: 3, EndpointsShown: 2, TimeTotal: 2,
			FirstSeen: &t0, LastSeen: &t1, Rate: 0.01, Filtered: 1},
		Endpoints: []httpprof.Endpoint{
			{Rank: 1, Method: h, Path: h, Count: 5, TimeTotal: 1, Upstream: up},
			{Rank: 2, Method: "GET", Path: "/" + h, Count: 5},
		},
		GroupsLearned: []httpprof.LearnedGroup{{Pattern: h, Distinct: 40, Examples: []string{h, "/x"}}, {Pattern: h}},
		Slowest:       []httpprof.SlowRequest{{Time: &t0, Method: h, URI: h, Status: 500, RequestTime: 3}, {Method: "GET", URI: h}},
		Skipped:       httpprof.Skipped{Count: 1, Reasons: skip.Counts{skip.Code(h): 1}},
		Notes:         []string{"note: " + h},
	}
}

func hostileHTTPDiff(h string) *httpprof.DiffReport {
	return &httpprof.DiffReport{
		A: httpprof.DiffSide{Inputs: []string{h}, Requests: 1},
		B: httpprof.DiffSide{Inputs: []string{h, "b.log"}, Requests: 2},
		Endpoints: []httpprof.DiffRow{
			{Method: h, Path: h, Status: httpprof.DiffStatus(h), CountA: 1, CountB: 2, P99A: 0.1, P99B: 0.2, P99Ratio: 2},
			{Method: "GET", Path: h, Status: "both"},
		},
	}
}

func hostileAudit(h string) *advise.Result {
	ch := &changeset.Change{Kind: changeset.Kind(h), Target: h, Name: h, From: h, To: h, Direction: h, Apply: h}
	return &advise.Result{
		Host: h, Taken: t0, Server: h,
		Findings: []advise.Finding{{
			ID: h, Title: h, Severity: advise.Severity(h), Layer: h,
			Evidence: []advise.Evidence{{What: h, Value: h, Unit: h, Source: h}},
			Change:   ch, Also: []changeset.Change{{Kind: "mysql-variable", Name: h}},
			Effect: h, Risk: changeset.Risk{Durability: h, Memory: h, Restart: true, Note: h}, Source: h,
		}, {ID: "empty", Severity: advise.Info}},
		CollectorErrors: []collect.CollectorError{{Collector: h, Error: h}},
		NotSeen:         []string{h},
	}
}

func hostileBench(h string) *benchrun.Summary {
	s := &benchrun.Summary{Target: h, Scenario: h, Label: h}
	s.FailReasons = []string{h, "p99 too high"}
	s.Model = "open"
	s.ErrorsByKind = map[string]int64{h: 3}
	s.Steps = []benchrun.Step{{Name: h, Requests: 10, Errors: 3, Details: []string{h, "status 500"}}, {Name: "home"}}
	s.Runs = []benchrun.RunResult{{}, {}}
	s.Spreads = map[string]benchrun.Spread{"score": {Min: 1, Median: 2, Max: 3}}
	return s
}

func hostileIndexes(h string) *indexadv.Result {
	p := indexadv.Proposal{Table: h, Columns: []string{h, "b"}, DDL: h, Queries: []string{h}, Reasons: []string{h},
		Evidence: indexadv.ProposalEvidence{Plans: []indexadv.Evidence{{Query: h, PlanBefore: h, PlanAfter: h}}}, WriteBeforeMS: -1}
	p.Action, p.Index, p.Reason = indexadv.ActionAdd, h, indexadv.ReasonQuery
	p.Benefit = &indexadv.Benefit{Queries: 1, Calls: 3}
	p.WriteCost = &indexadv.WriteCost{Statements: 2, Classes: 1}
	rej := p
	rej.Rejected = h
	drop := indexadv.Proposal{Action: indexadv.ActionDrop, Table: h, Index: h, Columns: []string{h}, Reason: indexadv.ReasonDuplicate, DDL: h,
		Benefit: &indexadv.Benefit{BytesFreed: 16384}, Evidence: indexadv.ProposalEvidence{Of: h, OfColumns: []string{h}, Staged: "ignore_first"}}
	unused := indexadv.Proposal{Action: indexadv.ActionDrop, Table: h, Index: h, Columns: []string{h}, Reason: indexadv.ReasonUnused, DDL: h,
		Evidence: indexadv.ProposalEvidence{Usage: &indexadv.Usage{Source: h}, Reads: &indexadv.IndexReads{TableReads: 5}, Staged: "drop_recreate", RecreateSeconds: 2}}
	return &indexadv.Result{
		Usage:     &indexadv.Usage{Source: h, Caveat: "truncate_unseen"},
		Proposals: []indexadv.Proposal{p, drop, unused},
		Skipped:   []indexadv.Skip{{ID: h, Query: h, Reason: h}},
		Rejected:  []indexadv.Proposal{rej},
		Existing:  []indexadv.Finding{{Table: h, Index: h, Kind: h, Of: h, Detail: h, DDL: h}},
		Queries:   []indexadv.QueryReport{{ID: h, Fingerprint: h, Sample: h, Count: 2, Plan: h, Problems: []string{h}}},
		Copies:    []indexadv.Copy{{Table: h, Note: h}},
		Covered:   []string{h},
		DDL:       []indexadv.TableDDL{{Table: h, DDL: h}},
		Applied:   []string{h},
		Server:    h,
	}
}

func hostilePlan(h string) *capacity.Report {
	return &capacity.Report{
		Inputs: capacity.Inputs{Rate: 10, Servers: 1, Workers: 2, Closer: capacity.Closer(h), PortRange: h},
		Results: []capacity.Result{
			{ID: h, Title: h, Value: 1, Unit: h, Formula: h, Calculation: h,
				Setting:  &capacity.Setting{Kind: h, Name: h, Value: h, Current: h, Host: h, Where: h},
				Warnings: []string{h}, Notes: []string{h}, Source: h},
			{ID: "bare", Title: "bare"},
		},
	}
}

// renderer is one report type: how to render it, and a hostile and an
// empty value of it.
type renderer struct {
	name    string
	formats []string
	render  func(w io.Writer, v any, format string) error
	hostile func(h string) any
	empty   any
	// blockTabs counts the tabs of v kept as layout of a multi-line block
	// in format; every other tab must be escaped.
	blockTabs func(v any, format string) int
}

var renderers = []renderer{
	{"digest", DigestFormats,
		func(w io.Writer, v any, f string) error { return Digest(w, v.(*digest.Report), f) },
		func(h string) any { return hostileDigest(h) }, &digest.Report{},
		func(v any, f string) int {
			n := 0
			if f == Text || f == Markdown {
				for _, c := range v.(*digest.Report).Classes {
					n += strings.Count(c.Sample, "\t")
				}
			}
			return n
		}},
	{"http", HTTPFormats,
		func(w io.Writer, v any, f string) error { return HTTP(w, v.(*httpprof.Report), f) },
		func(h string) any { return hostileHTTP(h) }, &httpprof.Report{},
		func(v any, f string) int {
			n := 0
			if f == Text {
				for _, s := range v.(*httpprof.Report).Notes {
					n += strings.Count(s, "\t")
				}
			}
			return n
		}},
	{"httpdiff", HTTPFormats,
		func(w io.Writer, v any, f string) error { return HTTPDiff(w, v.(*httpprof.DiffReport), f, 0) },
		func(h string) any { return hostileHTTPDiff(h) }, &httpprof.DiffReport{}, nil},
	{"audit", AuditFormats,
		func(w io.Writer, v any, f string) error { return Audit(w, v.(*advise.Result), f) },
		func(h string) any { return hostileAudit(h) }, &advise.Result{}, nil},
	{"bench", BenchFormats,
		func(w io.Writer, v any, f string) error { return Bench(w, v.(*benchrun.Summary), f) },
		func(h string) any { return hostileBench(h) }, &benchrun.Summary{}, nil},
	{"indexes", IndexesFormats,
		func(w io.Writer, v any, f string) error { return Indexes(w, v.(*indexadv.Result), f) },
		func(h string) any { return hostileIndexes(h) }, &indexadv.Result{}, nil},
	{"plan", CapacityFormats,
		func(w io.Writer, v any, f string) error { return Capacity(w, v.(*capacity.Report), f) },
		func(h string) any { return hostilePlan(h) }, &capacity.Report{}, nil},
	{"transitions", TransitionFormats,
		func(w io.Writer, v any, f string) error { return Transitions(w, v.(*transitionsTable).steps(), f) },
		func(h string) any { return hostileTransitions(h) }, &transitionsTable{}, nil},
	{"loop", LoopFormats,
		func(w io.Writer, v any, f string) error { return Loop(w, v.(*tune.Result), f, "") },
		func(h string) any { return hostileLoop(h) }, &tune.Result{}, nil},
	{"apply", ApplyFormats,
		func(w io.Writer, v any, f string) error { return ApplyResult(w, v.(*apply.Result), f, false) },
		func(h string) any { return hostileApplyResult(h) }, &apply.Result{}, nil},
	{"applyplan", ApplyFormats,
		func(w io.Writer, v any, f string) error { return ApplyDryRun(w, v.(*dryRunView).plan(), f) },
		func(h string) any { return hostileDryRun(h) }, &dryRunView{}, nil},
	{"tpcc-run", TPCCFormats,
		func(w io.Writer, v any, f string) error { return TPCCRun(w, v.(*tpcc.Result), f) },
		func(h string) any { return hostileTPCCRun(h) }, &tpcc.Result{}, nil},
	{"tpcc-check", TPCCFormats,
		func(w io.Writer, v any, f string) error { return TPCCCheck(w, v.(*tpcc.CheckResult), f) },
		func(h string) any { return hostileTPCCCheck(h) }, &tpcc.CheckResult{}, nil},
	{"search", SearchFormats,
		func(w io.Writer, v any, f string) error { return Search(w, v.(*knobsearch.Result), f) },
		func(h string) any { return hostileSearch(h) }, &knobsearch.Result{}, nil},
	{"fleet-audit", FleetFormats,
		func(w io.Writer, v any, f string) error { return FleetAudit(w, v.(*fleet.Report), f) },
		func(h string) any { return hostileFleetAudit(h) }, &fleet.Report{}, nil},
	{"fleet-apply", FleetApplyFormats,
		func(w io.Writer, v any, f string) error { return FleetApply(w, v.(*fleet.ApplyReport), f) },
		func(h string) any { return hostileFleetApply(h) }, &fleet.ApplyReport{}, nil},
	{"fleet-plan", FleetFormats,
		func(w io.Writer, v any, f string) error { return FleetPlan(w, v.(*fleet.Plan), f) },
		func(h string) any { return hostileFleetPlan(h) }, &fleet.Plan{}, nil},
	{"endpoints-diff", EndpointsDiffFormats,
		func(w io.Writer, v any, f string) error { return EndpointsDiff(w, v.(*EndpointsDiffView), f) },
		func(h string) any { return hostileEndpointsDiff(h) }, &EndpointsDiffView{}, nil},
	{"ab", ABFormats,
		func(w io.Writer, v any, f string) error { return AB(w, v.(*tune.ABResult), f) },
		func(h string) any { return hostileAB(h) }, &tune.ABResult{}, nil},
}

func hostileEndpointsDiff(h string) *EndpointsDiffView {
	fn := appcpu.FunctionChange{Name: h, BeforeMs: 2, AfterMs: 1, DeltaMs: -1, BeforeTotalMs: 3, AfterTotalMs: 2}
	return &EndpointsDiffView{Before: h, After: h, FlameGraphs: map[string]string{h: h},
		Endpoints: []appcpu.EndpointDiff{
			{Endpoint: h, Status: appcpu.DiffBoth, Before: appcpu.UsageTimes{Requests: 10, RequestMs: 20, AppCPUMs: 8, DBMs: 10, OtherMs: 2},
				After: appcpu.UsageTimes{Requests: 10, RequestMs: 15, AppCPUMs: 4, DBMs: 10, OtherMs: 1}, Functions: []appcpu.FunctionChange{fn},
				Stacks: []appcpu.StackChange{{Frames: []string{h, "main"}, BeforeMs: 2, AfterMs: 1}}},
			{Endpoint: h, Status: appcpu.DiffOnlyAfter},
		}}
}

func hostileAB(h string) *tune.ABResult {
	return &tune.ABResult{Ratio: 1.5, Interval: [2]float64{1.1, 1.9}, Decision: "better", Detectable: 0.05,
		A: []float64{10, 11, 10, 11}, B: []float64{15, 16, 15, 16}, LabelA: h, LabelB: h, State: "b"}
}

// TestHostileStrings renders every report type in every format with each
// hostile string in every string field: nothing a terminal acts on may
// come out, a single-line field must not start a line, and JSON must
// decode to the values encoding/json gives.
func TestHostileStrings(t *testing.T) {
	for _, h := range hostile {
		for _, r := range renderers {
			for _, f := range r.formats {
				t.Run(h.name+"/"+r.name+"/"+f, func(t *testing.T) {
					v := r.hostile(h.s)
					var b bytes.Buffer
					if err := r.render(&b, v, f); err != nil {
						t.Fatal(err)
					}
					out := b.String()
					if out == "" {
						t.Fatal("no output")
					}
					tabs := 0
					if r.blockTabs != nil {
						tabs = r.blockTabs(v, f)
					}
					checkClean(t, out, tabs > 0)
					if got := strings.Count(out, "\t"); got != tabs {
						t.Errorf("%d tabs in the output, want %d (those of multi-line blocks)", got, tabs)
					}
					checkNoForgedLine(t, out, h.s)
					var plain bytes.Buffer
					if err := r.render(&plain, r.hostile("x"), f); err != nil {
						t.Fatal(err)
					}
					switch f {
					case JSON:
						checkJSONValue(t, b.Bytes(), v)
					case Markdown:
						checkMarkdownTables(t, out)
					case CSV:
						checkCSV(t, out, plain.String(), h.s)
					}
				})
			}
		}
	}
}

// checkMarkdownTables checks that every row of each table has as many
// cell separators as its header: a pipe from the data must be escaped.
// GFM takes any pipe after a backslash as escaped, in code spans too.
func checkMarkdownTables(t *testing.T, out string) {
	t.Helper()
	want := -1
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "|") {
			want = -1
			continue
		}
		n := 0
		for i := range len(l) {
			if l[i] == '|' && (i == 0 || l[i-1] != '\\') {
				n++
			}
		}
		if want < 0 {
			want = n
		} else if n != want {
			t.Errorf("table row with %d separators, the header has %d: %q", n, want, l)
		}
	}
}

// checkCSV checks that out parses as CSV with as many records and fields
// as the rendering of a plain string, the first field holding the hostile
// string being Clean(h).
func checkCSV(t *testing.T, out, plain, h string) {
	t.Helper()
	got, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("invalid CSV: %v", err)
	}
	want, err := csv.NewReader(strings.NewReader(plain)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) < 2 || len(got[0]) != len(want[0]) {
		t.Fatalf("%d records, %d with a plain string", len(got), len(want))
	}
	for i, f := range want[1] {
		if f == "x" && got[1][i] != Clean(h) {
			t.Errorf("field %d is %q, want %q", i, got[1][i], Clean(h))
		}
	}
}

// checkJSONValue checks that out decodes to what plain encoding/json
// makes of v.
func checkJSONValue(t *testing.T, out []byte, v any) {
	t.Helper()
	plain, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	json.Unmarshal(plain, &want)
	if !reflect.DeepEqual(got, want) {
		t.Error("the JSON decodes to other values than encoding/json's")
	}
}

// TestHostileGolden renders the kitchen-sink string through every report
// type and format against reviewed golden files (JSON aside: its shape is
// the result types'), so what a reader sees of hostile bytes is on record.
func TestHostileGolden(t *testing.T) {
	for _, r := range renderers {
		for _, f := range r.formats {
			t.Run(r.name+"/"+f, func(t *testing.T) {
				var b bytes.Buffer
				if err := r.render(&b, r.hostile(kitchenSink), f); err != nil {
					t.Fatal(err)
				}
				if f != JSON { // TestJSONEscapeControls and TestHostileStrings check JSON
					golden.Check(t, filepath.Join("testdata", "hostile", r.name+"."+f), b.Bytes())
				}
			})
		}
	}
}

// TestEmptyReports renders every report type in every format from a zero
// value (nil slices and maps, no classes, endpoints, steps or findings)
// and from a nil pointer, which renders the same.
func TestEmptyReports(t *testing.T) {
	for _, r := range renderers {
		for _, f := range r.formats {
			t.Run(r.name+"/"+f, func(t *testing.T) {
				var b bytes.Buffer
				if err := r.render(&b, r.empty, f); err != nil {
					t.Fatal(err)
				}
				if f != JSON { // its shape is the result type's, documented there
					golden.Check(t, filepath.Join("testdata", "empty", r.name+"."+f), b.Bytes())
				}
				nilPtr := reflect.Zero(reflect.TypeOf(r.empty)).Interface()
				var n bytes.Buffer
				if err := r.render(&n, nilPtr, f); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(n.Bytes(), b.Bytes()) {
					t.Errorf("a nil report renders otherwise than an empty one:\n%s", golden.Diff(b.String(), n.String()))
				}
			})
		}
	}
}

// TestCleanArgs checks what the renderers' printf cleans and what it
// leaves to the verb.
func TestCleanArgs(t *testing.T) {
	type named string
	var b bytes.Buffer
	fprintf(&b, "%s|%s|%s|%v|%d|%.1f|%s|%s|%s", "\x1b", named("\x07"), []string{"\r"}, errString("\x00"), 7, 1.25,
		block{"a\n\tb\x1b", "> "}, time.Duration(1500)*time.Millisecond, []byte("\x7f"))
	want := `\x1b|\x07|[\x0d]|\x00|7|1.2|a` + "\n> \t" + `b\x1b|1.5s|\x7f`
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
