package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/indexadv"
)

// DiagnoseFormats are the formats Diagnose renders.
var DiagnoseFormats = []string{Text, Markdown, JSON, HTML}

// Diagnose renders a diagnosis (`stacktune diagnose`): the run, where
// the time went across layers (endpoints and query classes ranked by
// total time, as shares of the run's wall time × its connections), which
// endpoints the top classes likely belong to (an estimate, said so with
// its method), the N+1 patterns, the proven indexes with their evidence,
// the audit's findings, the connections the capture could not see and
// what the capture changed and put back. JSON is the diagnose.Result as
// it is; HTML is DiagnoseHTMLPage.
func Diagnose(w io.Writer, r *diagnose.Result, format string) error {
	if r == nil {
		r = &diagnose.Result{}
	}
	switch format {
	case JSON:
		return WriteJSON(w, r)
	case HTML:
		return WriteHTMLPage(w, DiagnoseHTMLPage(r))
	case Text, "":
		return diagnoseWrite(w, r, false)
	case Markdown:
		return diagnoseWrite(w, r, true)
	}
	return CheckFormat(format, DiagnoseFormats...)
}

// diagnoseTitle names the run.
func diagnoseTitle(r *diagnose.Result) string {
	if r.Bench == nil {
		return "Diagnosis"
	}
	t := "Diagnosis of " + r.Bench.Target
	if r.Bench.Scenario != "" {
		t += " (scenario " + r.Bench.Scenario + ")"
	}
	return t
}

// diagnoseSummary are the run's lines: what ran, how it was observed.
func diagnoseSummary(r *diagnose.Result) []string {
	var out []string
	if b := r.Bench; b != nil {
		verdict := "passed"
		if !b.Passed {
			verdict = "failed: " + strings.Join(b.FailReasons, "; ")
		}
		out = append(out, fmt.Sprintf("run: %s to %s, %s × %d connections = %s of users' time; %s req/s, p99 %s, score %s (%s)",
			r.Started.Format(time.RFC3339), r.Ended.Format("15:04:05"), Duration(r.WindowS), r.Connections, Duration(r.CapacityS),
			PerSecond(b.RPS), msDur(b.LatencyMS.P99), Score(b.Score), verdict))
	}
	if r.Server != "" {
		out = append(out, "server: "+r.Server)
	}
	if r.Capture.How != "" {
		out = append(out, "queries: "+r.Capture.How)
	}
	if d := r.Digest; d != nil {
		out = append(out, fmt.Sprintf("digest: %s queries in %s classes, %s of query time", Count(d.Overall.Events), Count(int64(d.Overall.Classes)), Duration(d.Overall.TimeTotal)))
	}
	if h := r.HTTP; h != nil {
		out = append(out, fmt.Sprintf("access log: %s requests in %d endpoints, the run's window of %s", Count(h.Overall.Requests), h.Overall.Endpoints, strings.Join(r.AccessLogs, ", ")))
	}
	out = append(out, diagnoseCaptureLine(r))
	return out
}

// diagnoseCaptureLine says what the capture changed and whether it is
// back.
func diagnoseCaptureLine(r *diagnose.Result) string {
	c := r.Capture
	switch {
	case len(c.Changed) == 0:
		return "server variables: nothing changed"
	case c.Restored:
		return fmt.Sprintf("server variables: %d changed for the run and put back (%s), read back equal", len(c.Changed), diagnoseVarNames(c.Changed))
	case len(c.Leftovers) > 0:
		return fmt.Sprintf("server variables: NOT all put back; run by hand: %s", strings.Join(c.Leftovers, " "))
	}
	return fmt.Sprintf("server variables: %d changed (%s), restore not confirmed", len(c.Changed), diagnoseVarNames(c.Changed))
}

func diagnoseVarNames(cs []diagnose.VarChange) string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// diagnoseShareNote says what the shares are of.
func diagnoseShareNote(r *diagnose.Result) string {
	return fmt.Sprintf("Shares are of the run's wall time × connections (%s × %d = %s). A class's time is part of its endpoints' time: the list ranks, it does not add up.",
		Duration(r.WindowS), r.Connections, Duration(r.CapacityS))
}

