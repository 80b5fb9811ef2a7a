package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// awkProgram aggregates per method and path without its query string: the
// count, sum and max of $request_time, which is the next-to-last field
// ($upstream_response_time, the last, is one word: "0.012" or "-"). $6 is
// `"GET` (the opening quote of $request), $7 the request target. Sums are
// printed with %.3f: $request_time has millisecond resolution, so they
// are exact to the last digit, where awk's default OFMT (%.6g) would round
// them.
const awkProgram = `{ split($7, p, "?"); k = substr($6, 2) " " p[1]; c[k]++; t = $(NF-1) + 0; s[k] += t; if (t > m[k]) m[k] = t }
END { for (k in c) printf "%s %d %.3f %.3f\n", k, c[k], s[k], m[k] }
`

// tool is a benchmarked program found on this machine.
type tool struct {
	name, path string
}

// tools are the programs of this run.
type tools struct {
	stacktune string
	goaccess  string // "" with --goaccess=false
	awks      []tool
	notes     []string // tools asked for but missing
}

// findTools looks up goaccess and the awks before anything slow happens.
func findTools(cfg config) (tools, error) {
	var t tools
	if cfg.goaccess {
		p, err := measure.LookTool("goaccess", "goaccess")
		if err != nil {
			return t, err
		}
		t.goaccess = p
	}
	for _, a := range cfg.awks {
		p, err := measure.LookTool(a, a)
		if err != nil {
			t.notes = append(t.notes, "skipped "+a+": "+err.Error())
			continue
		}
		t.awks = append(t.awks, tool{name: a, path: p})
	}
	return t, nil
}

// toolResult is one benchmarked command: its runs and their median.
type toolResult struct {
	name    string
	runs    []measure.Sample
	med     measure.Sample
	inBytes int64 // bytes of log read, for MiB/s
}

// goaccessCounts are goaccess's own totals (its JSON "general" section).
type goaccessCounts struct {
	total, valid, failed int64
	timeUs               int64 // cumulative time served, from %T
}

// awkAnswer is what one awk printed, summed.
type awkAnswer struct {
	keys     int
	requests int64
	time     float64
}

// results is everything the report prints.
type results struct {
	log   logInfo
	tmpfs string // where the timed runs read a copy of the log, if not ""

	st       []toolResult // st[0] is stacktune with every core
	quarter  *toolResult  // stacktune on the first quarter of the log
	goaccess *toolResult
	awks     []toolResult

	stAnswer     stacktuneSummary
	quarterAns   stacktuneSummary
	gaAnswer     goaccessCounts
	awkAnswers   []awkAnswer
	mismatches   []string
	notes        []string
	expectedTime float64 // s, from the generator
	env          envInfo
}

// bench runs the timed commands.
type bench struct {
	cfg    config
	work   string
	stderr io.Writer
}

func stacktuneArgs(log string, extra ...string) []string {
	a := []string{"http", "--nginx-format", nginxFormat, "--format", "json", "--limit", "0"}
	return append(append(a, extra...), log)
}

func goaccessArgs(log, out string) []string {
	return []string{log, "--no-global-config", "--log-format=" + goaccessFormat, "--date-format=%d/%b/%Y", "--time-format=%T",
		"--no-query-string", "--no-parsing-spinner", "-o", out, "--json-pretty-print"}
}

