package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/atomicfile"
	"github.com/stacktune/stacktune/internal/skip"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/report"
)

// The helpers every command shares: opening what the flags name, and
// saying things on stderr. A helper two commands need lives here, not in
// the command that needed it first.

// openDB connects to --dsn and says which server answered.
func openDB(ctx context.Context, dsn string) (*sql.DB, mysqlvar.Server, error) {
	return dbconn.OpenServer(ctx, dsn)
}

// openHistory opens the run history at path ("": the default,
// $STACKTUNE_HISTORY or the user's data directory).
func openHistory(path string) (*history.Store, error) {
	return history.OpenDefault(path)
}

// noteTo says a library's notes on stderr, one line each.
func noteTo(stderr io.Writer) func(string) {
	return func(n string) { fmt.Fprintln(stderr, "stacktune:", n) }
}

// logTo is a library's printf-style progress log on stderr.
func logTo(stderr io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) { fmt.Fprintf(stderr, "stacktune: "+format+"\n", args...) }
}

// isTerminal reports whether w is a terminal (a character device): live
// progress is drawn only there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// connectionsError words a refused --connections for the command line.
func connectionsError(err error) error {
	var ce *loadgen.ConnectionsError
	if !errors.As(err, &ce) {
		return err
	}
	if ce.NoFile == 0 {
		return fmt.Errorf("-c %d: at most %d connections (the cap of the load generator)", ce.N, ce.Max)
	}
	return fmt.Errorf("-c %d: the open-files limit (RLIMIT_NOFILE %d) allows at most %d connections (one socket each, %d files kept for the rest): raise it with ulimit -n, or lower -c",
		ce.N, ce.NoFile, ce.Max, loadgen.ReservedFiles)
}

// render writes a report and, in formats other than text (whose report
// says it), how many records were skipped and why, on stderr.
func render(stderr io.Writer, format, what string, skipped int64, reasons skip.Counts, write func() error) error {
	if err := write(); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if skipped > 0 && format != report.Text {
		fmt.Fprintf(stderr, "stacktune: skipped %d %s: %s\n", skipped, what, report.SkipLine(reasons))
	}
	return nil
}

// saveSnapshot writes atomically: never a half-written snapshot.
func saveSnapshot(path string, s *collect.Snapshot) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return writeSnapshot(w, s) })
}

// parseTimeFlag reads --since/--until.
func parseTimeFlag(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--%s %q: use RFC 3339 (2024-05-01T10:00:00Z) or 2024-05-01 10:00:00", name, v)
}

// writeReportFile renders a report into path, atomically and with its
// directory made, and says so on stderr as "stacktune CMD: report written
// to PATH"; the render runs first, so a failed one writes nothing.
func writeReportFile(path, cmd string, stderr io.Writer, render func(io.Writer) error) error {
	var b bytes.Buffer
	if err := render(&b); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "stacktune %s: report written to %s\n", cmd, path)
	return nil
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// saveJSON writes atomically: never a half-written file.
func saveJSON(path string, v any) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return writeJSON(w, v) })
}

// live draws a progress line in place on stderr when show is set.
type live struct {
	w    io.Writer
	show bool
}

// liveProgress reads --progress: auto (when stderr is a terminal),
// always or never.
func liveProgress(mode string, stderr io.Writer) (live, error) {
	l := live{w: stderr}
	switch mode {
	case "always":
		l.show = true
	case "never":
	case "auto":
		l.show = isTerminal(stderr)
	default:
		return l, fmt.Errorf("--progress %q: use auto, always or never", mode)
	}
	return l, nil
}

// draw replaces the line with s.
func (l live) draw(s string) {
	if l.show {
		fmt.Fprintf(l.w, "\r\033[K%s", s)
	}
}

// clear wipes the line.
func (l live) clear() {
	if l.show {
		fmt.Fprint(l.w, "\r\033[K")
	}
}

// emitChanges writes the change set of an audit's findings into dir
// (audit --emit) and names each file written on stderr.
func emitChanges(dir string, res *advise.Result, stderr io.Writer) error {
	paths, err := advise.Emit(dir, res)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		fmt.Fprintf(stderr, "stacktune: no changes to write into %s\n", dir)
	}
	for _, p := range paths {
		fmt.Fprintf(stderr, "stacktune: wrote %s\n", p)
	}
	return nil
}
