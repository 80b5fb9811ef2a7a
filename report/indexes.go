package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/indexadv"
)

// IndexesFormats are the formats Indexes renders.
var IndexesFormats = []string{Text, JSON, Markdown, SQL}

// Indexes renders index advice in the given format.
func Indexes(w io.Writer, r *indexadv.Result, format string) error {
	if r == nil {
		r = &indexadv.Result{}
	}
	switch format {
	case JSON:
		return WriteJSON(w, r)
	case Markdown:
		return indexesMarkdown(w, r)
	case SQL:
		return indexesSQL(w, r)
	case Text, "":
		return indexesText(w, r)
	}
	return CheckFormat(format, IndexesFormats...)
}

// indexesSQL is the proven DDL, one statement per table, each index's
// evidence in comments above it: what `stacktune apply --ddl` reads.
// What is not proposed is counted in comments, so nothing is lost
// silently.
func indexesSQL(w io.Writer, r *indexadv.Result) error {
	head := []string{"# Index changes from stacktune indexes."}
	if r.Server != "" {
		head = append(head, fmt.Sprintf("# Proven on a throwaway MariaDB %s holding a copy (%s).", r.Server, copiesLine(r)))
	}
	head = append(head, "# Apply with: stacktune apply --ddl FILE (it checks each table, adds the indexes online and can roll them back).")
	var cs []changeset.Change
	if r.Changes != nil {
		cs = r.Changes.Changes
	}
	if len(cs) == 0 {
		head = append(head, "# No index was proven to help: nothing to apply.")
	}
	for _, l := range []struct {
		n    int
		what string
	}{{len(r.Rejected), "candidate(s) tried and rejected"}, {len(r.Covered), "candidate(s) already served by an existing index"},
		{len(r.Existing), "duplicate or redundant existing index(es), not dropped here"}, {len(r.Drops), "index drop(s) proposed, each ignored and measured before it is dropped (tune)"},
		{len(r.Skipped), "query class(es) skipped"}} {
		if l.n > 0 {
			head = append(head, fmt.Sprintf("# %d %s: see --format text.", l.n, l.what))
		}
	}
	// The header lines are this file's own comments: each is cleaned to
	// one line here, so a server version cannot end a comment and start a
	// statement. The statements and their comments are changeset's.
	for i := range head {
		head[i] = Clean(head[i])
	}
	q, err := changeset.IndexSQL(head, cs)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, q)
	return err
}

func ms(v float64) string { return Duration(v / 1000) }

func writeCost(p indexadv.Proposal) string {
	if p.WriteBeforeMS < 0 || p.WriteAfterMS < 0 {
		return "write cost not measurable"
	}
	return fmt.Sprintf("%d inserts %s → %s (with all the table's proposals)", p.WriteRows, ms(p.WriteBeforeMS), ms(p.WriteAfterMS))
}

// ddlLines are the per-table statements, or the per-proposal ones when
// the result has none.
func ddlLines(r *indexadv.Result) []string {
	var out []string
	for _, d := range r.DDL {
		out = append(out, d.DDL)
	}
	if len(out) == 0 {
		for _, p := range r.Proposals {
			out = append(out, p.DDL)
		}
	}
	return out
}

func proposalFigures(p indexadv.Proposal) string {
	return fmt.Sprintf("rows examined %s → %s, time %s → %s, index %s, %s",
		Count(p.RowsBefore), Count(p.RowsAfter), ms(p.TimeBeforeMS), ms(p.TimeAfterMS), Bytes(p.IndexBytes), writeCost(p))
}

// benefitLine is a proposal's benefit over the workload's window.
func benefitLine(p indexadv.Proposal) string {
	b := p.Benefit
	switch {
	case b == nil:
		return "benefit not measured"
	case p.Action == indexadv.ActionDrop && p.WriteCost != nil && p.WriteCost.Statements > 0:
		return fmt.Sprintf("frees %s; the window's writes %s faster", Bytes(b.BytesFreed), ms(b.WriteMSSaved))
	case p.Action == indexadv.ActionDrop:
		return "frees " + Bytes(b.BytesFreed)
	}
	return fmt.Sprintf("over the window: %s calls of %d class(es), %s rows examined and %s saved", Count(b.Calls), b.Queries, Count(b.RowsExaminedSaved), ms(b.TimeSavedMS))
}

