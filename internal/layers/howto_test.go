package layers

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHowToAddPaths: every file ARCHITECTURE.md's "How to add" names
// exists (a <name> placeholder matches any one path element part), and
// the section covers the five things it promises.
func TestHowToAddPaths(t *testing.T) {
	doc, err := os.ReadFile("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "\n## How to add\n")
	if start < 0 {
		t.Fatal(`ARCHITECTURE.md has no "How to add" section`)
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	for _, item := range []string{"A rule", "A collector", "An apply target", "A log format", "A report"} {
		if !strings.Contains(section, "- **"+item+"**") {
			t.Errorf(`"How to add" has no item %q`, item)
		}
	}
	placeholder := regexp.MustCompile(`<[^>/]+>`)
	paths := 0
	for _, m := range regexp.MustCompile("`([A-Za-z0-9_<>./-]+)`").FindAllStringSubmatch(section, -1) {
		p := m[1]
		if !strings.Contains(p, "/") && !strings.HasSuffix(p, ".md") {
			continue // a name, not a path
		}
		paths++
		glob := filepath.Join("../..", placeholder.ReplaceAllString(p, "*"))
		matches, err := filepath.Glob(glob)
		if err != nil || len(matches) == 0 {
			t.Errorf("%s: no such file (%v)", p, err)
		}
	}
	if paths < 20 {
		t.Errorf("only %d paths found in the section", paths)
	}
}
