package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/input"
)

func generated(t *testing.T, seed uint64, size int64) ([]byte, logMeta) {
	t.Helper()
	var b bytes.Buffer
	m, err := generateLog(&b, seed, size)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), m
}

func TestGeneratorDeterministic(t *testing.T) {
	a, ma := generated(t, 7, 256<<10)
	b, mb := generated(t, 7, 256<<10)
	if sha256.Sum256(a) != sha256.Sum256(b) || ma.Requests != mb.Requests {
		t.Fatal("the same seed wrote different logs")
	}
	c, _ := generated(t, 8, 256<<10)
	if bytes.Equal(a, c) {
		t.Error("seeds 7 and 8 wrote the same log")
	}
	if int64(len(a)) < 256<<10 || int64(len(a)) > 256<<10+4096 || ma.Bytes != int64(len(a)) {
		t.Errorf("wrote %d bytes (meta %d) for a 256 KiB target", len(a), ma.Bytes)
	}
	// A smaller target is a prefix of the same stream.
	small, _ := generated(t, 7, 64<<10)
	if !bytes.HasPrefix(a, small) {
		t.Error("a smaller log is not a prefix of a larger one with the same seed")
	}
}

// TestGeneratorTotals checks the metadata against the lines themselves,
// read the way the awk program reads them.
func TestGeneratorTotals(t *testing.T) {
	log, m := generated(t, 1, 512<<10)
	lines := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	if int64(len(lines)) != m.Requests {
		t.Fatalf("%d lines, meta says %d requests", len(lines), m.Requests)
	}
	var count, ms, statics int64
	for _, e := range m.Endpoints {
		count += e.Count
		ms += e.TimeTotalMs
		if e.Static {
			statics += e.Count
		}
	}
	if count != m.Requests || ms != m.TimeTotalMs {
		t.Errorf("endpoints add up to %d requests and %d ms, meta says %d and %d", count, ms, m.Requests, m.TimeTotalMs)
	}
	if share := float64(statics) / float64(count); share < 0.17 || share > 0.23 {
		t.Errorf("static share %.3f, want about %.2f", share, staticShare)
	}
	var sumMs int64
	ipv6 := 0
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 13 || !strings.HasPrefix(f[5], `"`) || !strings.HasPrefix(f[6], "/") || !strings.HasSuffix(f[7], `"`) {
			t.Fatalf("line %d does not split as the awk program expects: %q", i+1, l)
		}
		rt := f[len(f)-2]
		dot := strings.IndexByte(rt, '.')
		if dot < 1 || len(rt)-dot != 4 {
			t.Fatalf("line %d: request time %q is not seconds with 3 decimals", i+1, rt)
		}
		var v int64
		for _, c := range strings.Replace(rt, ".", "", 1) {
			v = v*10 + int64(c-'0')
		}
		sumMs += v
		if strings.Contains(f[0], ":") {
			ipv6++
		}
	}
	if sumMs != m.TimeTotalMs {
		t.Errorf("request times in the lines add up to %d ms, meta says %d", sumMs, m.TimeTotalMs)
	}
	if ipv6 == 0 || ipv6 > len(lines)/2 {
		t.Errorf("%d of %d requests from IPv6 addresses", ipv6, len(lines))
	}
	if !strings.Contains(lines[0], `"POST /initialize `) {
		t.Errorf("first line is not POST /initialize: %q", lines[0])
	}
}

// TestProfilerAgreesWithGenerator profiles a small generated log in
// process: stacktune's grouping must give the generator's endpoints.
func TestProfilerAgreesWithGenerator(t *testing.T) {
	log, m := generated(t, 1, 1<<20)
	p, err := accesslog.NewNginx("inline", nginxFormat)
	if err != nil {
		t.Fatal(err)
	}
	res, err := httpprof.FromLogs(context.Background(), []input.Input{{Name: "gen", R: bytes.NewReader(log)}}, p, httpprof.LogOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := res.Report(p, httpprof.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := stacktuneSummary{requests: rep.Overall.Requests, skipped: rep.Skipped.Count, reasons: rep.Skipped.Reasons,
		timeTotal: rep.Overall.TimeTotal, endpoints: map[string]endpointRow{}}
	for _, e := range rep.Endpoints {
		st := e.Status
		s.endpoints[endpointKey(e.Method, e.Path)] = endpointRow{count: e.Count, bytes: e.BytesTotal, timeTotal: e.TimeTotal, timeMax: e.TimeMax,
			status: [5]int64{st.S1xx, st.S2xx, st.S3xx, st.S4xx, st.S5xx}}
	}
	for _, g := range rep.GroupsLearned {
		s.learned = append(s.learned, g.Pattern)
	}
	sort.Strings(s.learned)
	for _, d := range compareExpected(m, s) {
		t.Error(d)
	}
	if n := learnedNotes(m, s); len(n) > 0 {
		t.Error(n[0])
	}
}

func TestEnsureQuarter(t *testing.T) {
	log, m := generated(t, 1, 64<<10)
	path := filepath.Join(t.TempDir(), "a.log")
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 { // written, then reused
		q, err := ensureQuarter(path, m.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(q.path)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(bytes.Count(got, []byte("\n")))
		if !bytes.HasPrefix(log, got) || got[len(got)-1] != '\n' || int64(len(got)) != q.bytes || n != q.requests ||
			q.bytes < m.Bytes/4 || q.bytes > m.Bytes/4+4096 {
			t.Errorf("quarter: %d bytes, %d lines; reported %+v; the log has %d bytes", len(got), n, q, m.Bytes)
		}
	}
}
