package scenario

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"
	"gopkg.in/yaml.v3"

	"github.com/stacktune/stacktune/input"
)

// Scenario is a validated load test, from Load or Parse. Treat it as
// read-only, except for SetBaseURL.
type Scenario struct {
	// Name defaults to the file name without its extension.
	Name string
	// File is the path the scenario was loaded from (as given).
	File string
	// BaseURL is the URL relative step URLs are resolved against; it may be
	// empty when every step URL is absolute.
	BaseURL string
	// Headers are sent with every request; a request's own headers win.
	Headers map[string]string
	// Data holds the lists templates draw from, by name.
	Data map[string][]string
	// Login is the request each virtual user sends once, before its first
	// step; nil when the scenario has no session.login. Its Name is "login"
	// and its Weight 0.
	Login *Step
	// Steps are the requests a virtual user picks from, by weight.
	Steps []Step
	// Scoring is DefaultScoring overridden by the file's scoring section.
	Scoring Scoring
	// PreRun is the hook run before each run (and its warm-up), or nil;
	// see RunPreRun.
	PreRun *Hook
	// Captures are the names of the session values the steps capture, in
	// order of first appearance; templates refer to them as {{name}}.
	Captures []string

	base      *url.URL
	lists     [][]string // list values, indexed like listNames
	listNames []string
	headers   []header // compiled Headers, sorted by name
	// userList is the list whose value is the user's {{user}} (the first list
	// session.login refers to), or -1.
	userList int
	baseLine int
}

// Step is one request of a scenario.
type Step struct {
	Name string
	// Weight is the step's relative frequency (> 0).
	Weight float64
	// ScoreWeight multiplies the points of a successful request (≥ 0);
	// it defaults to Weight (1 for the login).
	ScoreWeight float64
	// Method is an upper-case HTTP method; it defaults to GET, or POST when
	// the step has a form or a body.
	Method string
	// URL is the URL template as written (relative to BaseURL or absolute).
	URL string
	// Form fields are sent url-encoded, in file order.
	Form []FormField
	// Body is sent as is (with the step's Content-Type header, if any).
	Body    string
	Headers map[string]string
	Expect  Expect
	// Think is the pause after the step, in the closed model.
	Think time.Duration
	// SlowAfter, when > 0, makes a response that took longer a slow one:
	// counted for the step, penalised by Scoring.SlowPenalty and limited
	// by FailIf.SlowRate.
	SlowAfter time.Duration
	// Captures take values from a successful response into the session,
	// for the templates of later requests; a capture that does not match
	// fails the step's check.
	Captures []Capture

	line     int    // where the step starts, for URL errors after SetBaseURL
	field    string // "steps[2]" or "session.login"
	urlLine  int
	url      template
	form     []formTmpl
	body     template
	headers  []header
	contains []template // Expect.Contains, compiled
	sel      cascadia.Selector
	// needs are the captures the step's templates use: it runs only once
	// the session has them all.
	needs []int
}

// Capture takes one value from a response into the session: the first
// match of a regular expression (a group of it), the text or an attribute
// of the first element a CSS selector matches, a JSON value at a path, or a
// response header. Exactly one of Regexp, Selector, JSON and Header is set.
type Capture struct {
	// Name is the session value's name, {{Name}} in templates.
	Name string
	// Regexp (RE2 syntax) is matched against the body; Group is the group
	// taken (default 1 when the expression has a group, else 0: the match).
	Regexp string
	Group  int
	// Selector is a CSS selector; the value is the first matching
	// element's text (trimmed), or its attribute Attr when set.
	Selector string
	Attr     string
	// JSON is a path into a JSON body: keys separated by dots, [N] for an
	// array element, ["key"] for a key with dots or brackets, an optional
	// leading $. The value must be a string, a number or a boolean.
	JSON string
	// Header is a response header's name.
	Header string

	index int // into Scenario.Captures
	re    *regexp.Regexp
	sel   cascadia.Selector
	path  []pathElem
}

// Hook is the pre_run hook: an HTTP request (Request) or a command
// (Command), run before each run by RunPreRun.
type Hook struct {
	// Request is the HTTP request: method, URL (relative to BaseURL),
	// form or body, headers and expectations, as a step's; nil for a
	// command. Its Name is "pre_run".
	Request *Step
	// Command is the command's argv, run in the scenario file's directory
	// without a shell; with Shell it is ["/bin/sh", "-c", line].
	Command []string
	Shell   bool
	// Timeout bounds the hook (default DefaultHookTimeout, at most
	// MaxHookTimeout).
	Timeout time.Duration

	dir string // the scenario file's, where a command runs
}

// Hook timeouts.
const (
	DefaultHookTimeout = 30 * time.Second
	MaxHookTimeout     = 10 * time.Minute
)

// FormField is one field of a form, with its value template.
type FormField struct {
	Name, Value string
}

