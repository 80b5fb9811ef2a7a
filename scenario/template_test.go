package scenario

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
)

var testLists = [][]string{
	{"alice", "bob", "carol"}, // users
	{"1", "2", "3"},           // ids
	{"a b", "c/d&e"},          // words
}

func testEnv(url bool) tmplEnv {
	return tmplEnv{lists: map[string]int{"users": 0, "ids": 1, "words": 2}, url: url, hasUser: true}
}

func TestTemplateFill(t *testing.T) {
	tests := []struct {
		name string
		src  string
		url  bool
		bind int // ≥ 0: the login binding of user bind
		want string
	}{
		{"literal", "/static/app.js", true, -1, "/static/app.js"},
		{"one pick per list per request", "/{{users}}/{{ users }}?again={{users}}", true, -1, "/bob/bob?again=bob"},
		{"path and query escaping", "/w/{{words}}?q={{words}}", true, -1, "/w/c%2Fd&e?q=c%2Fd%26e"},
		{"no escaping outside URLs", "{{words}}", false, -1, "c/d&e"},
		{"user", "/profile/{{user}}", true, -1, "/profile/carol"},
		{"login binds every list to the user's row", "{{users}}:{{ids}}:{{users.seq}}:{{words}}", false, 4, "bob:2:bob:a b"},
		{"seq", "{{ids.seq}}-{{ids.seq}}", false, -1, "1-1"},
		{"rand", "{{rand 7 7}}", false, -1, "7"},
		{"braces without a placeholder", "{ \"a\": {\"b\": 1} }", false, -1, "{ \"a\": {\"b\": 1} }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, err := compileTemplate(tt.src, testEnv(tt.url))
			if err != nil {
				t.Fatal(err)
			}
			f := newFiller(rand.New(rand.NewPCG(1, 2)), testLists, make([]atomic.Uint64, len(testLists)))
			f.user = "carol"
			f.reset()
			// Make the random picks predictable: users → bob, words → "c/d&e".
			f.picks[0], f.picks[2] = 1, 1
			f.bind = tt.bind
			if got := tm.string(f); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTemplateErrors(t *testing.T) {
	env := testEnv(true)
	env.hasUser, env.noUser = false, "{{user}} needs session.login"
	tests := []struct{ src, want string }{
		{"/{{nope}}", `unknown list "nope" in {{nope}} (define it under data)`},
		{"/{{nope.seq}}", `unknown list "nope" in {{nope.seq}} (define it under data)`},
		{"/{{users", `unclosed "{{"`},
		{"/{{}}", `empty placeholder {{}}`},
		{"/{{user}}", `{{user}} needs session.login`},
		{"/{{users ids}}", `{{users ids}}: want {{list}}, {{list.seq}}, {{user}} or {{rand MIN MAX}}`},
		{"/{{rand 1}}", `{{rand 1}}: want {{rand MIN MAX}}`},
		{"/{{rand 1 x}}", `{{rand 1 x}}: MIN and MAX must be integers`},
		{"/{{rand 2 1}}", `{{rand 2 1}}: MIN is greater than MAX`},
		{"/{{rand -9223372036854775808 9223372036854775807}}", `{{rand -9223372036854775808 9223372036854775807}}: range too large`},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := compileTemplate(tt.src, env)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %s", err, tt.want)
			}
		})
	}
}

func TestTemplateRandomValues(t *testing.T) {
	tm, err := compileTemplate("{{users}} {{rand -2 2}}", testEnv(false))
	if err != nil {
		t.Fatal(err)
	}
	run := func(seed uint64) []string {
		f := newFiller(rand.New(rand.NewPCG(seed, 0)), testLists, make([]atomic.Uint64, len(testLists)))
		var out []string
		for range 300 {
			f.reset()
			out = append(out, tm.string(f))
		}
		return out
	}
	a, b := run(42), run(42)
	seen := map[string]bool{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different values at %d: %q %q", i, a[i], b[i])
		}
		seen[a[i]] = true
	}
	// 3 users × 5 integers, all reached in 300 draws.
	if len(seen) != 15 {
		t.Errorf("%d distinct values, want 15: %v", len(seen), seen)
	}
}

