package measure

import (
	"context"
	"flag"
	"io"
	"time"
)

// StacktuneFlags are the flags of the benchmarks that time stacktune
// against other tools on one log (digestbench, httpbench): how often to
// run stacktune and its variants, which binary, where the log is read
// from and how the results are printed.
type StacktuneFlags struct {
	Runs        int
	Single      bool
	Markdown    bool
	ToolTimeout time.Duration
	Stacktune   string
	Tmpfs       string
}

// Register defines the flags on fs.
func (f *StacktuneFlags) Register(fs *flag.FlagSet) {
	fs.IntVar(&f.Runs, "runs", 3, "runs of each stacktune variant (the median is reported)")
	fs.BoolVar(&f.Single, "single", true, "also run stacktune with --workers 1 (the single-core figure)")
	fs.BoolVar(&f.Markdown, "markdown", false, "also print the results as Markdown for docs/benchmarks.md")
	fs.DurationVar(&f.ToolTimeout, "tool-timeout", 30*time.Minute, "upper bound on any one timed run")
	fs.StringVar(&f.Stacktune, "stacktune", "", "use this stacktune binary instead of building ./cmd/stacktune")
	fs.StringVar(&f.Tmpfs, "tmpfs", "", "copy the log into this memory-backed directory (e.g. /dev/shm) for the timed runs, for when the page cache does not keep it")
}

// Binary returns --stacktune, or builds ./cmd/stacktune into work for
// benchmark name.
func (f StacktuneFlags) Binary(ctx context.Context, work, name string, stderr io.Writer) (string, error) {
	if f.Stacktune != "" {
		return f.Stacktune, nil
	}
	return BuildStacktune(ctx, work, name, stderr)
}
