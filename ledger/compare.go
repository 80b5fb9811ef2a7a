package ledger

import (
	"math"
	"sort"

	"github.com/stacktune/stacktune/history"
)

// Reason codes of a Verdict (worded by report.ReasonText).
const (
	// Reasons the runs may not be compared.
	ReasonScenarioDiffers  = "scenario_differs"   // different loads (scenario hash)
	ReasonScenarioUnknown  = "scenario_unknown"   // a run without a scenario hash
	ReasonDataResetDiffers = "data_reset_differs" // different data resets
	ReasonDurationDiffers  = "duration_differs"   // durations more than DurationTolerance apart
	ReasonRunFailed        = "run_failed"         // a run did not pass
	ReasonCollectorFailed  = "collector_failed"   // a collector failed or saw part of its layer
	// Reasons that say how to read the comparison (the runs may be compared).
	ReasonWithinNoise   = "within_noise"   // the score changed less than the noise floor
	ReasonNoiseUnknown  = "noise_unknown"  // no noise floor measured for these runs
	ReasonCommitDiffers = "commit_differs" // the app's code differs (what is being compared, usually)
	ReasonSameSession   = "same_session"   // both from one tune or ab: its interleaved decision is the judge
)

// DurationTolerance is how far apart (relative) two runs' durations may be.
const DurationTolerance = 0.10

// Reason is a code with the numbers it speaks of.
type Reason struct {
	Code string `json:"code"`
	// Blocking reasons make the runs not comparable.
	Blocking bool    `json:"blocking"`
	A        string  `json:"a,omitempty"`
	B        string  `json:"b,omitempty"`
	Value    float64 `json:"value,omitempty"`
	Limit    float64 `json:"limit,omitempty"`
}

// Verdict says whether two runs may be compared, and why.
type Verdict struct {
	Comparable bool     `json:"comparable"`
	Reasons    []Reason `json:"reasons"`
}

// Diff is one row of a comparison: a name's figures in A and in B.
// Missing says which run lacks it ("a", "b" or "").
type Diff struct {
	Source  string  `json:"source,omitempty"`
	Name    string  `json:"name"`
	Missing string  `json:"missing,omitempty"`
	CountA  int64   `json:"count_a"`
	CountB  int64   `json:"count_b"`
	P50A    float64 `json:"p50_a_s,omitempty"`
	P50B    float64 `json:"p50_b_s,omitempty"`
	P99A    float64 `json:"p99_a_s"`
	P99B    float64 `json:"p99_b_s"`
	TotalA  float64 `json:"total_a"`
	TotalB  float64 `json:"total_b"`
	// Delta is the change in time: for a name both runs have, B's mean
	// per request less A's, times B's count (what B's requests took less
	// what they would have taken at A's speed: in a closed-loop bench the
	// total time of all endpoints is fixed by the connections and the
	// duration, so totals alone only move shares around); TotalB - TotalA
	// for a name one run lacks, and for functions (samples).
	Delta float64 `json:"delta"`
}

// Comparison is run B against run A.
type Comparison struct {
	A         *View   `json:"a"`
	B         *View   `json:"b"`
	ScoreA    float64 `json:"score_a"`
	ScoreB    float64 `json:"score_b"`
	Verdict   Verdict `json:"verdict"`
	Endpoints []Diff  `json:"endpoints"`
	Classes   []Diff  `json:"classes"`
	Functions []Diff  `json:"functions"`
	// Decision is the session's interleaved decision between the two
	// runs' labels, when both came from one tune or ab.
	Decision *history.Decision `json:"decision,omitempty"`
}

// Compare compares b against a. Rows are sorted by the largest change
// in time first (|Delta|), then by name.
func Compare(a, b *View) *Comparison {
	c := &Comparison{A: a, B: b, ScoreA: a.Run.Score, ScoreB: b.Run.Score, Endpoints: []Diff{}, Classes: []Diff{}, Functions: []Diff{}}
	c.Endpoints = pair(a.Endpoints, b.Endpoints, func(e Endpoint) [2]string { return [2]string{e.Source, e.Name} },
		func(d *Diff, side int, e Endpoint) {
			d.Source, d.Name = e.Source, e.Name
			if side == 0 {
				d.CountA, d.P50A, d.P99A, d.TotalA = e.Count, e.P50, e.P99, e.Total
			} else {
				d.CountB, d.P50B, d.P99B, d.TotalB = e.Count, e.P50, e.P99, e.Total
			}
		}, true)
	c.Classes = pair(a.Classes, b.Classes, func(q Class) [2]string { return [2]string{q.ID} },
		func(d *Diff, side int, q Class) {
			d.Source, d.Name = q.ID, q.Fingerprint
			if side == 0 {
				d.CountA, d.P99A, d.TotalA = q.Count, q.P95, q.Total
			} else {
				d.CountB, d.P99B, d.TotalB = q.Count, q.P95, q.Total
			}
		}, true)
	c.Functions = pair(a.Functions, b.Functions, func(f Function) [2]string { return [2]string{f.Name} },
		func(d *Diff, side int, f Function) {
			d.Name = f.Name
			if side == 0 {
				d.CountA, d.TotalA = f.Self, float64(f.Total)
			} else {
				d.CountB, d.TotalB = f.Self, float64(f.Total)
			}
		}, false)
	for _, rows := range [][]Diff{c.Endpoints, c.Classes, c.Functions} {
		sort.SliceStable(rows, func(i, j int) bool {
			di, dj := math.Abs(rows[i].Delta), math.Abs(rows[j].Delta)
			if di != dj {
				return di > dj
			}
			return rows[i].Name < rows[j].Name
		})
	}
	c.Verdict = verdict(a, b)
	if a.Session != nil && b.Run.Session == a.Run.Session {
		for i := range a.Session.Decisions {
			d := a.Session.Decisions[i]
			if d.LabelA == a.Run.Label && d.LabelB == b.Run.Label || d.LabelA == b.Run.Label && d.LabelB == a.Run.Label {
				c.Decision = &d
			}
		}
	}
	return c
}

