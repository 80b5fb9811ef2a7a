package reqtrace

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stacktune/stacktune/input"
)

// FuzzFromSlowLog: any bytes as a slow log give a report whose counts add
// up, without a panic.
func FuzzFromSlowLog(f *testing.F) {
	for _, p := range []string{"../testdata/slowlogs/mariadb1011-marginalia.log", "../testdata/slowlogs/slow002.log"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 4096)])
	}
	f.Add([]byte("# Time: 261122 20:42:50\n# Query_time: 1 Rows_examined: 5\nSELECT 1 /*traceparent='00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',route='%2F'*/;\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := FromSlowLog(context.Background(), []input.Input{{Name: "fuzz", R: bytes.NewReader(data)}}, Options{NPlusOne: 2, DropLast: 1})
		if err != nil {
			return
		}
		if rep.Attributed+rep.Unattributed != rep.Statements || rep.Attributed < 0 {
			t.Fatalf("%d attributed + %d not != %d statements", rep.Attributed, rep.Unattributed, rep.Statements)
		}
		var calls int64
		for _, c := range rep.Classes {
			calls += c.Calls
		}
		if calls != rep.Statements {
			t.Fatalf("classes hold %d calls, %d statements", calls, rep.Statements)
		}
	})
}
