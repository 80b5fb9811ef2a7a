package appcpu

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/internal/skip"
)

func TestParsePerfScript(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	clock := func(ns int64) time.Time { return base.Add(time.Duration(ns)) }
	for _, tc := range []struct {
		name    string
		file    string
		samples int
		symbols string
		// first sample's stack, root first
		first   []string
		skipped skip.Counts
	}{
		{name: "go binary", file: "testdata/go-spin.perfscript", samples: -1, symbols: SymbolsNative,
			first: []string{"runtime.goexit.abi0", "runtime.main", "main.main"}, skipped: skip.Counts{}},
		{name: "interpreter, perf map, junk", file: "testdata/edge.perfscript", samples: 3, symbols: SymbolsPerfMap,
			first:   []string{"__libc_start_main", "zend_execute", "execute_ex"},
			skipped: skip.Counts{"perf_sample_line_unread": 1, "perf_frame_outside_sample": 1, "perf_sample_without_stack": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if tc.samples < 0 { // every header line of a real recording
				tc.samples = 0
				for _, l := range strings.Split(string(b), "\n") {
					if l != "" && l[0] != '\t' && l[0] != ' ' {
						tc.samples++
					}
				}
			}
			c := NewCapture("perf")
			st, err := ParsePerfScript(bytes.NewReader(b), c, clock)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Samples) != tc.samples || st.Samples != int64(tc.samples) {
				t.Fatalf("samples %d (stats %d), want %d", len(c.Samples), st.Samples, tc.samples)
			}
			if got := SymbolsOf(st); got != tc.symbols {
				t.Errorf("symbols %q, want %q", got, tc.symbols)
			}
			var first []string
			for _, id := range c.Samples[0].Stack {
				first = append(first, c.Frames[id])
			}
			if strings.Join(first, ";") != strings.Join(tc.first, ";") {
				t.Errorf("first stack %q, want %q", first, tc.first)
			}
			if c.Samples[0].Time.Before(base) || c.Samples[0].Weight != 1001001 {
				t.Errorf("first sample time %v weight %v", c.Samples[0].Time, c.Samples[0].Weight)
			}
			for k, v := range tc.skipped {
				if c.Skipped[k] != v {
					t.Errorf("skipped %q = %d, want %d (all: %v)", k, c.Skipped[k], v, c.Skipped)
				}
			}
			if u := c.Skipped.Unknown(); len(u) > 0 {
				t.Errorf("skipped by codes no reason has: %v", u)
			}
		})
	}
}

func TestParsePerfScriptFrames(t *testing.T) {
	for _, tc := range []struct {
		name, line, want string
		kind             frameKind
	}{
		{"go", "\t  9e17b main.main (/tmp/spin)", "main.main", frameNative},
		{"c++ parens", "\t 55d0 operator()(std::vector<int> const&) (/usr/bin/node)", "operator()(std::vector<int> const&)", frameInterp},
		{"unknown symbol", "\t 7f00 [unknown] (/usr/lib/libfoo.so.1)", "[libfoo.so.1]", frameUnknown},
		{"unknown both", "\t 7f00 [unknown] ([unknown])", "[unknown]", frameUnknown},
		{"perf map", "\t 3c2a LazyCompile:*render a.js:1 (/tmp/perf-777.map)", "LazyCompile:*render a.js:1", frameMap},
		{"anonymous code without a map", "\t 7f3c2a [unknown] (/tmp/perf-8245.map)", "[anonymous code]", frameUnknown},
		{"interpreter", "\t 55d0 execute_ex (/usr/sbin/php-fpm8.2)", "execute_ex", frameInterp},
		{"control bytes", "\t 55d0 evil\x1bname (/bin/x)", "evilname", frameNative},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, kind, ok := parseFrame([]byte(tc.line))
			if !ok || got != tc.want || kind != tc.kind {
				t.Errorf("parseFrame(%q) = %q, %v, %v; want %q, %v", tc.line, got, kind, ok, tc.want, tc.kind)
			}
		})
	}
}

func TestParsePerfScriptLongLine(t *testing.T) {
	in := "app 1/1 1.000000001: 1000\n\t" + strings.Repeat("a", MaxPerfLine+10) + "\n\t 10 f (/bin/x)\n\n"
	c := NewCapture("perf")
	if _, err := ParsePerfScript(strings.NewReader(in), c, nil); err != nil {
		t.Fatal(err)
	}
	if len(c.Samples) != 1 || c.Skipped["perf_line_too_long"] != 1 {
		t.Fatalf("samples %d skipped %v", len(c.Samples), c.Skipped)
	}
}

func FuzzParsePerfScript(f *testing.F) {
	for _, name := range []string{"testdata/go-spin.perfscript", "testdata/edge.perfscript"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("a 1/1 1.1:\n\t1 x (y)\n"))
	f.Add([]byte("a 1/1 99999999999.1: 5\n\t1 (\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := NewCapture("perf")
		st, err := ParsePerfScript(bytes.NewReader(b), c, func(ns int64) time.Time { return time.Unix(0, ns) })
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(c.Samples)) != st.Samples {
			t.Fatalf("%d samples kept, stats say %d", len(c.Samples), st.Samples)
		}
		for _, s := range c.Samples {
			if len(s.Stack) == 0 || len(s.Stack) > MaxDepth {
				t.Fatalf("stack of %d frames", len(s.Stack))
			}
			for _, id := range s.Stack {
				if int(id) >= len(c.Frames) || id < 0 {
					t.Fatalf("frame id %d of %d", id, len(c.Frames))
				}
			}
		}
		p := Attribute(c, []Request{{Endpoint: "GET /", Start: time.Unix(0, 0), End: time.Unix(1<<33, 0)}}, nil)
		if p.Samples != st.Samples {
			t.Fatalf("attribute saw %d samples of %d", p.Samples, st.Samples)
		}
	})
}
