package measure

import (
	"fmt"
	"io"
)

// ToolRow is one tool's line of a result table, already computed from the
// median of its runs.
type ToolRow struct {
	Name    string
	Runs    int
	Wall    float64 // s
	CPU     float64 // s
	Cores   float64 // CPU / Wall
	Others  float64 // cores busy with other work during the run
	RSSMiB  float64
	MiBPerS float64
	DiskMiB float64 // read from the block device, not the page cache
}

// NewToolRow computes the row of a tool that ran runs times, med being the
// median run and inBytes the bytes it read (for MiB/s).
func NewToolRow(name string, runs int, med Sample, inBytes int64) ToolRow {
	r := ToolRow{
		Name:    name,
		Runs:    runs,
		Wall:    med.Wall.Seconds(),
		CPU:     med.CPU.Seconds(),
		RSSMiB:  float64(med.MaxRSSKiB) / 1024,
		Cores:   Cores(med.CPU, med.Wall),
		Others:  Cores(med.Others, med.Wall),
		DiskMiB: MiB(med.DiskRead),
	}
	if r.Wall > 0 {
		r.MiBPerS = MiB(inBytes) / r.Wall
	}
	return r
}

// PrintToolTable writes rows as a plain-text table with a header line.
func PrintToolTable(w io.Writer, rows []ToolRow) {
	nw := len("tool")
	for _, x := range rows {
		nw = max(nw, len(x.Name))
	}
	fmt.Fprintf(w, "%-*s  %4s  %8s  %8s  %8s  %12s  %8s  %11s\n", nw, "tool", "runs", "wall s", "CPU s", "CPU/wall", "peak RSS MiB", "MiB/s", "other cores")
	for _, x := range rows {
		fmt.Fprintf(w, "%-*s  %4d  %8.2f  %8.2f  %8.2f  %12.1f  %8.1f  %11.2f\n", nw, x.Name, x.Runs, x.Wall, x.CPU, x.Cores, x.RSSMiB, x.MiBPerS, x.Others)
	}
}

// PrintToolMarkdown writes rows as a Markdown table (without the runs).
func PrintToolMarkdown(w io.Writer, rows []ToolRow) {
	fmt.Fprintln(w, "| tool | wall s | CPU s | CPU/wall | peak RSS MiB | MiB/s | other cores |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, x := range rows {
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.1f | %.1f | %.2f |\n", x.Name, x.Wall, x.CPU, x.Cores, x.RSSMiB, x.MiBPerS, x.Others)
	}
}

// DiskNotes flags runs that read a noticeable part (over 5%) of a log of
// logBytes from disk although it was read once just before: the page
// cache did not keep it.
func DiskNotes(rows []ToolRow, logBytes int64) []string {
	var out []string
	for _, x := range rows {
		if x.DiskMiB > 0.05*MiB(logBytes) {
			out = append(out, fmt.Sprintf("%s read %.0f MiB from disk (median run) despite the warm-up: the page cache did not keep the log (try --tmpfs /dev/shm)", x.Name, x.DiskMiB))
		}
	}
	return out
}

// CacheNote says where the timed runs read the log from: a copy in the
// --tmpfs directory, or the page cache.
func CacheNote(tmpfs string) string {
	if tmpfs != "" {
		return "log copied to tmpfs (" + tmpfs + ")"
	}
	return "page cache warmed before each tool"
}
