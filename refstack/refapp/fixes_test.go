package refapp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/fingerprint"
)

// TestFixes wants each fix to switch a setting on and its Query to
// fingerprint as the statement does once the server has logged it with
// its values in place of the placeholders (the slow log's form), so a
// class found in a digest matches its fix.
func TestFixes(t *testing.T) {
	if len(Fixes) == 0 {
		t.Fatal("no fixes")
	}
	for _, fix := range Fixes {
		t.Run(fix.Query, func(t *testing.T) {
			var cfg Config
			fix.Set(&cfg)
			if cfg == (Config{}) {
				t.Error("Set changes no setting")
			}
			if fix.Note == "" {
				t.Error("no note")
			}
			parts := strings.Split(fix.Query, "?")
			if len(parts) < 2 {
				t.Fatalf("%q has no placeholder: not a per-row query", fix.Query)
			}
			logged := parts[0]
			for i, p := range parts[1:] {
				logged += strconv.Itoa(17+i*101) + p
			}
			if got, want := fingerprint.Fingerprint(logged), fingerprint.Fingerprint(fix.Query); got != want {
				t.Errorf("logged %q fingerprints as %q, the fix's query as %q", logged, got, want)
			}
		})
	}
}
