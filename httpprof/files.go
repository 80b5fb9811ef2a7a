package httpprof

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/input"
)

// Files are access logs as a person names them (paths; "-" is standard
// input) and how to read them: what `stacktune http`, `http diff` and
// `endpoints` profile.
type Files struct {
	// Stdin is what "-" reads.
	Stdin io.Reader
	// Parser reads the lines; nil detects the format from them.
	Parser accesslog.Parser
	// Workers are the parser goroutines (0: one per core).
	Workers int
	// NameTheFormat is added to a detection failure: how to name the
	// format (the caller's flags).
	NameTheFormat string
}

// Profile reads the logs of paths into a Report. A read that failed part
// way returns the Report of what was read, with the failure in its Notes,
// and the error.
func (f Files) Profile(ctx context.Context, paths []string, popt Options, ropt ReportOptions) (*Report, error) {
	inputs, closeAll, err := input.OpenAll(paths, f.Stdin)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	res, readErr := FromLogs(ctx, inputs, f.Parser, LogOptions{Workers: f.Workers, Profile: popt})
	if res == nil {
		var de *accesslog.DetectError
		if errors.As(readErr, &de) && f.NameTheFormat != "" {
			return nil, fmt.Errorf("%w; %s", readErr, f.NameTheFormat)
		}
		return nil, readErr
	}
	rep, err := res.Report(res.Parser, ropt)
	if err != nil {
		return nil, err
	}
	rep.Overall.Inputs = paths
	if readErr != nil {
		rep.Notes = append(rep.Notes, "incomplete: "+readErr.Error())
	}
	return rep, readErr
}

// DiffFiles compares a and b, each an access log or a profile saved as
// JSON (stacktune http --format json), grouped alike: B with A's learned
// groups, and A again with B's when B learned more and A is a log.
func (f Files) DiffFiles(ctx context.Context, a, b string, popt Options) (*DiffReport, error) {
	if a == "-" && b == "-" {
		return nil, errors.New(`standard input ("-") given twice`)
	}
	ra, err := SavedReport(a, f.Stdin)
	if err != nil {
		return nil, err
	}
	rb, err := SavedReport(b, f.Stdin)
	if err != nil {
		return nil, err
	}
	all := ReportOptions{}
	if ra == nil {
		if ra, err = f.Profile(ctx, []string{a}, popt, all); err != nil {
			return nil, err
		}
	}
	if rb == nil {
		// Group B as A was grouped, so rows match.
		pb := popt
		pb.Collapse = ra.LearnedPatterns()
		if rb, err = f.Profile(ctx, []string{b}, pb, all); err != nil {
			return nil, err
		}
		// If B learned groups A did not, and A is a log, profile A again
		// with them.
		if extra := newPatterns(ra.LearnedPatterns(), rb.LearnedPatterns()); len(extra) > 0 && a != "-" {
			if saved, _ := SavedReport(a, f.Stdin); saved == nil {
				pa := popt
				pa.Collapse = append(ra.LearnedPatterns(), extra...)
				if ra, err = f.Profile(ctx, []string{a}, pa, all); err != nil {
					return nil, err
				}
			}
		}
	}
	return Diff(ra, rb), nil
}

// SavedReport reads a profile saved with --format json, or returns nil
// when path is a log. A saved profile is one indented JSON document, so
// its first line is a lone "{"; a JSON-lines log's first line is a whole
// object.
func SavedReport(path string, stdin io.Reader) (*Report, error) {
	if path == "-" {
		return nil, nil
	}
	in, c, err := input.Open(path, stdin)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	br := bufio.NewReader(in.R)
	first, _ := br.Peek(2)
	if !bytes.Equal(bytes.TrimRight(first, "\r"), []byte("{\n")) && !bytes.Equal(first, []byte("{\r")) {
		return nil, nil
	}
	var r Report
	if err := json.NewDecoder(io.LimitReader(br, maxSavedReport)).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s looks like a saved profile but does not decode: %w", path, err)
	}
	return &r, nil
}

// maxSavedReport bounds a saved profile DiffFiles reads (one holds a
// bounded number of endpoints: a few MB at most).
const maxSavedReport = 64 << 20

func newPatterns(have, got []string) []string {
	seen := map[string]bool{}
	for _, p := range have {
		seen[p] = true
	}
	var out []string
	for _, p := range got {
		if !seen[p] {
			out = append(out, p)
		}
	}
	return out
}
