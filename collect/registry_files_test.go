package collect

import (
	"os"
	"strings"
	"testing"
)

// TestRegistryFiles lists the registry: every registered collector is one
// file named by it (collect/NAME.go, the underscores left out:
// php_fpm is phpfpm.go) with its test file beside it, as doc.go and
// ARCHITECTURE.md's "How to add" say.
func TestRegistryFiles(t *testing.T) {
	for _, r := range Registered() {
		t.Run(r.Name, func(t *testing.T) {
			base := strings.ReplaceAll(r.Name, "_", "")
			for _, f := range []string{base + ".go", base + "_test.go"} {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("collector %s: %v", r.Name, err)
				}
			}
		})
	}
}
