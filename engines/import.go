package engines

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/scenario"
)

// Imported is a run another engine measured, in stacktune's terms.
type Imported struct {
	// Engine is "locust" or "k6".
	Engine string
	// Result is the run in the scenario's step order (Workload order).
	Result *loadgen.Result
	// Slow counts the slow responses per step, in the same order.
	Slow []int64
	// Notes say what the engine's output could not tell (failure kinds
	// from Locust's JSON, which has none).
	Notes []string
}

// Score scores the run with the scenario, slow responses included.
func (im *Imported) Score(s *scenario.Scenario) scenario.ScoreResult {
	return s.ScoreSlow(im.Result, im.Slow)
}

// ImportOptions describe the run being imported, where its files cannot.
type ImportOptions struct {
	// Rate is the open model's total rate it ran at (0: closed model).
	Rate float64
	// Users is how many virtual users it ran (0: unknown).
	Users int
	// KeepAlive is whether connections were reused (both engines do by
	// default).
	KeepAlive bool
}

// Bounds on the files read, far above what a run writes (a Locust stats
// file has a row per step; a summary a few KB).
const (
	// MaxResultFile bounds each file imported.
	MaxResultFile = 64 << 20
	// MaxRows bounds the rows of a CSV file, the entries of Locust's JSON
	// and the metrics of a k6 summary.
	MaxRows = 100_000
)

// ErrFormat is wrapped by every error about an engine's file that is not
// what its engine writes.
var ErrFormat = errors.New("not the engine's result format")

// readBounded reads a regular file of at most MaxResultFile bytes (a FIFO
// is refused without blocking).
func readBounded(path string) ([]byte, error) {
	b, err := input.ReadFile(path, MaxResultFile)
	if errors.Is(err, input.ErrTooLarge) {
		return nil, fmt.Errorf("%w (engines.MaxResultFile)", err)
	}
	return b, err
}

// stepIndex maps the scenario's step names to their Workload index.
func stepIndex(s *scenario.Scenario) map[string]int {
	idx := map[string]int{}
	for i, n := range s.StepNames() {
		idx[n] = i
	}
	return idx
}

// newResult is an empty result with the scenario's steps.
func newResult(s *scenario.Scenario, opt ImportOptions) *loadgen.Result {
	r := &loadgen.Result{ErrorsByKind: map[loadgen.ErrKind]int64{}, Model: "closed", Connections: opt.Users, Rate: opt.Rate}
	if opt.Rate > 0 {
		r.Model = "open"
	}
	for _, n := range s.StepNames() {
		r.Steps = append(r.Steps, loadgen.StepResult{Name: n, ErrorsByKind: map[loadgen.ErrKind]int64{}})
	}
	return r
}

// finish sums the steps into the run's totals; name is the file, for a
// sum out of range.
func finish(name string, r *loadgen.Result) error {
	r.Requests, r.Errors, r.Bytes = 0, 0, 0
	for i := range r.Steps {
		st := &r.Steps[i]
		for _, c := range []struct {
			field string
			sum   *int64
			n     int64
		}{{"requests", &r.Requests, st.Requests}, {"failures", &r.Errors, st.Errors}, {"bytes", &r.Bytes, st.Bytes}} {
			if err := addCount(c.sum, c.n); err != nil {
				return fmt.Errorf("%s: the steps' %s %w: %w", name, c.field, err, ErrFormat)
			}
		}
		for k, n := range st.ErrorsByKind {
			if err := addKind(r.ErrorsByKind, k, n); err != nil {
				return fmt.Errorf("%s: the steps' %s failures %w: %w", name, k, err, ErrFormat)
			}
		}
		if r.Elapsed > 0 {
			st.RPS = float64(st.Requests) / r.Elapsed.Seconds()
		}
	}
	if r.Elapsed > 0 {
		r.RPS = float64(r.Requests) / r.Elapsed.Seconds()
	}
	return nil
}

