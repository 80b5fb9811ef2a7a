package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

const wrkOutput = `Running 10s test @ http://127.0.0.1:8080/bench.html
  2 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   663.12us  300.20us  12.00ms   90.00%
    Req/Sec    36.00k     2.00k   40.00k    70.00%
  Latency Distribution
     50%  640.00us
     75%    0.90ms
     90%    1.10ms
     99%    2.48ms
  723880 requests in 10.00s, 871.95MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:  72388.00
Transfer/sec:     87.19MB
`

func TestParseWrk(t *testing.T) {
	w, err := parseWrk(wrkOutput)
	if err != nil {
		t.Fatal(err)
	}
	want := wrkResult{requests: 723880, errors: 7, elapsed: 10, rps: 72388, p50: 0.64, p99: 2.48}
	if w != want {
		t.Errorf("parseWrk = %+v, want %+v", w, want)
	}
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil {
		t.Error("no error for output without results")
	}
}

func TestParseWrkDuration(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
	}{{"850.00us", 0.85}, {"2.48ms", 2.48}, {"1.20s", 1200}, {"2.00m", 120000}} {
		got, err := parseWrkDuration(tt.in)
		if err != nil || got < tt.want-1e-9 || got > tt.want+1e-9 {
			t.Errorf("parseWrkDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if _, err := parseWrkDuration("3.00x"); err == nil {
		t.Error("no error for an unknown unit")
	}
}

func TestParsePerfStat(t *testing.T) {
	out := "# started on ...\n\n1234567,,raw_syscalls:sys_enter,10000,100.00,,\n4567,,context-switches,10000,100.00,,\n"
	sys, sw, err := parsePerfStat(out)
	if err != nil || sys != 1234567 || sw != 4567 {
		t.Errorf("parsePerfStat = %d, %d, %v", sys, sw, err)
	}
	if _, _, err := parsePerfStat("<not supported>,,raw_syscalls:sys_enter,0,100.00,,\n"); err == nil {
		t.Error("no error without the counters")
	}
}

func TestParseFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		ok   bool
	}{
		{nil, true},
		{[]string{"--configs", "pinned", "--runs", "1", "--duration", "2s"}, true},
		{[]string{"--configs", "fast"}, false},
		{[]string{"--configs", ","}, false},
		{[]string{"--duration", "10ms"}, false},
		{[]string{"--runs", "0"}, false},
		{[]string{"--connections", "0"}, false},
		{[]string{"extra"}, false},
	} {
		_, err := parseFlags(tt.args, io.Discard)
		if (err == nil) != tt.ok {
			t.Errorf("parseFlags(%q): %v", tt.args, err)
		}
	}
}

func TestReport(t *testing.T) {
	cfg, _ := parseFlags(nil, io.Discard)
	run := func(tool, config string, reqs int64, cpu time.Duration, noisy bool) measurement {
		return measurement{tool: tool, config: config, requests: reqs, rps: float64(reqs) / 10,
			sample: measure.Sample{Wall: 10 * time.Second, CPU: cpu}, nginxCPU: 9 * time.Second, p50: 0.7, p99: 2, noisy: noisy}
	}
	res := &results{cfg: cfg, env: env{date: "2026-01-01", cores: 2, cpu: "cpu", kernel: "k", nginx: "1.22.1", wrk: "4.1.0", goVersion: "go1.26", commit: "abc"}}
	for _, c := range cfg.configs {
		res.runs = append(res.runs, run(toolWrk, c, 700000, 8*time.Second, false), run(toolOurs, c, 720000, 7*time.Second, c == cfgPinned))
	}
	res.runs = append(res.runs, run(toolWrk, cfgUnpinned, 600000, 8*time.Second, false), run(toolOurs, cfgUnpinned, 630000, 7*time.Second, false))
	var text, md bytes.Buffer
	printText(&text, res)
	printMarkdown(&md, res)
	for _, want := range []string{"ours / wrk", "1.03x", "0.85x", "1 (1 noisy)", "72,000", "paired"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report without %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{"| pinned (nginx CPU 0, client CPU 1) | **ours / wrk** |", "|---|---|---:|", "**1.03x**", "| unpinned (all cores shared) | **paired** | **2** | **1.04x** |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown without %q:\n%s", want, md.String())
		}
	}
}
