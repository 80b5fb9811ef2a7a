package scenario

import (
	"fmt"

	"github.com/stacktune/stacktune/loadgen"
)

// This file is the scenario as data for programs that translate it into
// another engine's script (package engines: Locust, k6): the placeholders
// of a template, the user's list and a capture's JSON path, as the
// scenario's own workload reads them.

// Part kinds of a template.
const (
	PartText    = "text"    // Text as is
	PartList    = "list"    // a random value of list Name (one per request)
	PartSeq     = "seq"     // the next value of list Name, round-robin
	PartUser    = "user"    // the virtual user's login value
	PartRow     = "row"     // list Name's value of the virtual user's row
	PartCapture = "capture" // the session's captured value Name
	PartRand    = "rand"    // a random integer in [Min, Max]
)

// Escapes of a value in a URL.
const (
	EscapeNone  = ""      // bodies, headers, checks, form values (encoded as a form)
	EscapePath  = "path"  // before the first '?' of a URL: url.PathEscape
	EscapeQuery = "query" // after it: url.QueryEscape
)

// TemplatePart is one piece of a template.
type TemplatePart struct {
	Kind string
	// Text is a PartText's text.
	Text string
	// Name is the list or capture.
	Name string
	// Min and Max bound a PartRand.
	Min, Max int
	// Escape is how a value is escaped in a URL.
	Escape string
}

// Template returns the parts of a template of s (a step's URL, a form
// value, a body, a header value, a check); inURL escapes values as a URL
// does. A template that does not compile against s is an error.
func (s *Scenario) Template(src string, inURL bool) ([]TemplatePart, error) {
	env := tmplEnv{lists: map[string]int{}, url: inURL, hasUser: s.userList >= 0, noUser: "{{user}} needs session.login",
		caps: map[string]int{}}
	for i, n := range s.listNames {
		env.lists[n] = i
	}
	for i, n := range s.Captures {
		env.caps[n] = i
	}
	t, err := compileTemplate(src, env)
	if err != nil {
		return nil, fmt.Errorf("template %q: %w", src, err)
	}
	out := make([]TemplatePart, 0, len(t.parts))
	for _, p := range t.parts {
		tp := TemplatePart{Escape: map[escMode]string{escNone: EscapeNone, escPath: EscapePath, escQuery: EscapeQuery}[p.esc]}
		switch p.kind {
		case partLit:
			tp.Kind, tp.Text, tp.Escape = PartText, p.lit, EscapeNone
		case partList:
			tp.Kind, tp.Name = PartList, s.listNames[p.list]
		case partSeq:
			tp.Kind, tp.Name = PartSeq, s.listNames[p.list]
		case partUser:
			tp.Kind = PartUser
		case partRow:
			tp.Kind, tp.Name = PartRow, s.listNames[p.list]
		case partCapture:
			tp.Kind, tp.Name = PartCapture, s.Captures[p.list]
		case partRand:
			tp.Kind, tp.Min, tp.Max = PartRand, p.lo, p.hi
		}
		out = append(out, tp)
	}
	return out, nil
}

// UserList is the list whose value is a virtual user's {{user}} (the first
// list the login uses), "" when the scenario has none.
func (s *Scenario) UserList() string {
	if s.userList < 0 {
		return ""
	}
	return s.listNames[s.userList]
}

// ListNames returns the data lists' names in the order of the file.
func (s *Scenario) ListNames() []string { return append([]string(nil), s.listNames...) }

// JSONPath returns a JSON capture's path as keys (string) and array
// indexes (int); nil for a capture of another kind.
func (c Capture) JSONPath() []any {
	var out []any
	for _, e := range c.path {
		if e.isKey {
			out = append(out, e.key)
		} else {
			out = append(out, e.index)
		}
	}
	return out
}

// ScoreSlow scores r, a run measured by another engine, with its slow
// responses counted per step (Workload order), as ScoreRun scores a run
// of Plan.Run with its Tally.
func (s *Scenario) ScoreSlow(r *loadgen.Result, slow []int64) ScoreResult {
	return score(r, s.Scoring, s.ScoreWeights(), &slowCounts{after: s.SlowAfters(), counts: slow})
}

// AllSteps returns the login (if any) and the steps, in Workload order.
func (s *Scenario) AllSteps() []*Step { return s.steps() }