// Every number an import turns into a count or a duration is checked
// against these bounds first: a float past them would not convert (Go's
// conversion of an out-of-range float is undefined: 1e300 ms became
// -9223372036854774µs), and sums of counts below maxCount, over at most
// maxRows rows or entries, cannot overflow an int64.
const (
	// maxCount is the most requests, failures or bytes a file may give
	// (one number or a sum): exact in a float64, and far past any run.
	maxCount = 1e15
	// maxDuration is the longest latency or run a file may give.
	maxDuration = 365 * 24 * time.Hour
)

// floatCount is a count a file wrote as a number: NaN, infinities,
// negatives, fractions and more than maxCount are errors.
func floatCount(v float64) (int64, error) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
		return 0, fmt.Errorf("%v is not a count", v)
	case v != math.Trunc(v):
		return 0, fmt.Errorf("%v is not a count: a fraction", v)
	case v > maxCount:
		return 0, fmt.Errorf("%v is out of range (at most 1e15)", v)
	}
	return int64(v), nil
}

// checkCount checks a count a file wrote as an integer.
func checkCount(n int64) error {
	if n < 0 || n > maxCount {
		return fmt.Errorf("%d is out of range (0 to 1e15)", n)
	}
	return nil
}

// addCount adds n (checked) to *sum, failing when the sum would pass
// maxCount.
func addCount(sum *int64, n int64) error {
	if err := checkCount(n); err != nil {
		return err
	}
	if *sum > maxCount-n {
		return fmt.Errorf("add up to more than 1e15")
	}
	*sum += n
	return nil
}

// addKind adds n to m[k], as addCount.
func addKind(m map[loadgen.ErrKind]int64, k loadgen.ErrKind, n int64) error {
	v := m[k]
	if err := addCount(&v, n); err != nil {
		return err
	}
	m[k] = v
	return nil
}

// msDuration is a duration a file wrote in milliseconds: NaN,
// infinities, negatives and more than maxDuration are errors.
func msDuration(ms float64) (time.Duration, error) { return duration(ms, time.Millisecond, "ms") }

// secDuration is a duration in seconds, as msDuration.
func secDuration(s float64) (time.Duration, error) { return duration(s, time.Second, "s") }

func duration(v float64, unit time.Duration, unitName string) (time.Duration, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > float64(maxDuration/unit) {
		return 0, fmt.Errorf("%v %s is out of range (0 to a year)", v, unitName)
	}
	return time.Duration(math.Round(v * float64(unit))), nil
}

// locustStatsColumns are the columns ImportLocustCSV needs.
var locustStatsColumns = []string{"Type", "Name", "Request Count", "Failure Count", "Average Response Time", "Max Response Time", "Average Content Size", "Requests/s", "50%", "90%", "99%"}

// ImportLocustCSV reads the files `locust --csv PREFIX` writes:
// PREFIX_stats.csv (counts and percentiles per step, and the Aggregated
// row) and PREFIX_failures.csv (failures by step and message; the
// exported file's messages start with stacktune's error kind). The start
// comes from PREFIX_stats_history.csv when it is there.
func ImportLocustCSV(prefix string, s *scenario.Scenario, opt ImportOptions) (*Imported, error) {
	statsPath := prefix + "_stats.csv"
	b, err := readBounded(statsPath)
	if err != nil {
		return nil, fmt.Errorf("locust stats: %w", err)
	}
	var failures []byte
	failPath := prefix + "_failures.csv"
	if fb, err := readBounded(failPath); err == nil {
		failures = fb
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("locust failures: %w", err)
	}
	im, err := locustCSV(statsPath, b, failPath, failures, s, opt)
	if err != nil {
		return nil, err
	}
	if hb, err := readBounded(prefix + "_stats_history.csv"); err == nil {
		if t, ok := firstTimestamp(hb); ok {
			im.Result.Started = t
		}
	}
	if failures == nil {
		im.Notes = append(im.Notes, "no "+failPath+": failures are charged the default penalty")
	}
	return im, nil
}

