package appcpu

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MaxPerfLine is the longest line of perf script's output read; longer
// ones are skipped and counted.
const MaxPerfLine = 64 << 10

// PerfScriptStats says what ParsePerfScript read.
type PerfScriptStats struct {
	Samples int64
	// Frames counts the frames read; MapFrames those named from a perf
	// map (/tmp/perf-PID.map), InterpreterFrames those in an
	// interpreter's binary (php, python, ruby, perl, node), Unknown
	// those perf could not name.
	Frames, MapFrames, InterpreterFrames, Unknown int64
}

// ParsePerfScript reads the output of `perf script --ns -F
// comm,pid,tid,time,period,ip,sym,dso` into c: a header line per sample
// ("comm pid/tid secs.nanos: period"), then its frames, the leaf first
// ("\taddr sym (dso)"), then an empty line. clock turns perf's
// timestamps (nanoseconds of the clock it recorded with) into times
// (nil: no times). Lines it cannot read are skipped and counted in
// c.Skipped; it fails only on a read error.
func ParsePerfScript(r io.Reader, c *Capture, clock func(ns int64) time.Time) (PerfScriptStats, error) {
	var st PerfScriptStats
	br := bufio.NewReaderSize(r, 64<<10)
	var cur *Sample
	var leafFirst []int32
	flush := func() {
		if cur == nil {
			return
		}
		if len(leafFirst) == 0 {
			c.skip(ReasonNoStack, 1)
			cur = nil
			return
		}
		if len(leafFirst) > MaxDepth {
			leafFirst = leafFirst[:MaxDepth]
			c.skip(ReasonStackCut, 1)
		}
		stack := make([]int32, len(leafFirst))
		for i, f := range leafFirst {
			stack[len(leafFirst)-1-i] = f
		}
		cur.Stack = stack
		if c.Add(*cur) {
			st.Samples++
		}
		cur, leafFirst = nil, leafFirst[:0]
	}
	for {
		line, long, err := readLine(br)
		if long {
			c.skip(ReasonPerfLineTooLong, 1)
			if cur != nil && len(line) == 0 {
				continue
			}
		}
		if len(line) > 0 || err == nil {
			switch {
			case len(bytes.TrimSpace(line)) == 0:
				flush()
			case line[0] == ' ' || line[0] == '\t':
				if cur == nil {
					c.skip(ReasonFrameOutside, 1)
					break
				}
				name, kind, ok := parseFrame(line)
				if !ok {
					c.skip(ReasonFrameUnread, 1)
					break
				}
				st.Frames++
				switch kind {
				case frameMap:
					st.MapFrames++
				case frameInterp:
					st.InterpreterFrames++
				case frameUnknown:
					st.Unknown++
				}
				if len(leafFirst) <= MaxDepth {
					leafFirst = append(leafFirst, c.Frame(name))
				}
			default:
				flush()
				s, ok := parseHeader(line, clock)
				if !ok {
					c.skip(ReasonSampleUnread, 1)
					break
				}
				cur = &s
			}
		}
		if err != nil {
			flush()
			if errors.Is(err, io.EOF) {
				return st, nil
			}
			return st, fmt.Errorf("reading perf script: %w", err)
		}
	}
}

// readLine returns the next line without its end; long is true when it
// was longer than MaxPerfLine (then line is empty: the rest is dropped).
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = true
			continue
		}
		if long {
			return nil, true, err
		}
		if len(frag) > MaxPerfLine {
			return nil, true, err
		}
		return bytes.TrimRight(frag, "\r\n"), false, err
	}
}

