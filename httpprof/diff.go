package httpprof

import (
	"math"
	"sort"
	"strings"
)

// DiffReport compares two profiles endpoint by endpoint: the shape of
// `stacktune http diff --format json`.
type DiffReport struct {
	A         DiffSide  `json:"a"`
	B         DiffSide  `json:"b"`
	Endpoints []DiffRow `json:"endpoints"`
}

// DiffSide summarises one side.
type DiffSide struct {
	Inputs    []string `json:"inputs"`
	Requests  int64    `json:"requests"`
	TimeTotal float64  `json:"time_total_s"`
	Rate      float64  `json:"requests_per_s"`
}

// DiffRow is one endpoint before (A) and after (B). Changes are B - A;
// Ratio fields are B / A (0 when A is 0). Status is "both", "only a" or
// "only b".
type DiffRow struct {
	Method          string  `json:"method"`
	Path            string  `json:"path"`
	Status          string  `json:"status"`
	CountA          int64   `json:"count_a"`
	CountB          int64   `json:"count_b"`
	CountChange     int64   `json:"count_change"`
	P99A            float64 `json:"time_p99_a_s"`
	P99B            float64 `json:"time_p99_b_s"`
	P99Ratio        float64 `json:"time_p99_ratio"`
	AvgA            float64 `json:"time_avg_a_s"`
	AvgB            float64 `json:"time_avg_b_s"`
	TimeTotalA      float64 `json:"time_total_a_s"`
	TimeTotalB      float64 `json:"time_total_b_s"`
	TimeTotalChange float64 `json:"time_total_change_s"`
	ErrorsA         int64   `json:"5xx_a"`
	ErrorsB         int64   `json:"5xx_b"`
}

// Diff compares two reports. Both should come from profiles with the same
// grouping (see LearnedPatterns and Options.Collapse); rows are matched by
// method and path. Rows are ordered by the size of the change in total time,
// largest first.
func Diff(a, b *Report) *DiffReport {
	d := &DiffReport{A: side(a), B: side(b)}
	type key struct{ m, p string }
	idx := map[key]int{}
	for _, e := range a.Endpoints {
		idx[key{e.Method, e.Path}] = len(d.Endpoints)
		d.Endpoints = append(d.Endpoints, DiffRow{Method: e.Method, Path: e.Path, Status: "only a",
			CountA: e.Count, P99A: e.TimeP99, AvgA: e.TimeAvg, TimeTotalA: e.TimeTotal, ErrorsA: e.Status.S5xx})
	}
	for _, e := range b.Endpoints {
		i, ok := idx[key{e.Method, e.Path}]
		if !ok {
			i = len(d.Endpoints)
			d.Endpoints = append(d.Endpoints, DiffRow{Method: e.Method, Path: e.Path, Status: "only b"})
		} else {
			d.Endpoints[i].Status = "both"
		}
		r := &d.Endpoints[i]
		r.CountB, r.P99B, r.AvgB, r.TimeTotalB, r.ErrorsB = e.Count, e.TimeP99, e.TimeAvg, e.TimeTotal, e.Status.S5xx
	}
	for i := range d.Endpoints {
		r := &d.Endpoints[i]
		r.CountChange = r.CountB - r.CountA
		r.TimeTotalChange = r.TimeTotalB - r.TimeTotalA
		if r.P99A > 0 {
			r.P99Ratio = r.P99B / r.P99A
		}
	}
	sort.SliceStable(d.Endpoints, func(i, j int) bool {
		x, y := math.Abs(d.Endpoints[i].TimeTotalChange), math.Abs(d.Endpoints[j].TimeTotalChange)
		if x != y {
			return x > y
		}
		if d.Endpoints[i].Path != d.Endpoints[j].Path {
			return d.Endpoints[i].Path < d.Endpoints[j].Path
		}
		return d.Endpoints[i].Method < d.Endpoints[j].Method
	})
	return d
}

func side(r *Report) DiffSide {
	return DiffSide{Inputs: r.Overall.Inputs, Requests: r.Overall.Requests, TimeTotal: r.Overall.TimeTotal, Rate: r.Overall.Rate}
}

// LearnedPatterns lists a report's learned groups, for Options.Collapse.
func (r *Report) LearnedPatterns() []string {
	var out []string
	for _, g := range r.GroupsLearned {
		out = append(out, g.Pattern)
	}
	return out
}

// seedCollapse makes the position a learned pattern ("/profile/:name")
// names collapsed from the start, so a second profile groups like the first.
func (t *trie) seedCollapse(pattern string) {
	segs := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	if len(segs) == 0 || segs[len(segs)-1] != wildName {
		return
	}
	n := &t.root
	for _, seg := range segs[:len(segs)-1] {
		typed := ""
		if strings.HasPrefix(seg, ":") {
			typed = seg
		}
		if seg == wildName {
			if !n.collapsed {
				t.collapse(n, "")
			}
			n = n.wild
			continue
		}
		n = t.child(n, []byte(seg), typed)
	}
	if !n.collapsed {
		t.collapse(n, "")
	}
}
