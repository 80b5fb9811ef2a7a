package httpprof

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// DiffReport compares two profiles endpoint by endpoint: the shape of
// `stacktune http diff --format json`.
//
// Two logs rarely cover windows of the same length (a 60 s run against a
// 30 s one): their totals then differ by that alone. When the windows
// differ by more than WindowTolerance, B's counts and times are scaled to
// A's window (Scale = A's window / B's window, Basis "per second of
// window"), which compares rates, per second of window; the raw figures
// stay in CountB, TimeTotalB and TimeTotalChangeRaw, and Notes says so.
type DiffReport struct {
	A DiffSide `json:"a"`
	B DiffSide `json:"b"`
	// Basis is BasisTotals or BasisPerSecond.
	Basis Basis `json:"basis"`
	// Scale multiplies B's counts and times to compare them with A's: A's
	// window / B's window, or 1 when they are compared as totals.
	Scale     float64   `json:"scale_b"`
	Notes     []string  `json:"notes,omitempty"`
	Endpoints []DiffRow `json:"endpoints"`
}

// Basis is how a comparison's figures are compared, as a stable code
// (docs/json.md).
type Basis string

// Bases of a comparison (DiffReport.Basis).
const (
	BasisTotals    Basis = "totals"     // the windows are alike: totals
	BasisPerSecond Basis = "per_second" // per second of window: B's scaled to A's window
)

// Codes lists the bases.
func (Basis) Codes() []string { return []string{string(BasisTotals), string(BasisPerSecond)} }

// DiffStatus says which profiles have an endpoint, as a stable code
// (docs/json.md).
type DiffStatus string

// Where an endpoint was seen (DiffRow.Status).
const (
	InBoth DiffStatus = "both"
	OnlyA  DiffStatus = "only_a"
	OnlyB  DiffStatus = "only_b"
)

// Codes lists the statuses.
func (DiffStatus) Codes() []string { return []string{string(InBoth), string(OnlyA), string(OnlyB)} }

// WindowTolerance is how much two windows may differ (relative to the
// longer, and by more than a second, the resolution of most logs' times)
// and still be compared as totals.
const WindowTolerance = 0.05

// DiffSide summarises one side.
type DiffSide struct {
	Inputs    []string `json:"inputs"`
	Requests  int64    `json:"requests"`
	TimeTotal float64  `json:"time_total_s"`
	Rate      float64  `json:"requests_per_s"`
	// Window is the seconds from the first request to the last, 0 if
	// unknown; TimePerSecond is TimeTotal over it (request time per
	// second of window, the load the endpoints put on the server).
	Window        float64 `json:"window_s"`
	TimePerSecond float64 `json:"time_per_s,omitempty"`
	ClientClosed  int64   `json:"client_closed"`
}

// DiffRow is one endpoint before (A) and after (B). Changes are B - A;
// Ratio fields are B / A (0 when A is 0). Status is InBoth, OnlyA or
// OnlyB. CountB and TimeTotalB are B's raw figures; the Scaled ones are
// multiplied by DiffReport.Scale, and TimeTotalChange, by which rows are
// ordered, compares those (TimeTotalChangeRaw compares the raw totals).
type DiffRow struct {
	Method             string     `json:"method"`
	Path               string     `json:"path"`
	Status             DiffStatus `json:"status"`
	CountA             int64      `json:"count_a"`
	CountB             int64      `json:"count_b"`
	CountBScaled       float64    `json:"count_b_scaled"`
	CountChange        int64      `json:"count_change"`
	P99A               float64    `json:"time_p99_a_s"`
	P99B               float64    `json:"time_p99_b_s"`
	P99Ratio           float64    `json:"time_p99_ratio"`
	AvgA               float64    `json:"time_avg_a_s"`
	AvgB               float64    `json:"time_avg_b_s"`
	TimeTotalA         float64    `json:"time_total_a_s"`
	TimeTotalB         float64    `json:"time_total_b_s"`
	TimeTotalBScaled   float64    `json:"time_total_b_scaled_s"`
	TimeTotalChange    float64    `json:"time_total_change_s"`
	TimeTotalChangeRaw float64    `json:"time_total_change_raw_s"`
	ErrorsA            int64      `json:"5xx_a"`
	ErrorsB            int64      `json:"5xx_b"`
	ClosedA            int64      `json:"499_a"`
	ClosedB            int64      `json:"499_b"`
}

