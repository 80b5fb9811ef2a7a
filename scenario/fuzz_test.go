package scenario

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad checks that no scenario file makes the loader panic, that every
// problem it reports has a line, and that whatever it accepts makes a plan
// whose requests can be built.
func FuzzLoad(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.*ml")
	paths = append(paths, "example.yaml")
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, strings.HasSuffix(p, ".toml"))
	}
	for _, src := range []string{
		"", "steps:", "steps: [{url: /}]\nbase_url: http://h", "a: &a [*a]", "a: &a {<<: *a}\nsteps: [*a]",
		"steps:\n  - &s {url: 'http://h/{{rand 1 2}}', <<: *s}", "steps: [{url: 'http://h/{{x'}]",
	} {
		f.Add([]byte(src), false)
	}
	noFiles := func(string) ([]byte, error) { return nil, errors.New("no files while fuzzing") }
	f.Fuzz(func(t *testing.T, src []byte, isTOML bool) {
		name := "fuzz.yaml"
		if isTOML {
			name = "fuzz.toml"
		}
		s, err := parse(name, src, noFiles)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %T %v, want Errors", err, err)
			}
			for _, e := range es {
				if e.File != name || e.Line < 1 {
					t.Fatalf("problem without a position: %q", e.Error())
				}
			}
			return
		}
		ps, err := s.newPlanState(WorkloadOptions{Seed: 1})
		if err != nil {
			t.Fatalf("accepted scenario without a plan: %v", err)
		}
		u, err := ps.newUser(3)
		if err != nil {
			t.Fatal(err)
		}
		defer u.Close()
		for i, st := range s.steps() {
			if _, err := u.(*user).request(context.Background(), st, i == 0 && s.Login != nil); err != nil {
				t.Fatalf("step %q: %v", st.Name, err)
			}
		}
	})
}
