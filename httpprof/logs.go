package httpprof

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/input"
)

// MaxLineBytes is the longest line read; longer ones are skipped.
const MaxLineBytes = 1 << 20

// Skip reasons added by the reader (parsers add their own).
const (
	ReasonLineTooLong = "line longer than 1 MiB"
	// ReasonUnread is the line a read error cut off (the input's error
	// says where).
	ReasonUnread = "line cut off by a read error"
)

// lineBoundaries cut chunks at line ends.
var lineBoundaries = chunk.Boundaries{
	Last: func(b []byte) int { return bytes.LastIndexByte(b, '\n') + 1 },
	First: func(b []byte) int {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return i + 1
		}
		return -1
	},
}

// LogOptions configures FromLogs.
type LogOptions struct {
	Workers int // 0 means one per core
	Profile Options
	Split   chunk.Options
}

// Result is what FromLogs read: the merged profiler and the skip counts.
type Result struct {
	Profiler *Profiler
	Bytes    int64 // every byte read, parsed or dropped
	Skipped  map[string]int64
}

// FromLogs profiles every input with parser p, in parallel. A read error
// stops the run and is returned with the input's name, together with what
// was read before it: inputs from input.Open fail with an *input.ReadError
// when a gzip stream ends early, is corrupt or is followed by junk, or when
// a file is read short of its size.
func FromLogs(ctx context.Context, inputs []input.Input, p accesslog.Parser, opt LogOptions) (*Result, error) {
	workers := chunk.Workers(opt.Workers)
	type worker struct {
		parser  accesslog.Parser
		prof    *Profiler
		skipped map[string]int64
		bytes   int64
		rec     accesslog.Record
	}
	ws := make([]*worker, workers)
	for i := range ws {
		ws[i] = &worker{parser: p.Clone(), prof: NewProfiler(opt.Profile), skipped: map[string]int64{}}
	}
	var tooLarge, dropped, unread int64
	split := opt.Split
	if split.MaxRecord == 0 {
		split.MaxRecord = MaxLineBytes
	}
	err := chunk.Parallel(ctx, workers, func(send func(chunk.Job) error) error {
		for i, in := range inputs {
			cs, err := chunk.Split(in.R, split, lineBoundaries, func(c chunk.Chunk) error {
				return send(chunk.Job{Input: i, Chunk: c})
			})
			tooLarge += cs.TooLarge
			dropped += cs.TooLargeBytes + cs.JunkBytes + cs.UnreadBytes
			if cs.UnreadBytes > 0 {
				unread++
			}
			if err != nil {
				var re *input.ReadError
				if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &re) {
					return err
				}
				return fmt.Errorf("%s: %w", in.Name, err)
			}
		}
		return nil
	}, func(w int, j chunk.Job) {
		wk := ws[w]
		data := j.Chunk.Data
		wk.bytes += int64(len(data))
		chunk.Lines(data, func(off int, line []byte) {
			switch {
			case len(line) == 0:
			case len(line) > MaxLineBytes:
				wk.skipped[ReasonLineTooLong]++
			default:
				wk.rec = accesslog.Record{Offset: j.Chunk.Base + int64(off)}
				if ok, reason := wk.parser.Parse(line, &wk.rec); ok {
					wk.prof.Add(&wk.rec)
				} else {
					wk.skipped[reason]++
				}
			}
		})
		j.Chunk.Release()
	})
	res := &Result{Profiler: ws[0].prof, Bytes: dropped, Skipped: map[string]int64{}}
	if tooLarge > 0 {
		res.Skipped[ReasonLineTooLong] += tooLarge
	}
	if unread > 0 {
		res.Skipped[ReasonUnread] += unread
	}
	for i, wk := range ws {
		if i > 0 {
			res.Profiler.Merge(wk.prof)
		}
		res.Bytes += wk.bytes
		for k, v := range wk.skipped {
			res.Skipped[k] += v
		}
	}
	return res, err
}

// Report builds the report of a Result, with the skip counts and, when no
// request logged a time, the note saying how to log one.
func (res *Result) Report(p accesslog.Parser, opt ReportOptions) (*Report, error) {
	r, err := res.Profiler.Report(opt)
	if err != nil {
		return nil, err
	}
	r.Format = p.Format()
	r.Overall.Bytes = res.Bytes
	for k, v := range res.Skipped {
		r.Skipped.Reasons[k] = v
		r.Skipped.Count += v
	}
	if r.Overall.Requests > 0 && r.Overall.Timed == 0 {
		r.Notes = append(r.Notes, "this log has no request time, so the profile can only count requests. "+
			"To time them, log it:\n"+accesslog.NoRequestTimeHint(p.Format()))
	}
	return r, nil
}
