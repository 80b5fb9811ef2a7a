package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// The goal the numbers are reported against.
const (
	goalMBps = 300 // MB/s (10^6 bytes), stacktune with every core
	// boundedRatio is how much more peak RSS stacktune may take on the
	// whole log than on its first quarter (4x the lines) for its memory to
	// count as bounded by endpoints, not lines.
	boundedRatio = 1.5
)

// toRow is t's line of the result table.
func toRow(t toolResult) measure.ToolRow {
	return measure.NewToolRow(t.name, len(t.runs), t.med, t.inBytes)
}

// rows returns the stacktune variants, then goaccess, then the awks.
func (r *results) rows() []measure.ToolRow {
	var out []measure.ToolRow
	for _, t := range r.st {
		out = append(out, toRow(t))
	}
	if r.goaccess != nil {
		out = append(out, toRow(*r.goaccess))
	}
	for _, t := range r.awks {
		out = append(out, toRow(t))
	}
	return out
}

// ratioLine is one other tool over stacktune (all cores).
type ratioLine struct {
	name           string
	wall, cpu, mem string
}

func (r *results) ratios() []ratioLine {
	st := toRow(r.st[0])
	var others []toolResult
	if r.goaccess != nil {
		others = append(others, *r.goaccess)
	}
	others = append(others, r.awks...)
	var out []ratioLine
	for _, t := range others {
		o := toRow(t)
		out = append(out, ratioLine{name: o.Name, wall: measure.Ratio(o.Wall, st.Wall), cpu: measure.Ratio(o.CPU, st.CPU), mem: measure.Ratio(o.RSSMiB, st.RSSMiB)})
	}
	return out
}

