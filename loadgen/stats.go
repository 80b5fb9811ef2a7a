package loadgen

import (
	"sort"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry: 1µs..60s in microseconds, 3 significant digits
// (about 140 KB per histogram).
const (
	histMin     = 1
	histMax     = 60_000_000
	histSigFigs = 3
)

// maxDetails is how many distinct details are kept per kind and step.
const maxDetails = 5

// maxShards bounds the number of per-worker recorders: with more users
// than this, users share recorders (under their mutex), so memory stays
// bounded at maxShards histograms per step whatever Connections is.
const maxShards = 64

// maxSteps bounds the steps recorded: a Sample.Step beyond counts in the
// last one.
const maxSteps = 1024

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histSigFigs) }

// stepStats accumulates one step's samples in one shard.
type stepStats struct {
	hist     *hdrhistogram.Histogram
	requests int64
	errors   int64
	bytes    int64
	byKind   map[ErrKind]int64
	details  map[ErrKind][]string
}

func (s *stepStats) add(x *Sample) {
	s.requests++
	s.bytes += x.Bytes
	if x.Err != OK {
		s.errors++
		if s.byKind == nil {
			s.byKind = map[ErrKind]int64{}
		}
		s.byKind[x.Err]++
		if x.Detail != "" {
			if s.details == nil {
				s.details = map[ErrKind][]string{}
			}
			s.details[x.Err] = addDetail(s.details[x.Err], x.Detail)
		}
	}
	if hasLatency(x.Err) {
		s.hist.RecordValue(micros(x.Latency))
	}
}

// hasLatency says whether a sample's latency is recorded: responses
// (whatever their status or check) and timeouts, not failures that
// happened before any response could come (refused, reset, garbage).
func hasLatency(k ErrKind) bool {
	return k == OK || k == ErrStatus || k == ErrCheck || k == ErrTimeout
}

func addDetail(ds []string, d string) []string {
	if len(ds) >= maxDetails {
		return ds
	}
	for _, x := range ds {
		if x == d {
			return ds
		}
	}
	return append(ds, d)
}

func micros(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	switch {
	case us < histMin:
		return histMin
	case us > histMax:
		return histMax
	}
	return us
}

// shard is one recorder: a worker's own, or shared by a few workers when
// there are more than maxShards.
type shard struct {
	mu       sync.Mutex
	steps    []*stepStats
	warmReqs int64
	// inFlight holds the start (the origin of Sample.Latency) of each
	// request in flight at the end of the measured phase.
	inFlight []time.Time
	unsent   int64         // open model: due tickets taken but never sent
	longest  time.Duration // longest Sample.Latency of the measured requests
	_        [64]byte      // keep shards' hot fields on separate cache lines
}

func (sh *shard) step(i int) *stepStats {
	for i >= len(sh.steps) {
		sh.steps = append(sh.steps, &stepStats{hist: newHist()})
	}
	return sh.steps[i]
}

func (sh *shard) record(x *Sample) {
	i := min(max(x.Step, 0), maxSteps-1)
	sh.mu.Lock()
	sh.step(i).add(x)
	sh.longest = max(sh.longest, x.Latency)
	sh.mu.Unlock()
}

func (sh *shard) recordWarm() {
	sh.mu.Lock()
	sh.warmReqs++
	sh.mu.Unlock()
}

// addInFlight counts a request that had not completed when the measured
// phase ended; start is the origin of its latency (the intended send time
// in the open model, the send time in the closed one).
func (sh *shard) addInFlight(start time.Time) {
	sh.mu.Lock()
	sh.inFlight = append(sh.inFlight, start)
	sh.mu.Unlock()
}

// addUnsent counts a due ticket a worker took but did not send.
func (sh *shard) addUnsent() {
	sh.mu.Lock()
	sh.unsent++
	sh.mu.Unlock()
}

