package slowlog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/internal/golden"
)

// parseSplit parses data through Split with the given chunk size, the way
// package digest does, and returns the events in input order plus stats.
func parseSplit(t testing.TB, data []byte, opt chunk.Options) (string, Stats) {
	var lines []string
	var offsets []int64
	var st Stats
	var p Parser
	cs, err := Split(bytes.NewReader(data), opt, func(c Chunk) error {
		defer c.Release()
		p.ParseSplit(c, func(e *Event) {
			lines = append(lines, eventLine(e))
			offsets = append(offsets, e.Offset)
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Merge(&p.Stats)
	st.AddSplit(cs)
	idx := make([]int, len(lines))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return offsets[idx[a]] < offsets[idx[b]] })
	var b strings.Builder
	for _, i := range idx {
		b.WriteString(lines[i])
	}
	return b.String(), st
}

func wholeParse(data []byte) (string, Stats) {
	var b strings.Builder
	var p Parser
	p.Parse(data, func(e *Event) { b.WriteString(eventLine(e)) })
	return b.String(), p.Stats
}

// TestSplitMatchesWholeParse checks that cutting a log into chunks, however
// small, changes nothing: same events, same times (carried across chunks),
// same skip counts.
func TestSplitMatchesWholeParse(t *testing.T) {
	logs, _ := filepath.Glob("../testdata/slowlogs/*.log")
	var all []byte
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, data...)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			all = append(all, '\n')
		}
	}
	inputs := map[string][]byte{"all fixtures concatenated": all}
	for _, path := range logs {
		data, _ := os.ReadFile(path)
		inputs[filepath.Base(path)] = data
	}
	for name, data := range inputs {
		want, wantStats := wholeParse(data)
		for _, size := range []int{64, 333, 4096, 1 << 20} {
			t.Run(fmt.Sprintf("%s/chunk=%d", name, size), func(t *testing.T) {
				got, st := parseSplit(t, data, chunk.Options{Size: size})
				if got != want {
					t.Errorf("events differ:\n%s", golden.Diff(want, got))
				}
				if fmt.Sprint(st.Skipped) != fmt.Sprint(wantStats.Skipped) || st.Events != wantStats.Events || st.Bytes != int64(len(data)) {
					t.Errorf("stats %+v, want %+v (bytes %d)", st, wantStats, len(data))
				}
			})
		}
	}
}

// TestSplitOversizedEvent checks that an event larger than MaxEventBytes is
// skipped and counted, and the events around it survive.
func TestSplitOversizedEvent(t *testing.T) {
	ev := func(q string) string {
		return "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\n" + q + ";\n"
	}
	huge := "INSERT INTO t VALUES " + strings.Repeat("(1,2,3),\n", 20000)
	data := []byte(ev("SELECT 1") + ev(huge) + ev("SELECT 2"))
	got, st := parseSplit(t, data, chunk.Options{Size: 4096, MaxRecord: 64 << 10})
	if n := strings.Count(got, "\n"); n != 2 || !strings.Contains(got, `"SELECT 1"`) || !strings.Contains(got, `"SELECT 2"`) {
		t.Errorf("want SELECT 1 and SELECT 2, got:\n%s", got)
	}
	if st.Skipped[ReasonEventTooLarge.Code()] != 1 {
		t.Errorf("skipped %v, want one %q", st.Skipped, ReasonEventTooLarge)
	}
}

// TestSplitNoBoundary checks that a file with no event boundary at all
// (not a slow log) is bounded too.
func TestSplitNoBoundary(t *testing.T) {
	data := bytes.Repeat([]byte("just some text line\n"), 20000)
	_, st := parseSplit(t, data, chunk.Options{Size: 4096, MaxRecord: 64 << 10})
	if st.Skipped[ReasonEventTooLarge.Code()] != 1 || st.Events != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestSplitDropsBinaryJunk checks that runs of binary junk, however long,
// are dropped by Split without being held, and that the events and skip
// counts are the same as when the parser reads the junk itself.
func TestSplitDropsBinaryJunk(t *testing.T) {
	ev := func(q string) string {
		return "# Time: 2024-05-01T10:00:00Z\n# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\n" + q + ";\n"
	}
	noise := func(n int) string {
		b := make([]byte, n)
		x := uint32(7)
		for i := range b {
			x = x*1664525 + 1013904223
			b[i] = byte(x >> 24)
		}
		return string(b)
	}
	big := noise(3 << 20)
	cases := []struct {
		name   string
		log    string
		events int64
		junk   int64 // binary junk skips
	}{
		{"junk at the start", big + "\n" + ev("SELECT 1"), 1, 1},
		{"junk between events", ev("SELECT 1") + big + "\n" + ev("SELECT 2"), 1, 1},
		{"junk in a query", ev("SELECT 1\n"+big) + ev("SELECT 2"), 1, 1},
		{"junk in a header", "# Time: 2024-05-01T10:00:00Z\n# User@Host: a[a] @ h []\n# Query_time: " + big + "\n" + ev("SELECT 2"), 1, 1},
		{"junk on a User@Host line after Time", "# Time: 2024-05-01T10:00:00Z\n# User@Host: \x00" + big + "\n" + ev("SELECT 2"), 1, 1},
		{"junk on a Time line", "# Time: \x00" + big + "\n" + ev("SELECT 2"), 1, 1},
		{"junk after headerless text", "some text\n" + big + "\n" + ev("SELECT 2"), 1, 0},
		{"junk after a query is part of it, to the end", ev("SELECT 1") + big, 0, 1},
		{"two runs", big + "\n" + ev("SELECT 1") + big + "\n" + ev("SELECT 2"), 1, 2},
		{"Query_time line inside junk starts nothing", ev("SELECT 1") + "\x00\n# Query_time: 1\nSELECT 3;\n" + ev("SELECT 2"), 1, 1},
	}
	for _, tc := range cases {
		data := []byte(tc.log)
		want, ws := wholeParse(data)
		if ws.Events != tc.events || ws.Skipped[ReasonBinaryJunk.Code()] != tc.junk {
			t.Errorf("%s: whole parse: %d events, skipped %v; want %d events, %d junk", tc.name, ws.Events, ws.Skipped, tc.events, tc.junk)
		}
		for _, size := range []int{64, 4096, 1 << 20} {
			t.Run(fmt.Sprintf("%s/chunk=%d", tc.name, size), func(t *testing.T) {
				got, st := parseSplit(t, data, chunk.Options{Size: size})
				if got != want {
					t.Errorf("events differ:\n%s", golden.Diff(want, got))
				}
				if fmt.Sprint(st.Skipped) != fmt.Sprint(ws.Skipped) || st.Events != ws.Events || st.Bytes != int64(len(data)) {
					t.Errorf("stats %+v, want %+v (bytes %d)", st, ws, len(data))
				}
				// The junk is dropped as it is read, never gathered.
				longest := 0
				Split(bytes.NewReader(data), chunk.Options{Size: size}, func(c Chunk) error {
					longest = max(longest, len(c.Data))
					c.Release()
					return nil
				})
				if longest > 2*size+1024 {
					t.Errorf("a chunk of %d bytes", longest)
				}
			})
		}
	}
}
