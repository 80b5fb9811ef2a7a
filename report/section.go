package report

import "strings"

// sectionWriter writes the sections of a text or Markdown report: a
// heading, a list, a table (text: aligned columns; Markdown: a pipe table,
// a last "fingerprint" column in code). Every string goes through the
// errWriter's printf, which cleans it.
type sectionWriter struct {
	e  *errWriter
	md bool
}

// title writes the report's title and its summary lines (text: "# "
// lines; Markdown: a heading and a list).
func (sw sectionWriter) title(title string, summary []string) {
	if sw.md {
		sw.e.printf("# %s\n\n", mdEscape(title))
		for _, l := range summary {
			sw.e.printf("- %s\n", mdEscape(l))
		}
		return
	}
	sw.e.printf("# %s\n", title)
	for _, l := range summary {
		sw.e.printf("# %s\n", l)
	}
}

func (sw sectionWriter) heading(s string) {
	if sw.md {
		sw.e.printf("\n## %s\n\n", mdEscape(s))
	} else {
		sw.e.printf("\n## %s\n", s)
	}
}

func (sw sectionWriter) list(lines []string) {
	for _, l := range lines {
		if sw.md {
			sw.e.printf("- %s\n", mdEscape(l))
		} else {
			sw.e.printf("  %s\n", l)
		}
	}
}

// table writes rows under heads; numeric says which columns align right.
func (sw sectionWriter) table(heads []string, rows [][]string, numeric func(i int) bool) {
	e := sw.e
	if sw.md {
		e.printf("|")
		for _, h := range heads {
			e.printf(" %s |", mdEscape(h))
		}
		e.printf("\n|")
		for i := range heads {
			if numeric(i) {
				e.printf("---:|")
			} else {
				e.printf("---|")
			}
		}
		e.printf("\n")
		for _, row := range rows {
			e.printf("|")
			for i, c := range row {
				if i == len(row)-1 && strings.Contains(heads[len(heads)-1], "fingerprint") {
					e.printf(" `%s` |", mdCode(strings.ReplaceAll(c, "`", "'")))
				} else {
					e.printf(" %s |", mdEscape(c))
				}
			}
			e.printf("\n")
		}
		return
	}
	width := make([]int, len(heads))
	for i, h := range heads {
		width[i] = displayWidth(h)
	}
	for _, row := range rows {
		for i, c := range row {
			if i < len(row)-1 {
				width[i] = max(width[i], displayWidth(Clean(c)))
			}
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", max(0, width[i]-displayWidth(Clean(c))))
			switch {
			case i == len(cells)-1:
				b.WriteString(c)
			case numeric(i):
				b.WriteString(pad + c + "  ")
			default:
				b.WriteString(c + pad + "  ")
			}
		}
		e.printf("  %s\n", strings.TrimRight(b.String(), " "))
	}
	line(heads)
	for _, row := range rows {
		line(row)
	}
}