// measureAll runs every tool and checks their answers.
func (b bench) measureAll(ctx context.Context, tl tools, lg logInfo) (*results, error) {
	res := &results{log: lg, notes: tl.notes, expectedTime: float64(lg.meta.TimeTotalMs) / 1000}
	stOut := filepath.Join(b.work, "stacktune.json")
	st, err := b.measure(ctx, "stacktune", b.cfg.Runs, lg.path, lg.bytes, stOut, tl.stacktune, stacktuneArgs(lg.path)...)
	if err != nil {
		return nil, err
	}
	res.st = append(res.st, st)
	if res.stAnswer, err = readStacktune(stOut); err != nil {
		return nil, err
	}
	res.mismatches = append(res.mismatches, compareExpected(lg.meta, res.stAnswer)...)
	res.notes = append(res.notes, learnedNotes(lg.meta, res.stAnswer)...)
	if b.cfg.Single {
		out := filepath.Join(b.work, "stacktune-workers1.json")
		st1, err := b.measure(ctx, "stacktune --workers 1", b.cfg.Runs, lg.path, lg.bytes, out, tl.stacktune, stacktuneArgs(lg.path, "--workers", "1")...)
		if err != nil {
			return nil, err
		}
		res.st = append(res.st, st1)
		one, err := readStacktune(out)
		if err != nil {
			return nil, err
		}
		res.mismatches = append(res.mismatches, compareStacktune(res.stAnswer, one, "--workers 1")...)
	}
	if lg.quarter.path != "" {
		out := filepath.Join(b.work, "stacktune-quarter.json")
		q, err := b.measure(ctx, "stacktune (first 1/4)", b.cfg.Runs, lg.quarter.path, lg.quarter.bytes, out, tl.stacktune, stacktuneArgs(lg.quarter.path)...)
		if err != nil {
			return nil, err
		}
		res.quarter = &q
		if res.quarterAns, err = readStacktune(out); err != nil {
			return nil, err
		}
		if res.quarterAns.requests != lg.quarter.requests {
			res.mismatches = append(res.mismatches, fmt.Sprintf("first quarter: %d lines, stacktune counted %d requests", lg.quarter.requests, res.quarterAns.requests))
		}
	}
	if tl.goaccess != "" {
		out := filepath.Join(b.work, "goaccess.json")
		ga, err := b.measure(ctx, "goaccess", b.cfg.runsOthers, lg.path, lg.bytes, filepath.Join(b.work, "goaccess.stdout"), tl.goaccess, goaccessArgs(lg.path, out)...)
		if err != nil {
			return nil, err
		}
		res.goaccess = &ga
		if res.gaAnswer, err = readGoaccess(out); err != nil {
			return nil, err
		}
		res.mismatches = append(res.mismatches, compareGoaccess(lg.meta, res.gaAnswer)...)
		res.notes = append(res.notes, goaccessTimeNote(res.expectedTime, res.gaAnswer)...)
	}
	if len(tl.awks) > 0 {
		prog := filepath.Join(b.work, "aggregate.awk")
		if err := os.WriteFile(prog, []byte(awkProgram), 0o644); err != nil {
			return nil, err
		}
		for _, a := range tl.awks {
			out := filepath.Join(b.work, a.name+".out")
			r, err := b.measure(ctx, a.name, b.cfg.runsOthers, lg.path, lg.bytes, out, a.path, "-f", prog, lg.path)
			if err != nil {
				return nil, err
			}
			res.awks = append(res.awks, r)
			ans, err := readAwk(out)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", a.name, err)
			}
			res.awkAnswers = append(res.awkAnswers, ans)
			res.mismatches = append(res.mismatches, compareAwk(a.name, lg.meta, res.stAnswer, ans)...)
		}
	}
	return res, nil
}

// measure warms the page cache and runs the command n times, stdout to
// out, and returns the samples and their median.
func (b bench) measure(ctx context.Context, name string, n int, log string, size int64, out, bin string, args ...string) (toolResult, error) {
	r := toolResult{name: name, inBytes: size}
	var err error
	r.runs, r.med, err = measure.Repeat(ctx, name, n, b.cfg.ToolTimeout, log, out, bin, args, func(i int, s measure.Sample) {
		fmt.Fprintf(b.stderr, "httpbench: %-24s run %d/%d: wall %6.2fs  cpu %6.2fs  rss %7.1f MiB  others %4.2f cores  disk read %6.1f MiB\n",
			name, i, n, s.Wall.Seconds(), s.CPU.Seconds(), float64(s.MaxRSSKiB)/1024, measure.Cores(s.Others, s.Wall), measure.MiB(s.DiskRead))
	})
	return r, err
}
