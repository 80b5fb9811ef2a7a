package httpprof

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/input"
)

// FuzzProfile feeds arbitrary request targets and methods: no panic, every
// request is counted exactly once, and splitting between two profilers
// changes nothing.
func FuzzProfile(f *testing.F) {
	for _, s := range []string{"/", "", "/a/b?c=d#e", "http://h/x", "//", "/a//b/", "?x", "/%00/\xff", "/" + string(make([]byte, 300))} {
		f.Add("GET", s, s+"/1")
	}
	f.Fuzz(func(t *testing.T, method, uri1, uri2 string) {
		recs := []accesslog.Record{rec(method, uri1, 200, 0.1, t0), rec(method, uri2, 500, 0.2, t0)}
		for i := 0; i < 30; i++ {
			recs = append(recs, rec("GET", uri1+"/"+string(rune('a'+i)), 200, 0.01, t0))
		}
		whole := NewProfiler(Options{QueryKeys: true})
		a, b := NewProfiler(Options{QueryKeys: true}), NewProfiler(Options{QueryKeys: true})
		for i := range recs {
			whole.Add(&recs[i])
			if i%2 == 0 {
				a.Add(&recs[i])
			} else {
				b.Add(&recs[i])
			}
		}
		a.Merge(b)
		rw, err := whole.Report(ReportOptions{Sort: "path"})
		if err != nil {
			t.Fatal(err)
		}
		rm, _ := a.Report(ReportOptions{Sort: "path"})
		var n int64
		for _, e := range rw.Endpoints {
			n += e.Count
		}
		if n != int64(len(recs)) {
			t.Fatalf("counted %d of %d requests", n, len(recs))
		}
		if len(rw.Endpoints) != len(rm.Endpoints) {
			t.Fatalf("whole %d endpoints, merged %d", len(rw.Endpoints), len(rm.Endpoints))
		}
		for i := range rw.Endpoints {
			if rw.Endpoints[i].Path != rm.Endpoints[i].Path || rw.Endpoints[i].Count != rm.Endpoints[i].Count {
				t.Fatalf("endpoint %d: whole %+v merged %+v", i, rw.Endpoints[i], rm.Endpoints[i])
			}
		}
	})
}

// FuzzFromLogsDetect profiles arbitrary logs with the format detected as
// they are read, cut into small chunks with a small line bound (so lines
// too long to read, and chunks of nothing else, come often): no panic; a
// format that is not detected is a *accesslog.DetectError and no result;
// otherwise every byte is accounted for, every non-empty line is a request
// or a skip, and the result is what the detected parser gives when it is
// named.
func FuzzFromLogsDetect(f *testing.F) {
	for _, name := range []string{"nginx-timed.log", "ltsv.log", "nginx-json.log", "apache-combined-d.log"} {
		b, err := os.ReadFile(filepath.Join("..", "accesslog", "testdata", "logs", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(append([]byte(strings.Repeat("x", 300)+"\n\n"), b...))
	}
	f.Add([]byte(strings.Repeat("\n", 300) + combinedLines(3)))
	f.Add([]byte(strings.Repeat("y", 200) + "\r\n" + combinedLines(2) + strings.Repeat("z", 129)))
	opt := LogOptions{Workers: 1, Split: chunk.Options{Size: 64, MaxRecord: 128}} // one worker: coverage the same run to run
	f.Fuzz(func(t *testing.T, data []byte) {
		in := func() []input.Input { return []input.Input{{Name: "fuzz", R: bytes.NewReader(data)}} }
		res, err := FromLogs(context.Background(), in(), nil, opt)
		if err != nil {
			var de *accesslog.DetectError
			if res != nil || !errors.As(err, &de) {
				t.Fatalf("result %v, error %v", res, err)
			}
			return
		}
		var lines int64
		chunk.Lines(data, func(_ int, l []byte) {
			if len(l) > 0 {
				lines++
			}
		})
		var skipped int64
		for _, n := range res.Skipped {
			skipped += n
		}
		if res.Bytes != int64(len(data)) || res.Profiler.requests+skipped != lines {
			t.Fatalf("%d bytes of %d; %d requests and %d skipped (%v) of %d lines", res.Bytes, len(data), res.Profiler.requests, skipped, res.Skipped, lines)
		}
		named, err := FromLogs(context.Background(), in(), res.Parser, opt)
		if err != nil || named.Profiler.requests != res.Profiler.requests || fmt.Sprint(named.Skipped) != fmt.Sprint(res.Skipped) {
			t.Fatalf("detected: %d requests, skipped %v; named %s: %d, %v (%v)", res.Profiler.requests, res.Skipped, res.Parser.Format(), named.Profiler.requests, named.Skipped, err)
		}
	})
}
