package report

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/diagnose"
)

// DiagnoseHTMLPage is the HTML page of a diagnosis (what Diagnose writes
// for the "html" format): the run, a chart of where the time went
// (endpoints and classes as shares of the run's wall time × connections),
// the endpoints and classes tables, the estimate of which endpoints the
// classes belong to, the N+1 patterns, the proven indexes, the audit's
// findings, the connections not captured and the capture's changes.
func DiagnoseHTMLPage(r *diagnose.Result) *HTMLPage {
	if r == nil {
		r = &diagnose.Result{}
	}
	p := &HTMLPage{Title: diagnoseTitle(r), Summary: diagnoseSummary(r), Notes: r.Notes}

	chart := HTMLBarChart{Caption: "Where the time goes: share of the run's wall time × connections", Max: 1, Empty: "Nothing measured in the run's window."}
	var spots []string
	for _, h := range r.Hotspots {
		chart.Bars = append(chart.Bars, HTMLBar{
			Label: fmt.Sprintf("%d. [%s] %s", h.Rank, h.Layer, h.What),
			Value: h.CapacityShare,
			Text:  Percent(h.CapacityShare) + " · " + Duration(h.TimeS),
			Tip:   fmt.Sprintf("%s %s: %s, %s of wall time × connections. %s", h.Layer, h.What, Duration(h.TimeS), Percent(h.CapacityShare), strings.Join(h.Details, "; ")),
		})
		spots = append(spots, fmt.Sprintf("%d. [%s] %s: %s; %s", h.Rank, h.Layer, h.What, Duration(h.TimeS), strings.Join(h.Details, "; ")))
	}
	where := HTMLSection{Title: "Where the time goes", ID: "where", Blocks: []HTMLBlock{HTMLText(diagnoseShareNote(r)), chart}}
	if len(spots) > 0 {
		where.Blocks = append(where.Blocks, HTMLList(spots...))
	}
	p.Sections = append(p.Sections, where)

	eps := HTMLTable{Empty: "No access log of the run's window (give --access-log FILE or --nginx-conf)."}
	for i, h := range diagnoseEndpointHeads {
		eps.Columns = append(eps.Columns, HTMLColumn{Head: h, Numeric: i != 1, Code: i == 1})
	}
	eps.Rows = diagnoseEndpointRows(r)
	p.Sections = append(p.Sections, HTMLSection{Title: "Endpoints by total time", ID: "endpoints", Blocks: []HTMLBlock{eps}})

	cls := HTMLTable{Empty: "No query in the run's window."}
	for i, h := range diagnoseClassHeads {
		cls.Columns = append(cls.Columns, HTMLColumn{Head: h, Numeric: i < 7, Code: i >= 8, NoWrap: i == 8})
	}
	for _, row := range diagnoseClassRows(r) {
		row[len(row)-1] = htmlCut(row[len(row)-1], htmlFingerprintMax)
		cls.Rows = append(cls.Rows, row)
	}
	p.Sections = append(p.Sections, HTMLSection{Title: "Query classes by total time", ID: "classes", Blocks: []HTMLBlock{cls}})

	if q := r.Requests; q != nil {
		req := HTMLSection{Title: "Which endpoint runs which SQL, per request (" + q.Source + ")", ID: "requests", Blocks: []HTMLBlock{HTMLList(withLine(perRequestLine(r), requestsSummary(q))...)}}
		t := HTMLTable{Empty: "No request was seen."}
		for i, h := range requestsEndpointHeads {
			t.Columns = append(t.Columns, HTMLColumn{Head: h, Numeric: i > 0, Code: i == 0})
		}
		t.Rows = requestsEndpointRows(q)
		req.Blocks = append(req.Blocks, t)
		for i, e := range q.Endpoints {
			if i >= requestsEndpoints {
				break
			}
			req.Blocks = append(req.Blocks, HTMLSection{Title: e.Endpoint, Blocks: []HTMLBlock{HTMLList(requestsEndpointClasses(e)...)}})
		}
		p.Sections = append(p.Sections, req)
		if s, ok := htmlProfileSection(q); ok {
			p.Sections = append(p.Sections, s)
		}
	}

	attr := HTMLSection{Title: diagnoseEstimateHeading(r), ID: "attribution"}
	if l := perRequestLine(r); r.Requests == nil && l != "" {
		attr.Blocks = append(attr.Blocks, HTMLText(l))
	}
	if r.Attribution == nil {
		attr.Blocks = append(attr.Blocks, HTMLText("Not estimated: it needs the slow log and an access log covering the run's window."))
	} else {
		attr.Blocks = append(attr.Blocks, HTMLText(strings.ToUpper(r.Attribution.Method[:1])+r.Attribution.Method[1:]+"."), HTMLList(diagnoseAttribution(r)...))
	}
	p.Sections = append(p.Sections, attr)

	n1 := diagnoseNPlusOne(r)
	if len(n1) == 0 {
		n1 = []string{"None found."}
	}
	p.Sections = append(p.Sections, HTMLSection{Title: "N+1 patterns", ID: "n-plus-one", Blocks: []HTMLBlock{HTMLList(n1...)}})

	ix := HTMLSection{Title: "Proven indexes", ID: "indexes"}
	if r.IndexError != "" {
		ix.Blocks = append(ix.Blocks, HTMLText("Index advice failed: "+r.IndexError))
	}
	proven := diagnoseIndexes(r)
	if len(proven) == 0 {
		ix.Blocks = append(ix.Blocks, HTMLText("None proven: no index helped the top classes on the throwaway copy."))
	}
	for _, pr := range proven {
		ix.Blocks = append(ix.Blocks, HTMLSection{Title: pr.title, Blocks: []HTMLBlock{HTMLCode(pr.ddl), HTMLList(pr.lines...)}})
	}
	p.Sections = append(p.Sections, ix)

	audit := HTMLSection{Title: "Audit findings", ID: "audit"}
	if r.Audit == nil || len(r.Audit.Findings) == 0 {
		audit.Blocks = append(audit.Blocks, HTMLText("No finding."))
	} else {
		for i, f := range r.Audit.Findings {
			audit.Blocks = append(audit.Blocks, HTMLSection{Title: fmt.Sprintf("%d. [%s] %s (%s, %s)", i+1, f.Severity, f.Title, f.ID, f.Layer),
				Blocks: []HTMLBlock{HTMLList(findingLines(&f)...)}})
		}
	}
	p.Sections = append(p.Sections, audit)

	if cl := diagnoseConnLines(r); cl != nil {
		p.Sections = append(p.Sections, HTMLSection{Title: "Connections not captured", ID: "connections", Blocks: []HTMLBlock{HTMLList(cl...)}})
	}
	capl := diagnoseCaptureLines(r)
	if len(capl) == 0 {
		capl = []string{"Nothing."}
	}
	p.Sections = append(p.Sections, HTMLSection{Title: "What the capture changed", ID: "capture", Blocks: []HTMLBlock{HTMLList(capl...)}})
	return p
}