func TestTemplateSeqIsShared(t *testing.T) {
	tm, err := compileTemplate("{{ids.seq}}", testEnv(false))
	if err != nil {
		t.Fatal(err)
	}
	seq := make([]atomic.Uint64, len(testLists))
	u1 := newFiller(rand.New(rand.NewPCG(1, 0)), testLists, seq)
	u2 := newFiller(rand.New(rand.NewPCG(2, 0)), testLists, seq)
	var got string
	for i := range 7 {
		f := u1
		if i%2 == 1 {
			f = u2
		}
		f.reset()
		got += tm.string(f)
	}
	if got != "1231231" {
		t.Errorf("shared round robin: %q", got)
	}
}

func TestPickerDistribution(t *testing.T) {
	weights := []float64{10, 5, 0.5, 4.5}
	p := newPicker(weights)
	const n = 200000
	count := func(seed uint64) []int {
		r := rand.New(rand.NewPCG(seed, 0))
		c := make([]int, len(weights))
		for range n {
			c[p.pick(r)]++
		}
		return c
	}
	c := count(7)
	for i, w := range weights {
		want := w / 20 * n
		// 5 standard deviations of a binomial count: never flaky, and the
		// seed is fixed anyway.
		if sd := math.Sqrt(want * (1 - w/20)); math.Abs(float64(c[i])-want) > 5*sd {
			t.Errorf("step %d picked %d times, want %.0f ± %.0f", i, c[i], want, 5*sd)
		}
	}
	if again := count(7); !slices.Equal(c, again) {
		t.Errorf("same seed, different counts: %v %v", c, again)
	}
	if other := count(8); slices.Equal(c, other) {
		t.Errorf("different seeds, same counts: %v", c)
	}
	// One step: always it.
	one := newPicker([]float64{3})
	r := rand.New(rand.NewPCG(1, 1))
	for range 100 {
		if i := one.pick(r); i != 0 {
			t.Fatalf("picked %d of 1", i)
		}
	}
}

// TestTemplateSessionValues: {{user.LIST}} is the user's row of the list,
// {{name}} the session's captured value (escaped in a URL like any value),
// and a check refuses {{rand}}.
func TestTemplateSessionValues(t *testing.T) {
	env := testEnv(true)
	env.caps = map[string]int{"token": 0, "next": 1}
	tests := []struct {
		name string
		src  string
		url  bool
		row  int
		caps []string
		want string
	}{
		{"row of each list", "{{user.users}}/{{user.ids}}/{{user.words}}", false, 4, nil, "bob/2/a b"},
		{"captured value", "/t/{{token}}?n={{next}}", true, 0, []string{"a/b", "x&y"}, "/t/a%2Fb?n=x%26y"},
		{"captured value as is outside URLs", "{{token}} {{next}}", false, 0, []string{"a/b", "x&y"}, "a/b x&y"},
		{"not captured yet: empty", "[{{token}}]", false, 0, []string{"", ""}, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := env
			e.url = tt.url
			tm, err := compileTemplate(tt.src, e)
			if err != nil {
				t.Fatal(err)
			}
			f := newFiller(rand.New(rand.NewPCG(1, 2)), testLists, make([]atomic.Uint64, len(testLists)))
			f.row, f.caps = tt.row, tt.caps
			f.reset()
			if got := tm.string(f); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	check := env
	check.url, check.check = false, true
	errs := []struct {
		name string
		env  tmplEnv
		src  string
		want string
	}{
		{"rand in a check", check, "{{rand 1 9}}", "{{rand 1 9}}: a check cannot use {{rand}} (it would draw a fresh number); capture the value instead"},
		{"seq of a capture", env, "{{token.seq}}", "{{token.seq}}: token is a capture, not a data list (use {{token}})"},
		{"unknown row list", env, "{{user.nope}}", `unknown list "nope" in {{user.nope}} (define it under data)`},
		{"captures refused here", tmplEnv{caps: env.caps, noCaps: "not here"}, "{{token}}", "{{token}}: not here"},
		{"rows refused here", tmplEnv{lists: env.lists, noRow: "is not available here"}, "{{user.ids}}", "{{user.ids}} is not available here"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := compileTemplate(tt.src, tt.env); err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %s", err, tt.want)
			}
		})
	}
}
