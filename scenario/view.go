package scenario

import (
	"fmt"
	"slices"
	"strings"

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

// PathShapes are the steps' URL paths as the scenario means its
// endpoints: each path split at '/', a segment a template fills (a list
// value, a capture, a random number) given as "" and the others as
// written; the query string is left out. A scenario whose step visits
// /diary/entries/{{row "users" 0}} declares an endpoint /diary/entries/X
// whatever values it sends, which a profile of a short run (a dozen
// distinct accounts) could not learn. Steps without a template part in
// their path, and paths that do not compile, are left out.
func (s *Scenario) PathShapes() [][]string {
	var out [][]string
	seen := map[string]bool{}
	for _, st := range s.AllSteps() {
		parts, err := s.Template(st.URL, true)
		if err != nil {
			continue
		}
		// The path: from the first '/' after a scheme's host (absolute
		// URLs) or the start, to the first '?'.
		var segs []string
		cur, filled, inPath, started := "", false, false, false
		text := ""
		for _, p := range parts {
			if p.Kind != PartText {
				if inPath {
					filled = true
				}
				if !started {
					inPath, started = true, true
				}
				continue
			}
			text = p.Text
			for i := 0; i < len(text); i++ {
				c := text[i]
				switch {
				case c == '?' || c == '#':
					if inPath {
						segs = append(segs, shape(cur, filled))
					}
					inPath, cur, filled = false, "", false
					i = len(text)
				case !started && (strings.HasPrefix(text[i:], "http://") || strings.HasPrefix(text[i:], "https://")):
					j := strings.Index(text[i:], "://") + 3
					k := strings.IndexByte(text[i+j:], '/')
					if k < 0 {
						i = len(text)
						continue
					}
					i += j + k
					started, inPath = true, true
				case c == '/':
					if started && inPath && (cur != "" || filled || len(segs) > 0) {
						segs = append(segs, shape(cur, filled))
					}
					started, inPath, cur, filled = true, true, "", false
				default:
					if inPath {
						cur += string(c)
					}
				}
			}
		}
		if inPath && (cur != "" || filled) {
			segs = append(segs, shape(cur, filled))
		}
		if !slices.Contains(segs, "") {
			continue
		}
		if k := strings.Join(segs, "\x00"); !seen[k] {
			seen[k] = true
			out = append(out, segs)
		}
	}
	return out
}

// shape is a path segment as PathShapes gives it: "" when a template
// fills any of it.
func shape(seg string, filled bool) string {
	if filled {
		return ""
	}
	return seg
}
