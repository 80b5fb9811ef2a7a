package slowlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultChunkBytes is the chunk size Split aims for.
const DefaultChunkBytes = 4 << 20

// DefaultMaxEventBytes bounds one event; a larger one (a multi-megabyte
// INSERT, or a file with no event boundaries at all) is skipped with
// ReasonEventTooLarge, so memory stays bounded whatever the input.
const DefaultMaxEventBytes = 64 << 20

// Chunk is a piece of an input that starts and ends on event boundaries.
type Chunk struct {
	// Data is the chunk's text. It belongs to the receiver until Release.
	Data []byte
	// Base is the offset of Data[0] in the input.
	Base int64
	// PrevTime is the last `# Time:` line before this chunk (nil if none);
	// pass it to Parser.SetTimeLine.
	PrevTime []byte
	// Seq numbers the chunks of one input from 0.
	Seq int

	buf *[]byte
}

// Release returns the chunk's buffer for reuse. Data must not be used after.
func (c *Chunk) Release() {
	if c.buf != nil {
		bufPool.Put(c.buf)
		c.buf, c.Data = nil, nil
	}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, DefaultChunkBytes+DefaultChunkBytes/4); return &b }}

// SplitOptions tunes Split; the zero value uses the defaults.
type SplitOptions struct {
	ChunkBytes    int
	MaxEventBytes int
}

// Split reads r to the end and calls emit, in order, with chunks that begin
// at an event boundary. It returns the number of events it had to skip
// because they were larger than MaxEventBytes. An error from emit stops it.
func Split(r io.Reader, opt SplitOptions, emit func(Chunk) error) (tooLarge int64, err error) {
	size := opt.ChunkBytes
	if size <= 0 {
		size = DefaultChunkBytes
	}
	maxEvent := opt.MaxEventBytes
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventBytes
	}
	if maxEvent < size {
		maxEvent = size
	}
	var (
		pending  []byte // carried over: the start of the next chunk
		prevTime []byte
		base     int64
		seq      int
		discard  bool // inside an oversized event: drop bytes up to the next boundary
		eof      bool
	)
	for !eof {
		bp := bufPool.Get().(*[]byte)
		buf := append((*bp)[:0], pending...)
		want := len(buf) + size
		if cap(buf) < want {
			nb := make([]byte, len(buf), want+want/4)
			copy(nb, buf)
			buf = nb
		}
		n, rerr := io.ReadFull(r, buf[len(buf):want])
		buf = buf[:len(buf)+n]
		switch {
		case rerr == io.EOF || errors.Is(rerr, io.ErrUnexpectedEOF):
			eof = true
		case rerr != nil:
			*bp = buf
			bufPool.Put(bp)
			return tooLarge, fmt.Errorf("reading slow log: %w", rerr)
		}
		*bp = buf
		if discard {
			i := firstBoundary(buf)
			if i < 0 {
				base += int64(len(buf))
				pending = pending[:0]
				bufPool.Put(bp)
				continue
			}
			discard = false
			base += int64(i)
			buf = buf[i:]
		}
		cut := len(buf)
		if !eof {
			cut = lastBoundary(buf)
			if cut <= 0 {
				if len(buf) >= maxEvent {
					// One event fills the limit: skip it.
					tooLarge++
					discard = true
					base += int64(len(buf))
					pending = pending[:0]
					bufPool.Put(bp)
					continue
				}
				// Keep reading into a bigger buffer.
				pending = append(pending[:0], buf...)
				bufPool.Put(bp)
				continue
			}
		}
		c := Chunk{Data: buf[:cut], Base: base, PrevTime: prevTime, Seq: seq, buf: bp}
		if t := lastTimeLine(buf[:cut]); t != nil {
			prevTime = append([]byte(nil), t...)
		}
		pending = append(pending[:0], buf[cut:]...)
		base += int64(cut)
		seq++
		if err := emit(c); err != nil {
			return tooLarge, err
		}
	}
	return tooLarge, nil
}

var (
	userHostLine = []byte("\n# User@Host:")
	timeLine     = []byte("\n# Time:")
)

// lastBoundary returns the offset of the last event start in b (the start of
// a `# Time:` or `# User@Host:` line, taking a `# Time:` line that directly
// precedes `# User@Host:` with it), or -1.
func lastBoundary(b []byte) int {
	u := bytes.LastIndex(b, userHostLine)
	// A Time line right before the User@Host line belongs to the same event.
	if u >= 0 {
		lo := bytes.LastIndexByte(b[:u], '\n')
		switch {
		case lo >= 0 && bytes.HasPrefix(b[lo:], timeLine):
			return lo + 1
		case lo < 0 && bytes.HasPrefix(b, timeLine[1:]):
			return 0 // the buffer's first event; no boundary after it
		}
		return u + 1
	}
	if t := bytes.LastIndex(b, timeLine); t >= 0 {
		return t + 1
	}
	return -1
}

// firstBoundary returns the offset of the first event start after offset 0.
func firstBoundary(b []byte) int {
	u := bytes.Index(b, userHostLine)
	t := bytes.Index(b, timeLine)
	switch {
	case u < 0 && t < 0:
		return -1
	case u < 0 || (t >= 0 && t < u):
		return t + 1
	default:
		return u + 1
	}
}

// lastTimeLine returns the last valid `# Time:` line of b, or nil, the same
// line a Parser reading b would be left with. It searches forward (bytes.Index
// is vectorised; LastIndex is not) and parses only the last candidate, unless
// that one is invalid.
func lastTimeLine(b []byte) []byte {
	var last []byte
	eachTimeLine(b, func(line []byte) { last = line })
	if last == nil || validTimeLine(last) {
		return last
	}
	last = nil
	eachTimeLine(b, func(line []byte) {
		if validTimeLine(line) {
			last = line
		}
	})
	return last
}

func validTimeLine(line []byte) bool {
	v, ok := headerValue(line, "Time:")
	if !ok {
		return false
	}
	_, ok = parseLogTime(v)
	return ok
}

func eachTimeLine(b []byte, fn func(line []byte)) {
	emit := func(start int) {
		end := bytes.IndexByte(b[start:], '\n')
		if end < 0 {
			fn(b[start:])
			return
		}
		fn(b[start : start+end])
	}
	if bytes.HasPrefix(b, timeLine[1:]) {
		emit(0)
	}
	for off := 0; ; {
		i := bytes.Index(b[off:], timeLine)
		if i < 0 {
			return
		}
		off += i + 1
		emit(off)
	}
}
