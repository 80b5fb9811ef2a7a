package measure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/stacktune/stacktune/internal/stats"
)

// Sample is what one child process cost.
type Sample struct {
	Wall      time.Duration
	CPU       time.Duration // user + sys
	MaxRSSKiB int64
	Others    time.Duration // CPU busy on the machine during the run, less the child's
	DiskRead  int64         // bytes the child read from the block device (not the page cache)
}

// Median returns the per-figure median of the samples (each figure on its
// own; for an even count, the mean of the two middle values).
func Median(s []Sample) Sample {
	if len(s) == 0 {
		return Sample{}
	}
	figs := make([][5]float64, len(s))
	for i, x := range s {
		figs[i] = [5]float64{float64(x.Wall), float64(x.CPU), float64(x.MaxRSSKiB), float64(x.Others), float64(x.DiskRead)}
	}
	col := func(j int) float64 {
		v := make([]float64, len(figs))
		for i := range figs {
			v[i] = figs[i][j]
		}
		return MedianOf(v)
	}
	return Sample{
		Wall:      time.Duration(col(0)),
		CPU:       time.Duration(col(1)),
		MaxRSSKiB: int64(col(2)),
		Others:    time.Duration(col(3)),
		DiskRead:  int64(col(4)),
	}
}

// MedianOf returns the median of v (stats.Median).
func MedianOf(v []float64) float64 { return stats.Median(v) }

// Cores is CPU time over wall time: how many cores were busy on average.
func Cores(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds()
}

// Warm reads path once so the timed runs that follow see it in the page
// cache.
func Warm(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("warming the page cache: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(io.Discard, f); err != nil {
		return fmt.Errorf("warming the page cache: %w", err)
	}
	return nil
}

// Run runs `bin args...` once as a child process, bounded by timeout, with
// its standard output written to the file out, and returns its wall time
// and its own rusage. A failure carries the end of the child's stderr.
func Run(ctx context.Context, timeout time.Duration, out, bin string, args ...string) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	f, err := os.Create(out)
	if err != nil {
		return Sample{}, fmt.Errorf("creating output file: %w", err)
	}
	defer f.Close()
	var errBuf TailBuffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = f, &errBuf
	busy0, err := BusyCPU()
	if err != nil {
		return Sample{}, err
	}
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	busy1, busyErr := BusyCPU()
	if err != nil {
		return Sample{}, fmt.Errorf("%s %s: %w\n%s", bin, strings.Join(args, " "), err, errBuf.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return Sample{}, errors.New("no rusage for the child process on this platform")
	}
	if busyErr != nil {
		return Sample{}, busyErr
	}
	s := Sample{
		Wall:      wall,
		CPU:       cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		MaxRSSKiB: int64(ru.Maxrss),        // KiB on Linux
		DiskRead:  int64(ru.Inblock) * 512, // 512-byte units on Linux
	}
	s.Others = max(0, busy1-busy0-s.CPU)
	return s, nil
}

// TailBuffer keeps the last TailMax bytes written to it: enough of a
// child's stderr to explain a failure.
type TailBuffer struct{ b bytes.Buffer }

// TailMax is how much a TailBuffer keeps.
const TailMax = 8 << 10

func (t *TailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > TailMax {
		p = p[len(p)-TailMax:]
	}
	t.b.Write(p)
	if extra := t.b.Len() - TailMax; extra > 0 {
		t.b.Next(extra)
	}
	return n, nil
}

func (t *TailBuffer) String() string { return t.b.String() }

// Repeat warms the page cache with log, then runs bin with args n times
// (each bounded by timeout, stdout to out), calling progress after each
// run, and returns the samples and their median. A failed run's error is
// prefixed with name.
func Repeat(ctx context.Context, name string, n int, timeout time.Duration, log, out, bin string, args []string, progress func(i int, s Sample)) (runs []Sample, med Sample, err error) {
	if err := Warm(log); err != nil {
		return nil, Sample{}, err
	}
	for i := 1; i <= n; i++ {
		s, err := Run(ctx, timeout, out, bin, args...)
		if err != nil {
			return runs, Sample{}, fmt.Errorf("%s: %w", name, err)
		}
		progress(i, s)
		runs = append(runs, s)
	}
	return runs, Median(runs), nil
}
