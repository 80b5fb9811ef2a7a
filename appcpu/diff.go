package appcpu

import (
	"math"
	"sort"
	"strings"
)

// DiffFunctions is how many functions an endpoint's diff lists.
const DiffFunctions = 15

// EndpointDiff is one endpoint in two runs: its times per request in
// each, the functions whose own CPU per request changed most, and the
// stacks of both (per request) for a differential flame graph.
type EndpointDiff struct {
	Endpoint string `json:"endpoint"`
	// Status is "both", "only_before" or "only_after".
	Status    string           `json:"status"`
	Before    UsageTimes       `json:"before"`
	After     UsageTimes       `json:"after"`
	Functions []FunctionChange `json:"functions"`
	Stacks    []StackChange    `json:"stacks,omitempty"`
}

// Endpoint diff statuses.
const (
	DiffBoth       = "both"
	DiffOnlyBefore = "only_before"
	DiffOnlyAfter  = "only_after"
)

// UsageTimes are an endpoint's times per request in one run.
type UsageTimes struct {
	Requests  int64   `json:"requests"`
	RequestMs float64 `json:"request_ms_per_request"`
	AppCPUMs  float64 `json:"app_cpu_ms_per_request"`
	DBMs      float64 `json:"db_ms_per_request"`
	OtherMs   float64 `json:"other_ms_per_request"`
}

// FunctionChange is one function's own (self) and inclusive CPU per
// request before and after.
type FunctionChange struct {
	Name          string  `json:"name"`
	BeforeMs      float64 `json:"before_ms_per_request"`
	AfterMs       float64 `json:"after_ms_per_request"`
	DeltaMs       float64 `json:"delta_ms_per_request"`
	BeforeTotalMs float64 `json:"before_total_ms_per_request"`
	AfterTotalMs  float64 `json:"after_total_ms_per_request"`
}

// StackChange is one stack's CPU per request before and after.
type StackChange struct {
	Frames   []string `json:"frames"`
	BeforeMs float64  `json:"before_ms"`
	AfterMs  float64  `json:"after_ms"`
}

// Diff compares two runs' endpoints (matched by name): per endpoint the
// functions whose own CPU per request grew or shrank most (by the size of
// the change), and the union of their stacks per request.
func Diff(before, after []Usage) []EndpointDiff {
	bm, am := map[string]*Usage{}, map[string]*Usage{}
	var names []string
	for i := range before {
		bm[before[i].Endpoint] = &before[i]
		names = append(names, before[i].Endpoint)
	}
	for i := range after {
		if _, ok := bm[after[i].Endpoint]; !ok {
			names = append(names, after[i].Endpoint)
		}
		am[after[i].Endpoint] = &after[i]
	}
	out := make([]EndpointDiff, 0, len(names))
	for _, n := range names {
		b, a := bm[n], am[n]
		d := EndpointDiff{Endpoint: n, Status: DiffBoth, Before: timesOf(b), After: timesOf(a)}
		switch {
		case a == nil:
			d.Status = DiffOnlyBefore
		case b == nil:
			d.Status = DiffOnlyAfter
		}
		bs, bt := perRequest(b)
		as, at := perRequest(a)
		seen := map[string]bool{}
		for _, m := range []map[string]float64{bs, as, bt, at} {
			for f := range m {
				if seen[f] {
					continue
				}
				seen[f] = true
				fc := FunctionChange{Name: f, BeforeMs: bs[f], AfterMs: as[f], BeforeTotalMs: bt[f], AfterTotalMs: at[f]}
				fc.DeltaMs = fc.AfterMs - fc.BeforeMs
				if fc.BeforeMs == 0 && fc.AfterMs == 0 {
					continue // never a leaf: its callees carry the change
				}
				d.Functions = append(d.Functions, fc)
			}
		}
		sort.Slice(d.Functions, func(i, j int) bool {
			x, y := math.Abs(d.Functions[i].DeltaMs), math.Abs(d.Functions[j].DeltaMs)
			if x != y {
				return x > y
			}
			return d.Functions[i].Name < d.Functions[j].Name
		})
		if len(d.Functions) > DiffFunctions {
			d.Functions = d.Functions[:DiffFunctions]
		}
		if d.Functions == nil {
			d.Functions = []FunctionChange{}
		}
		d.Stacks = stackChanges(b, a)
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		x := math.Abs(out[i].After.AppCPUMs - out[i].Before.AppCPUMs)
		y := math.Abs(out[j].After.AppCPUMs - out[j].Before.AppCPUMs)
		return x > y
	})
	return out
}

func timesOf(u *Usage) UsageTimes {
	if u == nil {
		return UsageTimes{}
	}
	return UsageTimes{Requests: u.ProfiledRequests, RequestMs: u.RequestMsPerRequest, AppCPUMs: u.AppCPUMsPerRequest, DBMs: u.DBMsPerRequest, OtherMs: u.OtherMsPerRequest}
}

// perRequest are a usage's functions' self and inclusive CPU per request.
func perRequest(u *Usage) (self, total map[string]float64) {
	self, total = map[string]float64{}, map[string]float64{}
	if u == nil || u.ProfiledRequests <= 0 {
		return
	}
	n := float64(u.ProfiledRequests)
	for _, s := range u.Stacks {
		if len(s.Frames) == 0 {
			continue
		}
		self[s.Frames[len(s.Frames)-1]] += s.Ms / n
		seen := map[string]bool{}
		for _, f := range s.Frames {
			if !seen[f] {
				seen[f] = true
				total[f] += s.Ms / n
			}
		}
	}
	return
}

// stackChanges is the union of both runs' stacks, per request.
func stackChanges(b, a *Usage) []StackChange {
	idx := map[string]int{}
	var out []StackChange
	put := func(u *Usage, after bool) {
		if u == nil || u.ProfiledRequests <= 0 {
			return
		}
		n := float64(u.ProfiledRequests)
		for _, s := range u.Stacks {
			k := strings.Join(s.Frames, "\x00")
			i, ok := idx[k]
			if !ok {
				if len(out) >= 2*MaxStacks {
					continue
				}
				i = len(out)
				idx[k] = i
				out = append(out, StackChange{Frames: s.Frames})
			}
			if after {
				out[i].AfterMs += s.Ms / n
			} else {
				out[i].BeforeMs += s.Ms / n
			}
		}
	}
	put(b, false)
	put(a, true)
	return out
}
