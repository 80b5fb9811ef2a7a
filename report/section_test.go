package report

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/tune"
)

// TestSectionTable checks the table's layouts: text columns aligned by
// display width (a CJK character takes two columns), right-aligned
// columns padded on the left, the last column unpadded; Markdown marks
// right-aligned columns and writes code columns as code spans.
func TestSectionTable(t *testing.T) {
	heads := []string{"label", "n", "id"}
	rows := [][]string{{"日本語", "1", "a|b"}, {"x", "100", "c`d"}}
	cases := []struct {
		name string
		md   bool
		want string
	}{
		{"text", false, "" +
			"  label     n  id\n" +
			"  日本語    1  a|b\n" +
			"  x       100  c`d\n"},
		{"markdown", true, "" +
			"| label | n | id |\n" +
			"|---|---:|---|\n" +
			"| 日本語 | 1 | `a\\|b` |\n" +
			"| x | 100 | `c'd` |\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			sectionWriter{e: &errWriter{w: &b}, md: c.md}.table(heads, "lrc", rows)
			if b.String() != c.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), c.want)
			}
		})
	}
}

// TestTablesAlignCJK renders report tables with CJK cells: every row's
// last column starts (ends, when right-aligned) at the same display
// column. text/tabwriter and the loop's own alignment counted runes, and
// put a row with wide characters before its last column one column out
// per wide character.
func TestTablesAlignCJK(t *testing.T) {
	cases := []struct {
		name   string
		render func(w *bytes.Buffer) error
		last   []string // the last column's cells, header first
		right  bool     // the last column is right-aligned: it ends at the same column
	}{
		{"digest query id in kanji", func(w *bytes.Buffer) error {
			return Digest(w, &digest.Report{Classes: []digest.Class{
				{Rank: 1, ID: "日本語", StatementType: "select"},
				{Rank: 2, ID: "AB", StatementType: "update"},
			}}, Text)
		}, []string{"Type", "select", "update"}, false},
		{"http path in kanji then one in ascii", func(w *bytes.Buffer) error {
			return HTTP(w, &httpprof.Report{Endpoints: []httpprof.Endpoint{
				{Rank: 1, Count: 3, Method: "GET", Path: "/商品/:id", BytesTotal: 2048},
				{Rank: 2, Count: 1, Method: "GET", Path: "/"},
			}}, Text)
		}, []string{"Method Path", "GET /商品/:id", "GET /"}, false},
		{"loop step labelled in japanese", func(w *bytes.Buffer) error {
			return Loop(w, &tune.Result{Steps: []tune.StepResult{
				{Label: "ベースライン", Scores: []float64{84, 86}, Median: 85, XBaseline: 1, P99MS: 140},
				{Label: "索引", Scores: []float64{1875, 1573}, Median: 1671, XBaseline: 19.33, P99MS: 59},
			}}, Text, "")
		}, []string{"p99 ms", "140", "59"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := c.render(&b); err != nil {
				t.Fatal(err)
			}
			col := -1
			for _, cell := range c.last {
				found := false
				for _, l := range strings.Split(b.String(), "\n") {
					if !strings.HasSuffix(l, "  "+cell) {
						continue
					}
					found = true
					at := displayWidth(strings.TrimSuffix(l, cell))
					if c.right {
						at = displayWidth(l)
					}
					if col < 0 {
						col = at
					} else if at != col {
						t.Errorf("%q at display column %d, the header at %d:\n%s", cell, at, col, b.String())
					}
				}
				if !found {
					t.Errorf("no line ends with %q:\n%s", cell, b.String())
				}
			}
		})
	}
}

// TestNoTabwriter keeps text/tabwriter out of the package: it counts
// runes, not display columns, so text tables go through
// sectionWriter.table.
func TestNoTabwriter(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, f := range pkgs["report"].Files {
		files++
		for _, im := range f.Imports {
			if im.Path.Value == `"text/tabwriter"` {
				t.Errorf("%s imports text/tabwriter: align text tables with sectionWriter.table", fset.Position(im.Pos()).Filename)
			}
		}
	}
	if files < 10 {
		t.Errorf("parsed %d files: the parse missed them", files)
	}
}

// TestSectionTableUnder checks lines under rows: in text below the row,
// indented and outside the alignment; in Markdown at the end of the
// row's last cell.
func TestSectionTableUnder(t *testing.T) {
	rows := [][]string{{"web1", "applied"}, {"web22", "failed"}}
	under := func(i int) []string {
		if i == 1 {
			return []string{"ssh: refused", "| output"}
		}
		return nil
	}
	for _, c := range []struct {
		name string
		md   bool
		want string
	}{
		{"text", false, "  web1   applied\n  web22  failed\n    ssh: refused\n    | output\n"},
		{"markdown", true, "| host | state |\n|---|---|\n| web1 | applied |\n| web22 | failed; ssh: refused; \\| output |\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			heads := []string{"host", "state"}
			if !c.md {
				heads = nil
			}
			sectionWriter{e: &errWriter{w: &b}, md: c.md}.tableUnder(heads, "ll", rows, under)
			if b.String() != c.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), c.want)
			}
		})
	}
}
