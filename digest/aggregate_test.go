package digest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/input"
)

func fixtureInputs(t *testing.T) ([]input.Input, []string) {
	t.Helper()
	logs, _ := filepath.Glob("../testdata/slowlogs/*.log")
	sort.Strings(logs)
	var inputs []input.Input
	for _, p := range logs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input.Input{Name: p, R: bytes.NewReader(data)})
	}
	return inputs, logs
}

func reportJSON(t *testing.T, opt Options, ropt ReportOptions) []byte {
	t.Helper()
	inputs, _ := fixtureInputs(t)
	agg, stats, err := FromSlowLogs(context.Background(), inputs, opt)
	if err != nil {
		t.Fatal(err)
	}
	r, err := agg.Report(ropt)
	if err != nil {
		t.Fatal(err)
	}
	r.FillSkipped(stats)
	b, _ := json.Marshal(r)
	return b
}

// TestParallelismDoesNotChangeTheReport runs the digest with one worker
// and large chunks, then with many workers and tiny chunks: the reports
// must be byte-for-byte equal.
func TestParallelismDoesNotChangeTheReport(t *testing.T) {
	want := reportJSON(t, Options{Workers: 1}, ReportOptions{})
	for _, o := range []Options{
		{Workers: 2},
		{Workers: 4, Split: chunk.Options{Size: 512}},
		{Workers: 8, Split: chunk.Options{Size: 200}},
	} {
		if got := reportJSON(t, o, ReportOptions{}); !bytes.Equal(got, want) {
			t.Errorf("workers=%d chunk=%d: report differs from the single-worker one", o.Workers, o.Split.Size)
		}
	}
}

func TestFiltersSortAndLimit(t *testing.T) {
	cases := []struct {
		name   string
		filter Filter
		ropt   ReportOptions
		check  func(t *testing.T, r *Report)
	}{
		{
			name:   "database filter",
			filter: Filter{Databases: []string{"DB1"}},
			check: func(t *testing.T, r *Report) {
				if len(r.Classes) == 0 || r.Overall.Filtered == 0 {
					t.Fatalf("classes %d filtered %d", len(r.Classes), r.Overall.Filtered)
				}
				for _, c := range r.Classes {
					if len(c.Databases) != 1 || c.Databases["db1"] != c.Count {
						t.Errorf("class %s has databases %v", c.ID, c.Databases)
					}
				}
			},
		},
		{
			name:   "user filter",
			filter: Filter{Users: []string{"bookblogs"}},
			check: func(t *testing.T, r *Report) {
				for _, c := range r.Classes {
					for u := range c.Users {
						if !strings.HasPrefix(u, "bookblogs@") {
							t.Errorf("class %s has user %s", c.ID, u)
						}
					}
				}
				if len(r.Classes) != 5 {
					t.Errorf("%d classes, want 5 (slow023 has five bookblogs statements)", len(r.Classes))
				}
			},
		},
		{
			name:   "statement type filter",
			filter: Filter{Types: []string{"insert", "update"}},
			check: func(t *testing.T, r *Report) {
				if len(r.Classes) == 0 {
					t.Fatal("no classes")
				}
				for _, c := range r.Classes {
					if c.StatementType != "insert" && c.StatementType != "update" {
						t.Errorf("class %s is a %s", c.ID, c.StatementType)
					}
				}
			},
		},
		{
			name: "sort by count with limit",
			ropt: ReportOptions{Sort: SortCount, Limit: 3},
			check: func(t *testing.T, r *Report) {
				if len(r.Classes) != 3 || r.Overall.ClassesShown != 3 || r.Overall.Classes <= 3 {
					t.Fatalf("shown %d of %d", len(r.Classes), r.Overall.Classes)
				}
				for i := 1; i < len(r.Classes); i++ {
					if r.Classes[i].Count > r.Classes[i-1].Count {
						t.Errorf("rank %d has more calls than rank %d", i+1, i)
					}
				}
			},
		},
		{
			name: "sort keys order descending",
			ropt: ReportOptions{Sort: SortRowsExamined},
			check: func(t *testing.T, r *Report) {
				for i := 1; i < len(r.Classes); i++ {
					if r.Classes[i].RowsExaminedTotal > r.Classes[i-1].RowsExaminedTotal {
						t.Errorf("rank %d examined more than rank %d", i+1, i)
					}
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r Report
			if err := json.Unmarshal(reportJSON(t, Options{Filter: tc.filter}, tc.ropt), &r); err != nil {
				t.Fatal(err)
			}
			tc.check(t, &r)
		})
	}
}

func TestReportOptionsValidate(t *testing.T) {
	for _, o := range []ReportOptions{{Sort: "bogus"}, {Limit: -1}} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
