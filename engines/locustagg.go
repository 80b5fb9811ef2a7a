package engines

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Locust computes the Aggregated row of its stats CSV from the same
// requests as the step rows (locust/stats.py: every request is logged to
// its entry and to the total, and a master merges both from its workers),
// so a file whose Aggregated row disagrees with its step rows is not one
// Locust wrote whole: rows of two runs, or an edited file. The import
// reads the run's rate and latency from the Aggregated row, so such a
// file is refused, as the k6 import refuses a summary whose steps do not
// add up. What the row must be, from the step rows:
//
//   - Request Count and Failure Count: the sums (exact).
//   - Requests/s and Failures/s: the sums. Every row's rate is its count
//     over one duration, the run's (total_rps divides by the stats' first
//     and last request times, not the entry's).
//   - Average Response Time: the average of the rows' averages weighted by
//     their timed requests: a row's requests, but none of the slow
//     entries' (the exported file logs them without a response time).
//   - Average Content Size: the average of the rows' sizes weighted by
//     their requests (slow entries log 0 bytes).
//   - Min and Max Response Time: the smallest and largest of the timed
//     rows'.
//   - each percentile column ("50%", ...): at most the largest of the
//     timed rows' (a percentile of a mixture is never above its parts',
//     and the slow entries' requests, counted in the total's requests but
//     not its response times, only lower it), and at least the smallest
//     when no slow entry was logged. The Median Response Time column is
//     left out: Locust clamps each row's to the row's min and max.
//
// Locust writes floats as Python's repr (the shortest string that reads
// back as the same float: "0.0" is 0, "12.060042939427092" that float)
// and versions before 1.0 with two decimals. A file with a number of more
// than two decimals is repr's, and its numbers are taken as exact; in
// one without, each may differ from what it stands for by half its last
// written digit, and the comparisons allow that (summed over the rows a
// sum or average is made of). Both allow 1e-9 of the value for float
// arithmetic.

// writtenNum is a number as a file wrote it: its value and half its last
// written digit.
type writtenNum struct {
	v, half float64
	ok      bool // written: the column is there and not "" or "N/A"
}

func (r *csvRow) written(col string, rounded bool) (writtenNum, error) {
	if _, ok := r.cols[col]; !ok {
		return writtenNum{}, nil
	}
	s := strings.TrimSpace(r.get(col))
	if s == "" || s == "N/A" {
		return writtenNum{}, nil
	}
	v, err := r.num(col)
	if err != nil {
		return writtenNum{}, err
	}
	w := writtenNum{v: v, ok: true}
	if rounded {
		w.half = halfDigit(s)
	}
	return w, nil
}

// rounded reports whether a stats file's numbers were written with two
// decimals at most (Locust before 1.0), not as repr writes them.
func rounded(rows []csvRow) bool {
	for _, r := range rows {
		for _, f := range r.rec {
			if i := strings.IndexByte(f, '.'); i >= 0 && len(strings.TrimSpace(f))-i-1 > 2 {
				return false
			}
		}
	}
	return true
}

// halfDigit is half the last digit of a number written as s ("12.06":
// 0.005; "130": 0.5; "1.5e-05": 5e-07).
func halfDigit(s string) float64 {
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		exp, _ = strconv.Atoi(s[i+1:])
	}
	decimals := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		decimals = len(mant) - i - 1
	}
	return 0.5 * math.Pow(10, float64(exp-decimals))
}

// aggregateMismatch is the error of an Aggregated row's field that is
// not what Locust computes from the step rows.
func aggregateMismatch(file string, agg *csvRow, field, rows string) error {
	return fmt.Errorf("%s:%d: the Aggregated row's %s is %s, %s: not the file Locust wrote (it computes that row from the step rows): the rows of two runs, or an edited file? %w",
		file, agg.line, field, strings.TrimSpace(agg.get(field)), rows, ErrFormat)
}