// locustCSV parses the stats and failures files' contents.
func locustCSV(statsName string, stats []byte, failName string, failures []byte, s *scenario.Scenario, opt ImportOptions) (*Imported, error) {
	rows, err := readCSV(statsName, stats, locustStatsColumns)
	if err != nil {
		return nil, err
	}
	idx := stepIndex(s)
	r := newResult(s, opt)
	im := &Imported{Engine: "locust", Result: r, Slow: make([]int64, len(r.Steps))}
	var agg *csvRow
	for i := range rows {
		row := &rows[i]
		name := row.get("Name")
		if row.get("Type") == "" && name == "Aggregated" {
			agg = row
			continue
		}
		j, ok := idx[name]
		if !ok {
			return nil, fmt.Errorf("%s:%d: step %q is not in scenario %s: import the results of this scenario's export: %w", statsName, row.line, name, s.Name, ErrFormat)
		}
		count, err := row.count("Request Count")
		if err != nil {
			return nil, err
		}
		if row.get("Type") == SlowType {
			if err := addCount(&im.Slow[j], count); err != nil {
				return nil, row.errorf("step %s's slow responses %w", name, err)
			}
			continue
		}
		fails, err := row.count("Failure Count")
		if err != nil {
			return nil, err
		}
		if fails > count {
			return nil, fmt.Errorf("%s:%d: %d failures of %d requests: %w", statsName, row.line, fails, count, ErrFormat)
		}
		st := &r.Steps[j]
		if err := addCount(&st.Requests, count); err != nil {
			return nil, row.errorf("step %s's requests %w", name, err)
		}
		if err := addCount(&st.Errors, fails); err != nil {
			return nil, row.errorf("step %s's failures %w", name, err)
		}
		size, err := row.num("Average Content Size")
		if err != nil {
			return nil, err
		}
		bytes, err := floatCount(math.Trunc(size * float64(count)))
		if err != nil {
			return nil, row.errorf("Average Content Size %v × Request Count %d bytes: %w", size, count, err)
		}
		if err := addCount(&st.Bytes, bytes); err != nil {
			return nil, row.errorf("step %s's bytes %w", name, err)
		}
		if st.Latency, err = row.latency(); err != nil {
			return nil, err
		}
	}
	if agg == nil {
		return nil, fmt.Errorf("%s: no Aggregated row: %w", statsName, ErrFormat)
	}
	if err := checkLocustAggregate(statsName, rows, agg); err != nil {
		return nil, err
	}
	count, err := agg.count("Request Count")
	if err != nil {
		return nil, err
	}
	rps, err := agg.num("Requests/s")
	if err != nil {
		return nil, err
	}
	if rps > 0 && count > 0 {
		if r.Elapsed, err = secDuration(float64(count) / rps); err != nil {
			return nil, agg.errorf("the run's length, Request Count %d over Requests/s %v: %w", count, rps, err)
		}
	}
	if r.Latency, err = agg.latency(); err != nil {
		return nil, err
	}
	if err := locustFailures(failName, failures, idx, r); err != nil {
		return nil, err
	}
	if err := finish(statsName, r); err != nil {
		return nil, err
	}
	return im, nil
}

