package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// sample is what one child process cost.
type sample struct {
	wall      time.Duration
	cpu       time.Duration // user + sys
	maxRSSKiB int64
	others    time.Duration // CPU busy on the machine during the run, less the child's
	diskRead  int64         // bytes the child read from the block device (not the page cache)
}

// toolResult is one benchmarked command: its runs and their median.
type toolResult struct {
	name    string
	runs    []sample
	med     sample
	inBytes int64 // uncompressed bytes digested, for MiB/s
}

// median returns the per-figure median of the samples (each figure on its
// own; for an even count, the mean of the two middle values).
func median(s []sample) sample {
	if len(s) == 0 {
		return sample{}
	}
	figs := make([][5]float64, len(s))
	for i, x := range s {
		figs[i] = [5]float64{float64(x.wall), float64(x.cpu), float64(x.maxRSSKiB), float64(x.others), float64(x.diskRead)}
	}
	col := func(j int) float64 {
		v := make([]float64, len(figs))
		for i := range figs {
			v[i] = figs[i][j]
		}
		return medianOf(v)
	}
	return sample{
		wall:      time.Duration(col(0)),
		cpu:       time.Duration(col(1)),
		maxRSSKiB: int64(col(2)),
		others:    time.Duration(col(3)),
		diskRead:  int64(col(4)),
	}
}

func medianOf(v []float64) float64 {
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// lookTool finds a command in PATH (or /usr/sbin, /usr/bin) and otherwise
// names the Debian package that ships it.
func lookTool(name, pkg string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/bin", "/usr/sbin"} {
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found: install the Debian package %s (apt-get install %s)", name, pkg, pkg)
}

// moduleRoot returns the directory of the go.mod of the current module.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the stacktune module: run from the repository (go run ./bench/digestbench)")
	}
	return filepath.Dir(mod), nil
}

// stacktuneBinary returns --stacktune or builds ./cmd/stacktune into work.
func stacktuneBinary(ctx context.Context, cfg config, work string, stderr io.Writer) (string, error) {
	if cfg.stacktune != "" {
		return cfg.stacktune, nil
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(work, "stacktune")
	fmt.Fprintln(stderr, "digestbench: go build -o", bin, "./cmd/stacktune")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/stacktune")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building stacktune: %w\n%s", err, out)
	}
	return bin, nil
}

