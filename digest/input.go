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
// returned stats count events and skipped input; the aggregator holds the
// classes. A read error (including a corrupt gzip stream) stops the run and
// is returned with the input's name, together with what was read before it.
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
			tooLarge, err := slowlog.Split(in.R, opt.Split, func(c slowlog.Chunk) error {
				return send(chunk.Job{Input: i, Chunk: c.Chunk, Extra: c.PrevTime})
			})
			if tooLarge > 0 {
				stats.Merge(&slowlog.Stats{Skipped: map[string]int64{slowlog.ReasonEventTooLarge: tooLarge}})
			}
			if err != nil {
				if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
					return err
				}
				return fmt.Errorf("%s: %w", in.Name, err)
			}
		}
		return nil
	}, func(w int, j chunk.Job) {
		parsers[w].ParseChunk(j.Chunk.Data, j.Chunk.Base, j.Extra, func(ev *slowlog.Event) { aggs[w].Add(ev, j.Input) })
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

// FillSkipped copies parser statistics into the report.
func (r *Report) FillSkipped(st *slowlog.Stats) {
	r.Overall.Bytes = st.Bytes
	r.Skipped.Count = st.SkippedTotal()
	for k, v := range st.Skipped {
		r.Skipped.Reasons[k] = v
	}
	r.Skipped.UnknownFields = st.UnknownFields
	r.Skipped.BadValues = st.BadValues
}
