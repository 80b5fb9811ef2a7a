package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/internal/skip"
)

// DigestFormats are the formats Digest renders.
var DigestFormats = []string{Text, JSON, Markdown, HTML}

// Digest renders a query digest in the given format.
func Digest(w io.Writer, r *digest.Report, format string) error {
	if r == nil {
		r = &digest.Report{}
	}
	switch format {
	case JSON:
		return WriteJSON(w, r)
	case Markdown:
		return digestMarkdown(w, r)
	case HTML:
		return digestHTML(w, r)
	case Text, "":
		return digestText(w, r)
	}
	return CheckFormat(format, DigestFormats...)
}

// errWriter remembers the first write error so renderers can write freely
// and check once.
type errWriter struct {
	w   io.Writer
	err error
}

// printf is fprintf: its arguments are cleaned (see Clean), its constant
// format is not.
func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fprintf(e.w, format, a...)
	}
}

func digestSummary(r *digest.Report) []string {
	o := r.Overall
	var lines []string
	head := fmt.Sprintf("%s events in %s classes, %s of query time", Count(o.Events), Count(int64(o.Classes)), Duration(o.TimeTotal))
	if o.ClassesShown < o.Classes {
		head += fmt.Sprintf(" (top %d shown)", o.ClassesShown)
	}
	lines = append(lines, head)
	if len(o.Inputs) > 0 {
		lines = append(lines, fmt.Sprintf("source: %s: %s (%s)", r.Source, strings.Join(o.Inputs, ", "), Bytes(o.Bytes)))
	} else {
		lines = append(lines, "source: "+r.Source)
	}
	if o.FirstSeen != nil && o.LastSeen != nil {
		lines = append(lines, fmt.Sprintf("window: %s to %s (%s), %s queries/s, concurrency %s",
			o.FirstSeen.Format(time.RFC3339), o.LastSeen.Format(time.RFC3339), Duration(o.IntervalSeconds), PerSecond(o.QPS), PerSecond(o.Concurrency)))
	} else if o.IntervalSeconds > 0 {
		lines = append(lines, fmt.Sprintf("window: %s, %s queries/s, concurrency %s", Duration(o.IntervalSeconds), PerSecond(o.QPS), PerSecond(o.Concurrency)))
	}
	lines = append(lines, fmt.Sprintf("rows: %s examined, %s sent; lock time %s", Count(o.RowsExamined), Count(o.RowsSent), Duration(o.LockTotal)))
	if o.Filtered > 0 {
		lines = append(lines, fmt.Sprintf("filtered out: %s events", Count(o.Filtered)))
	}
	lines = append(lines, "skipped: "+skippedLine(r.Skipped))
	if len(r.Skipped.UnknownFields) > 0 {
		lines = append(lines, "unknown header fields (ignored, events kept): "+countsLine(r.Skipped.UnknownFields, 10))
	}
	if len(r.Skipped.BadValues) > 0 {
		lines = append(lines, "unparseable field values (ignored, events kept): "+countsLine(r.Skipped.BadValues, 10))
	}
	lines = append(lines, r.Notes...)
	return lines
}

func skippedLine(s digest.Skipped) string {
	if len(s.Reasons) == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%s events (%s)", Count(s.Count), SkipLine(s.Reasons))
}

// SkipLine renders skip counts "words: 3, words: 1", largest first, each
// code said in its words (skip.Code.Words: an unknown code, such as an
// older run's sentence, as itself).
func SkipLine(c skip.Counts) string {
	m := make(map[string]int64, len(c))
	for k, v := range c {
		m[k.Words()] += v
	}
	return countsLine(m, 0)
}

// countsLine renders "a: 3, b: 1", largest first, at most max entries (0 = all).
func countsLine(m map[string]int64, max int) string {
	type kv struct {
		k string
		v int64
	}
	list := make([]kv, 0, len(m))
	for k, v := range m {
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].v != list[j].v {
			return list[i].v > list[j].v
		}
		return list[i].k < list[j].k
	})
	var parts []string
	for i, e := range list {
		if max > 0 && i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(list)-max))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %s", e.k, Count(e.v)))
	}
	return strings.Join(parts, ", ")
}

func optDuration(p *float64) string {
	if p == nil {
		return "-"
	}
	return Duration(*p)
}

// digestHeads are the classes table's columns; digestCols their layout
// (see sectionWriter.table).
var digestHeads = []string{"Rank", "Query ID", "Total", "Share", "Calls", "Avg", "Median", "p95", "Max", "V/M", "Rows ex/sent", "Type"}

