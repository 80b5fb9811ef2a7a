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
func fakeFiles(path string, _ int64) ([]byte, error) {
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
	want := dir + "/s.yaml:2: data.b.file: cannot read /dev/zero: a character device, not a regular file\n" +
		dir + "/s.yaml:2: data.c.file: cannot read sub: a directory, not a regular file"
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
			want: "{{scenario}}:3: data.users.file: cannot read .: a directory, not a regular file"},
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

// contestFields describes what exported leaves out: the pre_run hook,
// captures, slow_after and the slow scoring.
func contestFields(s *Scenario) string {
	var b strings.Builder
	fmt.Fprintf(&b, "captures=%q slow penalty=%v slow rate=%v\n", s.Captures, s.Scoring.SlowPenalty, s.Scoring.FailIf.SlowRate)
	if h := s.PreRun; h != nil {
		fmt.Fprintf(&b, "pre_run command=%q shell=%v timeout=%v dir=%q", h.Command, h.Shell, h.Timeout, h.dir)
		if r := h.Request; r != nil {
			fmt.Fprintf(&b, " request=%s %q body=%q headers=%v expect=%+v", r.Method, r.URL, r.Body, r.Headers, r.Expect)
		}
		b.WriteByte('\n')
	}
	for _, st := range s.steps() {
		fmt.Fprintf(&b, "step %q slow_after=%v needs=%v", st.Name, st.SlowAfter, st.needs)
		for _, c := range st.Captures {
			fmt.Fprintf(&b, " capture{%s re=%q group=%d sel=%q attr=%q json=%q header=%q}", c.Name, c.Regexp, c.Group, c.Selector, c.Attr, c.JSON, c.Header)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestLoadContestFeatures(t *testing.T) {
	tests := []struct {
		name  string
		path  string // or src
		src   string
		check func(t *testing.T, s *Scenario)
	}{
		{name: "contest YAML", path: "testdata/contest.yaml", check: func(t *testing.T, s *Scenario) {
			want := `captures=["csrf" "entry_id" "title" "author" "second"] slow penalty=2 slow rate=0.1
pre_run command=["./init.sh" "--reset" "two words"] shell=false timeout=1m0s dir="testdata"
step "login" slow_after=0s needs=[] capture{csrf re="" group=0 sel="" attr="" json="" header="X-CSRF-Token"}
step "home" slow_after=3s needs=[] capture{entry_id re="data-entry=\"(\\d+)\"" group=1 sel="" attr="" json="" header=""} capture{title re="" group=0 sel="h2.entry-title" attr="" json="" header=""}
step "entry" slow_after=500ms needs=[1 2] capture{author re="" group=0 sel="" attr="" json="$.entry.author[\"display name\"]" header=""} capture{second re="(a)(b)" group=2 sel="" attr="" json="" header=""}
step "comment" slow_after=0s needs=[0 1 3]
`
			if got := contestFields(s); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
			if got := s.SlowAfters(); !slices.Equal(got, []time.Duration{0, 3 * time.Second, 500 * time.Millisecond, 0}) {
				t.Errorf("SlowAfters %v", got)
			}
			if got := s.Steps[0].Expect.Contains; !slices.Equal(got, []string{"Welcome, {{user}}", "{{user.nicks}}"}) {
				t.Errorf("contains as written: %q", got)
			}
		}},
		{name: "contest TOML loads the same", path: "testdata/contest.toml", check: func(t *testing.T, s *Scenario) {
			y, err := Load("testdata/contest.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if a, b := exported(y)+contestFields(y), exported(s)+contestFields(s); a != b {
				t.Errorf("YAML and TOML differ:\n%s\n%s", a, b)
			}
		}},
		{name: "example: HTTP pre_run, {{user}} check, captures", path: "example.yaml", check: func(t *testing.T, s *Scenario) {
			h := s.PreRun
			if h == nil || h.Request == nil || h.Request.Method != "POST" || h.Request.URL != "/initialize" ||
				!slices.Equal(h.Request.Expect.Status, []int{200}) || h.Timeout != 30*time.Second || h.Command != nil {
				t.Fatalf("pre_run %+v", h)
			}
			if !slices.Equal(s.Captures, []string{"entry_id", "csrf"}) || !slices.Equal(s.Steps[4].needs, []int{0, 1}) {
				t.Errorf("captures %q, post comment needs %v", s.Captures, s.Steps[4].needs)
			}
			if s.Scoring.SlowPenalty != 1 || s.Scoring.FailIf.SlowRate != 0.05 || s.Steps[0].SlowAfter != 3*time.Second {
				t.Errorf("slow: penalty %v rate %v after %v", s.Scoring.SlowPenalty, s.Scoring.FailIf.SlowRate, s.Steps[0].SlowAfter)
			}
		}},
		{name: "defaults: no hook, slow responses free and never failing", src: "base_url: http://h/\nsteps: [{url: /}]\n", check: func(t *testing.T, s *Scenario) {
			if s.PreRun != nil || s.Captures != nil || s.Scoring.SlowPenalty != 0 || s.Scoring.FailIf.SlowRate != 1 || s.Steps[0].SlowAfter != 0 {
				t.Errorf("%s", contestFields(s))
			}
		}},
		{name: "shell command, default timeout", src: `
base_url: http://h/
pre_run: {command: "mysql isucon < init.sql", shell: true}
steps: [{url: /}]
`, check: func(t *testing.T, s *Scenario) {
			if h := s.PreRun; !slices.Equal(h.Command, []string{"/bin/sh", "-c", "mysql isucon < init.sql"}) || !h.Shell || h.Timeout != DefaultHookTimeout {
				t.Errorf("%+v", h)
			}
		}},
		{name: "HTTP pre_run with a body and the step defaults", src: `
base_url: http://h/app/
pre_run: {url: initialize, body: '{"reset": true}', headers: {Content-Type: application/json}, timeout: 10m}
steps: [{url: /}]
`, check: func(t *testing.T, s *Scenario) {
			h := s.PreRun
			if r := h.Request; r.Method != "POST" || r.Name != "pre_run" || r.Body != `{"reset": true}` || h.Timeout != MaxHookTimeout {
				t.Errorf("%+v %+v", h, r)
			}
		}},
		{name: "a step can run on what it captures itself once another captured it", src: `
base_url: http://h/
steps:
  - {name: list, url: /items, capture: {next: {selector: a.next, attr: href}}}
  - {name: next page, url: "{{next}}", capture: {next: {selector: a.next, attr: href}}}
`, check: func(t *testing.T, s *Scenario) {
			if !slices.Equal(s.Captures, []string{"next"}) || !slices.Equal(s.Steps[1].needs, []int{0}) || s.Steps[1].Captures[0].index != 0 {
				t.Errorf("%s", contestFields(s))
			}
		}},
		{name: "{{users}} in a check, {{user.LIST}} without a login", src: `
base_url: http://h/
data: {users: [a, b], nicks: [A, B]}
steps: [{url: "/u/{{users}}", expect: {contains: ["{{users}}", "{{user.nicks}}"]}}]
`, check: func(t *testing.T, s *Scenario) {
			if len(s.Steps[0].contains) != 2 || s.Steps[0].contains[1].parts[0].kind != partRow {
				t.Errorf("contains %+v", s.Steps[0].contains)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *Scenario
			var err error
			if tt.path != "" {
				s, err = Load(tt.path)
			} else {
				s, err = parse("scenario.yaml", []byte(tt.src), fakeFiles)
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

func TestLoadContestErrors(t *testing.T) {
	tests := []struct {
		name string
		file string // default scenario.yaml
		src  string
		want string // every message, one per line
	}{
		{"pre_run both a request and a command", "", `
base_url: http://h/
pre_run:
  url: /initialize
  command: [./init.sh]
steps: [{url: /}]
`, `scenario.yaml:5: pre_run.command: url and command are exclusive: the hook is an HTTP request or a command`},
		{"pre_run neither", "", `
base_url: http://h/
pre_run: {timeout: 5s}
steps: [{url: /}]
`, `scenario.yaml:3: pre_run: want a url (an HTTP request, relative to base_url) or a command`},
		{"pre_run timeouts", "", `
base_url: http://h/
pre_run: {url: /a, timeout: 0s}
steps: [{url: /}]
---
`, `scenario.yaml:3: pre_run.timeout: want a positive duration (default 30s)`},
		{"pre_run timeout over the bound", "", `
base_url: http://h/
pre_run: {command: [x], timeout: 11m}
steps: [{url: /}]
`, `scenario.yaml:3: pre_run.timeout: 11m0s is over the 10m0s bound`},
		{"pre_run typo", "", `
base_url: http://h/
pre_run: {url: /a, timeuot: 1s}
steps: [{url: /}]
`, `scenario.yaml:3: pre_run.timeuot: unknown field (did you mean timeout?)`},
		{"pre_run command as a string without a shell", "", `
base_url: http://h/
pre_run:
  command: ./init.sh --all
steps: [{url: /}]
`, `scenario.yaml:4: pre_run.command: want a list of arguments like [./init.sh, --all] (run without a shell; set shell: true for a command line), got a string`},
		{"pre_run command problems", "", `
base_url: http://h/
pre_run: {command: [], shell: yes}
steps: [{url: /}]
`, `scenario.yaml:3: pre_run.command: empty command
scenario.yaml:3: pre_run.shell: want true or false, got a string`},
		{"pre_run shell wants a string", "", `
base_url: http://h/
pre_run: {command: [sh, x], shell: true}
steps: [{url: /}]
`, `scenario.yaml:3: pre_run.command: with shell: true, want the command line as one string, got a list`},
		{"pre_run argv elements", "", `
base_url: http://h/
pre_run: {command: ["", x]}
steps: [{url: /}]
`, `scenario.yaml:3: pre_run.command[0]: empty program name`},
		{"pre_run fields of the other kind", "", `
base_url: http://h/
pre_run: {command: [./init.sh], method: POST, expect: {status: 200}}
---
`, `scenario.yaml:2: steps: required (at least one step)
scenario.yaml:3: pre_run.method: method is for an HTTP pre_run (with url), not a command
scenario.yaml:3: pre_run.expect: expect is for an HTTP pre_run (with url), not a command`},
		{"pre_run HTTP with shell", "", `
base_url: http://h/
pre_run: {url: /initialize, shell: true}
steps: [{url: /}]
`, `scenario.yaml:3: pre_run.shell: shell is for a command, not an HTTP pre_run`},
		{"pre_run belongs to no session", "", `
base_url: http://h/
data: {u: [a]}
session: {login: {url: "/login/{{u}}"}}
pre_run: {url: "/init/{{user}}", body: "{{user.u}} {{t}}"}
steps: [{url: /, capture: {t: {header: X-T}}}]
`, `scenario.yaml:5: pre_run.url: {{user}} is not available in pre_run: it belongs to no session
scenario.yaml:5: pre_run.body: {{user.u}} is not available in pre_run: it belongs to no session`},
		{"pre_run cannot use captures", "", `
base_url: http://h/
pre_run: {url: "/init/{{t}}"}
steps: [{url: /, capture: {t: {header: X-T}}}]
`, `scenario.yaml:3: pre_run.url: {{t}}: pre_run belongs to no session: it cannot use captured values`},
		{"pre_run URL relative without a base", "", `
pre_run: {url: /initialize}
steps: [{url: "http://h/"}]
`, `scenario.yaml:2: pre_run.url: "/initialize" is relative and base_url is not set`},
		{"capture sources", "", `
base_url: http://h/
steps:
  - url: /
    capture:
      a: {regexpp: x}
      b: {regexp: x, json: y}
      c: {}
      d: "(\\d+)"
`, `scenario.yaml:6: steps[0].capture.a: want one of regexp, selector, json or header
scenario.yaml:6: steps[0].capture.a.regexpp: unknown field (did you mean regexp?)
scenario.yaml:7: steps[0].capture.b.json: regexp and json are exclusive: a capture takes one value
scenario.yaml:8: steps[0].capture.c: want one of regexp, selector, json or header
scenario.yaml:9: steps[0].capture.d: want a mapping, got a string`},
		{"capture values", "", `
base_url: http://h/
steps:
  - url: /
    capture:
      a: {regexp: "x(", group: 1}
      b: {selector: "li[", attr: href}
      c: {json: "a..b"}
      d: {header: "X Y"}
      e: {regexp: "(x)", group: 2}
      f: {json: a, group: 1, attr: x}
      g: {regexp: ""}
      h: {selector: a, attr: ""}
      i: {json: "$"}
`, `scenario.yaml:6: steps[0].capture.a.regexp: invalid regexp "x(": missing closing ): ` + "`x(`" + `
scenario.yaml:7: steps[0].capture.b.selector: invalid CSS selector "li[": expected identifier, found EOF instead
scenario.yaml:8: steps[0].capture.c.json: JSON path "a..b": empty key
scenario.yaml:9: steps[0].capture.d.header: invalid header name "X Y"
scenario.yaml:10: steps[0].capture.e.group: regexp "(x)" has 1 groups; want 0 (the whole match) to 1
scenario.yaml:11: steps[0].capture.f.group: needs a regexp
scenario.yaml:11: steps[0].capture.f.attr: needs a selector
scenario.yaml:12: steps[0].capture.g.regexp: empty regexp
scenario.yaml:13: steps[0].capture.h.attr: empty attribute name (leave it out for the element's text)
scenario.yaml:14: steps[0].capture.i.json: JSON path "$": names the whole document; want a key or an index after $`},
		{"capture names", "", `
base_url: http://h/
data: {ids: [1]}
steps:
  - url: /
    capture:
      user: {header: X}
      ids: {header: X}
      "bad name": {header: X}
  - url: /x
    capture: [a]
`, `scenario.yaml:7: steps[0].capture.user: "user" is reserved for the {{user}} placeholder
scenario.yaml:8: steps[0].capture.ids: "ids" is already a data list; give the capture another name
scenario.yaml:9: steps[0].capture.bad name: capture names are letters, digits, _ and -, starting with a letter or _
scenario.yaml:11: steps[1].capture: want a mapping of capture names to {regexp: RE}, {selector: CSS}, {json: PATH} or {header: NAME}, got a list`},
		{"check templates", "", `
base_url: http://h/
data: {u: [a]}
steps:
  - url: /a
    expect: {contains: ["{{nope}}", "{{rand 1 2}}", "{{user}}", "{{tok.seq}}"]}
  - {url: /b, capture: {tok: {header: X}}}
`, `scenario.yaml:6: steps[0].expect.contains[0]: unknown list "nope" in {{nope}} (define it under data)
scenario.yaml:6: steps[0].expect.contains[1]: {{rand 1 2}}: a check cannot use {{rand}} (it would draw a fresh number); capture the value instead
scenario.yaml:6: steps[0].expect.contains[2]: {{user}} needs session.login
scenario.yaml:6: steps[0].expect.contains[3]: {{tok.seq}}: tok is a capture, not a data list (use {{tok}})`},
		{"login and global headers cannot use captures", "", `
base_url: http://h/
headers: {X-Tok: "{{tok}}"}
session:
  login: {url: /login, form: {t: "{{tok}}"}, expect: {contains: "{{tok}}"}}
steps:
  - {url: /b, capture: {tok: {header: X}}}
`, `scenario.yaml:3: headers.X-Tok: {{tok}}: captured values are not available in headers sent with every request (the login and pre_run too); put it in a step's headers
scenario.yaml:5: session.login.form.t: {{tok}}: session.login is a session's first request: no value is captured before it
scenario.yaml:5: session.login.expect.contains: {{tok}}: session.login is a session's first request: no value is captured before it`},
		{"steps that never run", "", `
base_url: http://h/
steps:
  - {name: home, url: /}
  - {name: self, url: "/p/{{page}}", capture: {page: {header: X-Next}}}
  - {name: a, url: "/a/{{b}}", capture: {a: {header: X-A}}}
  - {name: b, url: "/b/{{a}}", capture: {b: {header: X-B}}}
  - {name: c, url: "/c", headers: {X: "{{a}}"}, expect: {contains: "{{page}}"}}
`, `scenario.yaml:5: steps[1]: never runs: it uses {{page}}, which no step that can run before it captures
scenario.yaml:6: steps[2]: never runs: it uses {{b}}, which no step that can run before it captures
scenario.yaml:7: steps[3]: never runs: it uses {{a}}, which no step that can run before it captures
scenario.yaml:8: steps[4]: never runs: it uses {{page}} and {{a}}, which no step that can run before it captures`},
		{"a refused capture does not make its users never run", "", `
base_url: http://h/
steps:
  - {name: home, url: /, capture: {tok: {regexp: "("}}}
  - {name: post, url: "/p/{{tok}}"}
`, `scenario.yaml:4: steps[0].capture.tok.regexp: invalid regexp "(": missing closing ): ` + "`(`"},
		{"slow thresholds", "", `
base_url: http://h/
session:
  login: {url: /login, slow_after: 0s}
steps:
  - {url: /a, slow_after: -1s}
  - {url: /b, slow_after: 3}
scoring:
  penalties: {slow: -1, slwo: 1}
  fail_if: {slow_rate: 2, slowrate: 1}
`, `scenario.yaml:4: session.login.slow_after: want a positive duration like 3s (leave it out for no threshold)
scenario.yaml:6: steps[0].slow_after: must not be negative
scenario.yaml:7: steps[1].slow_after: want a duration like 100ms or 2s, got "3"
scenario.yaml:9: scoring.penalties.slow: must not be negative
scenario.yaml:9: scoring.penalties.slwo: unknown field (did you mean slow?)
scenario.yaml:10: scoring.fail_if.slow_rate: want a fraction between 0 and 1, got 2
scenario.yaml:10: scoring.fail_if.slowrate: unknown field (did you mean slow_rate?)`},
		{"user.LIST of an unknown list", "", `
base_url: http://h/
steps: [{url: "/{{user.nicks}}"}]
`, `scenario.yaml:3: steps[0].url: unknown list "nicks" in {{user.nicks}} (define it under data)`},
		{"TOML capture and pre_run", "scenario.toml", `
base_url = "http://h/"

[pre_run]
command = "./init.sh"

[[steps]]
url = "/"
[steps.capture]
tok = { regexp = "(", group = 1 }
`, `scenario.toml:5: pre_run.command: want a list of arguments like [./init.sh, --all] (run without a shell; set shell: true for a command line), got a string
scenario.toml:10: steps[0].capture.tok.regexp: invalid regexp "(": missing closing ): ` + "`(`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = "scenario.yaml"
			}
			s, err := parse(file, []byte(tt.src), fakeFiles)
			if err == nil {
				t.Fatalf("no error; loaded %s%s", exported(s), contestFields(s))
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
