package report

import (
	"bufio"
	"fmt"
	"io"

	"github.com/stacktune/stacktune/tune"
)

// ABFormats are the formats AB renders.
var ABFormats = []string{Text, Markdown, JSON}

// ABHeadline is the decision of `stacktune ab` in one line.
func ABHeadline(r *tune.ABResult) string {
	return fmt.Sprintf("Result: %s against %s, interleaved: %s (%.0f%% interval %s to %s): %s, %d runs each",
		r.LabelB, r.LabelA, RatioX(r.Ratio), levelOf(r)*100, RatioX(r.Interval[0]), RatioX(r.Interval[1]),
		VerdictText(r.Decision), len(r.B)) + detectableText(r.Detectable, r.Test)
}

func levelOf(r *tune.ABResult) float64 {
	if r.Test != nil {
		return r.Test.Level
	}
	return 0
}

// AB renders the decision between two states the user switched between
// (tune.AB).
func AB(w io.Writer, r *tune.ABResult, format string) error {
	if err := CheckFormat(format, ABFormats...); err != nil {
		return err
	}
	if r == nil {
		r = &tune.ABResult{}
	}
	if format == JSON {
		return WriteJSON(w, r)
	}
	bw := bufio.NewWriter(w)
	md := format == Markdown
	esc := func(s string) string {
		if md {
			return loopMarkdownText(s)
		}
		return Clean(s)
	}
	if md {
		fmt.Fprintf(bw, "# stacktune ab: %s against %s\n\n", esc(r.LabelB), esc(r.LabelA))
		fmt.Fprintf(bw, "**%s**\n\n", esc(ABHeadline(r)))
		sectionWriter{e: &errWriter{w: bw}, md: true}.table([]string{"state", "runs (score)"}, "ll",
			[][]string{{r.LabelA, scoreList(r.A)}, {r.LabelB, scoreList(r.B)}})
		fmt.Fprintf(bw, "\n")
	} else {
		fmt.Fprintf(bw, "stacktune ab: %s against %s\n", esc(r.LabelB), esc(r.LabelA))
		fmt.Fprintln(bw, esc(ABHeadline(r)))
		fmt.Fprintf(bw, "Runs of %s: %s\nRuns of %s: %s\n", esc(r.LabelA), scoreList(r.A), esc(r.LabelB), scoreList(r.B))
	}
	if r.Test != nil && r.Test.Reason != "" {
		fmt.Fprintf(bw, "%s\n", esc(r.Test.Reason))
	}
	if r.Noise != nil {
		fmt.Fprintf(bw, "%s%s\n", map[bool]string{true: "\n", false: ""}[md], esc(NoiseTryText(r.Noise)))
	}
	left := r.LabelA
	if r.State == "b" {
		left = r.LabelB
	}
	fmt.Fprintf(bw, "%sThe stack is left as %s (the state measured last).\n", map[bool]string{true: "\n", false: ""}[md], esc(left))
	return bw.Flush()
}
