package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/stacktune/stacktune/tpcc"
)

// TPCCFormats are the formats of the tpcc renderers.
var TPCCFormats = []string{Text, Markdown, JSON}

// TPCCLoad renders what tpcc.Load did.
func TPCCLoad(w io.Writer, r *tpcc.LoadResult, format string) error {
	if err := CheckFormat(format, TPCCFormats...); err != nil {
		return err
	}
	if format == JSON {
		return WriteJSON(w, r)
	}
	rate := 0.0
	if s := r.Elapsed.Seconds(); s > 0 {
		rate = float64(r.Rows) / s
	}
	_, err := fprintf(w, "loaded %d warehouses (%s items, %s customers per district%s): %d units, %d loaded, %d complete before, %d started before and loaded again; %s rows in %s with %d workers (%s rows/s)\n",
		r.Warehouses, Count(int64(r.Sizes.Items)), Count(int64(r.Sizes.Customers)), sizesNote(r.Sizes),
		r.Units, r.Loaded, r.Skipped, r.Resumed, Count(r.Rows), Duration(r.Elapsed.Seconds()), r.Workers, PerSecond(rate))
	return err
}

func sizesNote(s tpcc.Sizes) string {
	if s.Spec() {
		return ""
	}
	return "; scaled down, not TPC-C"
}

// TPCCProgressLine is a run's live line for a terminal.
func TPCCProgressLine(p tpcc.Progress) string {
	phase := "measured"
	if p.WarmUp {
		phase = "warm-up"
	}
	return fmt.Sprintf("%s %s/%s  tpmC %s  tpmTotal %s  errors %s  retries %s", phase,
		Duration(p.Elapsed.Seconds()), Duration(p.Phase.Seconds()), Count(int64(p.TpmC)), Count(int64(p.TpmTotal)), Count(p.Errors), Count(p.Retries))
}

// TPCCLoadProgressLine is a load's live line for a terminal.
func TPCCLoadProgressLine(p tpcc.LoadProgress) string {
	return fmt.Sprintf("loaded %d/%d units, %s rows, %s (%s)", p.UnitsDone, p.Units, Count(p.Rows), Duration(p.Elapsed.Seconds()), p.Unit)
}

// TPCCRun renders a run's result: tpmC and tpmTotal, then per
// transaction the count, mix against its minimum, rollbacks, failures,
// retries and deadlocks, and response times against the 90th-percentile
// limit.
func TPCCRun(w io.Writer, r *tpcc.Result, format string) error {
	if r == nil {
		r = &tpcc.Result{}
	}
	if err := CheckFormat(format, TPCCFormats...); err != nil {
		return err
	}
	if format == JSON {
		return WriteJSON(w, r)
	}
	bw := bufio.NewWriter(w)
	md := format == Markdown
	mode := fmt.Sprintf("%d connections, no keying or think times", r.Terminals)
	if r.ThinkTimes {
		mode = fmt.Sprintf("%d terminals with keying and think times", r.Terminals)
	}
	if r.Procedures {
		mode += ", transactions as stored procedures"
	}
	head := fmt.Sprintf("TPC-C run: %d warehouses%s, %s, %s warm-up, %s measured", r.Warehouses, sizesNote(r.Sizes), mode,
		Duration(r.WarmUp.Seconds()), Duration(r.Duration.Seconds()))
	if md {
		fprintf(bw, "### %s\n\n", mdEscape(head))
	} else {
		fprintf(bw, "%s\n", head)
	}
	score := fmt.Sprintf("tpmC %s, tpmTotal %s", Count(int64(r.TpmC+0.5)), Count(int64(r.TpmTotal+0.5)))
	if len(r.Outages) > 0 {
		// The server went away: said first, and the rates only over the
		// time it was up.
		for _, l := range tpccOutages(r) {
			if md {
				fprintf(bw, "**%s**\n\n", mdEscape(l))
			} else {
				fprintf(bw, "%s\n", l)
			}
		}
		score = "no tpmC: the server was away for the whole measured interval"
		if r.Up > 0 {
			score = fmt.Sprintf("tpmC %s, tpmTotal %s over the %s of %s measured the server was up",
				Count(int64(r.TpmC+0.5)), Count(int64(r.TpmTotal+0.5)), Duration(r.Up.Seconds()), Duration(r.Duration.Seconds()))
		}
	}
	if r.ThinkTimes {
		score += fmt.Sprintf(", efficiency %.1f%% of %.2f tpmC per warehouse", r.Efficiency, tpcc.MaxTpmCPerWarehouse)
	}
	counts := fmt.Sprintf("%s completed, %s failed, %s retries (%s deadlocks, %s lock wait timeouts)",
		Count(r.Completed), Count(r.Failed), Count(r.Retries), Count(r.Deadlocks), Count(r.LockWaits))
	if md {
		fprintf(bw, "**%s**; %s\n\n", score, counts)
	} else {
		fprintf(bw, "%s; %s\n\n", score, counts)
	}
	var rows [][]string
	for _, t := range r.Transactions {
		rows = append(rows, []string{t.Name, Count(t.Completed), fmt.Sprintf("%.1f%%", t.Mix), fmt.Sprintf("%.0f%%", t.MinMix),
			Count(t.RolledBack), Count(t.Failed), Count(t.Retries), Count(t.Deadlocks),
			Duration(t.Avg), Duration(t.P50), Duration(t.P90), Duration(t.P99), Duration(t.Max), limitText(t)})
	}
	ew := &errWriter{w: bw}
	sectionWriter{e: ew, md: md}.table([]string{"transaction", "completed", "mix", "min", "rolled back", "failed", "retries", "deadlocks",
		"avg", "p50", "p90", "p99", "max", "p90 limit"}, "lrrrrrrrrrrrrl", rows)
	ew.printf("\n")
	if ew.err != nil {
		return ew.err
	}
	bullet := func(s string) {
		if md {
			fprintf(bw, "- %s\n", mdEscape(s))
		} else {
			fprintf(bw, "%s\n", s)
		}
	}
	for _, l := range tpccVerdicts(r) {
		bullet(l)
	}
	for _, t := range r.Transactions {
		if t.Skipped > 0 {
			bullet(fmt.Sprintf("%s: %s districts had no order to deliver (skipped, clause 2.7.4.2)", t.Name, Count(t.Skipped)))
		}
		for _, e := range t.Errors {
			bullet(fmt.Sprintf("%s error: %s", t.Name, e))
		}
	}
	for _, n := range r.Notes {
		bullet("note: " + n)
	}
	return bw.Flush()
}