// diagnoseEndpointRows are the endpoints table's cells.
func diagnoseEndpointRows(r *diagnose.Result) [][]string {
	var rows [][]string
	for _, e := range r.Endpoints {
		rows = append(rows, []string{fmt.Sprint(e.Rank), e.Method + " " + e.Path, Count(e.Count), Duration(e.TimeS), Percent(e.Share),
			Percent(e.CapacityShare), Duration(e.AvgS), Duration(e.P99S), Count(e.Errors5xx)})
	}
	return rows
}

var diagnoseEndpointHeads = []string{"#", "endpoint", "requests", "total", "share", "of wall×conns", "avg", "p99", "5xx"}

// diagnoseClassRows are the classes table's cells.
func diagnoseClassRows(r *diagnose.Result) [][]string {
	var rows [][]string
	for _, c := range r.Classes {
		likely := "-"
		switch {
		case c.Endpoint != "" && c.EndpointSource == diagnose.EndpointCutRequests:
			likely = fmt.Sprintf("%s (%s, at least %s/req, in cut requests)", c.Endpoint, Percent(c.EndpointShare), trimFloat(c.CallsPerRequest))
		case c.Endpoint != "":
			how := "estimate"
			if c.EndpointSource == diagnose.EndpointMeasured {
				how = "measured"
			}
			likely = fmt.Sprintf("%s (%s, %s/req, %s)", c.Endpoint, Percent(c.EndpointShare), trimFloat(c.CallsPerRequest), how)
		case c.EndpointSource == diagnose.EndpointUnknown:
			likely = "unknown (the estimate cannot separate the endpoints)"
		}
		rows = append(rows, []string{fmt.Sprint(c.Rank), Count(c.Count), Duration(c.TimeS), Percent(c.Share), Percent(c.CapacityShare),
			Duration(c.AvgS), trimFloat(c.RowsExaminedPerSent), likely, diagnoseShortID(c.ID), c.Fingerprint})
	}
	return rows
}

var diagnoseClassHeads = []string{"#", "calls", "total", "share", "of wall×conns", "avg", "examined/sent", "endpoint (share, per request)", "class", "fingerprint"}

func diagnoseShortID(id string) string {
	if len(id) > 16 {
		return id[len(id)-16:]
	}
	return id
}

// diagnoseAttribution is one line per attributed class.
func diagnoseAttribution(r *diagnose.Result) []string {
	var out []string
	if r.Attribution == nil {
		return out
	}
	for _, c := range r.Attribution.Classes {
		if c.Note != "" {
			out = append(out, fmt.Sprintf("%s: no estimate: %s", c.Fingerprint, c.Note))
			continue
		}
		var parts []string
		for _, e := range c.Endpoints {
			parts = append(parts, fmt.Sprintf("%s %s of its calls (%s per request, 90%% range %s to %s, ~%s)", e.Endpoint, Percent(e.Share),
				trimFloat(e.CallsPerRequest), trimFloat(e.Low), trimFloat(e.High), Duration(e.TimeS)))
		}
		if len(parts) == 0 {
			parts = append(parts, "no endpoint explains a twentieth of its calls")
		}
		if c.Background >= 0.05 {
			parts = append(parts, fmt.Sprintf("background %s", Percent(c.Background)))
		}
		verdict := ""
		if !c.Confident {
			verdict = ": too unsure to name an endpoint (it needs R² of at least 0.5 and the top endpoint's range above 0): endpoint unknown"
		}
		out = append(out, fmt.Sprintf("%s: %s; R² %.2f%s", c.Fingerprint, strings.Join(parts, ", "), c.R2, verdict))
	}
	return out
}

