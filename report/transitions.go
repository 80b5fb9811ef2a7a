package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/width"

	"github.com/stacktune/stacktune/history"
)

// TransitionFormats lists the formats Transitions renders, in the order
// error messages name them.
var TransitionFormats = []string{Text, Markdown, JSON, HTML}

// noLabel stands for the empty label in tables and charts.
const noLabel = "(no label)"

// baselineNote explains the dashes of an undefined baseline.
const baselineNote = "the first step's median score is 0, so ratios against it are undefined (-)"

// TransitionsJSON is the JSON of Transitions: {"steps": [...]}.
type TransitionsJSON struct {
	Steps []history.Step `json:"steps"`
}

// Transitions writes the score transition table of history.Transitions in
// format "text" (aligned columns), "markdown", "json" ({"steps": [...]},
// see history.Step.MarshalJSON) or "html" (TransitionsHTMLPage without the
// runs: the chart and the table).
func Transitions(w io.Writer, steps []history.Step, format string) error {
	switch format {
	case JSON:
		if steps == nil {
			steps = []history.Step{}
		}
		return WriteJSON(w, TransitionsJSON{Steps: steps})
	case Markdown:
		return transitionsMarkdown(w, steps)
	case Text:
		return transitionsText(w, steps)
	case HTML:
		return WriteHTMLPage(w, TransitionsHTMLPage(steps, nil))
	}
	return CheckFormat(format, TransitionFormats...)
}

var transitionsHeader = []string{"#", "label", "runs", "passed", "min", "median", "max", "x first", "vs first", "vs prev", "rps", "p99"}

// transitionRows formats the cells shared by the text and Markdown tables.
func transitionRows(steps []history.Step) [][]string {
	rows := make([][]string, len(steps))
	for i, s := range steps {
		xFirst, vsFirst, vsPrev := "-", "-", "-"
		if s.HasFirst {
			xFirst = strconv.FormatFloat(s.XFirst, 'f', 2, 64) + "x"
			vsFirst = signedChange(s.ChangeFirst)
		}
		if s.HasPrev {
			vsPrev = signedChange(s.ChangePrev)
		}
		rows[i] = []string{
			strconv.Itoa(i + 1), stepLabel(s), strconv.Itoa(s.Runs), fmt.Sprintf("%d/%d", s.Passed, s.Runs),
			Score(s.Min), Score(s.Median), Score(s.Max), xFirst, vsFirst, vsPrev,
			PerSecond(s.RPSMedian), Duration(s.P99Median.Seconds()),
		}
	}
	return rows
}

// stepLabel is the label as tables and charts show it: "(no label)" for
// "", " (again)" after a re-measured one, control characters (C0, DEL, C1)
// and the bidirectional controls and line separators Clean escapes as
// spaces, invalid UTF-8 as U+FFFD.
func stepLabel(s history.Step) string {
	l := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unsafeRune(r) {
			return ' '
		}
		return r
	}, s.Label)
	if l == "" {
		l = noLabel
	}
	if s.Again {
		l += " (again)"
	}
	return l
}

// Score formats a benchmark score with at most two decimals: 1234,
// 1234.5, 0.25; "-" for NaN and infinities.
func Score(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	r := math.Round(v*100) / 100
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// signedChange formats a relative change as a signed percentage: +25.0%.
func signedChange(v float64) string {
	s := fmt.Sprintf("%+.1f%%", v*100)
	if s == "-0.0%" {
		s = "+0.0%"
	}
	return s
}

func transitionsText(w io.Writer, steps []history.Step) error {
	if len(steps) == 0 {
		_, err := io.WriteString(w, "no runs\n")
		return err
	}
	rows := append([][]string{transitionsHeader}, transitionRows(steps)...)
	widths := make([]int, len(transitionsHeader))
	for _, row := range rows {
		for c, cell := range row {
			widths[c] = max(widths[c], displayWidth(cell))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for c, cell := range row {
			pad := strings.Repeat(" ", widths[c]-displayWidth(cell))
			if c > 0 {
				b.WriteString("  ")
			}
			switch {
			case c == 1: // the label is the only left-aligned column
				b.WriteString(cell + pad)
			default:
				b.WriteString(pad + cell)
			}
		}
		b.WriteByte('\n')
	}
	if !steps[0].HasFirst {
		b.WriteString("\nnote: " + baselineNote + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// displayWidth counts terminal columns: East Asian wide and fullwidth
// characters (Japanese labels are common in ISUCON notes) take two.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			if !unicode.Is(unicode.Mn, r) {
				n++
			}
		}
	}
	return n
}

func transitionsMarkdown(w io.Writer, steps []history.Step) error {
	if len(steps) == 0 {
		_, err := io.WriteString(w, "_no runs_\n")
		return err
	}
	var b strings.Builder
	b.WriteString("| " + strings.Join(transitionsHeader, " | ") + " |\n|")
	for c := range transitionsHeader {
		if c == 1 {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteByte('\n')
	for _, row := range transitionRows(steps) {
		row[1] = mdEscape(row[1])
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	if !steps[0].HasFirst {
		b.WriteString("\n_Note: " + baselineNote + "._\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