// locustError unwraps Locust's repr of a failure: CatchResponseError('status: ...').
var locustError = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*\((['"])(.*)['"]\)$`)

// locustFailures charges each step's failures to their kinds.
func locustFailures(name string, b []byte, idx map[string]int, r *loadgen.Result) error {
	if b == nil {
		return nil
	}
	rows, err := readCSV(name, b, []string{"Name", "Error", "Occurrences"})
	if err != nil {
		return err
	}
	for _, row := range rows {
		j, ok := idx[row.get("Name")]
		if !ok {
			return fmt.Errorf("%s:%d: step %q is not in the scenario: %w", name, row.line, row.get("Name"), ErrFormat)
		}
		n, err := row.count("Occurrences")
		if err != nil {
			return err
		}
		msg := row.get("Error")
		if m := locustError.FindStringSubmatch(msg); m != nil {
			msg = pyUnquote(m[2])
		}
		kind := loadgen.ErrOther
		if k, _, ok := strings.Cut(msg, ":"); ok && slices.Contains(errorKinds, loadgen.ErrKind(k)) {
			kind = loadgen.ErrKind(k)
		}
		st := &r.Steps[j]
		if err := addKind(st.ErrorsByKind, kind, n); err != nil {
			return row.errorf("step %s's %s failures %w", row.get("Name"), kind, err)
		}
		if len(st.Details) < 3 {
			st.Details = append(st.Details, msg)
		}
	}
	// A step cannot have more failures by kind than failures.
	for _, st := range r.Steps {
		var sum int64
		for _, n := range st.ErrorsByKind {
			sum += n // each at most maxCount, a few kinds
		}
		if sum > st.Errors {
			return fmt.Errorf("%s: step %q has %d failures by message, %d in the stats: files of two runs? %w", name, st.Name, sum, st.Errors, ErrFormat)
		}
	}
	return nil
}

type csvRow struct {
	file string
	line int
	cols map[string]int
	rec  []string
}

func (r *csvRow) get(col string) string {
	i, ok := r.cols[col]
	if !ok || i >= len(r.rec) {
		return ""
	}
	return r.rec[i]
}

func (r *csvRow) num(col string) (float64, error) {
	v := strings.TrimSpace(r.get(col))
	if v == "" || v == "N/A" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("%s:%d: %s %q is not a number of 0 or more: %w", r.file, r.line, col, v, ErrFormat)
	}
	return f, nil
}

func (r *csvRow) count(col string) (int64, error) {
	f, err := r.num(col)
	if err != nil {
		return 0, err
	}
	n, err := floatCount(f)
	if err != nil {
		return 0, r.errorf("%s %w", col, err)
	}
	return n, nil
}

// errorf is an error about the row's file and line.
func (r *csvRow) errorf(format string, a ...any) error {
	return fmt.Errorf("%s:%d: %w: %w", r.file, r.line, fmt.Errorf(format, a...), ErrFormat)
}

func (r *csvRow) latency() (loadgen.Latency, error) {
	var l loadgen.Latency
	for _, c := range []struct {
		col string
		d   *time.Duration
	}{{"Average Response Time", &l.Mean}, {"50%", &l.P50}, {"90%", &l.P90}, {"99%", &l.P99}, {"Max Response Time", &l.Max}} {
		v, err := r.num(c.col)
		if err != nil {
			return l, err
		}
		if *c.d, err = msDuration(v); err != nil {
			return l, r.errorf("%s %w", c.col, err)
		}
	}
	return l, nil
}

// readCSV reads a CSV file with a header naming at least need.
func readCSV(name string, b []byte, need []string) ([]csvRow, error) {
	cr := csv.NewReader(bytes.NewReader(b))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: no header: %w (%w)", name, err, ErrFormat)
	}
	cols := map[string]int{}
	for i, h := range head {
		cols[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range need {
		if _, ok := cols[c]; !ok {
			return nil, fmt.Errorf("%s: no column %q: %w", name, c, ErrFormat)
		}
	}
	var rows []csvRow
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w (%w)", name, err, ErrFormat)
		}
		if len(rows) >= MaxRows {
			return nil, fmt.Errorf("%s: more than %d rows (engines.MaxRows): %w", name, MaxRows, ErrFormat)
		}
		rows = append(rows, csvRow{file: name, line: line, cols: cols, rec: rec})
	}
	return rows, nil
}

// firstTimestamp is the first Timestamp of a stats history file.
func firstTimestamp(b []byte) (time.Time, bool) {
	rows, err := readCSV("history", b, []string{"Timestamp"})
	if err != nil || len(rows) == 0 {
		return time.Time{}, false
	}
	ts, err := strconv.ParseInt(strings.TrimSpace(rows[0].get("Timestamp")), 10, 64)
	if err != nil || ts <= 0 || ts > 1<<40 {
		return time.Time{}, false
	}
	return time.Unix(ts, 0).UTC(), true
}

// locustJSONEntry is one entry of `locust --json`.
type locustJSONEntry struct {
	Name               string           `json:"name"`
	Method             string           `json:"method"`
	NumRequests        int64            `json:"num_requests"`
	NumNoneRequests    int64            `json:"num_none_requests"`
	NumFailures        int64            `json:"num_failures"`
	TotalResponseTime  float64          `json:"total_response_time"`
	MaxResponseTime    float64          `json:"max_response_time"`
	TotalContentLength int64            `json:"total_content_length"`
	ResponseTimes      map[string]int64 `json:"response_times"`
	StartTime          float64          `json:"start_time"`
	LastRequest        float64          `json:"last_request_timestamp"`
}

// ImportLocustJSON reads the statistics `locust --json` prints (Locust
// 2.10 and later): a list of entries with each step's counts and its
// response-time histogram. It holds no failure messages, so failures are
// charged the default penalty (Notes says so).
func ImportLocustJSON(path string, s *scenario.Scenario, opt ImportOptions) (*Imported, error) {
	b, err := readBounded(path)
	if err != nil {
		return nil, fmt.Errorf("locust json: %w", err)
	}
	return locustJSON(path, b, s, opt)
}

func locustJSON(name string, b []byte, s *scenario.Scenario, opt ImportOptions) (*Imported, error) {
	var entries []locustJSONEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("%s: %w (%w)", name, err, ErrFormat)
	}
	if len(entries) > MaxRows {
		return nil, fmt.Errorf("%s: more than %d entries (engines.MaxRows): %w", name, MaxRows, ErrFormat)
	}
	idx := stepIndex(s)
	r := newResult(s, opt)
	im := &Imported{Engine: "locust", Result: r, Slow: make([]int64, len(r.Steps)),
		Notes: []string{"Locust's JSON has no failure messages: failures are charged the default penalty (import the --csv files for their kinds)"}}
	all := map[float64]int64{}
	var start, end, total float64
	var timed, allTimes int64 // requests with a time; response times counted
	for i, e := range entries {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%s: entry %d (%s): %w: %w", name, i, e.Name, fmt.Errorf(format, a...), ErrFormat)
		}
		j, ok := idx[e.Name]
		if !ok {
			return nil, fmt.Errorf("%s: entry %d: step %q is not in scenario %s: %w", name, i, e.Name, s.Name, ErrFormat)
		}
		for _, c := range []struct {
			field string
			n     int64
		}{{"num_requests", e.NumRequests}, {"num_failures", e.NumFailures}, {"num_none_requests", e.NumNoneRequests}, {"total_content_length", e.TotalContentLength}} {
			if err := checkCount(c.n); err != nil {
				return nil, bad("%s %w", c.field, err)
			}
		}
		if e.NumFailures > e.NumRequests || e.NumNoneRequests > e.NumRequests {
			return nil, bad("counts out of range: %d failures and %d without a time of %d requests", e.NumFailures, e.NumNoneRequests, e.NumRequests)
		}
		for _, c := range []struct {
			field string
			v     float64
		}{{"start_time", e.StartTime}, {"last_request_timestamp", e.LastRequest}} {
			if c.v < 0 || c.v > maxEpoch {
				return nil, bad("%s %v is out of range (seconds since 1970, at most %v)", c.field, c.v, float64(maxEpoch))
			}
		}
		if e.Method == SlowType {
			if err := addCount(&im.Slow[j], e.NumRequests); err != nil {
				return nil, bad("slow responses %w", err)
			}
			continue
		}
		st := &r.Steps[j]
		if err := addCount(&st.Requests, e.NumRequests); err != nil {
			return nil, bad("requests %w", err)
		}
		if err := addCount(&st.Errors, e.NumFailures); err != nil {
			return nil, bad("failures %w", err)
		}
		if err := addKind(st.ErrorsByKind, scenario.PenaltyDefault, e.NumFailures); err != nil {
			return nil, bad("failures %w", err)
		}
		if err := addCount(&st.Bytes, e.TotalContentLength); err != nil {
			return nil, bad("bytes %w", err)
		}
		hist := map[float64]int64{}
		var times int64
		for k, n := range e.ResponseTimes {
			v, err := strconv.ParseFloat(k, 64)
			if err != nil {
				return nil, bad("response time %q is not a number", k)
			}
			if _, err := msDuration(v); err != nil {
				return nil, bad("response time %q: %w", k, err)
			}
			if err := checkCount(n); err != nil {
				return nil, bad("response time %q: count %w", k, err)
			}
			if addCount(&times, n) != nil || addCount(&allTimes, n) != nil {
				return nil, bad("response time %q: the counts add up to more than 1e15", k)
			}
			hist[v] += n
			all[v] += n
		}
		n := e.NumRequests - e.NumNoneRequests
		if n > 0 {
			var err error
			if st.Latency, err = histLatency(hist, e.TotalResponseTime/float64(n), e.MaxResponseTime); err != nil {
				return nil, bad("%w", err)
			}
			total += e.TotalResponseTime
			if err := addCount(&timed, n); err != nil {
				return nil, bad("timed requests %w", err)
			}
		}
		if e.StartTime > 0 && (start == 0 || e.StartTime < start) {
			start = e.StartTime
		}
		end = max(end, e.LastRequest)
	}
	if timed > 0 {
		var mx float64
		for v := range all {
			mx = max(mx, v)
		}
		var err error
		if r.Latency, err = histLatency(all, total/float64(timed), mx); err != nil {
			return nil, fmt.Errorf("%s: all entries: %w: %w", name, err, ErrFormat)
		}
	}
	if start > 0 && end > start {
		sec, frac := math.Modf(start)
		r.Started = time.Unix(int64(sec), int64(frac*1e9)).UTC()
		var err error
		if r.Elapsed, err = secDuration(end - start); err != nil {
			return nil, fmt.Errorf("%s: the run's length, from the first start_time to the last last_request_timestamp: %w: %w", name, err, ErrFormat)
		}
	}
	if err := finish(name, r); err != nil {
		return nil, err
	}
	return im, nil
}