type formTmpl struct {
	name  string
	value template
}

type header struct {
	name  string
	value template
}

// Expect is what a response must satisfy to count as a success.
type Expect struct {
	// Status lists the accepted statuses; empty means any status below 400.
	// Redirects are not followed, so a 302 is seen as a 302.
	Status []int
	// Contains are substrings the body must all contain.
	Contains []string
	// Selector is a CSS selector that must match at least MinCount elements
	// of the HTML body (MinCount is 1 by default).
	Selector string
	MinCount int
}

// Load reads and validates the scenario file at path: YAML, or TOML when the
// name ends in ".toml". Data files are read relative to the scenario's
// directory. On a bad file the error is an Errors listing every problem,
// each as "file:line: field: message". Only a regular file of at most
// MaxFileSize bytes is read (a FIFO is refused without blocking), and the
// scenario and its data are held to the other bounds of limits.go.
func Load(path string) (*Scenario, error) {
	src, err := input.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, Errors{{File: path, Msg: readErr(err, "scenario.MaxFileSize", "a scenario is a few KB: put long lists in data files"), err: err}}
	}
	return parse(path, src, readDataFile)
}

// Parse validates a scenario held in memory; name is used in messages, its
// extension picks the format (".toml" or YAML), and data files are read
// relative to its directory.
func Parse(name string, src []byte) (*Scenario, error) {
	return parse(name, src, readDataFile)
}

func readDataFile(path string, limit int64) ([]byte, error) {
	return input.ReadFile(path, limit)
}

// readErr says why a file could not be read, without repeating its path
// (the message is put after it); limit names the bound a file too large
// is over, and hint what to do about it.
func readErr(err error, limit, hint string) string {
	var (
		nr *input.NotRegularError
		tl *input.TooLargeError
		pe *os.PathError
	)
	switch {
	case errors.As(err, &nr):
		return fmt.Sprintf("cannot read: %s, not a regular file", input.FileKind(nr.Mode))
	case errors.As(err, &tl):
		return fmt.Sprintf("larger than %s (%s): %s", input.SizeText(tl.Limit), limit, hint)
	case errors.As(err, &pe):
		return fmt.Sprintf("cannot read %s: %v", pe.Path, pe.Err)
	}
	return err.Error()
}

func parse(name string, src []byte, readFile func(path string, limit int64) ([]byte, error)) (*Scenario, error) {
	if len(src) > MaxFileSize {
		return nil, Errors{{File: name, Msg: fmt.Sprintf("larger than %s (scenario.MaxFileSize): a scenario is a few KB: put long lists in data files", input.SizeText(MaxFileSize))}}
	}
	var root *yaml.Node
	var err error
	if strings.EqualFold(filepath.Ext(name), ".toml") {
		root, err = tomlNodes(name, src)
	} else {
		root, err = yamlNodes(name, src)
	}
	if err != nil {
		return nil, err
	}
	p := &parser{file: name, dir: filepath.Dir(name), readFile: readFile}
	s := p.scenario(root)
	if len(p.errs) > 0 {
		p.sort()
		return nil, p.errs
	}
	return s, nil
}

// SetBaseURL replaces the base URL (for example with a command-line target)
// and checks every step URL against it. Call it before Workload.
func (s *Scenario) SetBaseURL(raw string) error {
	p := &parser{file: s.File}
	base := p.baseURL(raw, "base_url", 0)
	if base != nil {
		for _, st := range s.steps() {
			p.checkURL(s, st, base)
		}
		if s.PreRun != nil && s.PreRun.Request != nil {
			p.checkURL(s, s.PreRun.Request, base)
		}
	}
	if len(p.errs) > 0 {
		return p.errs
	}
	s.BaseURL, s.base = raw, base
	return nil
}

// steps returns the login (if any) and the steps, in Workload order.
func (s *Scenario) steps() []*Step {
	out := make([]*Step, 0, len(s.Steps)+1)
	if s.Login != nil {
		out = append(out, s.Login)
	}
	for i := range s.Steps {
		out = append(out, &s.Steps[i])
	}
	return out
}

// StepNames returns the step names in Workload order: "login" first when the
// scenario has a login.
func (s *Scenario) StepNames() []string {
	var names []string
	for _, st := range s.steps() {
		names = append(names, st.Name)
	}
	return names
}

// SlowAfters returns the slow_after of each step in Workload order (0 for
// a step without one).
func (s *Scenario) SlowAfters() []time.Duration {
	var d []time.Duration
	for _, st := range s.steps() {
		d = append(d, st.SlowAfter)
	}
	return d
}

// ScoreWeights returns the score weight of each step in Workload order.
func (s *Scenario) ScoreWeights() []float64 {
	var w []float64
	for _, st := range s.steps() {
		w = append(w, st.ScoreWeight)
	}
	return w
}
