package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

// exported returns the exported description of s, for comparisons.
func exported(s *Scenario) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name=%q base=%q headers=%v data=%v scoring=%+v\n", s.Name, s.BaseURL, s.Headers, s.Data, s.Scoring)
	for _, st := range s.steps() {
		fmt.Fprintf(&b, "step %q w=%v sw=%v %s %q form=%v body=%q headers=%v expect=%+v think=%v\n",
			st.Name, st.Weight, st.ScoreWeight, st.Method, st.URL, st.Form, st.Body, st.Headers, st.Expect, st.Think)
	}
	return b.String()
}

func TestLoadGood(t *testing.T) {
	tests := []struct {
		name  string
		path  string
		check func(t *testing.T, s *Scenario)
	}{
		{"example", "example.yaml", func(t *testing.T, s *Scenario) {
			if s.Name != "isucon-like" || s.BaseURL != "http://127.0.0.1:8080" {
				t.Errorf("name %q base %q", s.Name, s.BaseURL)
			}
			if got := s.StepNames(); !slices.Equal(got, []string{"login", "home", "profile", "my page", "entry", "post comment"}) {
				t.Errorf("steps %q", got)
			}
			if got := s.ScoreWeights(); !slices.Equal(got, []float64{1, 10, 2, 2, 3, 1}) {
				t.Errorf("score weights %v", got)
			}
			if got := s.Data["entry_ids"]; !slices.Equal(got, []string{"101", "102", "103"}) {
				t.Errorf("entry_ids from file: %q", got)
			}
			if s.Login.Method != "POST" || !slices.Equal(s.Login.Expect.Status, []int{200, 302}) {
				t.Errorf("login %+v", s.Login)
			}
			home := s.Steps[0]
			if home.Method != "GET" || home.Think != 100*time.Millisecond || home.Expect.Selector != "#friends li" ||
				home.Expect.MinCount != 1 || !slices.Equal(home.Expect.Contains, []string{"Welcome"}) {
				t.Errorf("home %+v", home)
			}
			if s.Scoring.FailIf.ErrorRate != 0.01 || s.Scoring.FailIf.P99 != 2*time.Second ||
				s.Scoring.Penalty(loadgen.ErrCheck) != 50 || s.Scoring.Penalty(loadgen.ErrReset) != 10 {
				t.Errorf("scoring %+v", s.Scoring)
			}
			if s.userList != 0 {
				t.Errorf("{{user}} list %d, want users", s.userList)
			}
		}},
		{"minimal: defaults", "testdata/minimal.yaml", func(t *testing.T, s *Scenario) {
			st := s.Steps[0]
			if s.Name != "minimal" || s.Login != nil || st.Name != "GET http://127.0.0.1:8080/" || st.Weight != 1 ||
				st.ScoreWeight != 1 || st.Method != "GET" || st.Expect.Status != nil || st.Think != 0 {
				t.Errorf("defaults: %s", exported(s))
			}
			if !reflect.DeepEqual(s.Scoring, DefaultScoring) {
				t.Errorf("scoring %+v, want DefaultScoring", s.Scoring)
			}
		}},
		{"anchors and merge keys", "testdata/anchors.yaml", func(t *testing.T, s *Scenario) {
			top, about := s.Steps[0], s.Steps[1]
			if about.Name != "about" || about.URL != "/about" || about.Think != 50*time.Millisecond ||
				!reflect.DeepEqual(top.Expect, about.Expect) || !slices.Equal(about.Expect.Status, []int{200, 304}) {
				t.Errorf("merged step: %s", exported(s))
			}
		}},
		{"JSON API", "testdata/json-api.yaml", func(t *testing.T, s *Scenario) {
			up, del := s.Steps[1], s.Steps[2]
			if up.Method != "PUT" || up.Body == "" || up.Headers["Content-Type"] != "application/json" {
				t.Errorf("update %+v", up)
			}
			if del.Method != "DELETE" || del.ScoreWeight != 0 || del.Weight != 1 {
				t.Errorf("delete %+v", del)
			}
			if f := s.Scoring.FailIf; f.ErrorRate != 0.05 || f.P90 != 500*time.Millisecond || f.Max != 3*time.Second {
				t.Errorf("fail_if %+v", f)
			}
		}},
		{"TOML", "testdata/isucon.toml", func(t *testing.T, s *Scenario) {
			y, err := Load("testdata/isucon.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if a, b := exported(y), exported(s); a != b {
				t.Errorf("YAML and TOML differ:\n%s\n%s", a, b)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if s.File != tt.path {
				t.Errorf("File %q", s.File)
			}
			tt.check(t, s)
		})
	}
}

// fakeFiles serves data files for the error cases.
func fakeFiles(path string) ([]byte, error) {
	switch path {
	case "ids.txt":
		return []byte("1\n2\n"), nil
	case "empty.txt":
		return []byte("\n  \n"), nil
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		file string // default scenario.yaml
		src  string
		want string // every message, one per line
	}{
		{"status not an integer", "", `
base_url: http://h/
steps:
  - url: /
    expect:
      status: "ok"
`, `scenario.yaml:6: steps[0].expect.status: want an integer or a list of integers`},
		{"status list with a bad element", "", `
base_url: http://h/
steps:
  - url: /
    expect: {status: [200, "x", 700]}
`, `scenario.yaml:5: steps[0].expect.status[1]: want an integer, got a string
scenario.yaml:5: steps[0].expect.status[2]: 700 is not an HTTP status (100-599)`},
		{"empty status list", "", `
base_url: http://h/
steps:
  - url: /
    expect: {status: []}
`, `scenario.yaml:5: steps[0].expect.status: want an integer or a list of integers`},
		{"typo at the top", "", `
base_url: http://h/
stpes:
  - url: /
`, `scenario.yaml:2: steps: required (at least one step)
scenario.yaml:3: stpes: unknown field (did you mean steps?)`},
		{"typo in a step", "", `
base_url: http://h/
steps:
  - url: /
    wieght: 3
`, `scenario.yaml:5: steps[0].wieght: unknown field (did you mean weight?)`},
		{"unknown field far from any", "", `
base_url: http://h/
steps:
  - url: /
    expect: {xpath: //a}
`, `scenario.yaml:5: steps[0].expect.xpath: unknown field (want status, contains, selector, min_count)`},
		{"duplicate field", "", `
base_url: http://h/
steps:
  - url: /
    url: /b
`, `scenario.yaml:5: steps[0].url: duplicate field`},
		{"unknown template list", "", `
base_url: http://h/
data: {users: [a]}
steps:
  - url: /profile/{{usres}}
`, `scenario.yaml:5: steps[0].url: unknown list "usres" in {{usres}} (define it under data)`},
		{"unknown list in a form", "", `
base_url: http://h/
steps:
  - url: /
    form: {comment: "{{words}}"}
`, `scenario.yaml:5: steps[0].form.comment: unknown list "words" in {{words}} (define it under data)`},
		{"unclosed placeholder", "", `
base_url: http://h/
steps:
  - url: /a/{{id
`, `scenario.yaml:4: steps[0].url: unclosed "{{"`},
		{"bad rand", "", `
base_url: http://h/
steps:
  - url: /a/{{rand 5 1}}
  - url: /b/{{rand x}}
  - url: /c/{{rand a b}}
`, `scenario.yaml:4: steps[0].url: {{rand 5 1}}: MIN is greater than MAX
scenario.yaml:5: steps[1].url: {{rand x}}: want {{rand MIN MAX}}
scenario.yaml:6: steps[2].url: {{rand a b}}: MIN and MAX must be integers`},
		{"user without login", "", `
base_url: http://h/
steps:
  - url: /{{user}}
`, `scenario.yaml:4: steps[0].url: {{user}} needs session.login`},
		{"user in the login", "", `
base_url: http://h/
data: {u: [a]}
session:
  login: {url: "/login/{{user}}", form: {name: "{{u}}"}}
steps:
  - url: /{{user}}
`, `scenario.yaml:5: session.login.url: {{user}} is not available in session.login; use the list itself`},
		{"login without a list", "", `
base_url: http://h/
session:
  login: {url: /login, form: {name: admin}}
steps:
  - url: /{{user}}
`, `scenario.yaml:6: steps[0].url: {{user}} needs a {{list}} placeholder in session.login (the list the user logs in with)`},
		{"user in global headers", "", `
base_url: http://h/
data: {u: [a]}
headers: {X-User: "{{user}}"}
session:
  login: {url: "/login/{{u}}"}
steps:
  - url: /
`, `scenario.yaml:4: headers.X-User: {{user}} is not available in headers sent with the login; put it in a step's headers`},
		{"bad durations", "", `
base_url: http://h/
steps:
  - url: /a
    think: 100
  - url: /b
    think: -1s
  - url: /c
    think: [1s]
`, `scenario.yaml:5: steps[0].think: want a duration like 100ms or 2s, got "100"
scenario.yaml:7: steps[1].think: must not be negative
scenario.yaml:9: steps[2].think: want a duration like 100ms or 2s, got a list`},
		{"bad weights", "", `
base_url: http://h/
steps:
  - url: /a
    weight: 0
  - url: /b
    weight: -2
  - url: /c
    weight: heavy
  - url: /d
    score_weight: -1
`, `scenario.yaml:5: steps[0].weight: want a positive number, got 0
scenario.yaml:7: steps[1].weight: want a positive number, got -2
scenario.yaml:9: steps[2].weight: want a number, got a string
scenario.yaml:11: steps[3].score_weight: must not be negative`},
		{"empty steps", "", `
base_url: http://h/
steps: []
`, `scenario.yaml:3: steps: want at least one step`},
		{"steps not a list", "", `
base_url: http://h/
steps: {url: /}
`, `scenario.yaml:3: steps: want a list of steps, got a mapping`},
		{"step not a mapping", "", `
base_url: http://h/
steps: [/]
`, `scenario.yaml:3: steps[0]: want a mapping, got a string`},
		{"missing url", "", `
base_url: http://h/
steps:
  - name: home
`, `scenario.yaml:4: steps[0].url: required`},
		{"bad CSS selector", "", `
base_url: http://h/
steps:
  - url: /
    expect: {selector: "#friends["}
`, `scenario.yaml:5: steps[0].expect.selector: invalid CSS selector "#friends[": expected identifier, found EOF instead`},
		{"min_count", "", `
base_url: http://h/
steps:
  - url: /a
    expect: {min_count: 2}
  - url: /b
    expect: {selector: li, min_count: 0}
`, `scenario.yaml:5: steps[0].expect.min_count: needs a selector
scenario.yaml:7: steps[1].expect.min_count: want at least 1, got 0`},
		{"empty contains", "", `
base_url: http://h/
steps:
  - url: /
    expect: {contains: ["a", ""]}
`, `scenario.yaml:5: steps[0].expect.contains[1]: empty string (it matches every body)`},
		{"relative URL without base", "", `
steps:
  - url: /
`, `scenario.yaml:3: steps[0].url: "/" is relative and base_url is not set`},
		{"only http and https", "", `
base_url: ftp://h/
steps:
  - url: /
  - url: gopher://x/
`, `scenario.yaml:2: base_url: "ftp://h/": want an http:// or https:// URL`},
		{"step URL scheme", "", `
base_url: http://h/
steps:
  - url: gopher://x/{{rand 1 2}}
  - url: "http:///nohost"
`, `scenario.yaml:4: steps[0].url: "gopher://x/1": want an http:// or https:// URL
scenario.yaml:5: steps[1].url: "http:///nohost" has no host`},
		{"base without host", "", `
base_url: "http://"
steps:
  - url: /
`, `scenario.yaml:2: base_url: "http://" has no host`},
		{"methods", "", `
base_url: http://h/
steps:
  - url: /a
    method: GTE
  - url: /b
    method: get
    form: {a: 1}
  - url: /c
    form: {a: 1}
    body: x
`, `scenario.yaml:5: steps[0].method: unknown method "GTE" (want GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)
scenario.yaml:7: steps[1].method: GET cannot send a form or a body
scenario.yaml:11: steps[2].body: form and body are exclusive`},
		{"duplicate step names", "", `
base_url: http://h/
data: {u: [a]}
session:
  login: {url: "/login?u={{u}}"}
steps:
  - {name: home, url: /}
  - {name: home, url: /b}
  - {name: login, url: /c}
  - url: /d
  - url: /d
`, `scenario.yaml:8: steps[1].name: duplicate step name "home" (also steps[0])
scenario.yaml:9: steps[2].name: duplicate step name "login" (also session.login)
scenario.yaml:11: steps[4]: duplicate step name "GET /d" (also steps[3]); name the steps`},
		{"headers", "", `
base_url: http://h/
steps:
  - url: /
    headers: {"bad header": x, X-Ok: "a\nb"}
`, `scenario.yaml:5: steps[0].headers.bad header: invalid header name
scenario.yaml:5: steps[0].headers.X-Ok: header values cannot contain line breaks`},
		{"data", "", `
base_url: http://h/
data:
  user: [a]
  "bad name": [a]
  e: []
  f: {file: missing.txt}
  g: {file: empty.txt}
  h: {fil: ids.txt}
  i: [[a]]
  j: 3
steps:
  - url: /
`, `scenario.yaml:4: data.user: "user" is reserved for the {{user}} placeholder
scenario.yaml:5: data.bad name: list names are letters, digits, _ and -, starting with a letter or _
scenario.yaml:6: data.e: empty list
scenario.yaml:7: data.f.file: missing data file missing.txt
scenario.yaml:8: data.g.file: empty.txt has no values
scenario.yaml:9: data.h.file: required (a file with one value per line)
scenario.yaml:9: data.h.fil: unknown field (did you mean file?)
scenario.yaml:10: data.i[0]: want a string, got a list
scenario.yaml:11: data.j: want a list of values or {file: PATH}, got a number`},
		{"missing data file used by templates is reported once", "", `
base_url: http://h/
data:
  users: {file: users.txt}
session:
  login: {url: /login, form: {u: "{{users}}"}}
steps:
  - url: /u/{{users}}
  - url: /me/{{user}}
`, `scenario.yaml:4: data.users.file: missing data file users.txt`},
		{"bad inline list used by a template is reported once", "", `
base_url: http://h/
data: {ids: [], names: [[a]]}
steps:
  - url: /e/{{ids}}/{{names.seq}}
`, `scenario.yaml:3: data.ids: empty list
scenario.yaml:3: data.names[0]: want a string, got a list`},
		{"unfinished limit out of range", "", `
base_url: http://h/
steps:
  - url: /
scoring:
  fail_if: {unfinished: 2}
`, `scenario.yaml:6: scoring.fail_if.unfinished: want a fraction between 0 and 1, got 2`},
		{"password in base_url is masked", "", `
base_url: "ftp://admin:secret@h/"
steps:
  - url: /
`, `scenario.yaml:2: base_url: "ftp://admin:***@h/": want an http:// or https:// URL`},
		{"password in an invalid base_url is masked", "", `
base_url: "http://admin:sec ret@h/"
steps:
  - url: /
`, `scenario.yaml:2: base_url: invalid URL "http://admin:***@h/"`},
		{"password in a step URL is masked", "", `
base_url: http://h/
steps:
  - url: "ftp://admin:secret@h/x"
`, `scenario.yaml:4: steps[0].url: "ftp://admin:***@h/x": want an http:// or https:// URL`},
		{"scoring", "", `
base_url: http://h/
steps:
  - url: /
scoring:
  success: -1
  penalties: {timeot: 1, check: -1, status: x}
  fail_if: {error_rate: 2, p99: fast, p100: 1s}
`, `scenario.yaml:6: scoring.success: must not be negative
scenario.yaml:7: scoring.penalties.timeot: unknown field (did you mean timeout?)
scenario.yaml:7: scoring.penalties.check: must not be negative
scenario.yaml:7: scoring.penalties.status: want a number, got a string
scenario.yaml:8: scoring.fail_if.error_rate: want a fraction between 0 and 1, got 2
scenario.yaml:8: scoring.fail_if.p99: want a duration like 100ms or 2s, got "fast"
scenario.yaml:8: scoring.fail_if.p100: unknown field (did you mean p50?)`},
		{"error rates", "", `
base_url: http://h/
steps:
  - url: /
scoring:
  fail_if: {error_rate: "150%"}
---
`, `scenario.yaml:6: scoring.fail_if.error_rate: want a percentage between 0% and 100%, got "150%"`},
		{"YAML syntax", "", `
base_url: http://h/
steps: [
`, `scenario.yaml:3: invalid YAML: did not find expected node content`},
		{"YAML bad bytes", "", "base_url: http://h/\nname: \x01\n", `scenario.yaml:2: invalid YAML: control characters are not allowed`},
		{"YAML unknown anchor", "", "base_url: http://h/\nsteps:\n  - *page\n", `scenario.yaml:3: invalid YAML: unknown anchor 'page' referenced`},
		{"empty file", "", "# nothing yet\n", `scenario.yaml:1: empty scenario (want at least steps)`},
		{"not a mapping", "", "- url: /\n", `scenario.yaml:1: want a mapping, got a list`},
		{"TOML typo", "scenario.toml", `
base_url = "http://h/"

[[steps]]
url = "/"

[[steps]]
url = "/b"
wieght = 3
`, `scenario.toml:9: steps[1].wieght: unknown field (did you mean weight?)`},
		{"TOML status", "scenario.toml", `
base_url = "http://h/"

[[steps]]
url = "/"
expect = { status = "ok" }

[[steps]]
url = "/b"
[steps.expect]
contains = ""
`, `scenario.toml:6: steps[0].expect.status: want an integer or a list of integers
scenario.toml:11: steps[1].expect.contains: empty string (it matches every body)`},
		{"TOML scoring", "scenario.toml", `
[[steps]]
url = "http://h/"

[scoring.penalties]
error = 1
timeot = 2
`, `scenario.toml:7: scoring.penalties.timeot: unknown field (did you mean timeout?)`},
		{"TOML syntax", "scenario.toml", `
base_url = "http://h/"
[[steps]
`, `scenario.toml:3: invalid TOML: expected end of table array name delimiter ']', but got '\n' instead`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = "scenario.yaml"
			}
			s, err := parse(file, []byte(tt.src), fakeFiles)
			if err == nil {
				t.Fatalf("no error; loaded %s", exported(s))
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.File != file {
				t.Errorf("errors.As(*FieldError) = %v", fe)
			}
		})
	}
}

