package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

func testResults() *results {
	const mb = 1 << 20
	return &results{
		log:     logInfo{path: "x.log", bytes: 256 * mb},
		events:  827123,
		classes: 11,
		pt:      toolResult{name: "pt-query-digest", inBytes: 256 * mb, runs: make([]measure.Sample, 1), med: measure.Sample{Wall: 80 * time.Second, CPU: 80 * time.Second, MaxRSSKiB: 40 * 1024, Others: 20 * time.Second, DiskRead: 100 * mb}},
		st:      []toolResult{{name: "stacktune", inBytes: 256 * mb, runs: make([]measure.Sample, 3), med: measure.Sample{Wall: 2 * time.Second, CPU: 4 * time.Second, MaxRSSKiB: 20 * 1024}}},
		env:     envInfo{date: "2026-01-02", nproc: 2, cpuModel: "CPU", mariadb: "10.11", sysbench: "1.0.20", pt: "3.2.1", goVersion: "go1.26", commit: "abc"},
	}
}

func TestPrintText(t *testing.T) {
	var b bytes.Buffer
	printText(&b, testResults())
	out := b.String()
	for _, want := range []string{
		"size      256.0 MiB   events 827,123   classes 11\n",
		"pt-query-digest     1     80.00     80.00      1.00          40.0       3.2         0.25\n",
		"stacktune           3      2.00      4.00      2.00          20.0     128.0         0.00\n",
		"pt-query-digest / stacktune: wall 40.0x, CPU 20.0x, peak RSS 2.0x\n",
		"note: pt-query-digest read 100 MiB from disk (median run) despite the warm-up",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestPrintMarkdown(t *testing.T) {
	var b bytes.Buffer
	printMarkdown(&b, testResults())
	out := b.String()
	for _, want := range []string{
		"| tool | wall s | CPU s | CPU/wall | peak RSS MiB | MiB/s | other cores |\n|---|---:|---:|---:|---:|---:|---:|\n",
		"| pt-query-digest | 80.00 | 80.00 | 1.00 | 40.0 | 3.2 | 0.25 |\n",
		"| stacktune | 2.00 | 4.00 | 2.00 | 20.0 | 128.0 | 0.00 |\n",
		"**40.0x** wall, **20.0x** CPU, **2.0x** peak RSS",
		"- Machine: 2 cores (nproc), CPU\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestCompareDigests(t *testing.T) {
	pt := digestSummary{tool: "pt", events: 10, classes: map[string]classCount{
		"A": {id: "A", fingerprint: "select a", count: 6},
		"B": {id: "B", fingerprint: "select b", count: 4},
	}}
	same := digestSummary{tool: "st", events: 10, classes: pt.classes}
	if d := compareDigests(pt, same); len(d) != 0 {
		t.Errorf("identical digests differ: %q", d)
	}
	st := digestSummary{tool: "st", events: 10, classes: map[string]classCount{
		"A": {id: "A", fingerprint: "select a", count: 5},
		"C": {id: "C", fingerprint: "select c", count: 5},
	}}
	d := compareDigests(pt, st)
	want := []string{
		`class A count: pt 6, st 5 (diff -1); fingerprints "select a" / "select a"`,
		`class B only in pt: count 4, fingerprint "select b"`,
		`class C only in st: count 5, fingerprint "select c"`,
	}
	if strings.Join(d, "\n") != strings.Join(want, "\n") {
		t.Errorf("compareDigests =\n%s\nwant\n%s", strings.Join(d, "\n"), strings.Join(want, "\n"))
	}
}