// writeCostLine is what a proposal costs the window's writes, replayed
// on the copy.
func writeCostLine(p indexadv.Proposal) string {
	w := p.WriteCost
	switch {
	case w == nil:
		return "write cost not measured"
	case w.Statements == 0:
		return fmt.Sprintf("size %s; no write of the window to replay on its table", Bytes(w.IndexBytes))
	}
	return fmt.Sprintf("size %s; %d writes of %d class(es) replayed: %s without, %s with (+%s each; %s over the window's %s writes)",
		Bytes(w.IndexBytes), w.Statements, w.Classes, ms(w.WithoutMS), ms(w.WithMS), ms(w.PerStatementMS), ms(w.WindowMS), Count(w.WindowCalls))
}

// dropEvidence is a drop's evidence in words.
func dropEvidence(p indexadv.Proposal) []string {
	var out []string
	ev := p.Evidence
	switch {
	case ev.Of != "":
		out = append(out, fmt.Sprintf("%s: served by %s (%s)", p.Reason, ev.Of, strings.Join(ev.OfColumns, ", ")))
	case ev.Usage != nil && ev.Reads != nil:
		out = append(out, fmt.Sprintf("unused: %s reads of it while its table was accessed %s times, %s", Count(ev.Reads.Reads), Count(ev.Reads.TableReads), usageLine(ev.Usage)))
	}
	switch ev.Staged {
	case "ignore_first":
		out = append(out, "first ignored, measured, then dropped; rollback makes it seen again at once")
	case "drop_recreate":
		out = append(out, fmt.Sprintf("this server cannot ignore an index: dropped, and a rollback re-creates it online in about %s", Duration(ev.RecreateSeconds)))
	}
	return out
}

// usageLine says where the evidence of use comes from and over what.
func usageLine(u *indexadv.Usage) string {
	if u == nil || u.Source == indexadv.UsageNone {
		return "no evidence of use (performance_schema, userstat and the workload's plans all unavailable)"
	}
	s := fmt.Sprintf("counted by %s over %s (at least %s needed), coverage %.0f%% (at least %.0f%%)", u.Source,
		Duration(u.WindowSeconds), Duration(u.MinWindowSeconds), u.Coverage*100, u.MinCoverage*100)
	switch u.Caveat {
	case "truncate_unseen":
		s += "; since the server started, unless the counters were truncated"
	case "enabled_unseen":
		s += "; since userstat was turned on or flushed, at most the uptime"
	}
	if !u.Enough {
		s += ": too little to call an index unused"
	}
	return s
}

func copiesLine(r *indexadv.Result) string {
	var parts []string
	for _, c := range r.Copies {
		parts = append(parts, c.Table+": "+c.Note)
	}
	return strings.Join(parts, "; ")
}

func indexesText(w io.Writer, r *indexadv.Result) error {
	e := &errWriter{w: w}
	sw := sectionWriter{e: e}
	if r.Server != "" {
		e.printf("Proven on a throwaway MariaDB %s holding a copy (%s).\n", r.Server, copiesLine(r))
	}
	// Each proposal is a line with its figures, evidence and DDL under it.
	e.printf("\nProposals: %d\n", len(r.Proposals))
	rows := make([][]string, len(r.Proposals))
	under := make([][]string, len(r.Proposals))
	for i, p := range r.Proposals {
		if p.Action == indexadv.ActionDrop {
			rows[i] = []string{fmt.Sprintf("drop %s %s (%s): %s", p.Table, p.Index, strings.Join(p.Columns, ", "), p.Reason)}
			under[i] = []string{"benefit: " + benefitLine(p)}
			if p.WriteCost != nil {
				under[i] = append(under[i], "write cost it has: "+writeCostLine(p))
			}
			under[i] = append(append(under[i], dropEvidence(p)...), p.DDL)
			continue
		}
		rows[i] = []string{fmt.Sprintf("add %s %s (%s)  for %s", p.Table, p.Index, strings.Join(p.Columns, ", "), strings.Join(p.Queries, ", "))}
		under[i] = []string{proposalFigures(p), "benefit: " + benefitLine(p), "write cost: " + writeCostLine(p)}
		for _, why := range p.Reasons {
			under[i] = append(under[i], "why: "+why)
		}
		for _, ev := range p.Evidence.Plans {
			// The two plans one above the other, their labels padded alike.
			under[i] = append(under[i], ev.Query+" before: "+ev.PlanBefore, ev.Query+" after:  "+ev.PlanAfter)
		}
	}
	sw.tableUnder(nil, "l", rows, func(i int) []string { return under[i] })
	if r.Usage != nil {
		e.printf("\nEvidence of use: %s\n", usageLine(r.Usage))
	}
	if len(r.Proposals) > 0 {
		e.printf("\nDDL, one statement per table:\n")
		sw.list(ddlLines(r))
	}
	if len(r.Queries) > 0 {
		e.printf("\nQueries:\n")
		rows := make([][]string, len(r.Queries))
		for i, q := range r.Queries {
			rows[i] = []string{q.ID, Count(q.Count) + " calls", q.Fingerprint}
		}
		sw.tableUnder(nil, "lrl", rows, func(i int) []string {
			out := []string{"plan: " + r.Queries[i].Plan}
			for _, pr := range r.Queries[i].Problems {
				out = append(out, "- "+pr)
			}
			return out
		})
	}
	if len(r.Rejected) > 0 {
		e.printf("\nTried and rejected:\n")
		var ls []string
		for _, p := range r.Rejected {
			ls = append(ls, fmt.Sprintf("%s (%s): %s", p.Table, strings.Join(p.Columns, ", "), p.Rejected))
		}
		sw.list(ls)
	}
	if len(r.Covered) > 0 {
		e.printf("\nAlready served by an existing index:\n")
		sw.list(r.Covered)
	}
	if len(r.Existing) > 0 {
		e.printf("\nDuplicate and redundant existing indexes:\n")
		rows := make([][]string, len(r.Existing))
		for i, f := range r.Existing {
			rows[i] = []string{fmt.Sprintf("%s %s: %s", f.Table, f.Kind, f.Detail)}
		}
		sw.tableUnder(nil, "l", rows, func(i int) []string { return []string{r.Existing[i].DDL} })
	}
	if len(r.Skipped) > 0 {
		e.printf("\nSkipped:\n")
		var ls []string
		for _, s := range r.Skipped {
			ls = append(ls, s.ID+": "+s.Reason)
		}
		sw.list(ls)
	}
	e.printf("\n%s\n", appliedLine(r))
	return e.err
}

