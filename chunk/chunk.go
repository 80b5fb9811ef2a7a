package chunk

import (
	"bytes"
	"context"
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
	// JunkAfter is true when the input goes on after Data with a junk line
	// (Boundaries.Junk) that Split dropped, with everything after it up to
	// the next record start: the parser must end its last record as junk.
	// Data may then be empty.
	JunkAfter bool
	// TooLargeBefore counts the records skipped as longer than
	// Options.MaxRecord between the previous chunk of the input (or its
	// start) and this one, for a reader that numbers records as it goes.
	TooLargeBefore int64

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
// -1. A record starts at the start of a line, and First must know it from
// the line end before it and at most the line's first 1 KiB.
//
// Junk, if set, returns the offset of the start of the first junk line (a
// line that makes the rest of its record worthless to the parser) among
// the lines that hold or follow offset from, or -1. Split asks it only about a
// record that has grown past Options.Size without a boundary; it then hands
// the parser the data before that line (Chunk.JunkAfter) and drops the rest
// up to the next record start, so a run of binary junk never fills memory.
type Boundaries struct {
	Last, First func(b []byte) int
	Junk        func(b []byte, from int) int
}

// LineBoundaries make every line a record: access logs'.
var LineBoundaries = Boundaries{
	Last: func(b []byte) int { return bytes.LastIndexByte(b, '\n') + 1 },
	First: func(b []byte) int {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return i + 1
		}
		return -1
	},
}

// Stats is what Split read and what it dropped. Bytes is every byte read
// from the reader; it equals the bytes of the chunks emitted plus
// TooLargeBytes, JunkBytes and UnreadBytes.
type Stats struct {
	Bytes         int64
	TooLarge      int64 // records longer than Options.MaxRecord, skipped (a run with no boundary at all counts as one)
	TooLargeBytes int64
	JunkBytes     int64 // dropped after a junk line (Chunk.JunkAfter), up to the next record start
	// UnreadBytes is the incomplete record at a read error: read but
	// never emitted, because its end is unknown.
	UnreadBytes int64
}

