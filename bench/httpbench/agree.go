package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/bench/internal/measure"
	"github.com/stacktune/stacktune/internal/skip"
)

// endpointRow is one endpoint as stacktune reported it.
type endpointRow struct {
	count     int64
	status    [5]int64
	bytes     int64
	timeTotal float64 // s
	timeMax   float64 // s
}

// stacktuneSummary is what the agreement check needs from
// `stacktune http --format json`.
type stacktuneSummary struct {
	requests  int64
	skipped   int64
	reasons   skip.Counts
	timeTotal float64
	endpoints map[string]endpointRow // by "METHOD pattern"
	learned   []string
}

// stacktuneJSON is the part of `stacktune http --format json` read here.
type stacktuneJSON struct {
	Overall struct {
		Requests  int64   `json:"requests"`
		Endpoints int     `json:"endpoints"`
		TimeTotal float64 `json:"time_total_s"`
	} `json:"overall"`
	Endpoints []struct {
		Method    string  `json:"method"`
		Path      string  `json:"path"`
		Count     int64   `json:"count"`
		TimeTotal float64 `json:"time_total_s"`
		TimeMax   float64 `json:"time_max_s"`
		Bytes     int64   `json:"bytes_total"`
		Status    struct {
			S1xx int64 `json:"1xx"`
			S2xx int64 `json:"2xx"`
			S3xx int64 `json:"3xx"`
			S4xx int64 `json:"4xx"`
			S5xx int64 `json:"5xx"`
		} `json:"status"`
	} `json:"endpoints"`
	GroupsLearned []struct {
		Pattern string `json:"pattern"`
	} `json:"groups_learned"`
	Skipped struct {
		Count   int64       `json:"count"`
		Reasons skip.Counts `json:"reasons"`
	} `json:"skipped"`
}

func endpointKey(method, pattern string) string { return method + " " + pattern }

func readStacktune(path string) (stacktuneSummary, error) {
	var r stacktuneJSON
	if err := measure.ReadJSON(path, &r); err != nil {
		return stacktuneSummary{}, err
	}
	s := stacktuneSummary{requests: r.Overall.Requests, timeTotal: r.Overall.TimeTotal, skipped: r.Skipped.Count,
		reasons: r.Skipped.Reasons, endpoints: map[string]endpointRow{}}
	for _, e := range r.Endpoints {
		st := e.Status
		s.endpoints[endpointKey(e.Method, e.Path)] = endpointRow{count: e.Count, bytes: e.Bytes, timeTotal: e.TimeTotal, timeMax: e.TimeMax,
			status: [5]int64{st.S1xx, st.S2xx, st.S3xx, st.S4xx, st.S5xx}}
	}
	for _, g := range r.GroupsLearned {
		s.learned = append(s.learned, g.Pattern)
	}
	sort.Strings(s.learned)
	return s, nil
}

// timesAgree compares two totals of request time in seconds: equal but
// for float rounding (a relative 1e-6, plus a millisecond).
func timesAgree(a, b float64) bool {
	return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b))+0.001
}

// compareExpected lists every difference between what the generator wrote
// and what stacktune found: the totals, and per endpoint the count, status
// classes, bytes, and total and max request time.
func compareExpected(m logMeta, s stacktuneSummary) []string {
	var out []string
	if s.requests != m.Requests {
		out = append(out, fmt.Sprintf("requests: generator %d, stacktune %d (diff %+d)", m.Requests, s.requests, s.requests-m.Requests))
	}
	if s.skipped != 0 {
		out = append(out, fmt.Sprintf("stacktune skipped %d lines: %v", s.skipped, s.reasons))
	}
	want := float64(m.TimeTotalMs) / 1000
	if !timesAgree(s.timeTotal, want) {
		out = append(out, fmt.Sprintf("request time: generator %.3f s, stacktune %.3f s", want, s.timeTotal))
	}
	seen := map[string]bool{}
	for _, e := range m.Endpoints {
		k := endpointKey(e.Method, e.Pattern)
		seen[k] = true
		got, ok := s.endpoints[k]
		if !ok {
			out = append(out, fmt.Sprintf("%s: generator %d requests, not in stacktune's endpoints", k, e.Count))
			continue
		}
		var diffs []string
		if got.count != e.Count {
			diffs = append(diffs, fmt.Sprintf("count %d, want %d (diff %+d)", got.count, e.Count, got.count-e.Count))
		}
		if got.status != e.Status {
			diffs = append(diffs, fmt.Sprintf("status classes 1xx-5xx %v, want %v", got.status, e.Status))
		}
		if got.bytes != e.Bytes {
			diffs = append(diffs, fmt.Sprintf("bytes %d, want %d", got.bytes, e.Bytes))
		}
		if want := float64(e.TimeTotalMs) / 1000; !timesAgree(got.timeTotal, want) {
			diffs = append(diffs, fmt.Sprintf("time total %.3f s, want %.3f s", got.timeTotal, want))
		}
		if want := float64(e.TimeMaxMs) / 1000; math.Abs(got.timeMax-want) > 1e-9 {
			diffs = append(diffs, fmt.Sprintf("time max %.3f s, want %.3f s", got.timeMax, want))
		}
		if len(diffs) > 0 {
			out = append(out, k+": "+strings.Join(diffs, "; "))
		}
	}
	for _, k := range sortedKeys(s.endpoints) {
		if !seen[k] {
			out = append(out, fmt.Sprintf("%s: stacktune %d requests, not a route of the generator", k, s.endpoints[k].count))
		}
	}
	return out
}