// Diff compares two reports. Both should come from profiles with the same
// grouping (see LearnedPatterns and Options.Collapse); rows are matched by
// method and path. B is scaled to A's window when the windows differ (see
// DiffReport). Rows are ordered by the size of the change in total time,
// largest first.
func Diff(a, b *Report) *DiffReport {
	d := &DiffReport{A: side(a), B: side(b), Basis: BasisTotals, Scale: 1}
	wa, wb := d.A.Window, d.B.Window
	switch {
	case wa > 0 && wb > 0 && math.Abs(wa-wb) > max(1, WindowTolerance*max(wa, wb)):
		d.Basis, d.Scale = BasisPerSecond, wa/wb
		d.Notes = append(d.Notes, fmt.Sprintf("the logs cover windows of different lengths (A %s, B %s): B's calls and times are scaled ×%.3g to A's window, "+
			"so rows compare rates per second of window; B's raw totals are kept (count_b, time_total_b_s)", seconds(wa), seconds(wb), d.Scale))
	case (wa > 0) != (wb > 0):
		unknown := "A"
		if wb <= 0 {
			unknown = "B"
		}
		d.Notes = append(d.Notes, fmt.Sprintf("%s's window is unknown (fewer than two timestamped requests): totals are compared as they are, not per second", unknown))
	}
	type key struct{ m, p string }
	idx := map[key]int{}
	for _, e := range a.Endpoints {
		idx[key{e.Method, e.Path}] = len(d.Endpoints)
		d.Endpoints = append(d.Endpoints, DiffRow{Method: e.Method, Path: e.Path, Status: OnlyA,
			CountA: e.Count, P99A: e.TimeP99, AvgA: e.TimeAvg, TimeTotalA: e.TimeTotal, ErrorsA: e.Status.S5xx, ClosedA: e.Status.ClientClosed})
	}
	for _, e := range b.Endpoints {
		i, ok := idx[key{e.Method, e.Path}]
		if !ok {
			i = len(d.Endpoints)
			d.Endpoints = append(d.Endpoints, DiffRow{Method: e.Method, Path: e.Path, Status: OnlyB})
		} else {
			d.Endpoints[i].Status = InBoth
		}
		r := &d.Endpoints[i]
		r.CountB, r.P99B, r.AvgB, r.TimeTotalB, r.ErrorsB, r.ClosedB = e.Count, e.TimeP99, e.TimeAvg, e.TimeTotal, e.Status.S5xx, e.Status.ClientClosed
	}
	for i := range d.Endpoints {
		r := &d.Endpoints[i]
		r.CountChange = r.CountB - r.CountA
		r.CountBScaled = float64(r.CountB) * d.Scale
		r.TimeTotalBScaled = r.TimeTotalB * d.Scale
		r.TimeTotalChange = r.TimeTotalBScaled - r.TimeTotalA
		r.TimeTotalChangeRaw = r.TimeTotalB - r.TimeTotalA
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
	o := r.Overall
	s := DiffSide{Inputs: o.Inputs, Requests: o.Requests, TimeTotal: o.TimeTotal, Rate: o.Rate, ClientClosed: o.ClientClosed}
	if o.FirstSeen != nil && o.LastSeen != nil {
		s.Window = max(o.LastSeen.Sub(*o.FirstSeen).Seconds(), 0)
	}
	if s.Window > 0 {
		s.TimePerSecond = s.TimeTotal / s.Window
	}
	return s
}

// seconds formats a window for a note.
func seconds(s float64) string {
	return time.Duration(math.Round(s) * float64(time.Second)).String()
}

// LearnedPatterns lists a report's learned groups, for Options.Collapse.
func (r *Report) LearnedPatterns() []string {
	var out []string
	for _, g := range r.GroupsLearned {
		out = append(out, g.Pattern)
	}
	return out
}

// seedValues marks the position of a Values pattern ("/diary/:name"): its
// first literal collapses it (the variable positions before it are
// reached through their :name child, made if need be).
func (t *trie) seedValues(pattern string) {
	segs := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	if len(segs) == 0 || segs[len(segs)-1] != wildName {
		return
	}
	n := &t.root
	for _, seg := range segs[:len(segs)-1] {
		if seg == wildName {
			if n.wild == nil {
				n.wild = &node{}
			}
			n.seeded = true
			n = n.wild
			continue
		}
		typed := ""
		if strings.HasPrefix(seg, ":") {
			typed = seg
		}
		n = t.child(n, []byte(seg), typed)
	}
	n.seeded = true
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

// ShapePatterns turns paths whose variable segments are "" (a scenario's
// PathShapes) into Values patterns: one per variable position, the
// variable positions before it collapsed too ("/diary/entries/:name").
func ShapePatterns(shapes [][]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, segs := range shapes {
		prefix := make([]string, 0, len(segs))
		for _, seg := range segs {
			if seg == "" {
				p := "/" + strings.Join(append(prefix, wildName), "/")
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
				prefix = append(prefix, wildName)
				continue
			}
			prefix = append(prefix, seg)
		}
	}
	return out
}