func TestLoadFileErrors(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yaml")
	if err == nil || err.Error() != "testdata/does-not-exist.yaml: cannot read testdata/does-not-exist.yaml: no such file or directory" {
		t.Errorf("missing file: %v", err)
	}
	// Data files are read relative to the scenario, and must be regular files.
	dir := t.TempDir()
	src := "base_url: http://h/\ndata: {a: {file: ids.txt}, b: {file: /dev/zero}, c: {file: sub}}\nsteps: [{url: /}]\n"
	if err := os.WriteFile(dir+"/s.yaml", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/ids.txt", []byte("x\r\ny\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir+"/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Load(dir + "/s.yaml")
	want := dir + "/s.yaml:2: data.b.file: cannot read /dev/zero: not a regular file\n" +
		dir + "/s.yaml:2: data.c.file: cannot read sub: not a regular file"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	src = "base_url: http://h/\ndata: {a: {file: ids.txt}}\nsteps: [{url: /}]\n"
	if err := os.WriteFile(dir+"/s.yaml", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir + "/s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Data["a"]; !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("data a = %q", got)
	}
}

func TestSetBaseURL(t *testing.T) {
	s, err := Load("example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetBaseURL("https://staging.example.com:8443/app/"); err != nil {
		t.Fatal(err)
	}
	if s.BaseURL != "https://staging.example.com:8443/app/" || s.base.Host != "staging.example.com:8443" {
		t.Errorf("base %q", s.BaseURL)
	}
	if err := s.SetBaseURL("localhost:8080"); err == nil || err.Error() != `example.yaml: base_url: "localhost:8080": want an http:// or https:// URL` {
		t.Errorf("bad base: %v", err)
	}
	if s.BaseURL != "https://staging.example.com:8443/app/" {
		t.Errorf("a refused base URL replaced the old one")
	}
}

// TestLoadDataFiles reads data files next to a real scenario file: a
// missing one is reported with its path and the line that names it, once.
func TestLoadDataFiles(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "bench")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "users.txt"), []byte("alice\nbob\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missingAbs := filepath.Join(dir, "nowhere", "ids.txt")
	tests := []struct {
		name string
		data string // the data section's list
		want string // the whole error ("" = loads), {{scenario}} and {{dir}} replaced
	}{
		{name: "present file", data: "{file: users.txt}"},
		{name: "missing file relative to the scenario", data: "{file: people.txt}",
			want: "{{scenario}}:3: data.users.file: missing data file {{dir}}/people.txt (people.txt, relative to the scenario's directory)"},
		{name: "missing absolute file", data: "{file: " + missingAbs + "}",
			want: "{{scenario}}:3: data.users.file: missing data file " + missingAbs},
		{name: "directory instead of a file", data: "{file: .}",
			want: "{{scenario}}:3: data.users.file: cannot read .: not a regular file"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(sub, fmt.Sprintf("s%d.yaml", i))
			src := "base_url: http://h/\ndata:\n  users: " + tt.data + "\n" +
				"session:\n  login: {url: /login, form: {u: \"{{users}}\"}}\n" +
				"steps:\n  - url: /u/{{users}}\n  - url: /me/{{user}}\n"
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Load(path)
			if tt.want == "" {
				if err != nil || !slices.Equal(s.Data["users"], []string{"alice", "bob"}) {
					t.Fatalf("Load = %v; data %q", err, s.Data)
				}
				return
			}
			want := strings.NewReplacer("{{scenario}}", path, "{{dir}}", sub).Replace(tt.want)
			if err == nil || err.Error() != want {
				t.Errorf("got\n%v\nwant\n%s", err, want)
			}
		})
	}
}

func TestLoadFailIfAndPasswords(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, s *Scenario)
	}{
		{"unfinished limit by default", "base_url: http://h/\nsteps: [{url: /}]\n", func(t *testing.T, s *Scenario) {
			if s.Scoring.FailIf.Unfinished != 0.01 {
				t.Errorf("unfinished limit %v, want 0.01", s.Scoring.FailIf.Unfinished)
			}
		}},
		{"unfinished limit as a percentage", "base_url: http://h/\nsteps: [{url: /}]\nscoring: {fail_if: {unfinished: \"5%\", error_rate: 1}}\n", func(t *testing.T, s *Scenario) {
			if s.Scoring.FailIf.Unfinished != 0.05 || s.Scoring.FailIf.ErrorRate != 1 {
				t.Errorf("fail_if %+v", s.Scoring.FailIf)
			}
		}},
		{"default step name masks the password", "steps: [{url: \"http://user:secret@h/x\"}]\n", func(t *testing.T, s *Scenario) {
			if st := s.Steps[0]; st.Name != "GET http://user:***@h/x" || st.URL != "http://user:secret@h/x" {
				t.Errorf("name %q url %q", st.Name, st.URL)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse("scenario.yaml", []byte(tt.src), fakeFiles)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}