func appliedLine(r *indexadv.Result) string {
	if len(r.Applied) > 0 {
		return fmt.Sprintf("Applied %d index(es) to the server.", len(r.Applied))
	}
	if len(r.Proposals) > 0 {
		return "Nothing was applied: review the DDL, or run again with --apply."
	}
	return "Nothing to apply."
}

func indexesMarkdown(w io.Writer, r *indexadv.Result) error {
	e := &errWriter{w: w}
	e.printf("# Index advice\n\n")
	if r.Server != "" {
		e.printf("Proven on a throwaway MariaDB %s holding a copy (%s).\n\n", r.Server, mdEscape(copiesLine(r)))
	}
	e.printf("## Proposals\n\n")
	if len(r.Proposals) == 0 {
		e.printf("None.\n\n")
	} else {
		var rows [][]string
		for _, p := range r.Proposals {
			ev := dropEvidence(p)
			if p.Action == indexadv.ActionAdd {
				ev = []string{proposalFigures(p), "for " + strings.Join(p.Queries, ", ")}
			}
			rows = append(rows, []string{string(p.Action), p.Table, p.Index, strings.Join(p.Columns, ", "), string(p.Reason),
				benefitLine(p), writeCostLine(p), strings.Join(ev, "; ")})
		}
		sectionWriter{e: e, md: true}.table([]string{"action", "table", "index", "columns", "reason", "benefit", "write cost", "evidence"}, "", rows)
		if r.Usage != nil {
			e.printf("\nEvidence of use: %s\n", mdEscape(usageLine(r.Usage)))
		}
		e.printf("\n```sql\n")
		for _, d := range ddlLines(r) {
			e.printf("%s\n", d)
		}
		e.printf("```\n\n")
	}
	if len(r.Queries) > 0 {
		e.printf("## Queries\n\n")
		for _, q := range r.Queries {
			e.printf("- **%s** (%s calls) `%s`: plan %s", mdEscape(q.ID), Count(q.Count), mdEscape(q.Fingerprint), mdEscape(q.Plan))
			if len(q.Problems) > 0 {
				e.printf("; %s", mdEscape(strings.Join(q.Problems, "; ")))
			}
			e.printf("\n")
		}
		e.printf("\n")
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		e.printf("## %s\n\n", title)
		for _, l := range lines {
			e.printf("- %s\n", mdEscape(l))
		}
		e.printf("\n")
	}
	var rej, ex, sk []string
	for _, p := range r.Rejected {
		rej = append(rej, fmt.Sprintf("%s (%s): %s", p.Table, strings.Join(p.Columns, ", "), p.Rejected))
	}
	for _, f := range r.Existing {
		ex = append(ex, fmt.Sprintf("%s %s: %s: %s", f.Table, f.Kind, f.Detail, f.DDL))
	}
	for _, s := range r.Skipped {
		sk = append(sk, s.ID+": "+s.Reason)
	}
	section("Tried and rejected", rej)
	section("Already served by an existing index", r.Covered)
	section("Duplicate and redundant existing indexes", ex)
	section("Skipped", sk)
	e.printf("%s\n", appliedLine(r))
	return e.err
}