// num6 writes a computed value for a message.
func num6(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// checkLocustAggregate checks the Aggregated row agg against the step
// rows as Locust computes it (see above).
func checkLocustAggregate(file string, rows []csvRow, agg *csvRow) error {
	type acc struct {
		sum, tol     float64 // a sum and how far the writing may take it
		w            float64 // weights, for an average
		lo, hi       float64 // smallest and largest
		loTol, hiTol float64
		any          bool
	}
	var (
		requests, failures int64
		rps, fps           acc
		avg, size          acc
		minRT, maxRT       acc
		pcts               = map[string]*acc{}
		slow               bool
		round              = rounded(rows)
	)
	var pctCols []string
	for col := range agg.cols {
		if strings.HasSuffix(col, "%") {
			pctCols = append(pctCols, col)
			pcts[col] = &acc{}
		}
	}
	extend := func(a *acc, x writtenNum) {
		if !x.ok {
			return
		}
		if !a.any || x.v < a.lo {
			a.lo, a.loTol = x.v, x.half
		}
		if !a.any || x.v > a.hi {
			a.hi, a.hiTol = x.v, x.half
		}
		a.any = true
	}
	for i := range rows {
		row := &rows[i]
		if row == agg {
			continue
		}
		n, err := row.count("Request Count")
		if err != nil {
			return err
		}
		f, err := row.count("Failure Count")
		if err != nil {
			return err
		}
		if addCount(&requests, n) != nil || addCount(&failures, f) != nil {
			return row.errorf("the step rows' requests or failures add up to more than 1e15")
		}
		vals := map[string]writtenNum{}
		for _, col := range []string{"Requests/s", "Failures/s", "Average Response Time", "Average Content Size", "Min Response Time", "Max Response Time"} {
			if vals[col], err = row.written(col, round); err != nil {
				return err
			}
		}
		for _, c := range []struct {
			a   *acc
			col string
		}{{&rps, "Requests/s"}, {&fps, "Failures/s"}} {
			if x := vals[c.col]; x.ok {
				c.a.sum += x.v
				c.a.tol += x.half
			}
		}
		if x := vals["Average Content Size"]; x.ok {
			size.sum += float64(n) * x.v
			size.tol += float64(n) * x.half
		}
		size.w += float64(n)
		if row.get("Type") == SlowType {
			slow = slow || n > 0
			continue
		}
		if n == 0 {
			continue
		}
		if x := vals["Average Response Time"]; x.ok {
			avg.sum += float64(n) * x.v
			avg.tol += float64(n) * x.half
		}
		avg.w += float64(n)
		extend(&minRT, vals["Min Response Time"])
		extend(&maxRT, vals["Max Response Time"])
		for _, col := range pctCols {
			x, err := row.written(col, round)
			if err != nil {
				return err
			}
			extend(pcts[col], x)
		}
	}
	const rel = 1e-9
	near := func(got writtenNum, want, tol float64) bool {
		return math.Abs(got.v-want) <= tol+got.half+rel*max(math.Abs(want), math.Abs(got.v))
	}
	for _, c := range []struct {
		col  string
		want int64
	}{{"Request Count", requests}, {"Failure Count", failures}} {
		got, err := agg.count(c.col)
		if err != nil {
			return err
		}
		if got != c.want {
			return aggregateMismatch(file, agg, c.col, fmt.Sprintf("but the step rows add up to %d", c.want))
		}
	}
	for _, c := range []struct {
		col string
		a   acc
	}{{"Requests/s", rps}, {"Failures/s", fps}} {
		got, err := agg.written(c.col, round)
		if err != nil {
			return err
		}
		if got.ok && !near(got, c.a.sum, c.a.tol) {
			return aggregateMismatch(file, agg, c.col, "but the step rows' add up to "+num6(c.a.sum))
		}
	}
	for _, c := range []struct {
		col, of string
		a       acc
	}{{"Average Response Time", "timed requests", avg}, {"Average Content Size", "requests", size}} {
		got, err := agg.written(c.col, round)
		if err != nil {
			return err
		}
		want, tol := 0.0, 0.0
		if c.a.w > 0 {
			want, tol = c.a.sum/c.a.w, c.a.tol/c.a.w
		}
		if got.ok && !near(got, want, tol) {
			return aggregateMismatch(file, agg, c.col, fmt.Sprintf("but the step rows' average weighted by their %s is %s", c.of, num6(want)))
		}
	}
	for _, c := range []struct {
		col, which string
		a          acc
		lo         bool
	}{{"Min Response Time", "smallest", minRT, true}, {"Max Response Time", "largest", maxRT, false}} {
		got, err := agg.written(c.col, round)
		if err != nil || !got.ok || !c.a.any {
			if err != nil {
				return err
			}
			continue
		}
		want, tol := c.a.hi, c.a.hiTol
		if c.lo {
			want, tol = c.a.lo, c.a.loTol
		}
		if !near(got, want, tol) {
			return aggregateMismatch(file, agg, c.col, fmt.Sprintf("but the %s of the step rows' is %s", c.which, num6(want)))
		}
	}
	for _, col := range pctCols {
		a := pcts[col]
		got, err := agg.written(col, round)
		if err != nil {
			return err
		}
		if !got.ok || !a.any {
			continue
		}
		if got.v > a.hi+a.hiTol+got.half {
			return aggregateMismatch(file, agg, col, "above every step row's (at most "+num6(a.hi)+")")
		}
		if !slow && got.v < a.lo-a.loTol-got.half {
			return aggregateMismatch(file, agg, col, "below every step row's (at least "+num6(a.lo)+")")
		}
	}
	return nil
}