// learnedNotes says when stacktune learned other :name groups than the
// generator's: not a disagreement in itself (the endpoint rows are
// checked), but worth seeing.
func learnedNotes(m logMeta, s stacktuneSummary) []string {
	want := append([]string(nil), m.Learned...)
	sort.Strings(want)
	if strings.Join(want, " ") == strings.Join(s.learned, " ") {
		return nil
	}
	return []string{fmt.Sprintf("stacktune learned groups %v, the generator expects %v", s.learned, want)}
}

// compareStacktune lists differences between two stacktune runs on the
// same log (all cores vs --workers 1).
func compareStacktune(a, b stacktuneSummary, label string) []string {
	var out []string
	if a.requests != b.requests {
		out = append(out, fmt.Sprintf("requests: stacktune %d, stacktune %s %d", a.requests, label, b.requests))
	}
	for _, k := range sortedKeys(a.endpoints) {
		x, ok := b.endpoints[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: only in stacktune, not stacktune %s", k, label))
		case x != a.endpoints[k]:
			out = append(out, fmt.Sprintf("%s: stacktune %+v, stacktune %s %+v", k, a.endpoints[k], label, x))
		}
	}
	for _, k := range sortedKeys(b.endpoints) {
		if _, ok := a.endpoints[k]; !ok {
			out = append(out, fmt.Sprintf("%s: only in stacktune %s", k, label))
		}
	}
	return out
}

func sortedKeys(m map[string]endpointRow) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// goaccessJSON is the part of goaccess 1.7's JSON report read here.
type goaccessJSON struct {
	General struct {
		Total  int64 `json:"total_requests"`
		Valid  int64 `json:"valid_requests"`
		Failed int64 `json:"failed_requests"`
	} `json:"general"`
	Visitors struct {
		Metadata struct {
			Cumts struct {
				Total struct {
					Value int64 `json:"value"`
				} `json:"total"`
			} `json:"cumts"`
		} `json:"metadata"`
	} `json:"visitors"`
}

func readGoaccess(path string) (goaccessCounts, error) {
	var r goaccessJSON
	if err := measure.ReadJSON(path, &r); err != nil {
		return goaccessCounts{}, err
	}
	g := r.General
	return goaccessCounts{total: g.Total, valid: g.Valid, failed: g.Failed, timeUs: r.Visitors.Metadata.Cumts.Total.Value}, nil
}

// compareGoaccess checks that goaccess parsed every line.
func compareGoaccess(m logMeta, g goaccessCounts) []string {
	var out []string
	if g.valid != m.Requests || g.total != m.Requests || g.failed != 0 {
		out = append(out, fmt.Sprintf("goaccess: total %d, valid %d, failed %d requests; the generator wrote %d",
			g.total, g.valid, g.failed, m.Requests))
	}
	return out
}

// goaccessTimeNote compares goaccess's cumulative time served with the
// generator's: goaccess keeps microseconds converted from a float, so it
// may be off by a few microseconds per request, and this is a note only.
func goaccessTimeNote(want float64, g goaccessCounts) []string {
	got := float64(g.timeUs) / 1e6
	if math.Abs(got-want) <= 1e-5*want+0.001 {
		return nil
	}
	return []string{fmt.Sprintf("goaccess's cumulative time served is %.3f s, the generator's request time %.3f s", got, want)}
}

// readAwk sums the awk program's output: "METHOD PATH COUNT SUM MAX" per
// key.
func readAwk(path string) (awkAnswer, error) {
	f, err := os.Open(path)
	if err != nil {
		return awkAnswer{}, err
	}
	defer f.Close()
	var a awkAnswer
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 {
			return a, fmt.Errorf("%s: unexpected line %q", path, sc.Text())
		}
		n := len(fields)
		c, err1 := strconv.ParseInt(fields[n-3], 10, 64)
		s, err2 := strconv.ParseFloat(fields[n-2], 64)
		if err1 != nil || err2 != nil {
			return a, fmt.Errorf("%s: unexpected line %q", path, sc.Text())
		}
		a.keys++
		a.requests += c
		a.time += s
	}
	return a, sc.Err()
}

// compareAwk checks an awk's totals against the generator and stacktune.
func compareAwk(name string, m logMeta, s stacktuneSummary, a awkAnswer) []string {
	var out []string
	if a.requests != m.Requests {
		out = append(out, fmt.Sprintf("requests: generator %d, %s %d (diff %+d)", m.Requests, name, a.requests, a.requests-m.Requests))
	}
	if !timesAgree(a.time, s.timeTotal) {
		out = append(out, fmt.Sprintf("request time: stacktune %.3f s, %s %.3f s", s.timeTotal, name, a.time))
	}
	return out
}
