package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/reqtrace"
)

// Limits of the app-CPU sections.
const (
	profileFunctions     = 5  // functions under each endpoint
	profileDiffFunctions = 10 // functions under each endpoint of a diff
)

var profileHeads = []string{"endpoint", "requests", "request ms", "app CPU ms", "DB ms", "other ms", "top function (self share)"}

// profileSymbols says in words how a profile's frames are named.
func profileSymbols(code string) string {
	switch code {
	case appcpu.SymbolsNative:
		return "native code and Go, named from the binaries' symbol tables"
	case appcpu.SymbolsPerfMap:
		return "JIT code named from the runtime's perf map, native code from symbol tables"
	case appcpu.SymbolsInterpreter:
		return "the interpreter's own frames: it publishes no perf map, so the script's functions are not named"
	case appcpu.SymbolsGo:
		return "Go's profiler (pprof)"
	}
	return code
}

// profileSummary are a profile's lines: sampler, symbols, samples.
func profileSummary(p *appcpu.Profile) []string {
	out := []string{fmt.Sprintf("sampled with %s (%s); %s samples, %s ms of app CPU: %s in requests, %s between them (%s ms)",
		p.Sampler, profileSymbols(p.Symbols), Count(p.Samples), trim3(p.CPUMs), Count(p.Attributed), Count(p.Outside), trim3(p.OutsideMs))}
	if p.Ambiguous > 0 {
		out[0] += fmt.Sprintf(", %s within several requests' times", Count(p.Ambiguous))
	}
	if len(p.PIDs) > 0 {
		ps := make([]string, len(p.PIDs))
		for i, pid := range p.PIDs {
			ps[i] = fmt.Sprint(pid)
		}
		out = append(out, "processes: "+strings.Join(ps, ", "))
	}
	return out
}

func profileRows(r *reqtrace.Report) [][]string {
	var rows [][]string
	for _, e := range r.Endpoints {
		if e.Usage == nil {
			continue
		}
		top := "–"
		if len(e.TopFunctions) > 0 {
			top = fmt.Sprintf("%s (%s)", e.TopFunctions[0].Name, Percent(e.TopFunctions[0].Share))
		}
		rows = append(rows, []string{e.Endpoint, Count(e.ProfiledRequests), trim3(e.RequestMsPerRequest), trim3(e.AppCPUMsPerRequest),
			trim3(e.DBMsPerRequest), trim3(e.OtherMsPerRequest), top})
	}
	return rows
}

// profileFunctionLines are an endpoint's top functions.
func profileFunctionLines(u *appcpu.Usage) []string {
	var out []string
	for i, f := range u.TopFunctions {
		if i >= profileFunctions {
			break
		}
		out = append(out, fmt.Sprintf("%s self, %s with its callees: %s", Percent(f.Share), Percent(f.TotalShare), f.Name))
	}
	if u.FlameGraph != "" {
		out = append(out, "flame graph: "+u.FlameGraph)
	}
	return out
}

// requestsProfileBlock is the app-CPU section of a per-request view
// (text or Markdown): per endpoint the request's time split into app CPU,
// DB and the rest, its top functions and its flame graph's file.
func requestsProfileBlock(sw sectionWriter, r *reqtrace.Report) {
	p := r.Profile
	if p == nil {
		return
	}
	sw.heading("Where each endpoint's time goes: app CPU, DB, the rest (ms per request)")
	sw.list(profileSummary(p))
	if sw.md {
		sw.e.printf("\n")
	}
	rows := profileRows(r)
	if len(rows) == 0 {
		sw.list([]string{"no endpoint's request was profiled"})
	} else {
		sw.table(profileHeads, "lrrrrrl", rows)
	}
	if !sw.md {
		sw.e.printf("\n")
	}
	for i, e := range r.Endpoints {
		if i >= requestsEndpoints || e.Usage == nil {
			continue
		}
		if len(e.TopFunctions) == 0 && e.FlameGraph == "" {
			continue // no sample in its requests: the table says so
		}
		if sw.md {
			sw.e.printf("\n**%s**\n\n", mdEscape(e.Endpoint))
			sw.list(profileFunctionLines(e.Usage))
			if e.FlameGraph != "" {
				// The path is the user's own file: shown as an image.
				sw.e.printf("\n![flame graph of %s](%s)\n", mdEscape(e.Endpoint), strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(e.FlameGraph))
			}
			continue
		}
		sw.e.printf("  %s\n", e.Endpoint)
		for _, l := range profileFunctionLines(e.Usage) {
			sw.e.printf("    %s\n", l)
		}
	}
	if len(p.Notes) > 0 {
		sw.list(p.Notes)
	}
}

// htmlProfileSection is the app-CPU section of an HTML page, with each
// endpoint's flame graph inline (frames' tooltips give their time).
func htmlProfileSection(r *reqtrace.Report) (HTMLSection, bool) {
	p := r.Profile
	if p == nil {
		return HTMLSection{}, false
	}
	s := HTMLSection{Title: "Where each endpoint's time goes: app CPU, DB, the rest (ms per request)", ID: "app-cpu",
		Blocks: []HTMLBlock{HTMLList(profileSummary(p)...)}}
	t := HTMLTable{Empty: "No endpoint's request was profiled."}
	for i, h := range profileHeads {
		t.Columns = append(t.Columns, HTMLColumn{Head: h, Numeric: i > 0 && i < 6, Code: i == 0 || i == 6})
	}
	t.Rows = profileRows(r)
	s.Blocks = append(s.Blocks, t)
	for i, e := range r.Endpoints {
		if i >= requestsEndpoints || e.Usage == nil {
			continue
		}
		sub := HTMLSection{Title: e.Endpoint, Blocks: []HTMLBlock{HTMLList(profileFunctionLines(e.Usage)...)}}
		if len(e.Stacks) > 0 {
			sub.Blocks = append(sub.Blocks, svgBlock(flameSVG(e.Endpoint+": app CPU, "+trim3(e.AppCPUMsPerRequest)+" ms per request (hover a frame for its time)", e.Stacks)))
		}
		s.Blocks = append(s.Blocks, sub)
	}
	if len(p.Notes) > 0 {
		s.Blocks = append(s.Blocks, HTMLList(p.Notes...))
	}
	return s, true
}