const digestCols = "rcrrrrrrrrrl"

// digestRows are the classes table's cells; id writes a query ID (text
// prefixes 0x, Markdown shows it as code).
func digestRows(r *digest.Report, id func(string) string) [][]string {
	var rows [][]string
	for _, c := range r.Classes {
		rows = append(rows, []string{strconv.Itoa(c.Rank), id(c.ID), Duration(c.TimeTotal), Percent(c.Share), Count(c.Count),
			Duration(c.TimeAvg), optDuration(c.TimeMedian), optDuration(c.TimeP95), Duration(c.TimeMax), Ratio(c.VM),
			Ratio(c.RowsExaminedPerSent), c.StatementType})
	}
	return rows
}

func digestText(w io.Writer, r *digest.Report) error {
	sw := sectionWriter{e: &errWriter{w: w}}
	summary := digestSummary(r)
	sw.title(summary[0], summary[1:])
	sw.e.printf("\n")
	sw.table(digestHeads, digestCols, digestRows(r, func(id string) string { return "0x" + id }))
	for _, c := range r.Classes {
		sw.e.printf("\n# Query %d: 0x%s, %s of total time, %s calls\n", c.Rank, c.ID, Percent(c.Share), Count(c.Count))
		for _, l := range classLines(&c) {
			sw.e.printf("#   %s\n", l)
		}
		sw.e.printf("    %s\n", block{strings.TrimRight(c.Sample, "\n"), "    "})
	}
	return sw.e.err
}

// classLines are the detail lines shared by the text and Markdown renderers.
func classLines(c *digest.Class) []string {
	lines := []string{
		"fingerprint: " + c.Fingerprint,
		fmt.Sprintf("time: total %s, avg %s, median %s, p95 %s, min %s, max %s, V/M %s",
			Duration(c.TimeTotal), Duration(c.TimeAvg), optDuration(c.TimeMedian), optDuration(c.TimeP95),
			Duration(c.TimeMin), Duration(c.TimeMax), Ratio(c.VM)),
		"lock: total " + Duration(c.LockTotal) + maxPart(c.LockMax > 0, Duration(c.LockMax)),
		fmt.Sprintf("rows: sent %s, examined %s (%s per row sent%s), affected %s",
			Count(c.RowsSentTotal), Count(c.RowsExaminedTotal), Ratio(c.RowsExaminedPerSent),
			maxPart(c.RowsExaminedMax > 0, Count(c.RowsExaminedMax)+" per call"), Count(c.RowsAffectedTotal)),
	}
	if p := c.Plan; p != nil {
		lines = append(lines, fmt.Sprintf("plan (of %s calls logged): full scan %s, full join %s, filesort %s (on disk %s), tmp table %s (on disk %s)",
			Count(p.Known), Count(p.FullScans), Count(p.FullJoins), Count(p.Filesorts), Count(p.FilesortOnDisk),
			Count(p.TmpTables), Count(p.TmpDiskTables)))
	}
	if len(c.Databases) > 0 {
		lines = append(lines, "databases: "+countsLine(c.Databases, 5))
	}
	if len(c.Users) > 0 {
		lines = append(lines, "users: "+countsLine(c.Users, 5))
	}
	if c.FirstSeen != nil && c.LastSeen != nil {
		lines = append(lines, fmt.Sprintf("seen: %s to %s", c.FirstSeen.Format(time.RFC3339), c.LastSeen.Format(time.RFC3339)))
	}
	lines = append(lines, fmt.Sprintf("sample (slowest call, %s):", Duration(c.TimeMax)))
	return lines
}

// maxPart renders ", max V" when the source recorded a maximum
// (performance_schema keeps none for lock time and rows).
func maxPart(known bool, v string) string {
	if !known {
		return ""
	}
	return ", max " + v
}

func digestMarkdown(w io.Writer, r *digest.Report) error {
	sw := sectionWriter{e: &errWriter{w: w}, md: true}
	sw.title("Query digest", digestSummary(r))
	sw.e.printf("\n")
	sw.table(digestHeads, digestCols, digestRows(r, func(id string) string { return id }))
	for _, c := range r.Classes {
		sw.e.printf("\n## %d. `%s`: %s of total time, %s calls\n\n", c.Rank, c.ID, Percent(c.Share), Count(c.Count))
		for _, l := range classLines(&c) {
			sw.e.printf("- %s\n", mdEscape(l))
		}
		sw.e.printf("\n```sql\n%s\n```\n", block{strings.ReplaceAll(c.Sample, "```", "` ` `"), ""})
	}
	return sw.e.err
}
