package layers

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/stacktune/stacktune"

// layer is a package's layer (see the package documentation).
func layer(pkg string) int {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	switch {
	case strings.HasPrefix(rel, "cmd/") || strings.HasPrefix(rel, "bench/"):
		return 3
	case strings.HasPrefix(rel, "refstack/"):
		return 2
	case strings.HasPrefix(rel, "internal/"):
		return 0
	}
	return 1
}

var layerNames = []string{"leaf helper (internal/)", "library", "reference stack (refstack/)", "program (cmd/, bench/)"}

// TestImportsRunOneWay: no package depends, directly or not, on a package
// of a layer above its own.
func TestImportsRunOneWay(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 40 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	layers := map[int]int{}
	for _, p := range pkgs {
		layers[layer(p)]++
		deps, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", p).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(deps))
		for sc.Scan() {
			d := sc.Text()
			if !strings.HasPrefix(d, module+"/") || d == p {
				continue
			}
			if layer(d) > layer(p) {
				t.Errorf("%s (%s) depends on %s (%s): imports must run one way", p, layerNames[layer(p)], d, layerNames[layer(d)])
			}
		}
	}
	// Every layer is there: a rename that empties one would make the test
	// pass for the wrong reason.
	for l := range layerNames {
		if layers[l] == 0 {
			t.Errorf("no package in layer %s", layerNames[l])
		}
	}
}

// TestArchitectureTable: ARCHITECTURE.md's package table names every
// package of the tree, and no package that is not there, and says in
// which layer each one sits (its own section per layer would drift: the
// names are checked instead).
func TestArchitectureTable(t *testing.T) {
	doc, err := os.ReadFile("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	tree := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		tree[strings.TrimPrefix(strings.TrimPrefix(p, module), "/")] = true
	}
	table := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, name := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(first, -1) {
			table[name[1]] = true
		}
	}
	for p := range tree {
		if !table[p] {
			t.Errorf("package %s is not in ARCHITECTURE.md's table", p)
		}
	}
	for p := range table {
		if !tree[p] {
			t.Errorf("ARCHITECTURE.md's table names %s, which is no package", p)
		}
	}
}
