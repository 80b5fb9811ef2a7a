// Package skip is the one vocabulary of skip counts: what a parser or a
// collector could not use, counted by reason. Each package that skips
// declares its reasons with Define, a snake_case code and the words a
// person reads ("truncated_event": "truncated event (header without
// query)"); it counts by Reason, which only Define makes, so nothing
// unregistered is ever counted. Results carry Counts, keyed by Code: the
// JSON holds the codes, and report says each in words through Words (a
// code it does not know, such as a sentence from an older run's JSON,
// prints as itself).
package skip

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Code is a skip reason as results carry it: a stable snake_case string,
// the key of Counts. Its codes are every registered reason's.
type Code string

// Codes lists every registered code, sorted (the enumeration docs/json.md
// lists).
func (Code) Codes() []string { return std.codes() }

// Words is what a person reads for c: its registered words, or c itself
// when no reason has that code.
func (c Code) Words() string { return std.words(c) }

// Reason is a registered skip reason. Only Define makes one; its zero
// value is no reason and is never counted.
type Reason struct{ code Code }

// IsZero: r is no reason (a line or event that was not skipped).
func (r Reason) IsZero() bool { return r.code == "" }

// Code returns the reason's code.
func (r Reason) Code() Code { return r.code }

// Words returns the reason's words.
func (r Reason) Words() string { return r.code.Words() }

// String is the code, so a Reason prints as JSON shows it.
func (r Reason) String() string { return string(r.code) }

// Define registers a reason and returns it: call it in a package-level
// var block. A malformed or repeated code does not panic: Check reports
// it, and the registry test fails on it.
func Define(code, words string) Reason { return std.define(code, words) }

// Check returns every malformed definition: a code that is not snake_case,
// defined twice, or without words.
func Check() error { return std.check() }

// Counts counts skips by code. Its JSON is an object from code to count.
type Counts map[Code]int64

// Add counts n skips of r; n ≤ 0 and the zero Reason count nothing. A nil
// map is made on the first count.
func (c *Counts) Add(r Reason, n int64) {
	if n <= 0 || r.code == "" {
		return
	}
	if *c == nil {
		*c = Counts{}
	}
	(*c)[r.code] += n
}

// Merge adds o's counts to c (counts of other parsers, other workers).
func (c *Counts) Merge(o Counts) {
	for k, v := range o {
		if v == 0 {
			continue
		}
		if *c == nil {
			*c = Counts{}
		}
		(*c)[k] += v
	}
}

// Total is the number of skips for any reason.
func (c Counts) Total() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// Unknown lists the codes of c no reason is registered with, sorted: none
// for counts a parser made (tests check), maybe some for a result read back
// from an older run.
func (c Counts) Unknown() []Code {
	var out []Code
	for k := range c {
		if !std.known(k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Entry is one registered reason.
type Entry struct {
	Code  Code
	Words string
}

// Registered lists every registered reason, by code.
func Registered() []Entry { return std.entries() }

// registry maps codes to words. The package's one registry, std, is
// filled by Define in package initialisation and only read after.
type registry struct {
	byCode map[Code]string
	order  []Entry // in definition order, repeats and malformed ones too
}

var std registry

func (g *registry) define(code, words string) Reason {
	c := Code(code)
	g.order = append(g.order, Entry{Code: c, Words: words})
	if g.byCode == nil {
		g.byCode = map[Code]string{}
	}
	if _, dup := g.byCode[c]; !dup {
		g.byCode[c] = words
	}
	return Reason{code: c}
}

func (g *registry) words(c Code) string {
	if w, ok := g.byCode[c]; ok {
		return w
	}
	return string(c)
}

func (g *registry) known(c Code) bool {
	_, ok := g.byCode[c]
	return ok
}

func (g *registry) codes() []string {
	out := make([]string, 0, len(g.byCode))
	for c := range g.byCode {
		out = append(out, string(c))
	}
	slices.Sort(out)
	return out
}

func (g *registry) entries() []Entry {
	out := make([]Entry, 0, len(g.byCode))
	for c, w := range g.byCode {
		out = append(out, Entry{Code: c, Words: w})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(string(a.Code), string(b.Code)) })
	return out
}

func (g *registry) check() error {
	var errs []error
	seen := map[Code]bool{}
	for _, e := range g.order {
		switch {
		case !snake(string(e.Code)):
			errs = append(errs, fmt.Errorf("skip code %q is not snake_case", e.Code))
		case seen[e.Code]:
			errs = append(errs, fmt.Errorf("skip code %q is defined twice", e.Code))
		case strings.TrimSpace(e.Words) == "":
			errs = append(errs, fmt.Errorf("skip code %q has no words", e.Code))
		}
		seen[e.Code] = true
	}
	return errors.Join(errs...)
}

// snake: lower-case letters and digits in words joined by one underscore,
// starting with a letter.
func snake(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' || s[len(s)-1] == '_' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '_' && s[i-1] != '_':
		default:
			return false
		}
	}
	return true
}
