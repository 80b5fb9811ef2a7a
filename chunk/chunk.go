package chunk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// Defaults for Options.
const (
	DefaultSize      = 4 << 20
	DefaultMaxRecord = 64 << 20
)

// Options tunes Split; the zero value uses the defaults.
type Options struct {
	Size      int // target chunk size
	MaxRecord int // longest record kept; larger ones are skipped
}

// Chunk is a piece of an input that starts and ends on record boundaries.
type Chunk struct {
	// Data is the chunk's text. It belongs to the receiver until Release.
	Data []byte
	// Base is the offset of Data[0] in the input.
	Base int64
	// Seq numbers the chunks of one input from 0.
	Seq int

	buf *[]byte
}

// Release returns the chunk's buffer for reuse; Data must not be used after.
func (c *Chunk) Release() {
	if c.buf != nil {
		putBuf(c.buf)
		c.buf, c.Data = nil, nil
	}
}

// free is a bounded free list of chunk buffers. Unlike a sync.Pool, which
// drops its contents at every garbage collection, it keeps the few buffers
// in flight alive, so reading a large file allocates them once and memory
// does not grow with the file.
var free = make(chan *[]byte, 32)

func getBuf() *[]byte {
	select {
	case b := <-free:
		return b
	default:
		b := make([]byte, 0, DefaultSize+DefaultSize/4)
		return &b
	}
}

func putBuf(b *[]byte) {
	if cap(*b) > 2*DefaultSize {
		return // grown for one huge record: let it go
	}
	select {
	case free <- b:
	default:
	}
}

// Boundaries tells Split where records start. Last returns the offset of the
// last record start in b that is greater than 0, or a value <= 0 if there is
// none; First returns the offset of the first record start after offset 0, or
// -1.
type Boundaries struct {
	Last, First func(b []byte) int
}

// Split reads r to the end and calls emit, in order, with chunks that begin
// and end at record boundaries. It returns how many records it skipped for
// being longer than MaxRecord (a run of input with no boundary at all counts
// as one). An error from emit stops it and is returned.
func Split(r io.Reader, opt Options, bd Boundaries, emit func(Chunk) error) (tooLarge int64, err error) {
	size := opt.Size
	if size <= 0 {
		size = DefaultSize
	}
	maxRecord := opt.MaxRecord
	if maxRecord <= 0 {
		maxRecord = DefaultMaxRecord
	}
	maxRecord = max(maxRecord, size)
	var (
		pending []byte // carried over: the start of the next chunk
		base    int64
		seq     int
		discard bool // inside an oversized record: drop bytes up to the next boundary
		eof     bool
	)
	for !eof {
		bp := getBuf()
		buf := append((*bp)[:0], pending...)
		want := len(buf) + size
		if cap(buf) < want {
			nb := make([]byte, len(buf), want+want/4)
			copy(nb, buf)
			buf = nb
		}
		n, rerr := io.ReadFull(r, buf[len(buf):want])
		buf = buf[:len(buf)+n]
		*bp = buf
		switch {
		case rerr == io.EOF || errors.Is(rerr, io.ErrUnexpectedEOF):
			eof = true
		case rerr != nil:
			putBuf(bp)
			return tooLarge, fmt.Errorf("reading: %w", rerr)
		}
		if discard {
			i := bd.First(buf)
			if i < 0 {
				base += int64(len(buf))
				pending = pending[:0]
				putBuf(bp)
				continue
			}
			discard = false
			base += int64(i)
			buf = buf[i:]
		}
		cut := len(buf)
		if !eof {
			cut = bd.Last(buf)
			if cut <= 0 {
				if len(buf) >= maxRecord {
					tooLarge++
					discard = true
					base += int64(len(buf))
					pending = pending[:0]
					putBuf(bp)
					continue
				}
				// Keep reading into a bigger buffer.
				pending = append(pending[:0], buf...)
				putBuf(bp)
				continue
			}
		}
		c := Chunk{Data: buf[:cut], Base: base, Seq: seq, buf: bp}
		pending = append(pending[:0], buf[cut:]...)
		base += int64(cut)
		seq++
		if err := emit(c); err != nil {
			return tooLarge, err
		}
	}
	return tooLarge, nil
}

// Job is one chunk of input number Input. Extra carries what the splitter
// adds for the parser (a slow log's previous Time line).
type Job struct {
	Input int
	Chunk Chunk
	Extra []byte
}

// Workers resolves a worker count: n, or one per core when n <= 0.
func Workers(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// Parallel runs produce on the calling goroutine and consume on Workers(n)
// goroutines; worker is the worker's index, so each can own its state
// (allocate it for Workers(n) before calling). produce calls send for every
// job, in order; send blocks while the workers are busy and the queue of
// 2×workers jobs is full, and fails once ctx is done. consume must Release
// the chunk. Parallel returns produce's error after every job sent has been
// consumed.
func Parallel(ctx context.Context, n int, produce func(send func(Job) error) error, consume func(worker int, j Job)) error {
	workers := Workers(n)
	jobs := make(chan Job, workers*2)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for j := range jobs {
				consume(w, j)
			}
		}(w)
	}
	err := produce(func(j Job) error {
		select {
		case jobs <- j:
			return nil
		case <-ctx.Done():
			j.Chunk.Release()
			return ctx.Err()
		}
	})
	close(jobs)
	wg.Wait()
	return err
}

// Lines calls fn for every line of data, in order, with the line's offset
// in data and its text without the line end ("\n" or "\r\n"). A last line
// without a line end is included; an empty data gives no call.
func Lines(data []byte, fn func(off int, line []byte)) {
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end < 0 {
			end = len(data)
		} else {
			end += off
			next = end + 1
		}
		line := data[off:end]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		fn(off, line)
		off = next
	}
}
