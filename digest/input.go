package digest

import (
	"context"
	"errors"
	"fmt"

	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/slowlog"
)

// Options configures FromSlowLogs. The zero value uses every core and keeps
// all events.
type Options struct {
	Workers int // 0 means one per core
	Filter  Filter
	Split   chunk.Options
}

// FromSlowLogs reads every input and aggregates its events, in parallel. The
// returned stats count events, skipped input and every byte read; the
// aggregator holds the classes. A read error stops the run and is returned
// with the input's name, together with what was read before it: inputs from
// input.Open fail with an *input.ReadError when a gzip stream ends early,
// is corrupt or is followed by junk, or when a file is read short of its
// size.
func FromSlowLogs(ctx context.Context, inputs []input.Input, opt Options) (*Aggregator, *slowlog.Stats, error) {
	workers := chunk.Workers(opt.Workers)
	aggs := make([]*Aggregator, workers)
	parsers := make([]*slowlog.Parser, workers)
	for w := range aggs {
		aggs[w] = NewAggregator(opt.Filter)
		parsers[w] = &slowlog.Parser{}
	}
	stats := &slowlog.Stats{}
	err := chunk.Parallel(ctx, workers, func(send func(chunk.Job) error) error {
		for i, in := range inputs {
			cs, err := slowlog.Split(chunk.WithContext(ctx, in.R), opt.Split, func(c slowlog.Chunk) error {
				return send(chunk.Job{Input: i, Chunk: c.Chunk, Extra: c.PrevTime})
			})
			stats.AddSplit(cs)
			if err != nil {
				return inputError(in, err)
			}
		}
		return nil
	}, func(w int, j chunk.Job) {
		parsers[w].ParseJob(j, func(ev *slowlog.Event) { aggs[w].Add(ev, j.Input) })
		j.Chunk.Release()
	})
	total := aggs[0]
	for w := range aggs {
		stats.Merge(&parsers[w].Stats)
		if w > 0 {
			total.Merge(aggs[w])
		}
	}
	return total, stats, err
}

// inputError names the input in a read error (an *input.ReadError names
// it already); cancellation is returned as it is.
func inputError(in input.Input, err error) error {
	var re *input.ReadError
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &re) {
		return err
	}
	return fmt.Errorf("%s: %w", in.Name, err)
}

// ReportOf digests slow-log inputs into a finished report: the classes,
// the skips by reason and the inputs' names. When an input cannot be read
// to its end, the report of what was read comes back, marked incomplete
// in its notes, with the error.
func ReportOf(ctx context.Context, inputs []input.Input, names []string, opt Options, ropt ReportOptions) (*Report, error) {
	agg, stats, readErr := FromSlowLogs(ctx, inputs, opt)
	rep, err := agg.Report(ropt)
	if err != nil {
		return nil, err
	}
	rep.FillSkipped(stats)
	rep.Overall.Inputs = names
	if readErr != nil {
		rep.Notes = append(rep.Notes, "incomplete: "+readErr.Error())
		return rep, readErr
	}
	return rep, nil
}

// FillSkipped copies parser statistics into the report.
func (r *Report) FillSkipped(st *slowlog.Stats) {
	r.Overall.Bytes = st.Bytes
	r.Skipped.Count = st.SkippedTotal()
	r.Skipped.Reasons.Merge(st.Skipped)
	r.Skipped.UnknownFields = st.UnknownFields
	r.Skipped.BadValues = st.BadValues
}
