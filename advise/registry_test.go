package advise

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRuleRegistry lists Rules, the registry of the audit's rules: each
// is declared in a file of its own layer whose comments give its id a doc
// line ("id: what it checks"), has table cases (runRuleCases, or a test
// that calls it by name), and is in the README's list (see
// TestREADMEListsEveryRule). ARCHITECTURE.md's "How to add" names these
// files.
func TestRuleRegistry(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{} // var name -> file
	comments := map[string]string{} // file -> its comments
	var names []string              // the elements of Rules, in order
	for _, f := range pkgs["advise"].Files {
		file := filepath.Base(fset.Position(f.Pos()).Filename)
		var text strings.Builder
		for _, cg := range f.Comments {
			text.WriteString(cg.Text())
		}
		comments[file] = text.String()
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					declared[n.Name] = file
					if n.Name == "Rules" && i < len(vs.Values) {
						for _, e := range vs.Values[i].(*ast.CompositeLit).Elts {
							names = append(names, e.(*ast.Ident).Name)
						}
					}
				}
			}
		}
	}
	if len(names) != len(Rules) {
		t.Fatalf("rules.go lists %d rules, Rules holds %d", len(names), len(Rules))
	}
	var tests strings.Builder
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tests.Write(b)
	}
	for i, r := range Rules {
		name, id := names[i], r.ID()
		t.Run(id, func(t *testing.T) {
			file, ok := declared[name]
			switch {
			case !ok:
				t.Fatalf("%s is declared nowhere", name)
			case file == "rules.go":
				t.Errorf("%s is declared in the registry's file, not its own", name)
			case !strings.Contains(comments[file], id+":"):
				t.Errorf("%s: no doc line %q in its file's comments", file, id+":")
			}
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(tests.String()) {
				t.Errorf("no test names %s (%s)", name, id)
			}
		})
	}
}
