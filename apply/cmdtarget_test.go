package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCommandTargetFaults: a user's change made by commands goes through
// the transaction like any target: applied, rolled back, and with a
// failure injected at each step of the apply (and of its rollback), the
// system ends as found (the revert command ran) or the leftover names the
// command that puts it back.
func TestCommandTargetFaults(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "fix")
	target := func() *CommandTarget {
		ct, err := NewCommandTarget("the fix", []string{"touch", flag}, []string{"rm", "-f", flag}, []string{"test", "-e", flag})
		if err != nil {
			t.Fatal(err)
		}
		return ct
	}
	exists := func() bool { _, err := os.Stat(flag); return err == nil }
	ctx := context.Background()
	var points []string
	o := Options{StateDir: t.TempDir()}
	ct := target()
	if _, err := run(ctx, []Target{ct}, o, recorder(&points)); err != nil {
		t.Fatal(err)
	}
	if !exists() {
		t.Fatal("the apply command did not run")
	}
	if _, err := Rollback(ctx, []Target{ct}, o); err != nil || exists() {
		t.Fatalf("rollback: %v, file exists %v", err, exists())
	}
	if len(points) < 5 {
		t.Fatalf("points %v", points)
	}
	for _, p := range points {
		t.Run("fail at "+p, func(t *testing.T) {
			os.Remove(flag)
			_, err := run(ctx, []Target{target()}, Options{StateDir: t.TempDir()}, recorder(new([]string), p))
			if err == nil {
				t.Fatal("no error")
			}
			var rb *RollbackError
			if errors.As(err, &rb) {
				t.Fatalf("left things behind: %v", err)
			}
			if exists() {
				t.Errorf("the change is still in force after a failure at %s", p)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct{ label string }{{""}, {"a\nb"}} {
			if _, err := NewCommandTarget(tc.label, []string{"true"}, []string{"true"}, nil); err == nil {
				t.Errorf("%q accepted", tc.label)
			}
		}
		if _, err := NewCommandTarget("x", nil, []string{"true"}, nil); err == nil {
			t.Error("no apply command accepted")
		}
	})
}
