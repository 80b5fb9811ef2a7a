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

// Bounds on the files read.
const (
	maxResultFile = 64 << 20
	maxRows       = 100_000
)

// ErrFormat is wrapped by every error about an engine's file that is not
// what its engine writes.
var ErrFormat = errors.New("not the engine's result format")

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxResultFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxResultFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxResultFile)
	}
	return b, nil
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

// finish sums the steps into the run's totals.
func finish(r *loadgen.Result) {
	r.Requests, r.Errors, r.Bytes = 0, 0, 0
	for i := range r.Steps {
		st := &r.Steps[i]
		r.Requests += st.Requests
		r.Errors += st.Errors
		r.Bytes += st.Bytes
		for k, n := range st.ErrorsByKind {
			r.ErrorsByKind[k] += n
		}
		if r.Elapsed > 0 {
			st.RPS = float64(st.Requests) / r.Elapsed.Seconds()
		}
	}
	if r.Elapsed > 0 {
		r.RPS = float64(r.Requests) / r.Elapsed.Seconds()
	}
}

func msDur(v float64) time.Duration {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return time.Duration(math.Round(v * float64(time.Millisecond)))
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
			im.Slow[j] += count
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
		st.Requests += count
		st.Errors += fails
		size, _ := row.num("Average Content Size")
		st.Bytes += int64(size * float64(count))
		if st.Latency, err = row.latency(); err != nil {
			return nil, err
		}
	}
	if agg == nil {
		return nil, fmt.Errorf("%s: no Aggregated row: %w", statsName, ErrFormat)
	}
	count, err := agg.count("Request Count")
	if err != nil {
		return nil, err
	}
	if rps, err := agg.num("Requests/s"); err == nil && rps > 0 && count > 0 {
		r.Elapsed = time.Duration(float64(count) / rps * float64(time.Second))
	}
	if r.Latency, err = agg.latency(); err != nil {
		return nil, err
	}
	if err := locustFailures(failName, failures, idx, r); err != nil {
		return nil, err
	}
	finish(r)
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
		st.ErrorsByKind[kind] += n
		if len(st.Details) < 3 {
			st.Details = append(st.Details, msg)
		}
	}
	// A step cannot have more failures by kind than failures.
	for _, st := range r.Steps {
		var sum int64
		for _, n := range st.ErrorsByKind {
			sum += n
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
	if f != math.Trunc(f) || f > 1e15 {
		return 0, fmt.Errorf("%s:%d: %s %v is not a count: %w", r.file, r.line, col, f, ErrFormat)
	}
	return int64(f), nil
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
		*c.d = msDur(v)
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
		if len(rows) >= maxRows {
			return nil, fmt.Errorf("%s: more than %d rows: %w", name, maxRows, ErrFormat)
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
	if len(entries) > maxRows {
		return nil, fmt.Errorf("%s: more than %d entries: %w", name, maxRows, ErrFormat)
	}
	idx := stepIndex(s)
	r := newResult(s, opt)
	im := &Imported{Engine: "locust", Result: r, Slow: make([]int64, len(r.Steps)),
		Notes: []string{"Locust's JSON has no failure messages: failures are charged the default penalty (import the --csv files for their kinds)"}}
	all := map[float64]int64{}
	var start, end, total float64
	var timed int64
	for i, e := range entries {
		j, ok := idx[e.Name]
		if !ok {
			return nil, fmt.Errorf("%s: entry %d: step %q is not in scenario %s: %w", name, i, e.Name, s.Name, ErrFormat)
		}
		if e.NumRequests < 0 || e.NumFailures < 0 || e.NumNoneRequests < 0 || e.NumFailures > e.NumRequests || e.NumNoneRequests > e.NumRequests || e.TotalContentLength < 0 {
			return nil, fmt.Errorf("%s: entry %d (%s): counts out of range: %w", name, i, e.Name, ErrFormat)
		}
		if e.Method == SlowType {
			im.Slow[j] += e.NumRequests
			continue
		}
		st := &r.Steps[j]
		st.Requests += e.NumRequests
		st.Errors += e.NumFailures
		st.ErrorsByKind[scenario.PenaltyDefault] += e.NumFailures
		st.Bytes += e.TotalContentLength
		hist := map[float64]int64{}
		for k, n := range e.ResponseTimes {
			v, err := strconv.ParseFloat(k, 64)
			if err != nil || v < 0 || n < 0 || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: entry %d (%s): response time %q: %w", name, i, e.Name, k, ErrFormat)
			}
			hist[v] += n
			all[v] += n
		}
		n := e.NumRequests - e.NumNoneRequests
		if n > 0 {
			st.Latency = histLatency(hist, e.TotalResponseTime/float64(n), e.MaxResponseTime)
			total += e.TotalResponseTime
			timed += n
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
		r.Latency = histLatency(all, total/float64(timed), mx)
	}
	if start > 0 && end > start {
		r.Started = time.Unix(0, int64(start*1e9)).UTC()
		r.Elapsed = time.Duration((end - start) * float64(time.Second))
	}
	finish(r)
	r.ErrorsByKind = map[loadgen.ErrKind]int64{}
	for _, st := range r.Steps {
		for k, n := range st.ErrorsByKind {
			r.ErrorsByKind[k] += n
		}
	}
	return im, nil
}

// histLatency reads percentiles from a histogram of response times (ms).
func histLatency(h map[float64]int64, mean, maxMS float64) loadgen.Latency {
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
		for _, k := range keys {
			seen += h[k]
			if seen >= want {
				return msDur(k)
			}
		}
		return msDur(keys[len(keys)-1])
	}
	return loadgen.Latency{Mean: msDur(mean), P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: msDur(maxMS)}
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
