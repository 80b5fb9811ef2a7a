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
	tooLarge, err := Split(bytes.NewReader(data), opt, func(c Chunk) error {
		defer c.Release()
		p.ParseChunk(c.Data, c.Base, c.PrevTime, func(e *Event) {
			lines = append(lines, eventLine(e))
			offsets = append(offsets, e.Offset)
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Merge(&p.Stats)
	if tooLarge > 0 {
		st.skip(ReasonEventTooLarge, tooLarge)
	}
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
	if st.Skipped[ReasonEventTooLarge] != 1 {
		t.Errorf("skipped %v, want one %q", st.Skipped, ReasonEventTooLarge)
	}
}

// TestSplitNoBoundary checks that a file with no event boundary at all
// (not a slow log) is bounded too.
func TestSplitNoBoundary(t *testing.T) {
	data := bytes.Repeat([]byte("just some text line\n"), 20000)
	_, st := parseSplit(t, data, chunk.Options{Size: 4096, MaxRecord: 64 << 10})
	if st.Skipped[ReasonEventTooLarge] != 1 || st.Events != 0 {
		t.Errorf("stats %+v", st)
	}
}