// tpccOutages are a run's lines on the server going away: when (and
// where in the run), whether and when it came back, what was seen.
func tpccOutages(r *tpcc.Result) []string {
	measured := r.Started.Add(r.WarmUp)
	var out []string
	for _, o := range r.Outages {
		at := o.From.Sub(measured).Seconds()
		where := fmt.Sprintf("%s into the measured interval", Duration(at))
		if at < 0 {
			where = fmt.Sprintf("%s before the measured interval, in the warm-up", Duration(-at))
		}
		back := "not back by the end of the run"
		if !o.To.IsZero() {
			back = "back after " + Duration(o.To.Sub(o.From).Seconds())
		}
		out = append(out, fmt.Sprintf("SERVER WENT AWAY at %s (%s), %s: %s", o.From.Format("15:04:05.0"), where, back, o.Error))
	}
	return out
}

// tpccVerdicts are a run's lines on its mix and its response times.
func tpccVerdicts(r *tpcc.Result) []string {
	if r.Completed == 0 {
		return []string{"mix and response times: no transaction completed"}
	}
	var out, low, short, over []string
	for _, t := range r.Transactions {
		switch {
		case !t.MixOK:
			low = append(low, fmt.Sprintf("%s %.1f%% < %.0f%%", t.Name, t.Mix, t.MinMix))
		case t.Mix < t.MinMix:
			short = append(short, fmt.Sprintf("%s %.1f%%", t.Name, t.Mix))
		}
		switch {
		case t.Completed == 0:
			over = append(over, t.Name+" none completed")
		case !t.LimitOK:
			over = append(over, fmt.Sprintf("%s p90 %s > %s", t.Name, Duration(t.P90), Duration(t.Limit)))
		}
	}
	switch {
	case len(low) > 0:
		out = append(out, "mix: below the minimum share by more than the terminals' last decks explain (transactions lost): "+strings.Join(low, ", "))
	case len(short) > 0:
		out = append(out, "mix: "+strings.Join(short, ", ")+" under the minimum only by what the terminals' last, partly dealt decks hold (every full deck of 100 holds 45/43/4/4/4): a longer run reaches it")
	default:
		out = append(out, "mix: every transaction at or above its minimum share")
	}
	if r.ResponseTimesOK {
		return append(out, "response times: every 90th percentile within its limit")
	}
	return append(out, "response times: over the limit: "+strings.Join(over, ", "))
}

func limitText(t tpcc.TxStats) string {
	verdict := "ok"
	switch {
	case t.Completed == 0:
		verdict = "-"
	case !t.LimitOK:
		verdict = "OVER"
	}
	return Duration(t.Limit) + " " + verdict
}

// TPCCCheck renders the consistency conditions: the verdict, then each
// condition with what it was checked for, how many broke it and a few of
// them, or why it was not checked.
func TPCCCheck(w io.Writer, r *tpcc.CheckResult, format string) error {
	if r == nil {
		r = &tpcc.CheckResult{}
	}
	if err := CheckFormat(format, TPCCFormats...); err != nil {
		return err
	}
	if format == JSON {
		return WriteJSON(w, r)
	}
	bw := bufio.NewWriter(w)
	md := format == Markdown
	verdict := "all hold"
	if !r.OK() {
		verdict = "BROKEN"
	}
	span := "1-12"
	if n := len(r.Conditions); n > 0 {
		span = fmt.Sprintf("%d-%d", r.Conditions[0].Number, r.Conditions[n-1].Number)
	}
	if md {
		fprintf(bw, "### TPC-C consistency conditions %s (%d warehouses): %s\n\n", span, r.Warehouses, verdict)
	} else {
		fprintf(bw, "TPC-C consistency conditions %s (%d warehouses): %s\n", span, r.Warehouses, verdict)
	}
	for _, c := range r.Conditions {
		// The line is cleaned whole by fprintf.
		var line string
		switch {
		case c.NotChecked != "":
			line = fmt.Sprintf("%d not checked: %s: %s", c.Number, c.Rule, c.NotChecked)
		default:
			state := "ok"
			if !c.OK() {
				state = "BROKEN"
			}
			per, what := "", "checked"
			if c.Per != "" {
				per, what = " for each "+c.Per, c.Per+" checked"
				if c.Checked != 1 {
					what = c.Per + "s checked"
				}
			}
			line = fmt.Sprintf("%d %s: %s%s: %s %s, %s violations", c.Number, state, c.Rule, per, Count(c.Checked), what, Count(c.Violations))
		}
		if md {
			fprintf(bw, "- %s\n", mdEscape(line))
		} else {
			fprintf(bw, "  %s\n", line)
		}
		for _, e := range c.Examples {
			if md {
				fprintf(bw, "  - %s\n", mdEscape(e))
			} else {
				fprintf(bw, "      %s\n", e)
			}
		}
	}
	return bw.Flush()
}
