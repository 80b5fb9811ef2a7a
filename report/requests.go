package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/reqtrace"
)

// RequestsFormats are the formats Requests renders.
var RequestsFormats = []string{Text, Markdown, JSON, HTML}

// Limits of the per-request view's text and Markdown.
const (
	requestsEndpoints       = 20 // endpoints listed
	requestsClassesPer      = 5  // classes under each endpoint
	requestsClasses         = 15 // classes in the by-class list
	requestsEndpointsPerCls = 4  // endpoints under each class
)

// Requests renders a per-request view (`stacktune endpoints`): per
// endpoint the requests, the queries per request (mean and max) and the
// classes behind them, the DB time per request and its share of the
// request's time, the rows examined per request; the N+1 patterns, the
// worst first, with their measured cost and rewrite; per class the
// endpoints that run it. JSON is the reqtrace.Report as it is.
func Requests(w io.Writer, r *reqtrace.Report, format string) error {
	if r == nil {
		r = &reqtrace.Report{}
	}
	switch format {
	case JSON:
		return WriteJSON(w, r)
	case HTML:
		return requestsHTML(w, r)
	case Text, "", Markdown:
		e := &errWriter{w: w}
		sw := sectionWriter{e: e, md: format == Markdown}
		sw.title(requestsTitle(r), requestsSummary(r))
		requestsSections(sw, r)
		return e.err
	}
	return CheckFormat(format, RequestsFormats...)
}

func requestsTitle(r *reqtrace.Report) string {
	if r.Source == "" {
		return "Which endpoint runs which SQL"
	}
	return "Which endpoint runs which SQL (" + r.Source + ")"
}

// requestsSummary are the view's lines: what was seen and how it was tied.
func requestsSummary(r *reqtrace.Report) []string {
	out := []string{fmt.Sprintf("%s requests, %s statements: %s tied to a request, %s not", Count(r.Requests), Count(r.Statements),
		Count(r.Attributed), Count(r.Unattributed))}
	if r.Ambiguous > 0 {
		out[0] += fmt.Sprintf(" (%s of them within several requests' times)", Count(r.Ambiguous))
	}
	if r.Method != "" {
		out = append(out, "how: "+r.Method)
	}
	switch r.RowsExamined {
	case "estimated":
		out = append(out, "rows examined: estimated (calls × the digest's average per call of each class: the proxy sees no rows examined)")
	case "":
	default:
		out = append(out, "rows examined: "+r.RowsExamined)
	}
	return out
}

var requestsEndpointHeads = []string{"endpoint", "requests", "queries/req", "max", "DB time/req", "request time", "DB share", "rows examined/req", "max"}

// requestsEndpointRows are the endpoints table's cells.
func requestsEndpointRows(r *reqtrace.Report) [][]string {
	var rows [][]string
	for i, e := range r.Endpoints {
		if i >= requestsEndpoints {
			break
		}
		rt, share, ex, exMax := "-", "-", "-", "-"
		if e.RequestTimeS > 0 {
			rt, share = Duration(e.RequestTimeS), Percent(e.DBShare)
		}
		if r.RowsExamined != "" && (e.RowsExaminedMean > 0 || e.RowsExaminedMax > 0) {
			ex, exMax = trimFloat(e.RowsExaminedMean), Count(e.RowsExaminedMax)
		}
		rows = append(rows, []string{e.Endpoint, Count(e.Requests), trimFloat(e.QueriesMean), Count(e.QueriesMax), Duration(e.DBTimeS), rt, share, ex, exMax})
	}
	return rows
}

// requestsEndpointClasses are, per endpoint, its classes' lines.
func requestsEndpointClasses(e reqtrace.Endpoint) []string {
	var out []string
	for i, c := range e.Classes {
		if i >= requestsClassesPer {
			out = append(out, fmt.Sprintf("… and %d more classes", len(e.Classes)-i))
			break
		}
		out = append(out, fmt.Sprintf("%s per request (max %s, in %s of %s requests), %s per request: %s", trimFloat(c.Mean), Count(c.Max),
			Count(c.Requests), Count(e.Requests), Duration(c.TimePerRequestS), strings.TrimRight(c.Fingerprint, " ")))
	}
	return out
}

// requestsNPlusOne are the N+1 patterns' lines.
func requestsNPlusOne(r *reqtrace.Report) []string {
	var out []string
	for _, n := range r.NPlusOne {
		out = append(out, n.Problem)
	}
	return out
}