// WithContext returns r failing with ctx's error once ctx is done. A
// splitter that drops what it reads (a run of binary junk, a record too
// long to keep) emits nothing for a long time, so a consumer's check of
// ctx never runs: the reads must stop themselves.
func WithContext(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Split reads r to the end and calls emit, in order, with chunks that begin
// and end at record boundaries. Records longer than MaxRecord are skipped
// and counted, and so is junk the boundaries recognise (Boundaries.Junk).
// Only io.EOF ends the input: any other error from r (io.ErrUnexpectedEOF
// from a gzip stream cut short included) is returned, after the complete
// records read before it have been emitted (the incomplete one is counted
// in Stats.UnreadBytes). An error from emit stops it and is returned.
//
// Memory: one buffer of about Size bytes is filled at a time; a record
// with no boundary grows it, four times at a step, up to MaxRecord + Size,
// and it goes back to the usual size once the record is emitted or
// dropped. A growing record is searched for boundaries and junk only in
// what each read adds.
func Split(r io.Reader, opt Options, bd Boundaries, emit func(Chunk) error) (Stats, error) {
	size := opt.Size
	if size <= 0 {
		size = DefaultSize
	}
	maxRecord := opt.MaxRecord
	if maxRecord <= 0 {
		maxRecord = DefaultMaxRecord
	}
	maxRecord = max(maxRecord, size)
	const (
		keep = iota
		tooLarge
		junk
		unread
	)
	var (
		st      Stats
		bp      = getBuf()
		buf     = (*bp)[:0] // from the start of the record being read
		base    int64       // input offset of buf[0]
		seq     int
		skipped int64  // records skipped as too large since the last chunk
		discard = keep // tooLarge or junk: dropping bytes up to the next record start
		scanned int    // bytes of buf bd.Junk has seen
		noStart int    // bytes of buf known to hold no record start after offset 0
		readErr error  // the input ended with this error
		eof     bool   // the input ended (io.EOF or readErr)
	)
	defer func() {
		if bp != nil {
			*bp = buf[:0]
			putBuf(bp)
		}
	}()
	// drop removes buf[:n] (why says how it is counted), keeping the rest
	// in a buffer of the usual size when that is enough again.
	drop := func(n int, why int) {
		switch why {
		case tooLarge:
			st.TooLargeBytes += int64(n)
		case junk:
			st.JunkBytes += int64(n)
		case unread:
			st.UnreadBytes += int64(n)
		}
		base += int64(n)
		noStart = 0
		rest := buf[n:]
		if cap(buf) > 2*DefaultSize && len(rest) <= DefaultSize {
			nbp := getBuf()
			*nbp = append((*nbp)[:0], rest...)
			bp, buf = nbp, *nbp // the grown buffer is left to the collector
		} else {
			buf = buf[:copy(buf, rest)]
		}
		scanned = 0
	}
	// send emits buf[:n]; the rest moves to a fresh buffer, taken only
	// once emit has returned (it may wait for a worker), so no more
	// buffers are in use than chunks in flight plus this one.
	var pending []byte
	send := func(n int, junkAfter bool) error {
		c := Chunk{Data: buf[:n], Base: base, Seq: seq, JunkAfter: junkAfter, TooLargeBefore: skipped, buf: bp}
		skipped = 0
		*bp = buf
		pending = append(pending[:0], buf[n:]...)
		bp, buf = nil, nil
		base += int64(n)
		seq++
		scanned, noStart = 0, 0
		err := emit(c)
		bp = getBuf()
		*bp = append((*bp)[:0], pending...)
		buf = *bp
		if cap(pending) > DefaultSize {
			pending = nil // grown for one long record
		}
		return err
	}
	for {
		if discard != keep {
			if i := bd.First(buf); i >= 0 {
				drop(i, discard)
				discard = keep
			} else if eof {
				drop(len(buf), discard)
				break
			} else {
				drop(len(buf)-tail(buf), discard)
			}
		}
		if discard == keep {
			if eof {
				if readErr == nil {
					if len(buf) > 0 {
						if err := send(len(buf), false); err != nil {
							return st, err
						}
					}
					break
				}
				// The complete records, then the incomplete one is left.
				if cut := bd.Last(buf); cut > 0 {
					if err := send(cut, false); err != nil {
						return st, err
					}
				}
				drop(len(buf), unread)
				break
			}
			cut, j := 0, -1
			if mayStart(bd, buf, noStart) {
				cut = bd.Last(buf)
			}
			if cut <= 0 {
				j = junkAt(bd, buf, scanned)
			}
			switch {
			case cut > 0:
				if err := send(cut, false); err != nil {
					return st, err
				}
			case j >= 0:
				if err := send(j, true); err != nil {
					return st, err
				}
				discard = junk
				continue // the rest of buf may hold the next record start
			case len(buf) >= maxRecord:
				st.TooLarge++
				skipped++
				discard = tooLarge
				drop(len(buf)-tail(buf), tooLarge)
			default:
				noStart, scanned = len(buf), len(buf)
			}
		}
		// Read up to size more bytes, growing buf for a long record.
		want := len(buf) + size
		if cap(buf) < want {
			nb := make([]byte, len(buf), max(want, min(4*cap(buf), maxRecord+size)))
			copy(nb, buf)
			*bp = buf[:0]
			putBuf(bp)
			bp, buf = &nb, nb
		}
		n, err := readFull(r, buf[len(buf):want])
		buf = buf[:len(buf)+n]
		st.Bytes += int64(n)
		switch {
		case err == io.EOF:
			eof = true
		case err != nil:
			eof, readErr = true, err
		}
	}
	return st, readErr
}

// maxStartLen is how much of a line First may need to see to know a record
// starts there.
const maxStartLen = 1 << 10

// tail is how many bytes at the end of b to keep while dropping, for a
// record start not yet read in full: from the last line end, when what
// follows it is short enough to be the beginning of a record start.
func tail(b []byte) int {
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 || len(b)-i > maxStartLen {
		return 0
	}
	return len(b) - i
}

// mayStart reports whether buf may hold a record start after offset 0,
// given that buf[:known] holds none: only the lines from the last line end
// of buf[:known] on are searched, so a record growing over many reads is
// not searched again from its start each time.
func mayStart(bd Boundaries, buf []byte, known int) bool {
	if known <= 0 {
		return true
	}
	p := bytes.LastIndexByte(buf[:known], '\n')
	if p < 0 {
		p = known // no line end: no line start after 0 in buf[:known]
	}
	return bd.First(buf[p:]) >= 0
}

func junkAt(bd Boundaries, buf []byte, from int) int {
	if bd.Junk == nil || from >= len(buf) {
		return -1
	}
	return bd.Junk(buf, from)
}

// readFull reads into b until it is full or r fails; io.EOF is returned
// only when the input ends.
func readFull(r io.Reader, b []byte) (int, error) {
	n, idle := 0, 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
		if m > 0 {
			idle = 0
		} else if idle++; idle >= 100 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
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
// 2×workers jobs is full, and fails once ctx is done. A chunk larger than
// twice DefaultSize (one long record) waits until no other such chunk is in
// flight, so memory holds at most one of them besides the one being read.
// consume must Release the chunk. Parallel returns produce's error after
// every job sent has been consumed.
func Parallel(ctx context.Context, n int, produce func(send func(Job) error) error, consume func(worker int, j Job)) error {
	workers := Workers(n)
	jobs := make(chan Job, workers*2)
	large := make(chan struct{}, 1) // a token per large chunk in flight
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for j := range jobs {
				big := isLarge(j)
				consume(w, j)
				if big {
					<-large
				}
			}
		}(w)
	}
	err := produce(func(j Job) error {
		if isLarge(j) {
			select {
			case large <- struct{}{}:
			case <-ctx.Done():
				j.Chunk.Release()
				return ctx.Err()
			}
		}
		select {
		case jobs <- j:
			return nil
		case <-ctx.Done():
			if isLarge(j) {
				<-large
			}
			j.Chunk.Release()
			return ctx.Err()
		}
	})
	close(jobs)
	wg.Wait()
	return err
}

func isLarge(j Job) bool { return len(j.Chunk.Data) > 2*DefaultSize }

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
