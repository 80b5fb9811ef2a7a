package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRendererRegistry lists the reports: every result's list of formats
// (an exported XFormats of this package, the list its command's --format
// takes) has an entry in the renderers table of clean_test.go, or a
// hostile test of its own (TestDiagnoseHostile for DiagnoseFormats), so
// every report is rendered in each of its formats with hostile strings,
// and each list holds only formats this package writes. ARCHITECTURE.md's "How to
// add" names these files.
func TestRendererRegistry(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("clean_test.go")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(src), "var renderers = []renderer{")
	if start < 0 {
		t.Fatal("clean_test.go has no renderers table")
	}
	table := string(src[start:])
	table = table[:strings.Index(table, "\n}\n")]
	var all strings.Builder
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	tests := all.String()
	known := map[string]bool{Text: true, JSON: true, Markdown: true, CSV: true, SQL: true, HTML: true}
	lists := 0
	for _, f := range pkgs["report"].Files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for i, n := range spec.(*ast.ValueSpec).Values {
					name := spec.(*ast.ValueSpec).Names[i].Name
					if !strings.HasSuffix(name, "Formats") || !ast.IsExported(name) {
						continue
					}
					lists++
					own := "func Test" + strings.TrimSuffix(name, "Formats") + "Hostile("
					if !strings.Contains(table, " "+name+",") && !strings.Contains(tests, own) {
						t.Errorf("%s (%s) has no entry in clean_test.go's renderers and no %s...)", name, fset.Position(n.Pos()).Filename, own)
					}
					for _, e := range n.(*ast.CompositeLit).Elts {
						if id, ok := e.(*ast.Ident); !ok || !known[constValue(t, id.Name)] {
							t.Errorf("%s holds %v, not a format this package writes", name, e)
						}
					}
				}
			}
		}
	}
	if lists < 10 {
		t.Errorf("found %d format lists: the parse missed them", lists)
	}
}

// constValue is the value of one of the format constants.
func constValue(t *testing.T, name string) string {
	v, ok := map[string]string{"Text": Text, "JSON": JSON, "Markdown": Markdown, "CSV": CSV, "SQL": SQL, "HTML": HTML}[name]
	if !ok {
		t.Errorf("%s is no format constant", name)
	}
	return v
}
