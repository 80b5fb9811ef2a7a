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
		// pre_run, captures, templates in checks, slow responses
		"base_url: http://h/\npre_run: {method: POST, url: /initialize, body: x, expect: {status: 200}, timeout: 5s}\nsteps: [{url: /}]",
		"base_url: http://h/\npre_run: {command: [./init.sh, a b], timeout: 1m}\nsteps: [{url: /}]",
		"base_url: http://h/\npre_run: {command: 'echo hi', shell: true}\nsteps: [{url: /}]",
		"base_url: http://h/\ndata: {u: [a, b], n: [A, B]}\nsession: {login: {url: '/l/{{u}}', capture: {t: {header: X-T}}}}\n" +
			"steps:\n  - {url: /, expect: {contains: ['{{user}}', '{{user.n}}', '{{t}}']}, slow_after: 3s, capture: {id: {regexp: 'id=(\\d+)', group: 1}}}\n" +
			"  - {url: '/e/{{id}}?t={{t}}', body: '{{id}}', headers: {X-T: '{{t}}'}, capture: {v: {json: '$.a[0][\"b c\"]'}, w: {selector: 'a.x', attr: href}}}\n" +
			"scoring: {penalties: {slow: 1}, fail_if: {slow_rate: 5%}}",
		"base_url: http://h/\nsteps: [{url: '/{{x}}', capture: {x: {json: a..b}}}, {url: /, capture: {x: {regexp: '(', group: 3}}}]",
	} {
		f.Add([]byte(src), false)
	}
	noFiles := func(string, int64) ([]byte, error) { return nil, errors.New("no files while fuzzing") }
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
		// Every captured value as the URL check at load saw it.
		us := u.(*user)
		for i, name := range s.Captures {
			us.fill.caps[i], us.have[i] = name, true
		}
		for i, st := range s.steps() {
			login := i == 0 && s.Login != nil
			if _, err := us.request(context.Background(), st, login); err != nil {
				t.Fatalf("step %q: %v", st.Name, err)
			}
			// Checks and captures run on any body (the scenario's own
			// source here) without panicking.
			check(st, us.fill, &response{status: 200, header: map[string][]string{"X-T": {"v"}}, body: src, of: "body"})
		}
		if h := s.PreRun; h != nil {
			if (h.Request == nil) == (len(h.Command) == 0) || h.Timeout <= 0 || h.Timeout > MaxHookTimeout {
				t.Fatalf("pre_run %+v", h)
			}
			if h.Request != nil {
				if _, err := newRequest(context.Background(), h.Request, sampleFiller(s), s.base, s.headers); err != nil {
					t.Fatalf("pre_run: %v", err)
				}
			}
		}
	})
}