// totals merges every shard (for Progress): completed requests, errors,
// warm-up requests and the overall histogram, into h (reset first).
func totals(shards []*shard, h *hdrhistogram.Histogram) (reqs, errs, warm int64) {
	h.Reset()
	for _, sh := range shards {
		sh.mu.Lock()
		warm += sh.warmReqs
		for _, st := range sh.steps {
			reqs += st.requests
			errs += st.errors
			if st.hist.TotalCount() > 0 {
				h.Merge(st.hist)
			}
		}
		sh.mu.Unlock()
	}
	return reqs, errs, warm
}

// merge builds the result's counts, steps and latencies from the shards,
// and applies the stalled rule to the requests in flight at end (see
// stalled); the caller sets the run's own fields.
func merge(shards []*shard, names []string, elapsed time.Duration, end time.Time) *Result {
	n := len(names)
	for _, sh := range shards {
		n = max(n, len(sh.steps))
	}
	if n == 0 {
		n = 1
	}
	all := newHist()
	r := &Result{ErrorsByKind: map[ErrKind]int64{}}
	for i := 0; i < n; i++ {
		h := newHist()
		sr := StepResult{Name: stepName(names, i), ErrorsByKind: map[ErrKind]int64{}}
		details := map[ErrKind][]string{}
		for _, sh := range shards {
			sh.mu.Lock()
			if i < len(sh.steps) {
				st := sh.steps[i]
				sr.Requests += st.requests
				sr.Errors += st.errors
				sr.Bytes += st.bytes
				for k, c := range st.byKind {
					sr.ErrorsByKind[k] += c
				}
				for k, ds := range st.details {
					for _, d := range ds {
						details[k] = addDetail(details[k], d)
					}
				}
				h.Merge(st.hist)
			}
			sh.mu.Unlock()
		}
		kinds := make([]string, 0, len(details))
		for k := range details {
			kinds = append(kinds, string(k))
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			for _, d := range details[ErrKind(k)] {
				sr.Details = append(sr.Details, k+": "+d)
			}
		}
		sr.Latency = summarise(h)
		sr.RPS = perSecond(sr.Requests, elapsed)
		all.Merge(h)
		r.Requests += sr.Requests
		r.Errors += sr.Errors
		r.Bytes += sr.Bytes
		for k, c := range sr.ErrorsByKind {
			r.ErrorsByKind[k] += c
		}
		r.Steps = append(r.Steps, sr)
	}
	var starts []time.Time
	for _, sh := range shards {
		sh.mu.Lock()
		r.WarmUpRequests += sh.warmReqs
		starts = append(starts, sh.inFlight...)
		r.Unsent += sh.unsent
		r.StalledAfter = max(r.StalledAfter, sh.longest)
		sh.mu.Unlock()
	}
	r.InFlight = int64(len(starts))
	r.Stalled = stalled(starts, end, r.StalledAfter, r.Requests)
	r.Latency = summarise(all)
	r.RPS = perSecond(r.Requests, elapsed)
	r.Elapsed = elapsed
	return r
}

// stalled applies the stalled rule to the requests in flight at end,
// started at starts (the origins of their latencies): a request is stalled
// when its age at end (end − start) exceeds longest, the longest latency
// of the completed requests, or when no request completed (completed ==
// 0): a server that never answers stalls them all. The younger ones were
// cut by the end of the run, not failed by the server: a completed
// request took as long.
func stalled(starts []time.Time, end time.Time, longest time.Duration, completed int64) int64 {
	if completed <= 0 {
		return int64(len(starts))
	}
	var n int64
	for _, s := range starts {
		if end.Sub(s) > longest {
			n++
		}
	}
	return n
}

func stepName(names []string, i int) string {
	if i < len(names) {
		return names[i]
	}
	if i == 0 {
		return "request"
	}
	return "step " + itoa(int64(i))
}

func summarise(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	return Latency{
		Mean: time.Duration(h.Mean() * float64(time.Microsecond)),
		P50:  us(h.ValueAtQuantile(50)),
		P90:  us(h.ValueAtQuantile(90)),
		P99:  us(h.ValueAtQuantile(99)),
		Max:  us(h.Max()),
	}
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// itoa formats n without fmt (used on hot error paths too).
func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