// maxEpoch is the latest time, in seconds since 1970, an import takes
// (as firstTimestamp): past it is not a time a run was made.
const maxEpoch = 1 << 40

// histLatency reads percentiles from a histogram of response times (ms,
// each checked by msDuration, the counts adding up to at most maxCount),
// with the mean and the max as the file gives them.
func histLatency(h map[float64]int64, mean, maxMS float64) (loadgen.Latency, error) {
	keys := make([]float64, 0, len(h))
	var n int64
	for k, c := range h {
		keys = append(keys, k)
		n += c
	}
	slices.Sort(keys)
	at := func(q float64) time.Duration {
		if n == 0 {
			return 0
		}
		want := int64(math.Ceil(q * float64(n)))
		var seen int64
		k := keys[len(keys)-1]
		for _, key := range keys {
			if seen += h[key]; seen >= want {
				k = key
				break
			}
		}
		d, _ := msDuration(k) // checked when read
		return d
	}
	l := loadgen.Latency{P50: at(0.5), P90: at(0.9), P99: at(0.99)}
	var err error
	if l.Mean, err = msDuration(mean); err != nil {
		return l, fmt.Errorf("mean response time (total_response_time over the timed requests) %w", err)
	}
	if l.Max, err = msDuration(maxMS); err != nil {
		return l, fmt.Errorf("max_response_time %w", err)
	}
	return l, nil
}

// pyUnquote undoes the escapes of a Python string's repr: \\, \', \",
// \n, \t, \r, \xNN, \uNNNN. Anything else is kept as written.
func pyUnquote(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case '\\', '\'', '"':
			b.WriteByte(c)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'x', 'u':
			n := 2
			if c == 'u' {
				n = 4
			}
			if i+1+n <= len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += n
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}