// diagnoseNPlusOne is one line per N+1 pattern.
func diagnoseNPlusOne(r *diagnose.Result) []string {
	var out []string
	for _, n := range r.NPlusOne {
		if n.Source == diagnose.EndpointMeasured {
			out = append(out, fmt.Sprintf("%s (measured per request; %s calls in the diagnosis run, %s row(s) per call). Sample: %s", n.Problem,
				Count(n.Calls), trimFloat(n.RowsPerCall), n.Sample))
			continue
		}
		l := fmt.Sprintf("%s: %s calls, %s row(s) per call, %s", n.Fingerprint, Count(n.Calls), trimFloat(n.RowsPerCall), Duration(n.TimeS))
		switch {
		case n.Note != "":
			l += "; " + n.Note
		case n.Endpoint != "":
			l += fmt.Sprintf("; run by %s, about %s times per request (estimated, %s of its calls)", n.Endpoint, trimFloat(n.PerRequest), Percent(n.EndpointShare))
		default:
			l += "; endpoint unknown"
		}
		out = append(out, l+". Sample: "+n.Sample)
	}
	return out
}

// diagnoseIndex is a proven index: its table and columns, its DDL and
// its evidence.
type diagnoseIndex struct {
	title, ddl string
	lines      []string
}

// diagnoseIndexes are the proven indexes with their evidence.
func diagnoseIndexes(r *diagnose.Result) []diagnoseIndex {
	var out []diagnoseIndex
	if r.Indexes == nil {
		return out
	}
	for _, p := range r.Indexes.Proposals {
		if p.Action == indexadv.ActionDrop {
			continue
		}
		ix := diagnoseIndex{title: fmt.Sprintf("%s (%s)", p.Table, strings.Join(p.Columns, ", ")), ddl: p.DDL,
			lines: []string{proposalFigures(p), "for class(es) " + strings.Join(p.Queries, ", ")}}
		for _, why := range p.Reasons {
			ix.lines = append(ix.lines, "why: "+why)
		}
		for _, ev := range p.Evidence.Plans {
			ix.lines = append(ix.lines, "plan before: "+ev.PlanBefore, "plan after: "+ev.PlanAfter)
		}
		out = append(out, ix)
	}
	return out
}

// diagnoseConnLines list the connections not captured.
func diagnoseConnLines(r *diagnose.Result) []string {
	cc := r.ConnCheck
	if cc == nil {
		return nil
	}
	var out []string
	if cc.Error != "" {
		out = append(out, "check: "+cc.Error)
	}
	if cc.Restart != "" {
		out = append(out, fmt.Sprintf("%s ran after the change: %d connection(s) from before it were open before, %d after", cc.Restart, cc.BeforeRestart, len(cc.Uncaptured)))
	}
	if len(cc.Uncaptured) == 0 {
		return append(out, "every connection open at the start of the run was opened after the change: all captured")
	}
	out = append(out, cc.Fix)
	for _, g := range cc.Groups {
		ids := make([]string, len(g.IDs))
		for i, id := range g.IDs {
			ids[i] = fmt.Sprint(id)
		}
		more := ""
		if g.Count > len(g.IDs) {
			more = ", …"
		}
		age := ""
		if g.AgeAtLeastS >= 1 {
			age = ", open for at least " + Duration(g.AgeAtLeastS)
		}
		out = append(out, fmt.Sprintf("%s@%s: %d connection(s)%s (ids %s%s)", g.User, g.Host, g.Count, age, strings.Join(ids, ", "), more))
	}
	return out
}

// diagnoseCaptureLines detail the variables.
func diagnoseCaptureLines(r *diagnose.Result) []string {
	var out []string
	for _, c := range r.Capture.Changed {
		out = append(out, fmt.Sprintf("%s: %s → %s during the run → %s after (%s)", c.Name, diagnoseValue(c.Before), diagnoseValue(c.During), diagnoseValue(c.After), c.Set))
	}
	if len(r.Capture.Leftovers) > 0 {
		out = append(out, "not put back, run by hand: "+strings.Join(r.Capture.Leftovers, " "))
	}
	if r.Capture.SlowLog != "" {
		out = append(out, fmt.Sprintf("slow log %s read from byte %d to %d", r.Capture.SlowLog, r.Capture.StartOffset, r.Capture.EndOffset))
	}
	if t := r.Capture.Trim; t != nil {
		switch {
		case t.Removed:
			out = append(out, fmt.Sprintf("slow log: the capture created it (%s): removed again", Bytes(t.Added)))
		case t.Trimmed:
			out = append(out, fmt.Sprintf("slow log: the capture's %s taken away again: the file is back to its size before the capture", Bytes(t.Added)))
		case t.Skipped == diagnose.TrimWasOn:
			out = append(out, fmt.Sprintf("slow log: the capture added %s and they were left: the slow log was on before, so the server may have written its own entries after them (FLUSH SLOW LOGS after rotating it frees the space)", Bytes(t.Added)))
		case t.Skipped == diagnose.TrimReplaced:
			out = append(out, "slow log: the file was replaced or rotated during the diagnosis: left as it is")
		case t.Skipped == diagnose.TrimFailed:
			out = append(out, "slow log: taking the capture's bytes away failed ("+t.Error+"): the file holds them")
		}
	}
	return out
}

