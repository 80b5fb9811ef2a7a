package slowlog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/internal/golden"
)

// FuzzParse feeds arbitrary bytes to the parser, whole and through Split
// with a small chunk size, and checks it never panics, every event has a
// query and a sane time, and cutting into chunks changes nothing.
func FuzzParse(f *testing.F) {
	logs, _ := filepath.Glob("../testdata/slowlogs/*.log")
	for _, path := range logs {
		if data, err := os.ReadFile(path); err == nil && len(data) < 20000 {
			f.Add(data)
		}
	}
	f.Add([]byte("# Time: 2024-05-01T10:00:00Z\n# User@Host: a[a] @ h []\n# Query_time: 1e400  Lock_time: -1\nSELECT 1;\n"))
	f.Add([]byte("# User@Host: a[a] @ h []\n# User@Host: b[b] @ h []\n# Query_time: 1\nSELECT 1;\n# administrator command: Quit;\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, ws := wholeParse(data)
		var p Parser
		p.Parse(data, func(e *Event) {
			if len(e.Query) == 0 {
				t.Fatalf("event without query: %+v", e)
			}
			if e.QueryTime < 0 || e.QueryTime != e.QueryTime {
				t.Fatalf("bad query time %v", e.QueryTime)
			}
		})
		split, ss := parseSplit(t, data, chunk.Options{Size: 64})
		if whole != split {
			t.Fatalf("split parse differs:\n%s", golden.Diff(whole, split))
		}
		if ws.Events != ss.Events || ws.SkippedTotal() != ss.SkippedTotal() {
			t.Fatalf("stats differ: whole %+v split %+v", ws, ss)
		}
	})
}
