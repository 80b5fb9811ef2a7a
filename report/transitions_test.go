package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/golden"
)

// historyT0 is when the sample runs start.
var historyT0 = time.Date(2025, 11, 1, 10, 0, 0, 0, time.UTC)

// historyRunsOf makes runs from label/score pairs, one minute apart; a
// label written "!label" is a failed run of label.
func historyRunsOf(pairs ...any) []history.Run {
	var runs []history.Run
	for i := 0; i+1 < len(pairs); i += 2 {
		label := pairs[i].(string)
		failed := strings.HasPrefix(label, "!")
		var score float64
		switch v := pairs[i+1].(type) {
		case int:
			score = float64(v)
		case float64:
			score = v
		default:
			panic("not a number")
		}
		runs = append(runs, history.Run{
			Label: strings.TrimPrefix(label, "!"), Score: score, Passed: !failed,
			Started: historyT0.Add(time.Duration(len(runs)) * time.Minute),
		})
	}
	return runs
}

// historySample is an ISUCON-like afternoon: a baseline, three changes, a
// revert measured again, a Japanese label and one with Markdown
// characters.
func historySample() []history.Run {
	var runs []history.Run
	add := func(label string, rps float64, p99 time.Duration, scores ...float64) {
		for i, s := range scores {
			runs = append(runs, history.Run{
				Label: label, Started: historyT0.Add(time.Duration(len(runs)) * 3 * time.Minute),
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

func TestTransitionsGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs []history.Run
	}{
		{"transitions", historySample()},
		{"zero-baseline", historyRunsOf("!broken app", 0, "!broken app", 0, "fixed", 1000, "faster", 1500.5)},
		{"empty", nil},
	} {
		for _, f := range []struct{ format, ext string }{{"text", "txt"}, {"markdown", "md"}, {"json", "json"}} {
			t.Run(tc.name+"/"+f.format, func(t *testing.T) {
				var b bytes.Buffer
				if err := Transitions(&b, history.Transitions(tc.runs), f.format); err != nil {
					t.Fatal(err)
				}
				golden.Check(t, filepath.Join("testdata", "transitions", tc.name+"."+f.ext), b.Bytes())
			})
		}
	}
}

func TestTransitionsText(t *testing.T) {
	var b bytes.Buffer
	if err := Transitions(&b, history.Transitions(historySample()), "text"); err != nil {
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

func TestTransitionsJSONIsValid(t *testing.T) {
	for _, runs := range [][]history.Run{historySample(), historyRunsOf("zero", 0, "one", 1), nil} {
		var b bytes.Buffer
		if err := Transitions(&b, history.Transitions(runs), "json"); err != nil {
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

func TestTransitionsUnknownFormat(t *testing.T) {
	err := Transitions(&bytes.Buffer{}, nil, "csv")
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