// warm reads path once so every timed run sees it in the page cache.
func warm(path string) error {
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

// bench runs the timed commands.
type bench struct {
	cfg    config
	work   string
	stderr io.Writer
}

// results is everything the report prints.
type results struct {
	log        logInfo
	events     int64
	classes    int
	skipped    int64
	pt         toolResult
	st         []toolResult // st[0] is stacktune with every core
	tmpfs      string       // where the timed runs read a copy of the log, if not ""
	mismatches []string
	notes      []string
	env        envInfo
}

// measureAll runs every tool, then checks that they agree.
func (b bench) measureAll(ctx context.Context, pt, bin string, lg logInfo) (*results, error) {
	res := &results{log: lg}
	stOut := filepath.Join(b.work, "stacktune.json")
	st, err := b.measure(ctx, "stacktune", b.cfg.runs, lg, stOut, bin, "digest", "--limit", "0", "--format", "json", lg.path)
	if err != nil {
		return nil, err
	}
	res.st = append(res.st, st)
	if b.cfg.single {
		out := filepath.Join(b.work, "stacktune-workers1.json")
		st1, err := b.measure(ctx, "stacktune --workers 1", b.cfg.runs, lg, out, bin, "digest", "--limit", "0", "--format", "json", "--workers", "1", lg.path)
		if err != nil {
			return nil, err
		}
		res.st = append(res.st, st1)
		if err := b.agreeStacktune(res, stOut, out, "--workers 1"); err != nil {
			return nil, err
		}
	}
	if lg.gzPath != "" {
		gzLog := lg
		gzLog.path = lg.gzPath
		out := filepath.Join(b.work, "stacktune-gzip.json")
		stz, err := b.measure(ctx, "stacktune (gzip input)", b.cfg.runs, gzLog, out, bin, "digest", "--limit", "0", "--format", "json", lg.gzPath)
		if err != nil {
			return nil, err
		}
		res.st = append(res.st, stz)
		if err := b.agreeStacktune(res, stOut, out, "gzip"); err != nil {
			return nil, err
		}
	}
	ptOut := filepath.Join(b.work, "pt-query-digest.json")
	res.pt, err = b.measure(ctx, "pt-query-digest", b.cfg.runsPT, lg, ptOut, pt, "--limit", "100%", "--output", "json", lg.path)
	if err != nil {
		return nil, err
	}
	return res, b.agree(res, ptOut, stOut)
}

// agree compares pt-query-digest's output with stacktune's and fills the
// totals and the mismatches.
func (b bench) agree(res *results, ptOut, stOut string) error {
	ours, err := readStacktune(stOut)
	if err != nil {
		return err
	}
	theirs, err := readPT(ptOut)
	if err != nil {
		return err
	}
	res.events, res.classes, res.skipped = ours.events, len(ours.classes), ours.skipped
	res.mismatches = append(res.mismatches, compareDigests(theirs, ours)...)
	res.notes = append(res.notes, fingerprintNotes(theirs, ours)...)
	return nil
}

// agreeStacktune checks that a stacktune variant found what the default
// run found.
func (b bench) agreeStacktune(res *results, base, variant, label string) error {
	a, err := readStacktune(base)
	if err != nil {
		return err
	}
	v, err := readStacktune(variant)
	if err != nil {
		return err
	}
	v.tool = "stacktune " + label
	res.mismatches = append(res.mismatches, compareDigests(a, v)...)
	return nil
}

// measure warms the page cache and runs the command n times, stdout to
// out, and returns the samples and their median.
func (b bench) measure(ctx context.Context, name string, n int, lg logInfo, out, bin string, args ...string) (toolResult, error) {
	r := toolResult{name: name, inBytes: lg.bytes}
	if err := warm(lg.path); err != nil {
		return r, err
	}
	for i := 1; i <= n; i++ {
		s, err := b.runOnce(ctx, out, bin, args...)
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(b.stderr, "digestbench: %-24s run %d/%d: wall %6.2fs  cpu %6.2fs  rss %6.1f MiB  others %4.2f cores  disk read %6.1f MiB\n",
			name, i, n, s.wall.Seconds(), s.cpu.Seconds(), float64(s.maxRSSKiB)/1024, cores(s.others, s.wall), mib(s.diskRead))
		r.runs = append(r.runs, s)
	}
	r.med = median(r.runs)
	return r, nil
}

// runOnce runs one child process with stdout to the file out and returns
// its wall time and its own rusage.
func (b bench) runOnce(ctx context.Context, out, bin string, args ...string) (sample, error) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.toolTimeout)
	defer cancel()
	f, err := os.Create(out)
	if err != nil {
		return sample{}, fmt.Errorf("creating output file: %w", err)
	}
	defer f.Close()
	var errBuf tailBuffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = f, &errBuf
	busy0, err := busyCPU()
	if err != nil {
		return sample{}, err
	}
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	busy1, busyErr := busyCPU()
	if err != nil {
		return sample{}, fmt.Errorf("%s %s: %w\n%s", bin, strings.Join(args, " "), err, errBuf.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, errors.New("no rusage for the child process on this platform")
	}
	if busyErr != nil {
		return sample{}, busyErr
	}
	s := sample{
		wall:      wall,
		cpu:       cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		maxRSSKiB: int64(ru.Maxrss),        // KiB on Linux
		diskRead:  int64(ru.Inblock) * 512, // 512-byte units on Linux
	}
	s.others = max(0, busy1-busy0-s.cpu)
	return s, nil
}

// cores is CPU time over wall time: how many cores were busy on average.
func cores(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds()
}

// tailBuffer keeps the last tailMax bytes written to it: enough of a
// child's stderr to explain a failure.
type tailBuffer struct{ b bytes.Buffer }

const tailMax = 8 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > tailMax {
		p = p[len(p)-tailMax:]
	}
	t.b.Write(p)
	if extra := t.b.Len() - tailMax; extra > 0 {
		t.b.Next(extra)
	}
	return n, nil
}

func (t *tailBuffer) String() string { return t.b.String() }
