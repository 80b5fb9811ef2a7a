package slowlog

import (
	"bytes"
	"io"

	"github.com/stacktune/stacktune/chunk"
)

// Chunk is a piece of a slow log that starts and ends on event boundaries.
type Chunk struct {
	chunk.Chunk
	// PrevTime is the last valid `# Time:` line before this chunk (nil if
	// none); pass it to Parser.ParseChunk.
	PrevTime []byte
}

// Boundaries are where slow-log events start: a `# Time:` line, or a
// `# User@Host:` line that does not directly follow one. A line with a NUL
// byte is junk: the parser skips it and everything after it up to the next
// event start (see Parser), so Split need not hold a run of binary junk.
var Boundaries = chunk.Boundaries{Last: lastBoundary, First: firstBoundary, Junk: junkLine}

// Split reads r to the end and calls emit, in order, with chunks that begin
// at an event boundary, each carrying the last `# Time:` line before it.
// Pass each chunk to Parser.ParseSplit. The stats count the bytes read and
// dropped; Stats.TooLarge is the number of events skipped for being larger
// than opt.MaxRecord (ReasonEventTooLarge). An error from emit or from r
// stops it (see chunk.Split).
func Split(r io.Reader, opt chunk.Options, emit func(Chunk) error) (chunk.Stats, error) {
	var prevTime []byte
	return chunk.Split(r, opt, Boundaries, func(c chunk.Chunk) error {
		sc := Chunk{Chunk: c, PrevTime: prevTime}
		if t := lastTimeLine(c.Data); t != nil {
			prevTime = append([]byte(nil), t...)
		}
		return emit(sc)
	})
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

// junkLine returns the start of the first line with a NUL byte at or after
// from, or -1.
func junkLine(b []byte, from int) int {
	k := bytes.IndexByte(b[from:], 0)
	if k < 0 {
		return -1
	}
	return bytes.LastIndexByte(b[:from+k], '\n') + 1
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
