package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/bench/internal/measure"
	"github.com/stacktune/stacktune/internal/skip"
)

func testResults() *results {
	const mb = 1 << 20
	sample := func(wall, cpu time.Duration, rssMiB int64) measure.Sample {
		return measure.Sample{Wall: wall, CPU: cpu, MaxRSSKiB: rssMiB * 1024}
	}
	meta := logMeta{Seed: 1, Requests: 4_000_000, TimeTotalMs: 123456789, Users: 5000, Posts: 200000, Devices: 1000}
	ga := toolResult{name: "goaccess", inBytes: 1024 * mb, runs: make([]measure.Sample, 1), med: sample(80*time.Second, 75*time.Second, 200)}
	ga.med.DiskRead = 300 * mb
	return &results{
		log: logInfo{path: "x.log", bytes: 1024 * mb, meta: meta},
		st: []toolResult{
			{name: "stacktune", inBytes: 1024 * mb, runs: make([]measure.Sample, 3), med: sample(2*time.Second, 4*time.Second, 40)},
			{name: "stacktune --workers 1", inBytes: 1024 * mb, runs: make([]measure.Sample, 3), med: sample(4*time.Second, 4*time.Second, 30)},
		},
		quarter:      &toolResult{name: "stacktune (first 1/4)", inBytes: 256 * mb, runs: make([]measure.Sample, 3), med: sample(time.Second/2, time.Second, 36)},
		goaccess:     &ga,
		awks:         []toolResult{{name: "mawk", inBytes: 1024 * mb, runs: make([]measure.Sample, 1), med: sample(10*time.Second, 10*time.Second, 80)}},
		stAnswer:     stacktuneSummary{requests: 4_000_000, timeTotal: 123456.789, endpoints: map[string]endpointRow{"GET /": {}, "GET /a/:num": {}}, learned: []string{"/users/:name"}},
		quarterAns:   stacktuneSummary{requests: 1_000_000},
		gaAnswer:     goaccessCounts{total: 4_000_000, valid: 4_000_000, timeUs: 123456789000},
		awkAnswers:   []awkAnswer{{keys: 250000, requests: 4_000_000, time: 123456.789}},
		expectedTime: 123456.789,
		env:          envInfo{date: "2026-01-02", nproc: 2, cpuModel: "CPU", goaccess: "1.7", awks: []string{"mawk 1.3.4"}, goVersion: "go1.26", commit: "abc"},
	}
}