func diagnoseValue(v string) string {
	if v == "" {
		return "''"
	}
	return v
}

// diagnoseWrite writes text or Markdown.
func diagnoseWrite(w io.Writer, r *diagnose.Result, md bool) error {
	e := &errWriter{w: w}
	sw := sectionWriter{e: e, md: md}
	heading, list, table := sw.heading, sw.list, sw.table
	sw.title(diagnoseTitle(r), diagnoseSummary(r))

	heading("Where the time goes")
	if md {
		e.printf("%s\n\n", mdEscape(diagnoseShareNote(r)))
	} else {
		e.printf("  %s\n\n", diagnoseShareNote(r))
	}
	if len(r.Hotspots) == 0 {
		list([]string{"nothing measured (no query and no request in the run's window)"})
	}
	for _, h := range r.Hotspots {
		head := fmt.Sprintf("%d. [%s] %s  %s (%s of wall×conns)", h.Rank, h.Layer, h.What, Duration(h.TimeS), Percent(h.CapacityShare))
		if md {
			e.printf("%d. **%s** `%s`: %s (%s of wall×conns)\n", h.Rank, h.Layer, mdCode(strings.ReplaceAll(h.What, "`", "'")), Duration(h.TimeS), Percent(h.CapacityShare))
			for _, d := range h.Details {
				e.printf("   - %s\n", mdEscape(d))
			}
			continue
		}
		e.printf("  %s\n", head)
		for _, d := range h.Details {
			e.printf("       %s\n", d)
		}
	}

	heading("Endpoints by total time")
	if len(r.Endpoints) == 0 {
		list([]string{"no access log of the run's window (give --access-log FILE or --nginx-conf)"})
	} else {
		table(diagnoseEndpointHeads, "rlrrrrrrr", diagnoseEndpointRows(r))
	}

	heading("Query classes by total time")
	if len(r.Classes) == 0 {
		list([]string{"no query in the run's window"})
	} else {
		table(diagnoseClassHeads, "rrrrrrrllc", diagnoseClassRows(r))
	}

	if q := r.Requests; q != nil {
		heading("Which endpoint runs which SQL, per request (" + q.Source + ")")
		list(withLine(perRequestLine(r), requestsSummary(q)))
		if md {
			e.printf("\n")
		}
		requestsEndpointsBlock(sw, q)
		requestsProfileBlock(sw, q)
	}

	heading(diagnoseEstimateHeading(r))
	if r.Requests == nil && perRequestLine(r) != "" {
		list([]string{perRequestLine(r)})
	}
	if r.Attribution == nil {
		list([]string{"not estimated: it needs the slow log and an access log covering the run's window"})
	} else {
		if md {
			e.printf("%s.\n\n", mdEscape(strings.ToUpper(r.Attribution.Method[:1])+r.Attribution.Method[1:]))
		} else {
			e.printf("  %s.\n\n", strings.ToUpper(r.Attribution.Method[:1])+r.Attribution.Method[1:])
		}
		list(diagnoseAttribution(r))
	}

	heading("N+1 patterns")
	if n := diagnoseNPlusOne(r); len(n) > 0 {
		list(n)
	} else {
		list([]string{"none found"})
	}

	heading("Proven indexes")
	ix := diagnoseIndexes(r)
	if r.IndexError != "" {
		list([]string{"index advice failed: " + r.IndexError})
	}
	if len(ix) == 0 {
		list([]string{"none proven: no index helped the top classes on the throwaway copy"})
	}
	for i, ix := range ix {
		if md {
			fence := strings.Repeat("`", max(3, longestRun(ix.ddl, '`')+1))
			e.printf("%d. %s\n\n   %ssql\n   %s\n   %s\n\n", i+1, mdEscape(ix.title), fence, ix.ddl, fence)
			for _, l := range ix.lines {
				e.printf("   - %s\n", mdEscape(l))
			}
			continue
		}
		e.printf("  %d. %s\n     %s\n", i+1, ix.title, ix.ddl)
		for _, l := range ix.lines {
			e.printf("     %s\n", l)
		}
	}
	if len(ix) > 0 {
		if md {
			e.printf("\n")
		}
		list([]string{"nothing was applied: stacktune indexes --apply, or stacktune apply --ddl FILE with its --format sql, adds them as a transaction"})
	}

	nf := 0
	if r.Audit != nil {
		nf = len(r.Audit.Findings)
	}
	heading(fmt.Sprintf("Audit findings (%d)", nf))
	if r.Audit != nil {
		for _, ce := range r.Audit.CollectorErrors {
			list([]string{fmt.Sprintf("could not collect %s: %s", ce.Collector, ce.Error)})
		}
		for i, f := range r.Audit.Findings {
			if md {
				e.printf("%d. **[%s]** %s (`%s`, %s)\n", i+1, f.Severity, mdEscape(f.Title), mdCode(f.ID), mdEscape(f.Layer))
				for _, l := range findingLines(&f) {
					e.printf("   - %s\n", mdEscape(l))
				}
				continue
			}
			e.printf("  %d. [%s] %s  (%s, %s)\n", i+1, strings.ToUpper(string(f.Severity)), f.Title, f.ID, f.Layer)
			for _, l := range findingLines(&f) {
				e.printf("       %s\n", l)
			}
		}
	}

	if cl := diagnoseConnLines(r); cl != nil {
		heading("Connections not captured")
		list(cl)
	}
	heading("What the capture changed")
	if cl := diagnoseCaptureLines(r); len(cl) > 0 {
		list(cl)
	} else {
		list([]string{"nothing"})
	}
	if len(r.Notes) > 0 {
		heading("Notes")
		list(r.Notes)
	}
	return e.err
}

