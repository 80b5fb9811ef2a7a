package scenario

import (
	"fmt"
	"strings"
)

// FieldError is one problem found in a scenario file. Its message names the
// file, the line and the field, for example
//
//	scenario.yaml:17: steps[2].expect.status: want an integer or a list of integers
//
// Line is 0 when the problem is not tied to a line (the file cannot be read);
// Field is empty when it is not tied to a field (a syntax error).
type FieldError struct {
	File  string
	Line  int
	Field string
	Msg   string

	col int   // orders problems on one line
	err error // the error behind the problem, if any (Unwrap)
}

// Unwrap returns the error behind the problem (an *input.NotRegularError,
// an *input.TooLargeError, a *fs.PathError), or nil.
func (e *FieldError) Unwrap() error { return e.err }

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found while loading a scenario, in file order.
// Load returns it (as an error) when the file is invalid; its message has one
// problem per line.
type Errors []*FieldError

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap lets errors.As find a single *FieldError.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
