package history

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/internal/golden"
)

// sampleRuns is an ISUCON-like afternoon: a baseline, three changes, a
// revert measured again, a Japanese label and one with Markdown
// characters.
func sampleRuns() []Run {
	var runs []Run
	add := func(label string, rps float64, p99 time.Duration, scores ...float64) {
		for i, s := range scores {
			runs = append(runs, Run{
				Label: label, Started: t0.Add(time.Duration(len(runs)) * 3 * time.Minute),
				Target: "http://127.0.0.1:8080/", Score: s, Passed: s > 0,
				Requests: int64(s * 10), RPS: rps + float64(i), P99: p99 + time.Duration(i)*time.Millisecond,
			})
		}
	}
	add("baseline", 95.5, 820*time.Millisecond, 1020, 980, 1003)
	add("add index on relations", 410, 210*time.Millisecond, 4100, 4220, 3990, 4180)
	add("N+1 fix in GET /api/isu", 980, 95*time.Millisecond, 9800, 10250, 0)
	add("baseline", 96, 830*time.Millisecond, 1010)
	add("nginx で静的ファイル配信", 1210, 40*time.Millisecond, 12100, 11900)
	add("", 1502, 31*time.Millisecond, 15000.5, 15500, 14900)
	add("cache | *all* the_things", 1810, 20*time.Millisecond, 18123.25)
	return runs
}

func TestWriteTableGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs []Run
	}{
		{"transitions", sampleRuns()},
		{"zero-baseline", runsOf("!broken app", 0, "!broken app", 0, "fixed", 1000, "faster", 1500.5)},
		{"empty", nil},
	} {
		for _, f := range []struct{ format, ext string }{{"text", "txt"}, {"markdown", "md"}, {"json", "json"}} {
			t.Run(tc.name+"/"+f.format, func(t *testing.T) {
				var b bytes.Buffer
				if err := WriteTable(&b, Transitions(tc.runs), f.format); err != nil {
					t.Fatal(err)
				}
				golden.Check(t, filepath.Join("testdata", tc.name+"."+f.ext), b.Bytes())
			})
		}
	}
}

func TestWriteTableText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, Transitions(sampleRuns()), "text"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	// Aligned: every row ends in the same terminal column, Japanese
	// characters counting two.
	w := displayWidth(lines[0])
	for _, l := range lines[1:] {
		if displayWidth(l) != w {
			t.Errorf("row width %d, header %d:\n%s\n%s", displayWidth(l), w, lines[0], l)
		}
	}
}

func TestWriteTableJSONIsValid(t *testing.T) {
	for _, runs := range [][]Run{sampleRuns(), runsOf("zero", 0, "one", 1), nil} {
		var b bytes.Buffer
		if err := WriteTable(&b, Transitions(runs), "json"); err != nil {
			t.Fatal(err)
		}
		var v struct {
			Steps []map[string]any `json:"steps"`
		}
		if err := json.Unmarshal(b.Bytes(), &v); err != nil {
			t.Fatalf("%v:\n%s", err, b.String())
		}
		if v.Steps == nil {
			t.Errorf("steps is not a list:\n%s", b.String())
		}
	}
}

func TestWriteTableUnknownFormat(t *testing.T) {
	err := WriteTable(&bytes.Buffer{}, nil, "csv")
	if err == nil || !strings.Contains(err.Error(), "markdown") {
		t.Errorf("err = %v, want one naming the accepted formats", err)
	}
}

func TestScoreFormat(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {1234, "1234"}, {1234.5, "1234.5"}, {0.125, "0.13"}, {1.0 / 3, "0.33"},
		{-0.001, "0"}, {-12.5, "-12.5"}, {1e9, "1000000000"},
	} {
		if got := Score(tc.in); got != tc.want {
			t.Errorf("Score(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
