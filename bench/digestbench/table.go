package main

import (
	"fmt"
	"io"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// row is one tool's line of the table, already computed.
type row struct {
	name    string
	runs    int
	wall    float64 // s
	cpu     float64 // s
	cores   float64 // cpu / wall
	others  float64 // cores busy with other work during the run
	rssMiB  float64
	mibPerS float64
	diskMiB float64 // read from the block device, not the page cache
}

func toRow(t toolResult) row {
	r := row{
		name:    t.name,
		runs:    len(t.runs),
		wall:    t.med.Wall.Seconds(),
		cpu:     t.med.CPU.Seconds(),
		rssMiB:  float64(t.med.MaxRSSKiB) / 1024,
		cores:   measure.Cores(t.med.CPU, t.med.Wall),
		others:  measure.Cores(t.med.Others, t.med.Wall),
		diskMiB: measure.MiB(t.med.DiskRead),
	}
	if r.wall > 0 {
		r.mibPerS = measure.MiB(t.inBytes) / r.wall
	}
	return r
}

// rows returns pt-query-digest first, then the stacktune variants.
func (r *results) rows() []row {
	out := []row{toRow(r.pt)}
	for _, t := range r.st {
		out = append(out, toRow(t))
	}
	return out
}

// ratios are pt-query-digest over stacktune (all cores): wall, CPU, peak RSS.
func (r *results) ratios() (wall, cpu, mem string) {
	pt, st := toRow(r.pt), toRow(r.st[0])
	return measure.Ratio(pt.wall, st.wall), measure.Ratio(pt.cpu, st.cpu), measure.Ratio(pt.rssMiB, st.rssMiB)
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
	rows := r.rows()
	nw := len("tool")
	for _, x := range rows {
		nw = max(nw, len(x.name))
	}
	fmt.Fprintf(w, "%-*s  %4s  %8s  %8s  %8s  %12s  %8s  %11s\n", nw, "tool", "runs", "wall s", "CPU s", "CPU/wall", "peak RSS MiB", "MiB/s", "other cores")
	for _, x := range rows {
		fmt.Fprintf(w, "%-*s  %4d  %8.2f  %8.2f  %8.2f  %12.1f  %8.1f  %11.2f\n", nw, x.name, x.runs, x.wall, x.cpu, x.cores, x.rssMiB, x.mibPerS, x.others)
	}
	wall, cpu, mem := r.ratios()
	fmt.Fprintf(w, "\npt-query-digest / stacktune: wall %s, CPU %s, peak RSS %s\n", wall, cpu, mem)
	for _, n := range append(r.diskNotes(), r.notes...) {
		fmt.Fprintln(w, "note: "+n)
	}
}

// diskNotes flags runs that read a noticeable part of the log from disk
// although it was read once just before: the page cache did not keep it.
func (r *results) diskNotes() []string {
	var out []string
	for _, x := range r.rows() {
		if x.diskMiB > 0.05*measure.MiB(r.log.bytes) {
			out = append(out, fmt.Sprintf("%s read %.0f MiB from disk (median run) despite the warm-up: the page cache did not keep the log (try --tmpfs /dev/shm)", x.name, x.diskMiB))
		}
	}
	return out
}

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
	fmt.Fprintln(w, "| tool | wall s | CPU s | CPU/wall | peak RSS MiB | MiB/s | other cores |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, x := range r.rows() {
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.1f | %.1f | %.2f |\n", x.name, x.wall, x.cpu, x.cores, x.rssMiB, x.mibPerS, x.others)
	}
	wall, cpu, mem := r.ratios()
	fmt.Fprintf(w, "\npt-query-digest / stacktune: **%s** wall, **%s** CPU, **%s** peak RSS.\n", wall, cpu, mem)
}

// cacheNote says where the timed runs read the log from.
func (r *results) cacheNote() string {
	if r.tmpfs != "" {
		return "log copied to tmpfs (" + r.tmpfs + ")"
	}
	return "page cache warmed before each tool"
}

// logDescription says how the log was made, if known.
func logDescription(m *logMeta) string {
	if m == nil {
		return "slow log"
	}
	return fmt.Sprintf("sysbench %s (%d tables x %d rows, %d threads), MariaDB slow log with long_query_time=0",
		m.Workload, m.Tables, m.TableSize, m.Threads)
}
