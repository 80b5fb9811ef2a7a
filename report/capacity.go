package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/stacktune/stacktune/capacity"
)

// CapacityFormats are the formats Plan renders.
var CapacityFormats = []string{Text, Markdown, JSON}

// Capacity renders a capacity plan in one of PlanFormats. It only formats:
// every figure and sentence comes from plan.Compute.
func Capacity(w io.Writer, p *capacity.Report, format string) error {
	if err := CheckFormat(format, CapacityFormats...); err != nil {
		return err
	}
	if p == nil {
		p = &capacity.Report{}
	}
	if format == JSON {
		return WriteJSON(w, p)
	}
	bw := bufio.NewWriter(w)
	if format == Markdown {
		planMarkdown(bw, p)
	} else {
		planText(bw, p)
	}
	return bw.Flush()
}

// planHeader describes the inputs in a few sentences.
func planHeader(in capacity.Inputs) []string {
	conn := "a MySQL connection per request, closed first by the web server"
	switch {
	case in.Persistent:
		conn = "persistent MySQL connections"
	case in.Closer == capacity.CloserDB:
		conn = "a MySQL connection per request, closed first by the MySQL server"
	}
	live := fmt.Sprintf("%d live sockets per web server", in.LiveSockets)
	if in.LiveSocketsDerived {
		live = fmt.Sprintf("%d live sockets per web server (%d per worker)", in.LiveSockets, capacity.LiveSocketsPerWorker)
	}
	measured := "rate per server not measured"
	if in.PerServerRate > 0 {
		measured = fmt.Sprintf("%s req/s measured per server", capacity.Num(in.PerServerRate))
	}
	return []string{
		fmt.Sprintf("%s req/s × headroom %s = %s req/s planned, on %d web servers × %d workers; mean response time %s s",
			capacity.Num(in.Rate), capacity.Num(in.Headroom), capacity.Num(in.PlannedRate), in.Servers, in.Workers, capacity.Num(in.ResponseTime)),
		fmt.Sprintf("%s; TIME_WAIT %s s; %s; %s", conn, capacity.Num(in.TimeWait), live, measured),
		fmt.Sprintf("now: ip_local_port_range %s, tcp_max_tw_buckets %d; MySQL files besides connections %d; admin connections %d; cache clients per worker %d",
			in.PortRange, in.TWBuckets, in.OtherFiles, in.AdminConnections, in.CacheClientsPerWorker),
	}
}

func planVerb(s *capacity.Setting) string {
	if s.Changes() {
		return "set"
	}
	return "keep"
}

func planNow(s *capacity.Setting) string {
	if s.Current == "" || !s.Changes() {
		return ""
	}
	return "now " + s.Current
}

const textWidth = 100

// planWrap writes label and text, wrapped at textWidth with a hanging
// indent. The text is cleaned (see Clean) before it is split into words,
// so a line break or tab in it shows as \x0a or \x09 like anywhere else;
// indent and label are the renderer's own.
func planWrap(w *bufio.Writer, indent, label, text string) {
	prefix := indent
	if label != "" {
		prefix += fmt.Sprintf("%-9s ", label)
	}
	pad := strings.Repeat(" ", len(prefix))
	line := prefix
	empty := true
	for _, word := range strings.Fields(Clean(text)) {
		if !empty && len([]rune(line))+1+len([]rune(word)) > textWidth {
			w.WriteString(line + "\n")
			line, empty = pad, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	w.WriteString(line + "\n")
}

func planText(w *bufio.Writer, p *capacity.Report) {
	w.WriteString("Capacity plan\n")
	for _, h := range planHeader(p.Inputs) {
		planWrap(w, "", "", h)
	}
	w.WriteString("\nSettings\n")
	var rows [][]string
	for _, r := range p.Results {
		if s := r.Setting; s != nil {
			extra := s.Host
			if n := planNow(s); n != "" {
				extra += ", " + n
			}
			rows = append(rows, []string{planVerb(s), s.Line(), extra})
		}
	}
	sectionWriter{e: &errWriter{w: w}}.table(nil, "lll", rows)
	for i, r := range p.Results {
		fprintf(w, "\n%d. %s: %s %s\n", i+1, r.Title, capacity.Num(r.Value), r.Unit)
		planWrap(w, "   ", "formula", r.Formula)
		planWrap(w, "   ", "computed", r.Calculation)
		if s := r.Setting; s != nil {
			planWrap(w, "   ", planVerb(s), s.Line())
			planWrap(w, "   ", "where", s.Host+": "+s.Where)
		}
		for _, x := range r.Warnings {
			planWrap(w, "   ", "WARNING", x)
		}
		for _, x := range r.Notes {
			planWrap(w, "   ", "note", x)
		}
		planWrap(w, "   ", "source", r.Source)
	}
}

func planMarkdown(w *bufio.Writer, p *capacity.Report) {
	w.WriteString("# Capacity plan\n\n")
	for _, h := range planHeader(p.Inputs) {
		fprintf(w, "- %s\n", mdEscape(h))
	}
	sw := sectionWriter{e: &errWriter{w: w}, md: true}
	sw.heading("Settings")
	var rows [][]string
	for _, r := range p.Results {
		if s := r.Setting; s != nil {
			rows = append(rows, []string{planVerb(s), s.Host, s.Line(), s.Current, r.Title})
		}
	}
	sw.table([]string{"", "Host", "Setting", "Now", "For"}, "llcll", rows)
	sw.heading("Results")
	rows = nil
	for _, r := range p.Results {
		rows = append(rows, []string{r.Title, capacity.Num(r.Value) + " " + r.Unit, r.Calculation})
	}
	sw.table([]string{"Result", "Value", "Calculation"}, "lrc", rows)
	for _, r := range p.Results {
		fprintf(w, "\n### %s: %s %s\n\n", mdEscape(r.Title), capacity.Num(r.Value), r.Unit)
		fprintf(w, "- **Formula:** %s\n- **Computed:** `%s`\n", mdEscape(r.Formula), r.Calculation)
		if s := r.Setting; s != nil {
			fprintf(w, "- **%s:** `%s` on the %s: %s\n", strings.ToUpper(planVerb(s)[:1])+planVerb(s)[1:], s.Line(), s.Host, mdEscape(s.Where))
		}
		for _, x := range r.Warnings {
			fprintf(w, "- **Warning:** %s\n", mdEscape(x))
		}
		for _, x := range r.Notes {
			fprintf(w, "- %s\n", mdEscape(x))
		}
		fprintf(w, "- Source: %s\n", mdEscape(r.Source))
	}
}
