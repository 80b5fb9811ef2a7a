package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stacktune/stacktune/advise"
)

// AuditFormats are the formats Audit renders.
var AuditFormats = []string{Text, JSON, Markdown}

// Audit renders an audit's findings.
func Audit(w io.Writer, r *advise.Result, format string) error {
	if r == nil {
		r = &advise.Result{}
	}
	switch format {
	case JSON:
		return WriteJSON(w, r)
	case Text, Markdown, "":
	default:
		return CheckFormat(format, AuditFormats...)
	}
	md := format == Markdown
	ew := &errWriter{w: w}
	sw := sectionWriter{e: ew, md: md}
	counts := map[string]int64{}
	for _, f := range r.Findings {
		counts[string(f.Severity)]++
	}
	head := fmt.Sprintf("%d findings for %s (snapshot of %s)", len(r.Findings), r.Host, r.Taken.Format(time.RFC3339))
	if len(counts) > 0 {
		head += ": " + countsLine(counts, 0)
	}
	if md {
		ew.printf("# Audit\n\n%s\n", mdEscape(head))
	} else {
		ew.printf("# %s\n", head)
	}
	for _, e := range r.CollectorErrors {
		line := fmt.Sprintf("could not collect %s: %s", e.Collector, e.Error)
		if md {
			ew.printf("- %s\n", mdEscape(line))
		} else {
			ew.printf("# %s\n", line)
		}
	}
	for _, n := range r.NotSeen {
		if md {
			ew.printf("- not seen: %s\n", mdEscape(n))
		} else {
			ew.printf("# not seen: %s\n", n)
		}
	}
	for i, f := range r.Findings {
		if md {
			ew.printf("\n## %d. [%s] %s (`%s`, %s)\n\n", i+1, f.Severity, mdEscape(f.Title), f.ID, f.Layer)
		} else {
			ew.printf("\n%d. [%s] %s  (%s, %s)\n", i+1, strings.ToUpper(string(f.Severity)), f.Title, f.ID, f.Layer)
		}
		sw.list(findingLines(&f))
	}
	return ew.err
}

// findingLines are a finding's details, shared by text and Markdown.
func findingLines(f *advise.Finding) []string {
	var lines []string
	for _, e := range f.Evidence {
		v := e.Value
		if e.Unit != "" {
			v += " " + e.Unit
		}
		lines = append(lines, fmt.Sprintf("evidence: %s = %s (%s)", e.What, v, e.Source))
	}
	for _, c := range f.Changes() {
		cur := c.From
		if cur == "" {
			cur = "unset"
		}
		line := fmt.Sprintf("change: %s %s %s = %s (now %s) in %s", c.Direction, c.Kind, c.Name, c.To, cur, c.Target)
		if c.Apply != "" {
			line += "; now: " + c.Apply
		}
		lines = append(lines, line)
	}
	if f.Effect != "" {
		lines = append(lines, "effect: "+f.Effect)
	}
	var risk []string
	if f.Risk.Durability != "" {
		risk = append(risk, "durability: "+f.Risk.Durability)
	}
	if f.Risk.Memory != "" {
		risk = append(risk, "memory: "+f.Risk.Memory)
	}
	if f.Risk.Restart {
		risk = append(risk, "needs a restart")
	}
	if f.Risk.Note != "" {
		risk = append(risk, f.Risk.Note)
	}
	if len(risk) > 0 {
		lines = append(lines, "risk: "+strings.Join(risk, "; "))
	}
	if f.Source != "" {
		lines = append(lines, "source: "+f.Source)
	}
	return lines
}