// parseHeader reads "comm pid/tid secs.frac: [period] [event:]".
func parseHeader(line []byte, clock func(int64) time.Time) (Sample, bool) {
	f := strings.Fields(string(line))
	t := -1
	for i := len(f) - 1; i >= 1; i-- {
		if strings.HasSuffix(f[i], ":") && isTime(f[i][:len(f[i])-1]) {
			t = i
			break
		}
	}
	if t < 1 {
		return Sample{}, false
	}
	pid, _, ok := strings.Cut(f[t-1], "/")
	if !ok {
		pid = f[t-1]
	}
	p, err := strconv.Atoi(pid)
	if err != nil || p < 0 {
		return Sample{}, false
	}
	ns, ok := parseSecs(f[t][:len(f[t])-1])
	if !ok {
		return Sample{}, false
	}
	s := Sample{PID: p}
	if clock != nil {
		s.Time = clock(ns)
	}
	if t+1 < len(f) {
		if w, err := strconv.ParseInt(f[t+1], 10, 64); err == nil && w > 0 && w < int64(time.Minute) {
			s.Weight = time.Duration(w)
		}
	}
	return s, true
}

func isTime(s string) bool {
	_, ok := parseSecs(s)
	return ok
}

// parseSecs reads "123.456789012" as nanoseconds.
func parseSecs(s string) (int64, bool) {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || sec == "" || frac == "" || len(frac) > 9 || len(sec) > 10 {
		return 0, false
	}
	a, err := strconv.ParseUint(sec, 10, 64)
	if err != nil {
		return 0, false
	}
	b, err := strconv.ParseUint(frac, 10, 64)
	if err != nil {
		return 0, false
	}
	for i := len(frac); i < 9; i++ {
		b *= 10
	}
	return int64(a)*1e9 + int64(b), true
}

type frameKind int

const (
	frameNative frameKind = iota
	frameMap
	frameInterp
	frameUnknown
)

// parseFrame reads "addr sym (dso)" into a frame's name: the symbol, or
// "[dso]" when perf could not name it.
func parseFrame(line []byte) (string, frameKind, bool) {
	s := strings.TrimSpace(string(line))
	addr, rest, _ := strings.Cut(s, " ")
	if addr == "" {
		return "", 0, false
	}
	if _, err := strconv.ParseUint(addr, 16, 64); err != nil {
		return "", 0, false
	}
	rest = strings.TrimSpace(rest)
	sym, dso := rest, ""
	if strings.HasSuffix(rest, ")") {
		if i := strings.LastIndex(rest, " ("); i >= 0 {
			sym, dso = strings.TrimSpace(rest[:i]), rest[i+2:len(rest)-1]
		} else if strings.HasPrefix(rest, "(") {
			sym, dso = "", rest[1:len(rest)-1]
		}
	}
	base := filepath.Base(dso)
	kind := frameNative
	switch {
	case strings.HasPrefix(base, "perf-") && strings.HasSuffix(base, ".map"):
		kind = frameMap
	case isInterpreter(base):
		kind = frameInterp
	}
	if sym == "" || sym == "[unknown]" {
		switch {
		case dso == "" || dso == "[unknown]":
			return "[unknown]", frameUnknown, true
		case kind == frameMap:
			// perf names any anonymous executable memory after the
			// process's perf map, whether one exists or not (PHP's
			// PCRE JIT writes code there and no map): unnamed code,
			// one name for every process.
			return "[anonymous code]", frameUnknown, true
		case kind == frameNative:
			kind = frameUnknown
		}
		return "[" + base + "]", kind, true
	}
	return clean(sym), kind, true
}

// isInterpreter reports whether a binary's base name is an
// interpreter's (or its library's).
func isInterpreter(base string) bool {
	b := strings.TrimPrefix(base, "lib")
	for _, p := range []string{"php", "python", "ruby", "perl", "node"} {
		if strings.HasPrefix(b, p) {
			return true
		}
	}
	return false
}

// clean drops control bytes from a name (escaping is report's).
func clean(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// SymbolsOf says how frames read with st are named: a perf map's when
// some are, else the interpreter's when a tenth or more of the frames are
// in an interpreter's binary, else native.
func SymbolsOf(st PerfScriptStats) string {
	switch {
	case st.MapFrames > 0:
		return SymbolsPerfMap
	case st.Frames > 0 && st.InterpreterFrames*10 >= st.Frames:
		return SymbolsInterpreter
	}
	return SymbolsNative
}
