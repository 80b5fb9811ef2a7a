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
		{len(r.Existing), "duplicate or redundant existing index(es), not dropped here"}, {len(r.Skipped), "query class(es) skipped"}} {
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
	_, err := io.WriteString(w, changeset.IndexSQL(head, cs))
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

func copiesLine(r *indexadv.Result) string {
	var parts []string
	for _, c := range r.Copies {
		parts = append(parts, c.Table+": "+c.Note)
	}
	return strings.Join(parts, "; ")
}

func indexesText(w io.Writer, r *indexadv.Result) error {
	e := &errWriter{w: w}
	if r.Server != "" {
		e.printf("Proven on a throwaway MariaDB %s holding a copy (%s).\n", r.Server, copiesLine(r))
	}
	e.printf("\nProposals: %d\n", len(r.Proposals))
	for _, p := range r.Proposals {
		e.printf("  %s (%s)  for %s\n", p.Table, strings.Join(p.Columns, ", "), strings.Join(p.Queries, ", "))
		e.printf("    %s\n", proposalFigures(p))
		for _, why := range p.Reasons {
			e.printf("    why: %s\n", why)
		}
		for _, ev := range p.Evidence {
			e.printf("    %s before: %s\n    %s after:  %s\n", ev.Query, ev.PlanBefore, ev.Query, ev.PlanAfter)
		}
	}
	if len(r.Proposals) > 0 {
		e.printf("\nDDL, one statement per table:\n")
		for _, d := range ddlLines(r) {
			e.printf("  %s\n", d)
		}
	}
	if len(r.Queries) > 0 {
		e.printf("\nQueries:\n")
		for _, q := range r.Queries {
			e.printf("  %s  %s calls  %s\n", q.ID, Count(q.Count), q.Fingerprint)
			e.printf("    plan: %s\n", q.Plan)
			for _, pr := range q.Problems {
				e.printf("    - %s\n", pr)
			}
		}
	}
	if len(r.Rejected) > 0 {
		e.printf("\nTried and rejected:\n")
		for _, p := range r.Rejected {
			e.printf("  %s (%s): %s\n", p.Table, strings.Join(p.Columns, ", "), p.Rejected)
		}
	}
	if len(r.Covered) > 0 {
		e.printf("\nAlready served by an existing index:\n")
		for _, c := range r.Covered {
			e.printf("  %s\n", c)
		}
	}
	if len(r.Existing) > 0 {
		e.printf("\nDuplicate and redundant existing indexes:\n")
		for _, f := range r.Existing {
			e.printf("  %s %s: %s\n    %s\n", f.Table, f.Kind, f.Detail, f.DDL)
		}
	}
	if len(r.Skipped) > 0 {
		e.printf("\nSkipped:\n")
		for _, s := range r.Skipped {
			e.printf("  %s: %s\n", s.ID, s.Reason)
		}
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
		e.printf("| table | columns | queries | rows before | rows after | time before | time after | size | write cost |\n|---|---|---|---:|---:|---:|---:|---:|---|\n")
		for _, p := range r.Proposals {
			e.printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(p.Table), mdEscape(strings.Join(p.Columns, ", ")),
				mdEscape(strings.Join(p.Queries, ", ")), Count(p.RowsBefore), Count(p.RowsAfter), ms(p.TimeBeforeMS), ms(p.TimeAfterMS), Bytes(p.IndexBytes), writeCost(p))
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
