package httpprof

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/input"
)

// TestClientClosedIsNotA4xx counts nginx's 499 apart from 4xx, per
// endpoint, overall, through a merge and as a sort key.
func TestClientClosedIsNotA4xx(t *testing.T) {
	recs := []accesslog.Record{
		rec("GET", "/a", 200, 0.1, t0), rec("GET", "/a", 404, 0.1, t0), rec("GET", "/a", 499, 2.5, t0),
		rec("GET", "/a", 499, 3.0, t0), rec("GET", "/b", 499, 1.0, t0), rec("GET", "/b", 500, 0.1, t0),
	}
	whole := profileOf(t, recs, Options{})
	a, b := NewProfiler(Options{}), NewProfiler(Options{})
	for i := range recs {
		if i%2 == 0 {
			a.Add(&recs[i])
		} else {
			b.Add(&recs[i])
		}
	}
	a.Merge(b)
	merged, _ := a.Report(ReportOptions{Sort: "499"})
	for name, r := range map[string]*Report{"whole": whole, "merged": merged} {
		got := map[string]StatusCounts{}
		for _, e := range r.Endpoints {
			got[e.Path] = e.Status
		}
		want := map[string]StatusCounts{"/a": {S2xx: 1, S4xx: 1, ClientClosed: 2}, "/b": {S5xx: 1, ClientClosed: 1}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: status %v, want %v", name, got, want)
		}
		if r.Overall.ClientClosed != 3 {
			t.Errorf("%s: %d client-closed requests overall, want 3", name, r.Overall.ClientClosed)
		}
	}
	if merged.Endpoints[0].Path != "/a" {
		t.Errorf("sorted by 499: %s first", merged.Endpoints[0].Path)
	}
	d := Diff(whole, whole)
	for _, r := range d.Endpoints {
		if r.Path == "/a" && (r.ClosedA != 2 || r.ClosedB != 2 || r.ErrorsA != 0) {
			t.Errorf("diff row %+v", r)
		}
	}
}

// TestDiffWindows compares logs covering windows of different lengths:
// B is scaled to A's window and the report says so; equal windows (within
// the tolerance) and unknown ones are compared as totals.
func TestDiffWindows(t *testing.T) {
	// n requests of /x, each taking rt, one every step.
	log := func(n int, step time.Duration, rt float64) *Report {
		var recs []accesslog.Record
		for i := 0; i < n; i++ {
			recs = append(recs, rec("GET", "/x", 200, rt, t0.Add(time.Duration(i)*step)))
		}
		return profileOf(t, recs, Options{})
	}
	untimed := func() *Report {
		r := rec("GET", "/x", 200, 0.1, t0)
		r.Has &^= accesslog.HasTime
		return profileOf(t, []accesslog.Record{r, r}, Options{})
	}
	cases := []struct {
		name       string
		a, b       *Report
		basis      Basis
		scale      float64
		change     float64 // the compared change in total time
		changeRaw  float64
		noteSubstr string
	}{
		{name: "same window, same load", a: log(61, time.Second, 0.1), b: log(61, time.Second, 0.1), basis: BasisTotals, scale: 1},
		{name: "B twice as long, same rate: no change per second", a: log(31, time.Second, 0.1), b: log(61, time.Second, 0.1),
			basis: BasisPerSecond, scale: 0.5, change: -0.05, changeRaw: 3.0, noteSubstr: "A 30s, B 1m0s"},
		{name: "B half as long and twice as slow", a: log(61, time.Second, 0.1), b: log(31, time.Second, 0.2),
			basis: BasisPerSecond, scale: 2, change: 6.3, changeRaw: 0.1, noteSubstr: "scaled ×2"},
		{name: "within the tolerance", a: log(61, time.Second, 0.1), b: log(60, time.Second, 0.1), basis: BasisTotals, scale: 1, change: -0.1, changeRaw: -0.1},
		{name: "B's window unknown", a: log(61, time.Second, 0.1), b: untimed(), basis: BasisTotals, scale: 1, change: -5.9, changeRaw: -5.9, noteSubstr: "B's window is unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Diff(tc.a, tc.b)
			if d.Basis != tc.basis || math.Abs(d.Scale-tc.scale) > 1e-9 {
				t.Errorf("basis %q scale %v, want %q %v", d.Basis, d.Scale, tc.basis, tc.scale)
			}
			r := d.Endpoints[0]
			if math.Abs(r.TimeTotalChange-tc.change) > 1e-6 || math.Abs(r.TimeTotalChangeRaw-tc.changeRaw) > 1e-6 {
				t.Errorf("change %v raw %v, want %v raw %v", r.TimeTotalChange, r.TimeTotalChangeRaw, tc.change, tc.changeRaw)
			}
			if r.TimeTotalB != tc.b.Endpoints[0].TimeTotal || r.CountB != tc.b.Endpoints[0].Count {
				t.Errorf("raw B figures not kept: %+v", r)
			}
			if math.Abs(r.TimeTotalBScaled-r.TimeTotalB*d.Scale) > 1e-9 || math.Abs(r.CountBScaled-float64(r.CountB)*d.Scale) > 1e-9 {
				t.Errorf("scaled figures %+v", r)
			}
			notes := strings.Join(d.Notes, "\n")
			if tc.noteSubstr == "" && notes != "" || !strings.Contains(notes, tc.noteSubstr) {
				t.Errorf("notes %q, want %q", notes, tc.noteSubstr)
			}
		})
	}
}

