package main

import (
	"fmt"
	"io"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// toRow is t's line of the result table.
func toRow(t toolResult) measure.ToolRow {
	return measure.NewToolRow(t.name, len(t.runs), t.med, t.inBytes)
}

// rows returns pt-query-digest first, then the stacktune variants.
func (r *results) rows() []measure.ToolRow {
	out := []measure.ToolRow{toRow(r.pt)}
	for _, t := range r.st {
		out = append(out, toRow(t))
	}
	return out
}

// ratios are pt-query-digest over stacktune (all cores): wall, CPU, peak RSS.
func (r *results) ratios() (wall, cpu, mem string) {
	pt, st := toRow(r.pt), toRow(r.st[0])
	return measure.Ratio(pt.Wall, st.Wall), measure.Ratio(pt.CPU, st.CPU), measure.Ratio(pt.RSSMiB, st.RSSMiB)
}

// printText writes the plain-text result table.
func printText(w io.Writer, r *results) {
	fmt.Fprintf(w, "slow log  %s\n", r.log.path)
	fmt.Fprintf(w, "size      %.1f MiB   events %s   classes %d", measure.MiB(r.log.bytes), measure.GroupInt(r.events), r.classes)
	if r.skipped > 0 {
		fmt.Fprintf(w, "   (stacktune skipped %s events)", measure.GroupInt(r.skipped))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	measure.PrintToolTable(w, r.rows())
	wall, cpu, mem := r.ratios()
	fmt.Fprintf(w, "\npt-query-digest / stacktune: wall %s, CPU %s, peak RSS %s\n", wall, cpu, mem)
	for _, n := range append(r.diskNotes(), r.notes...) {
		fmt.Fprintln(w, "note: "+n)
	}
}

// diskNotes flags runs whose log the page cache did not keep.
func (r *results) diskNotes() []string { return measure.DiskNotes(r.rows(), r.log.bytes) }

// printMarkdown writes the same results as a section for
// docs/benchmarks.md.
func printMarkdown(w io.Writer, r *results) {
	e := r.env
	fmt.Fprintf(w, "### stacktune digest vs pt-query-digest, %s\n\n", e.date)
	fmt.Fprintf(w, "- Machine: %d cores (nproc), %s\n", e.nproc, e.cpuModel)
	fmt.Fprintf(w, "- Versions: MariaDB %s, sysbench %s, pt-query-digest %s, stacktune %s built with %s\n",
		e.mariadb, e.sysbench, e.pt, e.commit, e.goVersion)
	fmt.Fprintf(w, "- Log: %s: %.1f MiB, %s events, %d classes\n", logDescription(r.log.meta), measure.MiB(r.log.bytes), measure.GroupInt(r.events), r.classes)
	fmt.Fprintf(w, "- Median of %d stacktune run(s) and %d pt-query-digest run(s), %s; CPU is user+sys, peak RSS is the child's maxrss; "+
		"other cores is the CPU other processes (or steal) took during the run, over its wall time\n\n",
		len(r.st[0].runs), len(r.pt.runs), r.cacheNote())
	measure.PrintToolMarkdown(w, r.rows())
	wall, cpu, mem := r.ratios()
	fmt.Fprintf(w, "\npt-query-digest / stacktune: **%s** wall, **%s** CPU, **%s** peak RSS.\n", wall, cpu, mem)
}

// cacheNote says where the timed runs read the log from.
func (r *results) cacheNote() string { return measure.CacheNote(r.tmpfs) }

// logDescription says how the log was made, if known.
func logDescription(m *logMeta) string {
	if m == nil {
		return "slow log"
	}
	return fmt.Sprintf("sysbench %s (%d tables x %d rows, %d threads), MariaDB slow log with long_query_time=0",
		m.Workload, m.Tables, m.TableSize, m.Threads)
}
