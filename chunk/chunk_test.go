package chunk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// lines cuts at line ends: the record boundaries of access logs.
var lines = Boundaries{
	Last: func(b []byte) int { return bytes.LastIndexByte(b, '\n') + 1 },
	First: func(b []byte) int {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return i + 1
		}
		return -1
	},
}

func TestSplitLines(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 1000; i++ {
		in.WriteString(strings.Repeat("x", i%37) + "\n")
	}
	in.WriteString("last line without newline")
	for _, size := range []int{1, 7, 100, 4096, 1 << 20} {
		var got bytes.Buffer
		var base int64
		_, err := Split(strings.NewReader(in.String()), Options{Size: size}, lines, func(c Chunk) error {
			defer c.Release()
			if c.Base != base {
				t.Fatalf("size %d: chunk %d at %d, want %d", size, c.Seq, c.Base, base)
			}
			base += int64(len(c.Data))
			if n := len(c.Data); n > 0 && c.Data[n-1] != '\n' && base != int64(in.Len()) {
				t.Fatalf("size %d: chunk %d does not end at a line end", size, c.Seq)
			}
			got.Write(c.Data)
			return nil
		})
		if err != nil || got.String() != in.String() {
			t.Fatalf("size %d: err %v, %d bytes back of %d", size, err, got.Len(), in.Len())
		}
	}
}

func TestSplitOversizedRecord(t *testing.T) {
	in := "a\n" + strings.Repeat("y", 5000) + "\nb\n"
	var got []string
	st, err := Split(strings.NewReader(in), Options{Size: 64, MaxRecord: 1024}, lines, func(c Chunk) error {
		got = append(got, string(c.Data))
		c.Release()
		return nil
	})
	if err != nil || st.TooLarge != 1 || strings.Join(got, "") != "a\nb\n" || st.Bytes != int64(len(in)) || st.TooLargeBytes != 5001 {
		t.Fatalf("stats %+v err %v chunks %q", st, err, got)
	}
}

// TestSplitTooLargeBefore: each chunk says how many records were skipped
// as too large since the chunk before it, so a reader numbering lines
// (the access-log format detector) counts the skipped ones where they
// were; those after the last chunk are in the Stats only.
func TestSplitTooLargeBefore(t *testing.T) {
	long := strings.Repeat("y", 5000) + "\n"
	cases := []struct {
		name string
		in   string
		want []string // each chunk as "skipped before:data"
	}{
		{"first line", long + "a\n", []string{"1:a\n"}},
		{"two together", "a\n" + long + long + "b\n", []string{"0:a\n", "2:b\n"}},
		{"apart", long + "a\n" + long + "b\n" + long, []string{"1:a\n", "1:b\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			var sum int64
			st, err := Split(strings.NewReader(tc.in), Options{Size: 64, MaxRecord: 1024}, lines, func(c Chunk) error {
				got = append(got, fmt.Sprintf("%d:%s", c.TooLargeBefore, c.Data))
				sum += c.TooLargeBefore
				c.Release()
				return nil
			})
			if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("err %v, chunks %q, want %q", err, got, tc.want)
			}
			if st.TooLarge != int64(strings.Count(tc.in, long)) {
				t.Errorf("stats %+v, %d before chunks", st, sum)
			}
		})
	}
}

func TestParallel(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]bool{}
	err := Parallel(context.Background(), 3, func(send func(Job) error) error {
		for i := 0; i < 100; i++ {
			if err := send(Job{Input: i}); err != nil {
				return err
			}
		}
		return nil
	}, func(w int, j Job) {
		if w < 0 || w >= 3 {
			t.Errorf("worker %d", w)
		}
		mu.Lock()
		seen[j.Input] = true
		mu.Unlock()
	})
	if err != nil || len(seen) != 100 {
		t.Fatalf("err %v, %d jobs consumed", err, len(seen))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = Parallel(ctx, 1, func(send func(Job) error) error {
		for i := 0; i < 100; i++ {
			if err := send(Job{}); err != nil {
				return err
			}
		}
		return nil
	}, func(int, Job) {})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run returned %v", err)
	}
}

func TestLines(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"a\nb\n", "0:a|2:b|"},
		{"a\r\nb", "0:a|3:b|"},
		{"\n\nc", "0:|1:|2:c|"},
	}
	for _, tc := range cases {
		var b strings.Builder
		Lines([]byte(tc.in), func(off int, line []byte) { fmt.Fprintf(&b, "%d:%s|", off, line) })
		if b.String() != tc.want {
			t.Errorf("Lines(%q) = %q, want %q", tc.in, b.String(), tc.want)
		}
	}
}

// failingReader returns data, then err instead of io.EOF.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// nulJunk marks a line holding a NUL byte as junk, as slow logs do.
var nulJunk = Boundaries{Last: lines.Last, First: lines.First, Junk: func(b []byte, from int) int {
	k := bytes.IndexByte(b[from:], 0)
	if k < 0 {
		return -1
	}
	return bytes.LastIndexByte(b[:from+k], '\n') + 1
}}