var requestsClassHeads = []string{"calls", "time", "endpoints (calls per request, share of the calls)", "fingerprint"}

// requestsClassRows are the classes table's cells.
func requestsClassRows(r *reqtrace.Report) [][]string {
	var rows [][]string
	for i, c := range r.Classes {
		if i >= requestsClasses {
			break
		}
		var eps []string
		for j, e := range c.Endpoints {
			if j >= requestsEndpointsPerCls {
				eps = append(eps, fmt.Sprintf("+%d", len(c.Endpoints)-j))
				break
			}
			eps = append(eps, fmt.Sprintf("%s %s/req %s", e.Endpoint, trimFloat(e.PerRequest), Percent(e.Share)))
		}
		if c.Unattributed > 0 {
			eps = append(eps, fmt.Sprintf("no request: %s calls", Count(c.Unattributed))+requestsCutEndpoints(c))
		}
		if len(eps) == 0 {
			eps = []string{"-"}
		}
		rows = append(rows, []string{Count(c.Calls), Duration(c.TimeS), strings.Join(eps, "; "), strings.TrimRight(c.Fingerprint, " ")})
	}
	return rows
}

// requestsCutEndpoints says, after a class's calls tied to no request,
// those in requests the end of the run cut by endpoint, with the lower
// bound per request they give; "" when none.
func requestsCutEndpoints(c reqtrace.Class) string {
	var cut []string
	for j, e := range c.CutEndpoints {
		if j >= requestsEndpointsPerCls {
			cut = append(cut, fmt.Sprintf("+%d", len(c.CutEndpoints)-j))
			break
		}
		cut = append(cut, fmt.Sprintf("%s %s in %s, at least %s/req", e.Endpoint, Count(e.Calls), Count(e.CutRequests), trimFloat(e.PerRequestMin)))
	}
	if len(cut) == 0 {
		return ""
	}
	return " (in cut requests: " + strings.Join(cut, ", ") + ")"
}

// requestsSkipped is the skipped counts, one line each, in words (by the
// words' order).
func requestsSkipped(r *reqtrace.Report) []string {
	byWords := map[string]int64{}
	for k, v := range r.Skipped {
		byWords[k.Words()] += v
	}
	keys := make([]string, 0, len(byWords))
	for k := range byWords {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s: %s", k, Count(byWords[k])))
	}
	return out
}

// requestsEndpointsBlock is the endpoints table and, under each
// endpoint, its classes.
func requestsEndpointsBlock(sw sectionWriter, r *reqtrace.Report) {
	if len(r.Endpoints) == 0 {
		sw.list([]string{"no request was seen"})
		return
	}
	sw.table(requestsEndpointHeads, "lrrrrrrrr", requestsEndpointRows(r))
	if !sw.md {
		sw.e.printf("\n")
	}
	for i, e := range r.Endpoints {
		if i >= requestsEndpoints {
			break
		}
		if sw.md {
			sw.e.printf("\n**%s**\n\n", mdEscape(e.Endpoint))
			sw.list(requestsEndpointClasses(e))
			continue
		}
		sw.e.printf("  %s\n", e.Endpoint)
		for _, l := range requestsEndpointClasses(e) {
			sw.e.printf("    %s\n", l)
		}
	}
}

// requestsSections writes the view's sections (after a title the caller
// writes).
func requestsSections(sw sectionWriter, r *reqtrace.Report) {
	sw.heading("Endpoints, the most DB time first")
	requestsEndpointsBlock(sw, r)
	requestsProfileBlock(sw, r)
	sw.heading(fmt.Sprintf("N+1: one statement %d times or more in one request, the most time first", r.NPlusOneMin))
	if n := requestsNPlusOne(r); len(n) > 0 {
		sw.list(n)
	} else {
		sw.list([]string{"none"})
	}
	sw.heading("Statement classes and the endpoints that run them, the most time first")
	if len(r.Classes) == 0 {
		sw.list([]string{"no statement was seen"})
	} else {
		sw.table(requestsClassHeads, "rrlc", requestsClassRows(r))
	}
	if sk := requestsSkipped(r); len(sk) > 0 {
		sw.heading("Not counted")
		sw.list(sk)
	}
	if len(r.Notes) > 0 {
		sw.heading("Notes")
		sw.list(r.Notes)
	}
}