// yesNo marks a goal as met or missed.
func yesNo(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// goals are the lines that say how stacktune did against the goal:
// throughput, faster than goaccess, memory bounded by endpoints.
func (r *results) goals() []string {
	st := toRow(r.st[0])
	mbps := float64(r.st[0].inBytes) / 1e6 / st.Wall
	out := []string{fmt.Sprintf("throughput: %.0f MB/s (%.0f MiB/s) with %d cores, goal >= %d MB/s: %s",
		mbps, st.MiBPerS, r.env.nproc, goalMBps, yesNo(mbps >= goalMBps))}
	if r.goaccess != nil {
		ga := toRow(*r.goaccess)
		out = append(out, fmt.Sprintf("faster than goaccess: %s less wall time, %s less CPU: %s",
			measure.Ratio(ga.Wall, st.Wall), measure.Ratio(ga.CPU, st.CPU), yesNo(st.Wall < ga.Wall)))
	}
	if r.quarter != nil {
		q := toRow(*r.quarter)
		out = append(out, fmt.Sprintf("memory: peak RSS %.1f MiB on the first 1/4 (%.1f MiB, %s requests), %.1f MiB on the whole log (%s requests, %d endpoints): %s of the memory for 4x the lines, bounded by endpoints: %s",
			q.RSSMiB, measure.MiB(r.quarter.inBytes), measure.GroupInt(r.quarterAns.requests), st.RSSMiB, measure.GroupInt(r.stAnswer.requests),
			len(r.stAnswer.endpoints), measure.Ratio(st.RSSMiB, q.RSSMiB), yesNo(q.RSSMiB > 0 && st.RSSMiB <= boundedRatio*q.RSSMiB)))
	}
	return out
}

// agreement is one line saying what the tools agreed on.
func (r *results) agreement() string {
	parts := []string{"generator " + measure.GroupInt(r.log.meta.Requests), "stacktune " + measure.GroupInt(r.stAnswer.requests)}
	if r.goaccess != nil {
		parts = append(parts, "goaccess valid "+measure.GroupInt(r.gaAnswer.valid))
	}
	times := []string{fmt.Sprintf("generator %.3f s", r.expectedTime), fmt.Sprintf("stacktune %.3f s", r.stAnswer.timeTotal)}
	for i, a := range r.awkAnswers {
		parts = append(parts, r.awks[i].name+" "+measure.GroupInt(a.requests))
		times = append(times, fmt.Sprintf("%s %.3f s", r.awks[i].name, a.time))
	}
	if r.goaccess != nil {
		times = append(times, fmt.Sprintf("goaccess %.3f s", float64(r.gaAnswer.timeUs)/1e6))
	}
	return "requests: " + strings.Join(parts, ", ") + "\nrequest time: " + strings.Join(times, ", ")
}

// keyNotes say how much more state the awk aggregation keeps.
func (r *results) keyNotes() []string {
	var out []string
	for i, a := range r.awkAnswers {
		out = append(out, fmt.Sprintf("%s aggregates per exact path (no grouping): %s keys where stacktune reports %d endpoints",
			r.awks[i].name, measure.GroupInt(int64(a.keys)), len(r.stAnswer.endpoints)))
	}
	return out
}

// printText writes the plain-text result table.
func printText(w io.Writer, r *results) {
	m := r.log.meta
	fmt.Fprintf(w, "access log  %s\n", r.log.path)
	fmt.Fprintf(w, "size        %.1f MiB   requests %s   endpoints %d   learned %s\n", measure.MiB(r.log.bytes), measure.GroupInt(m.Requests),
		len(r.stAnswer.endpoints), strings.Join(r.stAnswer.learned, " "))
	if r.goaccess != nil {
		g := r.gaAnswer
		fmt.Fprintf(w, "goaccess    total %s   valid %s   failed %s\n", measure.GroupInt(g.total), measure.GroupInt(g.valid), measure.GroupInt(g.failed))
	}
	fmt.Fprintln(w)
	measure.PrintToolTable(w, r.rows())
	fmt.Fprintln(w)
	for _, x := range r.ratios() {
		fmt.Fprintf(w, "%s / stacktune: wall %s, CPU %s, peak RSS %s\n", x.name, x.wall, x.cpu, x.mem)
	}
	for _, g := range r.goals() {
		fmt.Fprintln(w, g)
	}
	fmt.Fprintln(w, r.agreement())
	for _, n := range append(append(r.keyNotes(), r.diskNotes()...), r.notes...) {
		fmt.Fprintln(w, "note: "+n)
	}
}

// diskNotes flags runs whose log the page cache did not keep.
func (r *results) diskNotes() []string { return measure.DiskNotes(r.rows(), r.log.bytes) }

// cacheNote says where the timed runs read the log from.
func (r *results) cacheNote() string { return measure.CacheNote(r.tmpfs) }

// printMarkdown writes the same results as a section for
// docs/benchmarks.md.
func printMarkdown(w io.Writer, r *results) {
	e, m := r.env, r.log.meta
	fmt.Fprintf(w, "### stacktune http vs goaccess and awk, %s\n\n", e.date)
	fmt.Fprintf(w, "- Machine: %d cores (nproc), %s\n", e.nproc, e.cpuModel)
	vers := []string{"goaccess " + e.goaccess}
	vers = append(vers, e.awks...)
	fmt.Fprintf(w, "- Versions: %s, stacktune %s built with %s\n", strings.Join(vers, ", "), e.commit, e.goVersion)
	fmt.Fprintf(w, "- Log: generated by bench/httpbench (seed %d): %.1f MiB, %s requests of an ISUCON-like application "+
		"(%d users, %d posts, %d devices; 20%% static files), nginx combined + `$request_time $upstream_response_time`; "+
		"stacktune found %d endpoints\n",
		m.Seed, measure.MiB(r.log.bytes), measure.GroupInt(m.Requests), m.Users, m.Posts, m.Devices, len(r.stAnswer.endpoints))
	runs := []string{fmt.Sprintf("%d stacktune run(s)", len(r.st[0].runs))}
	if r.goaccess != nil {
		runs = append(runs, fmt.Sprintf("%d goaccess run(s)", len(r.goaccess.runs)))
	}
	if len(r.awks) > 0 {
		runs = append(runs, fmt.Sprintf("%d run(s) of each awk", len(r.awks[0].runs)))
	}
	fmt.Fprintf(w, "- Median of %s, %s; CPU is user+sys, peak RSS is the child's maxrss; "+
		"other cores is the CPU other processes (or steal) took during the run, over its wall time. "+
		"goaccess: `--no-query-string`, JSON report, no persistence; awk: one pass, count, sum and max of `$request_time` per method and path without query string\n\n",
		strings.Join(runs, ", "), r.cacheNote())
	measure.PrintToolMarkdown(w, r.rows())
	fmt.Fprintln(w)
	for _, x := range r.ratios() {
		fmt.Fprintf(w, "- %s / stacktune: **%s** wall, **%s** CPU, **%s** peak RSS.\n", x.name, x.wall, x.cpu, x.mem)
	}
	for _, g := range r.goals() {
		fmt.Fprintf(w, "- %s\n", g)
	}
	verdict := "Same answer"
	if len(r.mismatches) > 0 {
		verdict = fmt.Sprintf("DISAGREEMENT (%d mismatches)", len(r.mismatches))
	}
	for _, l := range strings.Split(r.agreement(), "\n") {
		fmt.Fprintf(w, "- %s, %s\n", verdict, l)
	}
	for _, n := range r.keyNotes() {
		fmt.Fprintf(w, "- %s\n", n)
	}
}
