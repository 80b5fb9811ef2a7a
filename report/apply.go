package report

import (
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/stacktune/stacktune/apply"
)

// ApplyFormats are the formats of the apply renderers (ApplyResult,
// ApplyDryRun, ApplyTransactions).
var ApplyFormats = []string{Text, JSON}

// ApplyResult writes what apply.Run or apply.Rollback did (rollback says
// which): the transaction, each target's files and settings before and
// after, what was skipped and what could not be put back. JSON is the
// apply.Result as it is.
func ApplyResult(w io.Writer, res *apply.Result, format string, rollback bool) error {
	if err := CheckFormat(format, ApplyFormats...); err != nil {
		return err
	}
	if res == nil {
		res = &apply.Result{}
	}
	if format == JSON {
		return WriteJSON(w, res)
	}
	var b strings.Builder
	if res.Recovered != "" {
		fprintf(&b, "restored the half-done transaction %s first\n", res.Recovered)
	}
	switch {
	case res.ID == "":
		b.WriteString("nothing applied\n")
	case rollback:
		fprintf(&b, "rolled back transaction %s", res.ID)
	case res.RolledBack:
		fprintf(&b, "transaction %s failed and was rolled back", res.ID)
	default:
		fprintf(&b, "applied transaction %s", res.ID)
	}
	if res.ID != "" {
		if res.Label != "" {
			fprintf(&b, " (%s)", res.Label)
		}
		b.WriteString("\n")
	}
	for _, t := range res.Targets {
		fprintf(&b, "%s:\n", t.Name)
		verb := "wrote"
		if rollback {
			verb = "restored"
		}
		for _, f := range t.Files {
			fprintf(&b, "  %s %s\n", verb, f)
		}
		if t.Where != "" && !rollback {
			fprintf(&b, "  %s\n", t.Where)
		}
		keys := slices.Sorted(maps.Keys(t.After))
		for _, k := range t.Before.Keys() {
			if _, ok := t.After[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			before, after := t.Before[k], t.After[k]
			if before == after {
				fprintf(&b, "  %s: %s (unchanged)\n", k, after)
			} else {
				fprintf(&b, "  %s: %s → %s\n", k, orDash(before), orDash(after))
			}
		}
	}
	if len(res.Skipped) > 0 {
		fprintf(&b, "skipped (host-wide; apply them with --host-wide): %s\n", strings.Join(res.Skipped, ", "))
	}
	if len(res.Leftovers) > 0 {
		b.WriteString("NOT put back (fix by hand, then run stacktune rollback again):\n")
		for _, l := range res.Leftovers {
			fprintf(&b, "  - %s\n", l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ApplyDryRunJSON is the JSON of a dry run: {"dry_run": true, "plan": ...}.
type ApplyDryRunJSON struct {
	DryRun bool        `json:"dry_run"`
	Plan   *apply.Plan `json:"plan"`
}

// ApplyDryRun writes what apply.DryRun found: each file's diff (or that
// it is unchanged, or skipped), the targets whose running values could
// not be read, every setting's plan (running value, wanted value, how)
// and the problems that would refuse the transaction. JSON is an
// ApplyDryRunJSON.
func ApplyDryRun(w io.Writer, plan *apply.Plan, format string) error {
	if err := CheckFormat(format, ApplyFormats...); err != nil {
		return err
	}
	if plan == nil {
		plan = &apply.Plan{Files: []apply.Preview{}, Steps: []apply.Step{}}
	}
	if format == JSON {
		return WriteJSON(w, ApplyDryRunJSON{DryRun: true, Plan: plan})
	}
	var b strings.Builder
	b.WriteString("dry run: nothing is changed\n")
	for _, f := range plan.Files {
		// The diff is multi-line: its lines are the files' own, shown as
		// a block (CleanBlock).
		switch {
		case f.Skipped:
			fprintf(&b, "\n%s: %s (host-wide: skipped without --host-wide)\n", f.Target, f.Path)
		case f.Diff == "":
			fprintf(&b, "\n%s: %s unchanged\n", f.Target, f.Path)
		case !f.Exists:
			fprintf(&b, "\n%s: would create %s:\n%s", f.Target, f.Path, block{f.Diff, ""})
		default:
			fprintf(&b, "\n%s: would change %s:\n%s", f.Target, f.Path, block{f.Diff, ""})
		}
		if f.Where != "" {
			fprintf(&b, "%s\n", f.Where)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(plan.Unread)) {
		fprintf(&b, "\n%s: the running values could not be read: %s\n", name, plan.Unread[name])
	}
	if len(plan.Steps) > 0 {
		b.WriteString("\nplan (running value now → wanted, and how):\n")
	}
	for _, st := range plan.Steps {
		fprintf(&b, "  %s %s: %s → %s", st.Target, st.Key, orDash(st.Running), st.To)
		if st.Expect != "" {
			fprintf(&b, " (the server will show %s)", st.Expect)
		}
		fprintf(&b, "  [%s", HowText(st.How))
		if st.Command != "" {
			fprintf(&b, ": %s", st.Command)
		}
		b.WriteString("]")
		if st.Note != "" {
			fprintf(&b, "  %s", st.Note)
		}
		b.WriteString("\n")
		if st.Problem != "" {
			fprintf(&b, "    PROBLEM: %s\n", st.Problem)
		}
	}
	if len(plan.Problems) > 0 {
		fprintf(&b, "\napply would refuse, changing nothing (%d problem(s)):\n", len(plan.Problems))
		for _, p := range plan.Problems {
			fprintf(&b, "  - %s\n", p)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ApplyTransactions writes apply.History of the state directory state,
// newest first: each transaction's id, state, start (local time) and
// label, its files and its error. JSON is the list as it is ([] for
// none).
func ApplyTransactions(w io.Writer, hist []apply.Summary, state, format string) error {
	if err := CheckFormat(format, ApplyFormats...); err != nil {
		return err
	}
	if format == JSON {
		if hist == nil {
			hist = []apply.Summary{}
		}
		return WriteJSON(w, hist)
	}
	if len(hist) == 0 {
		_, err := fprintf(w, "no transactions in %s\n", state)
		return err
	}
	ew := &errWriter{w: w}
	rows := make([][]string, len(hist))
	for i, s := range hist {
		rows[i] = []string{s.ID, string(s.State), s.Started.Local().Format("2006-01-02 15:04:05"), s.Label}
	}
	sectionWriter{e: ew}.tableUnder(nil, "llll", rows, func(i int) []string {
		out := slices.Clone(hist[i].Files)
		if hist[i].Error != "" {
			out = append(out, "error: "+hist[i].Error)
		}
		return out
	})
	return ew.err
}