// pair merges the rows of the two views by key, in the order first seen
// (A's, then those only B has): set fills a row's side (0: A, 1: B).
func pair[T any](a, b []T, key func(T) [2]string, set func(d *Diff, side int, t T), perRequest bool) []Diff {
	rows := map[[2]string]*Diff{}
	var order [][2]string
	for side, ts := range [][]T{a, b} {
		for _, t := range ts {
			k := key(t)
			d := rows[k]
			if d == nil {
				d = &Diff{}
				rows[k] = d
				order = append(order, k)
			}
			set(d, side, t)
		}
	}
	out := []Diff{}
	for _, k := range order {
		out = append(out, finish(*rows[k], perRequest))
	}
	return out
}

func finish(d Diff, perRequest bool) Diff {
	switch {
	case d.CountA == 0 && d.TotalA == 0:
		d.Missing = "a"
	case d.CountB == 0 && d.TotalB == 0:
		d.Missing = "b"
	}
	d.Delta = d.TotalB - d.TotalA
	if perRequest && d.CountA > 0 && d.CountB > 0 {
		d.Delta = (d.TotalB/float64(d.CountB) - d.TotalA/float64(d.CountA)) * float64(d.CountB)
	}
	return d
}

func verdict(a, b *View) Verdict {
	var v Verdict
	add := func(r Reason) { v.Reasons = append(v.Reasons, r) }
	ra, rb := a.Run, b.Run
	switch {
	case ra.ScenarioHash == "" || rb.ScenarioHash == "":
		add(Reason{Code: ReasonScenarioUnknown, Blocking: true, A: ra.ScenarioHash, B: rb.ScenarioHash})
	case ra.ScenarioHash != rb.ScenarioHash:
		add(Reason{Code: ReasonScenarioDiffers, Blocking: true, A: ra.ScenarioHash, B: rb.ScenarioHash})
	}
	if ra.DataReset != rb.DataReset {
		add(Reason{Code: ReasonDataResetDiffers, Blocking: true, A: ra.DataReset, B: rb.DataReset})
	}
	if da, db := ra.Duration.Seconds(), rb.Duration.Seconds(); da > 0 && db > 0 {
		if rel := math.Abs(da-db) / math.Max(da, db); rel > DurationTolerance {
			add(Reason{Code: ReasonDurationDiffers, Blocking: true, A: ra.Duration.String(), B: rb.Duration.String(), Value: rel, Limit: DurationTolerance})
		}
	}
	for _, r := range []history.Run{ra, rb} {
		if !r.Passed && r.Command != "" {
			add(Reason{Code: ReasonRunFailed, Blocking: true, A: r.Label, B: r.Failure})
		}
	}
	for i, w := range []*View{a, b} {
		if len(w.CollectorErrors) > 0 {
			add(Reason{Code: ReasonCollectorFailed, Blocking: true, A: "ab"[i : i+1], B: w.CollectorErrors[0], Value: float64(len(w.CollectorErrors))})
		}
	}
	noise := 0.0
	for _, s := range []*history.Session{a.Session, b.Session} {
		if s != nil && s.Noise > noise {
			noise = s.Noise
		}
	}
	if noise == 0 {
		add(Reason{Code: ReasonNoiseUnknown})
	} else if ra.Score > 0 {
		if change := rb.Score/ra.Score - 1; math.Abs(change) <= noise {
			add(Reason{Code: ReasonWithinNoise, Value: change, Limit: noise})
		}
	}
	if ra.AppCommit != rb.AppCommit && ra.AppCommit != "" && rb.AppCommit != "" {
		add(Reason{Code: ReasonCommitDiffers, A: ra.AppCommit, B: rb.AppCommit})
	}
	if ra.Session != 0 && ra.Session == rb.Session {
		add(Reason{Code: ReasonSameSession, Value: float64(ra.Session)})
	}
	v.Comparable = true
	for _, r := range v.Reasons {
		if r.Blocking {
			v.Comparable = false
		}
	}
	if v.Reasons == nil {
		v.Reasons = []Reason{}
	}
	return v
}