// para cuts at blank lines: records of several lines, as slow-log events
// are, so a record can be longer than a chunk.
var para = Boundaries{
	Last: func(b []byte) int {
		if i := bytes.LastIndex(b, []byte("\n\n")); i >= 0 {
			return i + 2
		}
		return -1
	},
	First: func(b []byte) int {
		if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
			return i + 2
		}
		return -1
	},
}

// TestSplitAccounting checks, case by case, that every byte read is
// emitted or counted as dropped, and that only io.EOF ends an input: a
// read error (a gzip stream cut short returns io.ErrUnexpectedEOF) comes
// back after the complete records before it.
func TestSplitAccounting(t *testing.T) {
	errBoom := errors.New("boom")
	paraJunk := para
	paraJunk.Junk = nulJunk.Junk
	cases := []struct {
		name      string
		in        string
		err       error // what the reader returns at the end instead of io.EOF
		bd        Boundaries
		opt       Options
		want      string // the chunks' data, "|" between chunks, "!" after a JunkAfter chunk
		wantErr   error
		tooLarge  int64
		junkBytes int64
		unread    int64
	}{
		{name: "plain end", in: "a\nb\nc", bd: lines, opt: Options{Size: 4}, want: "a\nb\n|c"},
		{name: "unexpected EOF is an error, not an end", in: "a\nb\ncut", err: io.ErrUnexpectedEOF, bd: lines, opt: Options{Size: 4},
			want: "a\nb\n", wantErr: io.ErrUnexpectedEOF, unread: 3},
		{name: "other read error", in: "a\nb\n", err: errBoom, bd: lines, opt: Options{Size: 64}, want: "a\nb\n", wantErr: errBoom},
		{name: "record too large, boundary right after the dropped bytes", in: "a\n" + strings.Repeat("y", 15) + "\nb\n", bd: lines,
			opt: Options{Size: 4, MaxRecord: 8}, want: "a\n|b\n", tooLarge: 1},
		{name: "junk line ends the record and is dropped to the next start", in: "h1\nq1\n\nh2\nq\x002\nmore\n\nh3\nq3\n", bd: paraJunk,
			opt: Options{Size: 4}, want: "h1\nq1\n\n|h2\n!|h3\nq3\n", junkBytes: 10},
		{name: "junk at a record start gives an empty chunk", in: "\x00\x01\n\nh\n", bd: paraJunk, opt: Options{Size: 2}, want: "!|h\n", junkBytes: 4},
		{name: "record start straddling two reads while dropping junk", in: "\x00123456\n\nh\n", bd: paraJunk, opt: Options{Size: 8}, want: "!|h\n", junkBytes: 9},
		{name: "record start straddling two reads after a record too large", in: strings.Repeat("y", 23) + "\n\nh\n", bd: para,
			opt: Options{Size: 8, MaxRecord: 8}, want: "h\n", tooLarge: 1},
		{name: "junk to the end", in: "h\n\x00" + strings.Repeat("z", 100), bd: paraJunk, opt: Options{Size: 8}, want: "h\n!", junkBytes: 101},
		{name: "junk in a short record is left to the parser", in: "h\x00\n\nx\n", bd: paraJunk, opt: Options{Size: 64}, want: "h\x00\n\nx\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tc.in)
			if tc.err != nil {
				r = &failingReader{data: []byte(tc.in), err: tc.err}
			}
			var got []string
			var emitted int64
			st, err := Split(r, tc.opt, tc.bd, func(c Chunk) error {
				s := string(c.Data)
				if c.JunkAfter {
					s += "!"
				}
				got = append(got, s)
				emitted += int64(len(c.Data))
				c.Release()
				return nil
			})
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if g := strings.Join(got, "|"); g != tc.want {
				t.Errorf("chunks %q, want %q", g, tc.want)
			}
			if st.TooLarge != tc.tooLarge || st.JunkBytes != tc.junkBytes || st.UnreadBytes != tc.unread {
				t.Errorf("stats %+v, want too large %d, junk bytes %d, unread %d", st, tc.tooLarge, tc.junkBytes, tc.unread)
			}
			if st.Bytes != int64(len(tc.in)) || st.Bytes != emitted+st.TooLargeBytes+st.JunkBytes+st.UnreadBytes {
				t.Errorf("read %d of %d bytes; emitted %d + dropped %+v", st.Bytes, len(tc.in), emitted, st)
			}
		})
	}
}

// TestParallelOneLargeChunk checks that two chunks larger than twice the
// default size are never consumed at the same time.
func TestParallelOneLargeChunk(t *testing.T) {
	big := make([]byte, 2*DefaultSize+1)
	var mu sync.Mutex
	inFlight, most := 0, 0
	err := Parallel(context.Background(), 4, func(send func(Job) error) error {
		for i := 0; i < 8; i++ {
			if err := send(Job{Input: i, Chunk: Chunk{Data: big}}); err != nil {
				return err
			}
		}
		return nil
	}, func(w int, j Job) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		for i := 0; i < 1000; i++ {
			runtime.Gosched()
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
	})
	if err != nil || most != 1 {
		t.Fatalf("err %v, %d large chunks consumed at once", err, most)
	}
}
