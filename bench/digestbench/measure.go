package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// toolResult is one benchmarked command: its runs and their median.
type toolResult struct {
	name    string
	runs    []measure.Sample
	med     measure.Sample
	inBytes int64 // uncompressed bytes digested, for MiB/s
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
	st, err := b.measure(ctx, "stacktune", b.cfg.Runs, lg, stOut, bin, "digest", "--limit", "0", "--format", "json", lg.path)
	if err != nil {
		return nil, err
	}
	res.st = append(res.st, st)
	if b.cfg.Single {
		out := filepath.Join(b.work, "stacktune-workers1.json")
		st1, err := b.measure(ctx, "stacktune --workers 1", b.cfg.Runs, lg, out, bin, "digest", "--limit", "0", "--format", "json", "--workers", "1", lg.path)
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
		stz, err := b.measure(ctx, "stacktune (gzip input)", b.cfg.Runs, gzLog, out, bin, "digest", "--limit", "0", "--format", "json", lg.gzPath)
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
	var err error
	r.runs, r.med, err = measure.Repeat(ctx, name, n, b.cfg.ToolTimeout, lg.path, out, bin, args, func(i int, s measure.Sample) {
		fmt.Fprintf(b.stderr, "digestbench: %-24s run %d/%d: wall %6.2fs  cpu %6.2fs  rss %6.1f MiB  others %4.2f cores  disk read %6.1f MiB\n",
			name, i, n, s.Wall.Seconds(), s.CPU.Seconds(), float64(s.MaxRSSKiB)/1024, measure.Cores(s.Others, s.Wall), measure.MiB(s.DiskRead))
	})
	return r, err
}
