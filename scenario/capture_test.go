package scenario

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

func TestJSONPath(t *testing.T) {
	tests := []struct {
		path string
		want string // the elements, or the error
	}{
		{"a", "a"},
		{"a.b.c", "a b c"},
		{"$.a[0].b", "a [0] b"},
		{"$[2]", "[2]"},
		{"[1][0]", "[1] [0]"},
		{`entry["display name"].x`, `entry "display name" x`},
		{`["a.b"]`, `"a.b"`},
		{"", `JSON path "": empty path`},
		{"$", `JSON path "$": names the whole document; want a key or an index after $`},
		{"$a", `JSON path "$a": want . or [ after $`},
		{"a..b", `JSON path "a..b": empty key`},
		{"a.", `JSON path "a.": empty key`},
		{".a", `JSON path ".a": empty key`},
		{"a[x]", `JSON path "a[x]": want [N] with N ≥ 0, or ["key"], got [x]`},
		{"a[-1]", `JSON path "a[-1]": want [N] with N ≥ 0, or ["key"], got [-1]`},
		{"a[1", `JSON path "a[1": unclosed [`},
		{`a["b`, `JSON path "a[\"b": invalid quoted key`},
		{`a["b"x`, `JSON path "a[\"b\"x": want ] after the quoted key`},
		{"a[0]b", `JSON path "a[0]b": want . or [ after [0]`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			path, err := parseJSONPath(tt.path)
			var got string
			if err != nil {
				got = err.Error()
			} else {
				var parts []string
				for _, e := range path {
					switch {
					case !e.isKey:
						parts = append(parts, fmt.Sprintf("[%d]", e.index))
					case e.source[0] == '[':
						parts = append(parts, fmt.Sprintf("%q", e.key))
					default:
						parts = append(parts, e.key)
					}
				}
				got = strings.Join(parts, " ")
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestCaptureTake: each kind of capture on a matching response, and the
// check detail of one that does not match.
func TestCaptureTake(t *testing.T) {
	page := `<html><body><h2 class="t"> Hello
  <b>world</b> </h2><form><input name="csrf" value="tok-1"></form><a data-id="42" href="/e/42">x</a></body></html>`
	doc := `{"data": {"items": [{"id": 7, "ok": true, "name": "x y"}], "none": null, "obj": {}, "n": 1.50}, "a.b": "dot"}`
	tests := []struct {
		name, src string
		body      string
		header    http.Header
		want      string // the value, or "error: " + the detail
	}{
		{"regexp group 1 by default", `{regexp: 'data-id="(\d+)"'}`, page, nil, "42"},
		{"regexp group 0", `{regexp: 'data-id="\d+"', group: 0}`, page, nil, `data-id="42"`},
		{"regexp group 2", `{regexp: '(data)-id="(\d+)"', group: 2}`, page, nil, "42"},
		{"regexp no match", `{regexp: 'data-user="(\w+)"'}`, page, nil, `error: capture v: regexp "data-user=\"(\\w+)\"" matched nothing in the body`},
		{"regexp optional group unmatched", `{regexp: 'data-id="(x)?\d+"'}`, page, nil, `error: capture v: regexp "data-id=\"(x)?\\d+\"" matched, but not its group 1`},
		{"selector text, trimmed", `{selector: h2.t}`, page, nil, "Hello\n  world"},
		{"selector attribute", `{selector: 'input[name=csrf]', attr: value}`, page, nil, "tok-1"},
		{"selector without the attribute", `{selector: 'input[name=csrf]', attr: data-x}`, page, nil, `error: capture v: the element selector "input[name=csrf]" matched has no attribute "data-x"`},
		{"selector no match", `{selector: '#missing'}`, page, nil, `error: capture v: selector "#missing" matched no element`},
		{"json number", `{json: 'data.items[0].id'}`, doc, nil, "7"},
		{"json number as written", `{json: 'data.n'}`, doc, nil, "1.50"},
		{"json string", `{json: '$.data.items[0].name'}`, doc, nil, "x y"},
		{"json boolean", `{json: 'data.items[0].ok'}`, doc, nil, "true"},
		{"json quoted key", `{json: '["a.b"]'}`, doc, nil, "dot"},
		{"json missing key", `{json: 'data.items[0].title'}`, doc, nil, `error: capture v: no key "title" in data.items[0]`},
		{"json index out of range", `{json: 'data.items[3]'}`, doc, nil, `error: capture v: data.items has 1 elements: no [3]`},
		{"json through a scalar", `{json: 'data.n.x'}`, doc, nil, `error: capture v: data.n is a number: no x`},
		{"json key on an array", `{json: 'data.items.id'}`, doc, nil, `error: capture v: data.items is an array, not an object: no key "id"`},
		{"json null", `{json: 'data.none'}`, doc, nil, `error: capture v: data.none is null, want a string, a number or a boolean`},
		{"json object", `{json: 'data.obj'}`, doc, nil, `error: capture v: data.obj is an object, want a string, a number or a boolean`},
		{"not JSON", `{json: 'a'}`, page, nil, `error: capture v: body is not JSON: invalid character '<' looking for beginning of value`},
		{"header", `{header: x-next}`, "", http.Header{"X-Next": {"/page/2"}}, "/page/2"},
		{"header missing", `{header: x-next}`, "", http.Header{}, `error: capture v: no X-Next header in the response`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "base_url: http://h/\nsteps: [{url: /, capture: {v: " + tt.src + "}}]\n"
			s, err := parse("s.yaml", []byte(src), fakeFiles)
			if err != nil {
				t.Fatal(err)
			}
			r := &response{status: 200, header: tt.header, body: []byte(tt.body), of: "body"}
			kind, detail, vals := check(&s.Steps[0], sampleFiller(s), r)
			got := "error: " + detail
			if kind == loadgen.OK {
				got = vals[0]
			} else if kind != loadgen.ErrCheck {
				t.Errorf("kind %s", kind)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	// A value over MaxCapture fails the check.
	s, err := parse("s.yaml", []byte("base_url: http://h/\nsteps: [{url: /, capture: {v: {regexp: 'x+'}}}]\n"), fakeFiles)
	if err != nil {
		t.Fatal(err)
	}
	r := &response{body: []byte(strings.Repeat("x", MaxCapture+1)), of: "body"}
	if _, d, _ := check(&s.Steps[0], sampleFiller(s), r); d != "capture v: value of 65537 bytes, over the 64 KiB bound" {
		t.Errorf("long value: %q", d)
	}
}

// sessionApp hands each session tokens and entries of its own, and checks
// that what comes back belongs to the session that sends it.
type sessionApp struct {
	mu      sync.Mutex
	n       int
	issued  map[string]string // session (cookie) → its last token
	log     []string          // "post by alice with her token"
	foreign int               // requests carrying another session's token
	early   int               // posts before the session had a token
}

func (a *sessionApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	who := ""
	session := ""
	if c, err := r.Cookie("s"); err == nil {
		session = c.Value
		who, _, _ = strings.Cut(session, ".")
	}
	switch {
	case r.URL.Path == "/login":
		// Users 0 and 2 both log in as alice: a session is a login.
		a.n++
		http.SetCookie(w, &http.Cookie{Name: "s", Value: fmt.Sprintf("%s.%d", r.PostFormValue("u"), a.n), Path: "/"})
		w.WriteHeader(http.StatusFound)
	case r.URL.Path == "/form":
		a.n++
		tok := fmt.Sprintf("%s-%d", session, a.n)
		a.issued[session] = tok
		fmt.Fprintf(w, `<p>Hello, %s</p><form id="post"><input name="token" value="%s"></form><a data-entry="%d">e</a>`, who, tok, a.n)
	case strings.HasPrefix(r.URL.Path, "/post/"):
		tok := r.PostFormValue("token")
		switch {
		case a.issued[session] == "":
			a.early++
		case tok != a.issued[session]:
			a.foreign++
		}
		// The entry id in the URL was issued with the token.
		if !strings.HasSuffix(tok, "-"+strings.TrimPrefix(r.URL.Path, "/post/")) {
			a.foreign++
		}
		a.log = append(a.log, "post by "+who)
		fmt.Fprintf(w, "posted by %s", who)
	case r.URL.Path == "/me":
		fmt.Fprintf(w, "Hello, %s", who)
	case r.URL.Path == "/impostor":
		fmt.Fprint(w, "Hello, mallory")
	default:
		http.NotFound(w, r)
	}
}

const sessionScenario = `
base_url: http://set.by.test/
data: {users: [alice, bob]}
session:
  login: {url: /login, form: {u: "{{users}}"}, expect: {status: 302}}
steps:
  - name: form
    url: /form
    expect: {contains: "Hello, {{user}}"}
    capture:
      token: {selector: "#post input[name=token]", attr: value}
      entry: {regexp: 'data-entry="(\d+)"'}
  - name: post
    weight: 3
    url: /post/{{entry}}
    form: {token: "{{token}}"}
    expect: {contains: "posted by {{user}}"}
`

// TestCapturesFlowPerSession: values captured from a response go into the
// later requests of the same session only, and a step using them waits
// until its session has them.
func TestCapturesFlowPerSession(t *testing.T) {
	a := &sessionApp{issued: map[string]string{}}
	srv := httptest.NewServer(a)
	defer srv.Close()
	s := loadApp(t, sessionScenario, srv)
	plan, err := s.Workload(WorkloadOptions{Timeout: 5 * time.Second, KeepAlive: true, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	const users, each = 4, 60
	var wg sync.WaitGroup
	samples := make([][]loadgen.Sample, users)
	for id := range users {
		u, err := plan.NewUser(id)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer u.Close()
			for range each {
				samples[id] = append(samples[id], u.Do(context.Background(), time.Now()))
			}
		}()
	}
	wg.Wait()
	posts := 0
	for id, xs := range samples {
		sawForm := false
		for i, x := range xs {
			if x.Err != loadgen.OK {
				t.Errorf("user %d sample %d (%s): %s %s", id, i, plan.Steps[x.Step], x.Err, x.Detail)
			}
			switch plan.Steps[x.Step] {
			case "form":
				sawForm = true
			case "post":
				posts++
				if !sawForm {
					t.Errorf("user %d posted before any form", id)
				}
			}
		}
	}
	if posts == 0 || a.early != 0 || a.foreign != 0 || len(a.log) != posts {
		t.Errorf("%d posts; the server saw %d, %d before a token, %d with another session's token or entry", posts, len(a.log), a.early, a.foreign)
	}
}

// TestUserInChecks: {{user}} in a check is this session's user; a page
// showing another user fails the check with the filled value.
func TestUserInChecks(t *testing.T) {
	a := &sessionApp{issued: map[string]string{}}
	srv := httptest.NewServer(a)
	defer srv.Close()
	s := loadApp(t, `
base_url: http://set.by.test/
data: {users: [alice, bob], pages: [me, impostor]}
session:
  login: {url: /login, form: {u: "{{users}}"}, expect: {status: 302}}
steps:
  - {name: me, url: /me, expect: {contains: "Hello, {{user}}"}}
  - {name: impostor, url: /impostor, expect: {contains: "Hello, {{user}}"}}
  - {name: named, url: "/{{pages}}", expect: {contains: ["Hello, {{user.users}}", "{{user}}"]}}
`, srv)
	ps, err := s.newPlanState(WorkloadOptions{Timeout: 5 * time.Second, KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	u, err := ps.newUser(1) // bob
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	us := u.(*user)
	if x := u.Do(context.Background(), time.Now()); x.Err != loadgen.OK {
		t.Fatalf("login: %+v", x)
	}
	tests := []struct {
		step   int
		kind   loadgen.ErrKind
		detail string
	}{
		{0, loadgen.OK, ""},
		{1, loadgen.ErrCheck, `body lacks "Hello, bob" (contains "Hello, {{user}}")`},
	}
	for _, tt := range tests {
		x := us.send(context.Background(), time.Now(), &s.Steps[tt.step], false)
		if x.Err != tt.kind || x.Detail != tt.detail {
			t.Errorf("%s: got %s %q, want %s %q", s.Steps[tt.step].Name, x.Err, x.Detail, tt.kind, tt.detail)
		}
	}
	// The same step passes or fails with the page its request drew.
	seen := map[string]bool{}
	for range 40 {
		x := us.send(context.Background(), time.Now(), &s.Steps[2], false)
		switch {
		case x.Err == loadgen.OK:
			seen["pass"] = true
		case x.Detail == `body lacks "Hello, bob" (contains "Hello, {{user.users}}")`:
			seen["fail"] = true
		default:
			t.Errorf("named: %s %q", x.Err, x.Detail)
		}
	}
	if !seen["pass"] || !seen["fail"] {
		t.Errorf("outcomes %v, want both", seen)
	}
}

// TestCaptureFailure: a capture that does not match fails the step's
// check, and the session keeps what it had.
func TestCaptureFailure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good":
			fmt.Fprint(w, `<a data-entry="7">`)
		case "/bad":
			fmt.Fprint(w, `nothing here`)
		case "/half":
			fmt.Fprint(w, `<a data-entry="9">`)
		}
	}))
	defer srv.Close()
	s := loadApp(t, `
base_url: http://set.by.test/
steps:
  - {name: good, url: /good, capture: {entry: {regexp: 'data-entry="(\d+)"'}}}
  - {name: bad, url: /bad, capture: {entry: {regexp: 'data-entry="(\d+)"'}}}
  - {name: half, url: /half, capture: {entry: {regexp: 'data-entry="(\d+)"'}, other: {header: X-Other}}}
  - {name: use, url: "/e/{{entry}}/{{other}}"}
`, srv)
	ps, err := s.newPlanState(WorkloadOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	u, err := ps.newUser(0)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	us := u.(*user)
	if x := us.send(context.Background(), time.Now(), &s.Steps[0], false); x.Err != loadgen.OK || us.fill.caps[0] != "7" || !us.have[0] {
		t.Fatalf("good: %+v, session %q", x, us.fill.caps)
	}
	x := us.send(context.Background(), time.Now(), &s.Steps[1], false)
	if x.Err != loadgen.ErrCheck || x.Detail != `capture entry: regexp "data-entry=\"(\\d+)\"" matched nothing in the body` {
		t.Errorf("bad: %s %q", x.Err, x.Detail)
	}
	x = us.send(context.Background(), time.Now(), &s.Steps[2], false)
	if x.Err != loadgen.ErrCheck || x.Detail != "capture other: no X-Other header in the response" {
		t.Errorf("half: %s %q", x.Err, x.Detail)
	}
	if us.fill.caps[0] != "7" || us.have[1] {
		t.Errorf("a failed capture changed the session: %q %v", us.fill.caps, us.have)
	}
	// "use" needs other, which no response gave: never picked.
	for range 30 {
		if i := us.pick(); s.Steps[i].Name == "use" {
			t.Fatalf("picked %q without its values", s.Steps[i].Name)
		}
	}
}
