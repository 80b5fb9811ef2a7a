package history

import (
	"encoding/json"
	"fmt"
	"github.com/stacktune/stacktune/report"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// TableFormats lists the table formats WriteTable accepts, in the order
// error messages name them.
var TableFormats = []string{report.Text, report.Markdown, report.JSON}

// noLabel stands for the empty label in tables and charts.
const noLabel = "(no label)"

// baselineNote explains the dashes of an undefined baseline.
const baselineNote = "the first step's median score is 0, so ratios against it are undefined (-)"

// WriteTable writes the transition table in format "text" (aligned
// columns), "markdown" or "json" ({"steps": [...]}, see Step.MarshalJSON).
func WriteTable(w io.Writer, steps []Step, format string) error {
	switch format {
	case report.JSON:
		if steps == nil {
			steps = []Step{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(struct {
			Steps []Step `json:"steps"`
		}{steps})
	case report.Markdown:
		return writeMarkdown(w, steps)
	case report.Text:
		return writeText(w, steps)
	}
	return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(TableFormats, ", "))
}

var tableHeader = []string{"#", "label", "runs", "passed", "min", "median", "max", "x first", "vs first", "vs prev", "rps", "p99"}

// tableRows formats the cells shared by the text and Markdown tables.
func tableRows(steps []Step) [][]string {
	rows := make([][]string, len(steps))
	for i, s := range steps {
		xFirst, vsFirst, vsPrev := "-", "-", "-"
		if s.HasFirst {
			xFirst = strconv.FormatFloat(s.XFirst, 'f', 2, 64) + "x"
			vsFirst = change(s.ChangeFirst)
		}
		if s.HasPrev {
			vsPrev = change(s.ChangePrev)
		}
		rows[i] = []string{
			strconv.Itoa(i + 1), displayLabel(s), strconv.Itoa(s.Runs), fmt.Sprintf("%d/%d", s.Passed, s.Runs),
			Score(s.Min), Score(s.Median), Score(s.Max), xFirst, vsFirst, vsPrev,
			report.PerSecond(s.RPSMedian), report.Duration(s.P99Median.Seconds()),
		}
	}
	return rows
}

// displayLabel is the label as tables and charts show it: "(no label)" for
// "", " (again)" after a re-measured one, control characters as spaces.
func displayLabel(s Step) string {
	l := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
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

// Score formats a score with at most two decimals: 1234, 1234.5, 0.25.
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

func change(v float64) string {
	s := fmt.Sprintf("%+.1f%%", v*100)
	if s == "-0.0%" {
		s = "+0.0%"
	}
	return s
}

func writeText(w io.Writer, steps []Step) error {
	if len(steps) == 0 {
		_, err := io.WriteString(w, "no runs\n")
		return err
	}
	rows := append([][]string{tableHeader}, tableRows(steps)...)
	widths := make([]int, len(tableHeader))
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

var mdReplacer = strings.NewReplacer(`\`, `\\`, "|", `\|`, "`", "\\`", "*", `\*`, "_", `\_`, "<", "&lt;", "[", `\[`)

func writeMarkdown(w io.Writer, steps []Step) error {
	if len(steps) == 0 {
		_, err := io.WriteString(w, "_no runs_\n")
		return err
	}
	var b strings.Builder
	b.WriteString("| " + strings.Join(tableHeader, " | ") + " |\n|")
	for c := range tableHeader {
		if c == 1 {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteByte('\n')
	for _, row := range tableRows(steps) {
		row[1] = mdReplacer.Replace(row[1])
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	if !steps[0].HasFirst {
		b.WriteString("\n_Note: " + baselineNote + "._\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
