package apply

import (
	"slices"
	"testing"

	"github.com/stacktune/stacktune/changeset"
)

// TestTargetRegistry lists the registry of apply targets: every kind of
// change (changeset.Kinds, each with its grammar) is made by exactly one
// target entry or said not applied, with why, by exactly one note, and
// every kind either names has a grammar in changeset.
func TestTargetRegistry(t *testing.T) {
	seen := map[changeset.Kind]int{}
	for _, k := range targetKinds {
		if len(k.kinds) == 0 || k.build == nil {
			t.Errorf("entry %v: no kinds or no build", k.kinds)
		}
		for _, kind := range k.kinds {
			seen[kind]++
		}
	}
	for _, n := range notApplied {
		if n.why == "" {
			t.Errorf("%s: not applied, and no why", n.kind)
		}
		seen[n.kind]++
	}
	for kind, n := range seen {
		if changeset.Grammar(kind) == "" {
			t.Errorf("%s: no grammar in changeset", kind)
		}
		if n != 1 {
			t.Errorf("%s: in %d entries", kind, n)
		}
	}
	for _, kind := range changeset.Kinds() {
		if seen[kind] == 0 {
			t.Errorf("%s: neither applied by a target nor said not applied", kind)
		}
	}
	if !slices.Equal(changeset.Kinds(), func() []changeset.Kind {
		ks := make([]changeset.Kind, 0, len(seen))
		for k := range seen {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}()) {
		t.Errorf("the registry's kinds differ from changeset.Kinds: %v", changeset.Kinds())
	}
}
