package digest

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/slowlog"
)

// Input is one slow log to read.
type Input struct {
	Name string // shown in reports; "-" for standard input
	R    io.Reader
}

// Open opens a slow-log path for reading: "-" is stdin, and gzip data is
// recognised by its magic bytes (whatever the file is called) and
// decompressed. The returned closer closes the file.
func Open(path string, stdin io.Reader) (Input, io.Closer, error) {
	var (
		r io.Reader
		c io.Closer = io.NopCloser(nil)
	)
	if path == "-" {
		r = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return Input{}, nil, fmt.Errorf("opening slow log: %w", err)
		}
		if st, err := f.Stat(); err == nil && st.IsDir() {
			f.Close()
			return Input{}, nil, fmt.Errorf("opening slow log %s: is a directory", path)
		}
		r, c = f, f
	}
	br := bufio.NewReaderSize(r, 1<<20)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			c.Close()
			return Input{}, nil, fmt.Errorf("reading gzip slow log %s: %w", path, err)
		}
		return Input{Name: path, R: zr}, c, nil
	}
	return Input{Name: path, R: br}, c, nil
}

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
func FromSlowLogs(ctx context.Context, inputs []Input, opt Options) (*Aggregator, *slowlog.Stats, error) {
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
