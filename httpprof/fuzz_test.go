package httpprof

import (
	"testing"

	"github.com/stacktune/stacktune/accesslog"
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