// svgBlock is SVG this package drew (every string in it escaped).
type svgBlock string

func (b svgBlock) htmlNode(int) htmlNode { return htmlNode{Kind: "svg", Pre: template.HTML(b)} }

// requestsHTML is the per-request view as an HTML page.
func requestsHTML(w io.Writer, r *reqtrace.Report) error {
	p := &HTMLPage{Title: requestsTitle(r), Summary: requestsSummary(r), Notes: r.Notes}
	t := HTMLTable{Empty: "No request was seen."}
	for i, h := range requestsEndpointHeads {
		t.Columns = append(t.Columns, HTMLColumn{Head: h, Numeric: i > 0, Code: i == 0})
	}
	t.Rows = requestsEndpointRows(r)
	eps := HTMLSection{Title: "Endpoints, the most DB time first", ID: "endpoints", Blocks: []HTMLBlock{t}}
	for i, e := range r.Endpoints {
		if i >= requestsEndpoints {
			break
		}
		eps.Blocks = append(eps.Blocks, HTMLSection{Title: e.Endpoint, Blocks: []HTMLBlock{HTMLList(requestsEndpointClasses(e)...)}})
	}
	p.Sections = append(p.Sections, eps)
	if s, ok := htmlProfileSection(r); ok {
		p.Sections = append(p.Sections, s)
	}
	n := requestsNPlusOne(r)
	if len(n) == 0 {
		n = []string{"none"}
	}
	p.Sections = append(p.Sections, HTMLSection{Title: fmt.Sprintf("N+1: one statement %d times or more in one request", r.NPlusOneMin), ID: "n-plus-one", Blocks: []HTMLBlock{HTMLList(n...)}})
	if sk := requestsSkipped(r); len(sk) > 0 {
		p.Sections = append(p.Sections, HTMLSection{Title: "Not counted", ID: "skipped", Blocks: []HTMLBlock{HTMLList(sk...)}})
	}
	return WriteHTMLPage(w, p)
}

// EndpointsDiffFormats are the formats EndpointsDiff renders.
var EndpointsDiffFormats = []string{Text, Markdown, JSON}

// EndpointsDiffView is what `stacktune endpoints diff` shows: two runs'
// endpoints compared, with the differential flame graphs' files.
type EndpointsDiffView struct {
	Before    string                `json:"before"`
	After     string                `json:"after"`
	Endpoints []appcpu.EndpointDiff `json:"endpoints"`
	// FlameGraphs are the differential flame graphs' files by endpoint.
	FlameGraphs map[string]string `json:"flame_graphs,omitempty"`
}

// EndpointsDiff renders two profiled runs compared: per endpoint the
// times per request before and after, and the functions whose own CPU
// per request grew or shrank most.
func EndpointsDiff(w io.Writer, v *EndpointsDiffView, format string) error {
	if v == nil {
		v = &EndpointsDiffView{} // renders as an empty comparison, as every report does
	}
	switch format {
	case JSON:
		return WriteJSON(w, v)
	case Text, "", Markdown:
	default:
		return CheckFormat(format, EndpointsDiffFormats...)
	}
	e := &errWriter{w: w}
	sw := sectionWriter{e: e, md: format == Markdown}
	sw.title("Where each endpoint's CPU changed", []string{"before: " + v.Before, "after: " + v.After})
	heads := []string{"endpoint", "app CPU ms before", "after", "DB ms before", "after", "other ms before", "after"}
	var rows [][]string
	for _, d := range v.Endpoints {
		name := d.Endpoint
		switch d.Status {
		case appcpu.DiffOnlyBefore:
			name += " (only before)"
		case appcpu.DiffOnlyAfter:
			name += " (only after)"
		}
		rows = append(rows, []string{name, trim3(d.Before.AppCPUMs), trim3(d.After.AppCPUMs), trim3(d.Before.DBMs), trim3(d.After.DBMs), trim3(d.Before.OtherMs), trim3(d.After.OtherMs)})
	}
	sw.heading("Endpoints, the largest change of app CPU first (ms per request)")
	if len(rows) == 0 {
		sw.list([]string{"no profiled endpoint in either run"})
	} else {
		sw.table(heads, "lrrrrrr", rows)
	}
	for _, d := range v.Endpoints {
		sw.heading(d.Endpoint + ": functions that grew or shrank (own CPU, ms per request)")
		var ls []string
		for i, f := range d.Functions {
			if i >= profileDiffFunctions {
				break
			}
			ls = append(ls, fmt.Sprintf("%+.3f ms (%s → %s): %s", f.DeltaMs, trim3(f.BeforeMs), trim3(f.AfterMs), f.Name))
		}
		if len(ls) == 0 {
			ls = []string{"no function"}
		}
		if g := v.FlameGraphs[d.Endpoint]; g != "" {
			ls = append(ls, "differential flame graph (red grew, blue shrank): "+g)
		}
		sw.list(ls)
	}
	return e.err
}
