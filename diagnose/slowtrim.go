package diagnose

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/stacktune/stacktune/mysqlvar"
)

// slowFile is the slow log file as found before the capture: whether it
// existed, its size and its identity (device and inode), so that what the
// capture added can be taken away again without touching anything else.
type slowFile struct {
	exists   bool
	size     int64
	dev, ino uint64
}

func statSlow(path string) (slowFile, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return slowFile{}, nil
	}
	if err != nil {
		return slowFile{}, err
	}
	f := slowFile{exists: true, size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		f.dev, f.ino = uint64(st.Dev), st.Ino
	}
	return f, nil
}

// Why the slow log was not put back to its size (SlowLogTrim.Skipped):
// stable codes.
const (
	// TrimWasOn: the slow log was on before the capture, so the server
	// may have written its own entries after the capture's: they are
	// kept, and so is what the capture added.
	TrimWasOn = "was_on"
	// TrimReplaced: the file is not the one the capture wrote (rotated,
	// replaced or shorter than before).
	TrimReplaced = "replaced"
	// TrimFailed: truncating or removing it failed (Error says why).
	TrimFailed = "failed"
)

// SlowLogTrim is what became of the bytes the capture added to the slow
// log: the file is put back to its size before the capture (removed when
// the capture created it) when the slow log was off before it, so a
// diagnosis leaves no 182 MB behind.
type SlowLogTrim struct {
	// Added is how many bytes the capture added.
	Added int64 `json:"added_bytes"`
	// Trimmed: the file is back to its size before the capture; Removed:
	// the capture created it and it is gone again.
	Trimmed bool `json:"trimmed"`
	Removed bool `json:"removed,omitempty"`
	// Skipped says why it was left as it is (a Trim code), Error what
	// failed.
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

// trimSlowLog puts the slow log back to its size before the capture,
// after the run's section was read.
func (r *run) trimSlowLog() {
	if r.slow == "" || r.cap == nil {
		return
	}
	now, err := statSlow(r.slow)
	t := &SlowLogTrim{}
	r.res.Capture.Trim = t
	if err != nil {
		t.Skipped, t.Error = TrimFailed, err.Error()
		return
	}
	before := r.slowBefore
	t.Added = now.size - before.size
	switch {
	case !now.exists:
		t.Added = 0
		return
	case before.exists && (now.dev != before.dev || now.ino != before.ino || now.size < before.size):
		t.Skipped, t.Added = TrimReplaced, 0
		return
	}
	if on, _ := mysqlvar.ParseBool(r.vars["slow_query_log"]); on || r.vars["slow_query_log"] == "1" {
		t.Skipped = TrimWasOn
		return
	}
	if !before.exists {
		err = os.Remove(r.slow)
		t.Removed = err == nil
	} else {
		err = os.Truncate(r.slow, before.size)
	}
	if err != nil {
		t.Skipped, t.Error = TrimFailed, err.Error()
		return
	}
	t.Trimmed = true
	r.say("slow log: the capture's %s removed from %s (back to %s)", bytesText(t.Added), r.slow, bytesText(before.size))
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
