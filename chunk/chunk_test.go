package chunk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	tooLarge, err := Split(strings.NewReader(in), Options{Size: 64, MaxRecord: 1024}, lines, func(c Chunk) error {
		got = append(got, string(c.Data))
		c.Release()
		return nil
	})
	if err != nil || tooLarge != 1 || strings.Join(got, "") != "a\nb\n" {
		t.Fatalf("tooLarge %d err %v chunks %q", tooLarge, err, got)
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