func TestPrintText(t *testing.T) {
	var b bytes.Buffer
	printText(&b, testResults())
	out := b.String()
	for _, want := range []string{
		"size        1024.0 MiB   requests 4,000,000   endpoints 2   learned /users/:name\n",
		"goaccess    total 4,000,000   valid 4,000,000   failed 0\n",
		"tool                   runs    wall s     CPU s  CPU/wall  peak RSS MiB     MiB/s  other cores\n",
		"stacktune                 3      2.00      4.00      2.00          40.0     512.0         0.00\n",
		"goaccess                  1     80.00     75.00      0.94         200.0      12.8         0.00\n",
		"goaccess / stacktune: wall 40.0x, CPU 18.8x, peak RSS 5.0x\n",
		"mawk / stacktune: wall 5.0x, CPU 2.5x, peak RSS 2.0x\n",
		"throughput: 537 MB/s (512 MiB/s) with 2 cores, goal >= 300 MB/s: met\n",
		"faster than goaccess: 40.0x less wall time, 18.8x less CPU: met\n",
		"memory: peak RSS 36.0 MiB on the first 1/4 (256.0 MiB, 1,000,000 requests), 40.0 MiB on the whole log (4,000,000 requests, 2 endpoints): 1.1x",
		"bounded by endpoints: met\n",
		"requests: generator 4,000,000, stacktune 4,000,000, goaccess valid 4,000,000, mawk 4,000,000\n",
		"request time: generator 123456.789 s, stacktune 123456.789 s, mawk 123456.789 s, goaccess 123456.789 s\n",
		"note: mawk aggregates per exact path (no grouping): 250,000 keys where stacktune reports 2 endpoints\n",
		"note: goaccess read 300 MiB from disk (median run) despite the warm-up",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestPrintMarkdown(t *testing.T) {
	r := testResults()
	var b bytes.Buffer
	printMarkdown(&b, r)
	out := b.String()
	for _, want := range []string{
		"### stacktune http vs goaccess and awk, 2026-01-02\n",
		"- Machine: 2 cores (nproc), CPU\n",
		"- Versions: goaccess 1.7, mawk 1.3.4, stacktune abc built with go1.26\n",
		"| tool | wall s | CPU s | CPU/wall | peak RSS MiB | MiB/s | other cores |\n|---|---:|---:|---:|---:|---:|---:|\n",
		"| stacktune --workers 1 | 4.00 | 4.00 | 1.00 | 30.0 | 256.0 | 0.00 |\n",
		"- goaccess / stacktune: **40.0x** wall, **18.8x** CPU, **5.0x** peak RSS.\n",
		"- Same answer, requests: generator 4,000,000",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	r.mismatches = []string{"x"}
	b.Reset()
	printMarkdown(&b, r)
	if !strings.Contains(b.String(), "- DISAGREEMENT (1 mismatches), requests:") {
		t.Errorf("markdown with a mismatch does not say so:\n%s", b.String())
	}
}

func TestCompareExpected(t *testing.T) {
	m := logMeta{Requests: 10, TimeTotalMs: 3000, Endpoints: []expectedEndpoint{
		{Method: "GET", Pattern: "/a", Count: 6, Status: [5]int64{0, 6}, TimeTotalMs: 1000, TimeMaxMs: 500},
		{Method: "GET", Pattern: "/b/:num", Count: 4, Status: [5]int64{0, 3, 0, 1}, Bytes: 10, TimeTotalMs: 2000, TimeMaxMs: 900},
	}}
	same := stacktuneSummary{requests: 10, timeTotal: 3.0, endpoints: map[string]endpointRow{
		"GET /a":      {count: 6, status: [5]int64{0, 6}, timeTotal: 1.0, timeMax: 0.5},
		"GET /b/:num": {count: 4, status: [5]int64{0, 3, 0, 1}, bytes: 10, timeTotal: 2.0, timeMax: 0.9},
	}}
	if d := compareExpected(m, same); len(d) != 0 {
		t.Errorf("identical answers differ: %q", d)
	}
	other := stacktuneSummary{requests: 11, timeTotal: 3.0, skipped: 1, reasons: skip.Counts{"bad": 1}, endpoints: map[string]endpointRow{
		"GET /a":      {count: 5, status: [5]int64{0, 5}, timeTotal: 1.0, timeMax: 0.5},
		"GET /b/4711": {count: 6},
	}}
	want := []string{
		"requests: generator 10, stacktune 11 (diff +1)",
		"stacktune skipped 1 lines: map[bad:1]",
		"GET /a: count 5, want 6 (diff -1); status classes 1xx-5xx [0 5 0 0 0], want [0 6 0 0 0]",
		"GET /b/:num: generator 4 requests, not in stacktune's endpoints",
		"GET /b/4711: stacktune 6 requests, not a route of the generator",
	}
	if d := compareExpected(m, other); strings.Join(d, "\n") != strings.Join(want, "\n") {
		t.Errorf("compareExpected =\n%s\nwant\n%s", strings.Join(d, "\n"), strings.Join(want, "\n"))
	}
}

func TestReadAwkAndCompare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "awk.out")
	out := "GET /a 6 1.000 0.500\nGET /b/1 3 1.500 0.900\nGET /b/2 1 0.500 0.500\n"
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := readAwk(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.keys != 3 || a.requests != 10 || a.time != 3.0 {
		t.Errorf("readAwk = %+v", a)
	}
	m := logMeta{Requests: 10}
	if d := compareAwk("mawk", m, stacktuneSummary{timeTotal: 3.0004}, a); len(d) != 0 {
		t.Errorf("within rounding, yet: %q", d)
	}
	if d := compareAwk("mawk", logMeta{Requests: 9}, stacktuneSummary{timeTotal: 3.1}, a); len(d) != 2 {
		t.Errorf("want a request and a time mismatch, got %q", d)
	}
}

func TestFirstVersionAndFlags(t *testing.T) {
	for out, want := range map[string]string{
		"GoAccess - 1.7.\nFor more details": "1.7",
		"mawk 1.3.4 20200120\nCopyright":    "1.3.4",
		"GNU Awk 5.2.1, API 3.2, PMA":       "5.2.1",
		"":                                  "unknown",
	} {
		if got := firstVersion(out); got != want {
			t.Errorf("firstVersion(%q) = %q, want %q", out, got, want)
		}
	}
	c, err := parseFlags([]string{"--awk", "mawk, gawk,", "--size-mb", "8"}, io.Discard)
	if err != nil || strings.Join(c.awks, "|") != "mawk|gawk" || c.sizeMiB != 8 || c.Runs != 3 {
		t.Errorf("parseFlags = %+v, %v", c, err)
	}
	if _, err := parseFlags([]string{"--runs", "0"}, io.Discard); err == nil {
		t.Error("--runs 0 accepted")
	}
}
