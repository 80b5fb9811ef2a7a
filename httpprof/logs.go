package httpprof

import (
	"context"
	"errors"
	"fmt"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/internal/skip"
)

// MaxLineBytes is the longest line read; longer ones are skipped.
const MaxLineBytes = 1 << 20

// Skip reasons added by the reader (parsers add their own).
var (
	ReasonLineTooLong = skip.Define("line_too_long", "line longer than 1 MiB")
	// ReasonUnread is the line a read error cut off (the input's error
	// says where).
	ReasonUnread = skip.Define("line_unread", "line cut off by a read error")
)

// LogOptions configures FromLogs.
type LogOptions struct {
	Workers int // 0 means one per core
	Profile Options
	Split   chunk.Options
}

// detectHold bounds what FromLogs holds while it samples the lines it
// detects the format from: the chunks read meanwhile that hold a line a
// parser must see (a chunk of nothing but empty lines and lines too long
// to read is counted at once and let go), since they are profiled once
// the parser is known. Past this many bytes it detects from the lines it
// has. It counts the chunks' buffers (about 5 MiB each, whatever their
// data), so small chunks (the ends of short inputs) cannot hold more.
const detectHold = 16 << 20

// Result is what FromLogs read: the merged profiler, the parser that read
// it (the one detected, when FromLogs was given none) and the skip counts.
type Result struct {
	Profiler *Profiler
	Parser   accesslog.Parser
	Bytes    int64 // every byte read, parsed or dropped
	Skipped  skip.Counts
}

// FromLogs profiles every input with parser p, in parallel. A nil p is
// detected from the first lines read (an accesslog.Sample of the lines no
// longer than MaxLineBytes, whatever comes before them; the chunks read
// meanwhile are held, at most about detectHold bytes, and profiled once
// it is known); a format that cannot be detected is an
// *accesslog.DetectError, with no Result. A read error stops the run and
// is returned with the input's name, together with what was read before
// it: inputs from input.Open fail with an *input.ReadError when a gzip
// stream ends early, is corrupt or is followed by junk, or when a file is
// read short of its size.
func FromLogs(ctx context.Context, inputs []input.Input, p accesslog.Parser, opt LogOptions) (*Result, error) {
	workers := chunk.Workers(opt.Workers)
	type worker struct {
		parser  accesslog.Parser
		prof    *Profiler
		skipped skip.Counts
		bytes   int64
		rec     accesslog.Record
	}
	ws := make([]*worker, workers)
	for i := range ws {
		ws[i] = &worker{prof: NewProfiler(opt.Profile), skipped: skip.Counts{}}
	}
	var tooLarge, dropped, unread int64
	split := opt.Split
	if split.MaxRecord == 0 {
		split.MaxRecord = MaxLineBytes
	}
	var (
		sample  = accesslog.Sample{MaxLine: MaxLineBytes}
		held    []chunk.Job
		heldLen int                         // bytes of the buffers held
		early   struct{ bytes, long int64 } // chunks read while detecting that no parser needs
	)
	// start gives the workers their parsers, then the chunks held.
	start := func(send func(chunk.Job) error) error {
		for _, w := range ws {
			w.parser = p.Clone()
		}
		for i, j := range held {
			if err := send(j); err != nil {
				for _, j := range held[i+1:] {
					j.Chunk.Release()
				}
				held = nil
				return err
			}
		}
		held = nil
		return nil
	}
	// detect picks the parser and starts the workers; a format it
	// cannot detect is detectErr (and FromLogs returns no Result), an
	// error from send (a cancelled run) is returned as it is.
	var detectErr error
	detect := func(send func(chunk.Job) error) error {
		var err error
		if p, err = sample.Detect(); err != nil {
			for _, j := range held {
				j.Chunk.Release()
			}
			if heldLen >= detectHold {
				err = fmt.Errorf("%w, in the first chunks read (detection holds at most %d MiB)", err, detectHold>>20)
			}
			held = nil
			detectErr = err
			return err
		}
		return start(send)
	}
	err := chunk.Parallel(ctx, workers, func(send func(chunk.Job) error) error {
		if p != nil {
			if err := start(send); err != nil {
				return err
			}
		}
		for i, in := range inputs {
			if p == nil {
				sample.Begin(in.Name)
			}
			var longSeen int64 // long lines the sample was told of
			cs, err := chunk.Split(chunk.WithContext(ctx, in.R), split, chunk.LineBoundaries, func(c chunk.Chunk) error {
				j := chunk.Job{Input: i, Chunk: c}
				if p != nil {
					return send(j)
				}
				sample.SkipLong(c.TooLargeBefore)
				longSeen += c.TooLargeBefore
				parsed, long := false, int64(0) // lines a parser must see; too long ones
				chunk.Lines(c.Data, func(_ int, line []byte) {
					switch {
					case len(line) > MaxLineBytes:
						long++
					case len(line) > 0:
						parsed = true
					}
					sample.Add(line)
				})
				if parsed {
					held, heldLen = append(held, j), heldLen+cap(c.Data) // the buffer held, not just its data
				} else {
					// Only empty and too long lines: counted here
					// as a worker would, not held.
					early.bytes += int64(len(c.Data))
					early.long += long
					c.Release()
				}
				if !sample.Full() && heldLen < detectHold {
					return nil
				}
				return detect(send)
			})
			tooLarge += cs.TooLarge
			dropped += cs.TooLargeBytes + cs.JunkBytes + cs.UnreadBytes
			if cs.UnreadBytes > 0 {
				unread++
			}
			if p == nil {
				// The long lines after the input's last chunk.
				sample.SkipLong(cs.TooLarge - longSeen)
			}
			if err != nil && detectErr == nil && p == nil {
				// Profile what was read before the error.
				if derr := detect(send); derr != nil {
					return errors.Join(derr, err)
				}
			}
			if err != nil {
				var re *input.ReadError
				if detectErr != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &re) {
					return err
				}
				return fmt.Errorf("%s: %w", in.Name, err)
			}
		}
		if p == nil {
			return detect(send)
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
				wk.skipped.Add(ReasonLineTooLong, 1)
			default:
				wk.rec = accesslog.Record{Offset: j.Chunk.Base + int64(off)}
				if ok, reason := wk.parser.Parse(line, &wk.rec); ok {
					wk.prof.Add(&wk.rec)
				} else {
					wk.skipped.Add(reason, 1)
				}
			}
		})
		j.Chunk.Release()
	})
	for _, j := range held { // a cancelled run
		j.Chunk.Release()
	}
	if detectErr != nil {
		return nil, err
	}
	res := &Result{Profiler: ws[0].prof, Parser: p, Bytes: dropped + early.bytes, Skipped: skip.Counts{}}
	res.Skipped.Add(ReasonLineTooLong, tooLarge+early.long)
	res.Skipped.Add(ReasonUnread, unread)
	for i, wk := range ws {
		if i > 0 {
			res.Profiler.Merge(wk.prof)
		}
		res.Bytes += wk.bytes
		res.Skipped.Merge(wk.skipped)
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
	r.Skipped.Reasons.Merge(res.Skipped)
	r.Skipped.Count += res.Skipped.Total()
	if r.Overall.Requests > 0 && r.Overall.Timed == 0 {
		r.Notes = append(r.Notes, "this log has no request time, so the profile can only count requests. "+
			"To time them, log it:\n"+accesslog.NoRequestTimeHint(p.Format()))
	}
	return r, nil
}
