// Package golden compares test output with reviewed files under testdata,
// and rewrites them when the test binary runs with -update
// (go test ./pkg -args -update, or go test ./pkg -update).
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Update is the -update flag every test binary that imports golden gets.
var Update = flag.Bool("update", false, "rewrite golden files under testdata")

// Check compares got with the file at path (relative to the test's
// package), writing it first when -update is set. A difference fails the
// test with the first differing lines.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update once, then review the file)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (rerun with -update and review the diff):\n%s", path, Diff(string(want), string(got)))
	}
}

// Diff lists the lines that differ between want and got, at most 20.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			continue
		}
		if shown == 20 {
			b.WriteString("...\n")
			break
		}
		shown++
		fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, wl, gl)
	}
	return b.String()
}
