package report

import "strings"

// sectionWriter writes the sections of a text or Markdown report: a
// title, a heading, a list, a table (text: columns aligned by display
// width; Markdown: a pipe table, code columns as code spans), rows with
// lines under them. It is the one way a renderer lays out columns (see
// TestNoTabwriter). Every string goes through the errWriter's printf,
// which cleans it.
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

// Column layouts for table, one byte per column: a left-aligned column,
// a right-aligned one (numbers), and a code column (left-aligned in text,
// a code span in Markdown: query IDs, fingerprints, paths).
const (
	colLeft  = 'l'
	colRight = 'r'
	colCode  = 'c'
)

// table writes rows under heads, each column laid out as cols says (see
// colLeft; one byte per column, "l" for a missing one). Text aligns the
// columns by display width (a CJK character takes two), two spaces
// apart, a left-aligned last one unpadded, under no header row when
// heads are all ""; Markdown is a pipe table, right-aligned columns
// marked so.
func (sw sectionWriter) table(heads []string, cols string, rows [][]string) {
	sw.tableUnder(heads, cols, rows, nil)
}

// tableUnder is table with lines under some rows (under(i) for row i,
// nil for none): in text each is written on its own line below its row,
// indented two spaces past it, outside the alignment; in Markdown they end
// the row's last cell, after "; ".
func (sw sectionWriter) tableUnder(heads []string, cols string, rows [][]string, under func(i int) []string) {
	e := sw.e
	lines := func(i int) []string {
		if under == nil {
			return nil
		}
		return under(i)
	}
	col := func(i int) byte {
		if i < len(cols) {
			return cols[i]
		}
		return colLeft
	}
	if sw.md {
		e.printf("|")
		for _, h := range heads {
			e.printf(" %s |", mdEscape(h))
		}
		e.printf("\n|")
		for i := range heads {
			if col(i) == colRight {
				e.printf("---:|")
			} else {
				e.printf("---|")
			}
		}
		e.printf("\n")
		for r, row := range rows {
			if l := lines(r); len(l) > 0 && len(row) > 0 {
				row = append(row[:len(row)-1:len(row)-1], strings.Join(append([]string{row[len(row)-1]}, l...), "; "))
			}
			e.printf("|")
			for i, c := range row {
				if col(i) == colCode {
					e.printf(" `%s` |", mdCode(strings.ReplaceAll(c, "`", "'")))
				} else {
					e.printf(" %s |", mdEscape(c))
				}
			}
			e.printf("\n")
		}
		return
	}
	n := len(heads)
	for _, row := range rows {
		n = max(n, len(row))
	}
	width := make([]int, n)
	for i, h := range heads {
		width[i] = displayWidth(h)
	}
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], displayWidth(Clean(c)))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", max(0, width[i]-displayWidth(Clean(c))))
			if col(i) == colRight {
				b.WriteString(pad + c + "  ")
			} else {
				b.WriteString(c + pad + "  ")
			}
		}
		e.printf("  %s\n", strings.TrimRight(b.String(), " "))
	}
	if strings.Join(heads, "") != "" {
		line(heads)
	}
	for r, row := range rows {
		line(row)
		for _, l := range lines(r) {
			e.printf("    %s\n", l)
		}
	}
}