// TestFromLogsGzipCut reads an access log gzip cut at several places: the
// lines before the cut are profiled, the error names the file and offset,
// and every byte read is accounted for.
func TestFromLogsGzipCut(t *testing.T) {
	var log bytes.Buffer
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&log, `192.0.2.%d - - [01/Nov/2026:12:%02d:%02d +0900] "GET /item/%d HTTP/1.1" %d 512 "-" "bench/1.0" 0.%03d 0.%03d`+"\n",
			i%250, i/60%60, i%60, i%997, []int{200, 200, 404, 499}[i%4], i%1000, i%1000)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(log.Bytes())
	zw.Close()
	full := z.Bytes()
	p, err := accesslog.NewNginx("timed", accesslog.CombinedTimed)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		kind error
	}{
		{"whole", full, nil},
		{"cut at 1/4", full[:len(full)/4], input.ErrTruncated},
		{"cut at 1/2", full[:len(full)/2], input.ErrTruncated},
		{"trailer missing", full[:len(full)-8], input.ErrTruncated},
		{"trailing junk", append(bytes.Clone(full), "\n\x00junk"...), input.ErrTrailingData},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "access.log.gz")
			os.WriteFile(path, tc.data, 0o644)
			in, c, err := input.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := FromLogs(context.Background(), []input.Input{in}, p, LogOptions{Workers: 3, Split: chunk.Options{Size: 4096}})
			var re *input.ReadError
			if tc.kind == nil {
				if err != nil || res.Bytes != int64(log.Len()) || res.Profiler.requests != 20000 {
					t.Fatalf("error %v, %d bytes, %d requests", err, res.Bytes, res.Profiler.requests)
				}
				return
			}
			if !errors.Is(err, tc.kind) || !errors.As(err, &re) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Fatalf("error %v, want a *input.ReadError of kind %v naming the file", err, tc.kind)
			}
			if re.Offset <= 0 || !strings.Contains(err.Error(), fmt.Sprintf("compressed byte %d of %d", re.Offset, len(tc.data))) {
				t.Errorf("error %q does not say the offset reached", err)
			}
			if res.Bytes != re.Out {
				t.Errorf("read %d bytes, the error says %d", res.Bytes, re.Out)
			}
			// What was read before the cut is profiled; a line the cut
			// went through is counted. Without the trailer every line is
			// there, but unchecked: still an error.
			n, unread := res.Profiler.requests, res.Skipped[ReasonUnread.Code()]
			if tc.kind == input.ErrTruncated && (n == 0 || n < 20000 && unread != 1 || n == 20000 && unread != 0) {
				t.Errorf("%d requests, skipped %v", n, res.Skipped)
			}
		})
	}
}

// zeros reads zero bytes without end: /dev/zero, or a huge sparse log.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestCancelStopsLongLine cancels the profile of a log that is one line
// without end: it is dropped as too long while it is read, nothing is
// emitted, so only the reads themselves can see the cancellation (a
// SIGTERM used to be ignored until the file's end). It returns
// context.Canceled promptly.
func TestCancelStopsLongLine(t *testing.T) {
	p, err := accesslog.NewNginx("combined", accesslog.Combined)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := FromLogs(ctx, []input.Input{{Name: "zeros", R: zeros{}}}, p, LogOptions{Workers: 2})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("still reading 20 s after the cancellation")
	}
}