// diagnoseEstimateHeading names the estimate's section: the fallback
// when the per-request view is measured.
func diagnoseEstimateHeading(r *diagnose.Result) string {
	if r.Requests != nil {
		return "Which endpoints the top classes belong to (estimate: the fallback, not used while the per-request view is measured)"
	}
	return "Which endpoints the top classes belong to (estimate)"
}

// longestRun is the longest run of c in s (a code fence must be longer).
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// perRequestLine says how the per-request view was made and why ("" when
// the result does not say).
func perRequestLine(r *diagnose.Result) string {
	p := r.PerRequest
	if p == nil {
		return ""
	}
	var s string
	switch p.Mechanism {
	case diagnose.MechanismTags:
		s = "per request from the statements' own tags (sqlcommenter or marginalia): no trace run was needed"
	case diagnose.MechanismProxy:
		s = "per request from a trace run through stacktune's MySQL proxy"
	case diagnose.MechanismPFS:
		s = "per request from a trace run reading performance_schema's statement history (it was on; its consumers were switched on for the run and back)"
	case diagnose.MechanismPFSRestart:
		s = "per request from a trace run reading performance_schema's statement history: it was off, so the server was restarted with it on for the trace run"
		if p.Restored {
			s += " and restarted again with it off, as it was found"
		} else {
			s += "; turning it off again FAILED: stacktune rollback puts it back"
		}
	case diagnose.MechanismEstimate:
		s = "no per-request measurement: the classes' endpoints are the per-second estimate"
		switch p.Reason {
		case diagnose.ReasonNoRestart:
			s += " (performance_schema is off and no restart command was given: --mysql-restart lets the diagnosis restart the server with it on for its trace run)"
		case diagnose.ReasonTraceFailed:
			s += " (the trace run failed: " + p.Error + ")"
		}
	}
	return s
}

// withLine is lines with first before them, unless first is "".
func withLine(first string, lines []string) []string {
	if first == "" {
		return lines
	}
	return append([]string{first}, lines...)
}
