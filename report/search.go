package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/knobsearch"
)

// SearchFormats are the formats Search renders.
var SearchFormats = []string{Text, Markdown, JSON}

// SearchReportFormat is the format of a search's --report file, from its
// extension: .md, .json or .txt.
func SearchReportFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md":
		return Markdown, nil
	case ".json":
		return JSON, nil
	case ".txt":
		return Text, nil
	}
	return "", fmt.Errorf("--report %s: the search writes .md, .json or .txt", path)
}

// SearchSnapshotLine is the progress line of --reset datadir's snapshot,
// taken: its size, files and the time the copy took.
func SearchSnapshotLine(bytes int64, files int, elapsed time.Duration) string {
	return fmt.Sprintf("snapshot: %s in %d files, copied in %s", Bytes(bytes), files, Duration(elapsed.Seconds()))
}

// SearchEmitted says where the search's change set was written (--emit)
// and what it holds, for stderr.
func SearchEmitted(r *knobsearch.Result, dir string) string {
	return fmt.Sprintf("the change set (%s) is in %s: stacktune apply %s", r.ChangeSetWhy, dir, dir)
}

// Search renders a knob search: the rules it kept (fixed settings, the
// memory budget, the knobs left out and why), every trial, the knobs by
// influence, the best configuration, the final comparison with its
// intervals, and the change set.
func Search(w io.Writer, r *knobsearch.Result, format string) error {
	if r == nil {
		r = &knobsearch.Result{}
	}
	if err := CheckFormat(format, SearchFormats...); err != nil {
		return err
	}
	if format == JSON {
		return WriteJSON(w, r)
	}
	md := format == Markdown
	bw := bufio.NewWriter(w)
	heading := func(s string) {
		if md {
			fprintf(bw, "\n### %s\n\n", mdEscape(s))
		} else {
			fprintf(bw, "\n%s\n", s)
		}
	}
	line := func(s string) {
		if md {
			fprintf(bw, "- %s\n", mdEscape(s))
		} else {
			fprintf(bw, "  %s\n", s)
		}
	}
	server := ""
	if r.Space != nil {
		server = " on " + r.Space.Server.String()
	}
	title := fmt.Sprintf("Knob search: %s%s, %d trials in %s (%s to the best, then the comparison)", r.Workload, server, len(r.Trials),
		Duration(r.Elapsed.Seconds()), Duration(r.SearchTime.Seconds()))
	if md {
		fprintf(bw, "## %s\n", mdEscape(title))
	} else {
		fprintf(bw, "%s\n", title)
	}
	if s := r.Space; s != nil {
		heading("Rules")
		line("memory budget as found: " + s.Budget.Formula + fmt.Sprintf("; the buffer pool may grow to %s", Bytes(s.Budget.PoolRoom)))
		for name, f := range s.Fixed {
			state := "holds"
			if !f.Holds {
				state = "the server runs " + f.Running
			}
			line(fmt.Sprintf("fixed: %s = %s (%s): never touched", name, f.Want, state))
		}
		var in []string
		for _, k := range s.Knobs {
			restart := ""
			if k.Restart {
				restart = ", restart"
			}
			in = append(in, fmt.Sprintf("%s %s (now %s%s)", k.Name, k.Describe(), k.BaseText(), restart))
		}
		line(fmt.Sprintf("space: %d knobs: %s", len(s.Knobs), strings.Join(in, "; ")))
		for _, l := range s.Left {
			line("left out: " + l.Name + ": " + l.Why)
		}
		if len(r.Audit) > 0 {
			line("the audit's configuration: " + r.Audit.String())
		}
		for _, n := range r.AuditNotes {
			line("audit: " + n)
		}
	}
	heading("Trials")
	// "vs as found" is the trial's score over the server as found's
	// at its time (the anchors around it): what the search ranks by.
	// Markdown leaves out the time to reset and apply.
	heads := []string{"#", "trial", "score", "vs as found", "reset+apply", "configuration (differences from the server as found)"}
	cols := "rlrrrl"
	if md {
		heads = slices.Delete(heads, 4, 5)
		cols = "rlrrl"
	}
	var rows [][]string
	for _, t := range r.Trials {
		score := Count(int64(math.Round(t.Score)))
		if !t.OK() {
			score = "FAILED"
		}
		rel := ""
		if t.Relative > 0 {
			rel = fmt.Sprintf("%.2fx", t.Relative)
		}
		cfg := t.Config.String()
		if !t.OK() {
			cfg += " — " + t.Error
		}
		row := []string{strconv.Itoa(t.N), t.Label, score, rel, Duration((t.Reset + t.Apply).Seconds()), cfg}
		if md {
			row = slices.Delete(row, 4, 5)
		}
		rows = append(rows, row)
	}
	ew := &errWriter{w: bw}
	sectionWriter{e: ew, md: md}.table(heads, cols, rows)
	if ew.err != nil {
		return ew.err
	}
	if len(r.Importance) > 0 {
		heading("Knobs by influence (Spearman's rho between the knob's value and the score)")
		var parts []string
		for _, x := range r.Importance {
			parts = append(parts, fmt.Sprintf("%s %+.2f", x.Knob, x.Rho))
		}
		line(strings.Join(parts, ", ") + fmt.Sprintf(" (over %d trials)", r.Importance[0].Trials))
		line("searched with TPE: " + strings.Join(r.Searched, ", "))
	}
	skipped := 0
	for _, s := range r.Skipped {
		if s.Config != nil {
			skipped++
		}
	}
	if len(r.Skipped) > 0 {
		heading("Never tried")
		line(fmt.Sprintf("%d candidate configurations over the memory budget (or breaking a rule between variables), and the model's rejected draws:", skipped))
		for i, s := range r.Skipped {
			if i == 8 {
				line(fmt.Sprintf("... and %d more", len(r.Skipped)-8))
				break
			}
			what := s.Why
			if s.Config != nil {
				what = s.Config.String() + ": " + s.Why
			}
			line(PhaseText(s.Phase) + ": " + what)
		}
	}
	heading("Best")
	if best := r.BestTrial(); best.N > 0 {
		rel := ""
		if best.Relative > 0 {
			rel = fmt.Sprintf(" (%.2fx the server as found around it)", best.Relative)
		}
		line(fmt.Sprintf("trial %d (%s): %s%s", best.N, best.Label, best.Summary, rel))
		line("configuration: " + best.Config.String())
	} else {
		line("no trial finished")
	}
	if c := r.Comparison; c != nil {
		rounds := 0
		if len(c.Arms) > 0 {
			rounds = len(c.Arms[0].Scores)
		}
		heading(fmt.Sprintf("Comparison (%d rounds, the arms interleaved in mirror order)", rounds))
		for _, a := range c.Arms {
			var sc []string
			for _, s := range a.Scores {
				sc = append(sc, Count(int64(math.Round(s))))
			}
			line(fmt.Sprintf("%s: median %s (%s)", a.Name, Count(int64(math.Round(a.Median))), strings.Join(sc, " / ")))
		}
		for _, d := range c.Decisions {
			line(fmt.Sprintf("%s vs %s: %s", d.B, d.A, d.Decision.Reason))
		}
	}
	if r.ChangeSet != nil {
		heading("Change set (stacktune apply takes it)")
		if r.ChangeSetWhy != "" {
			line("holds " + r.ChangeSetWhy)
		}
		if len(r.ChangeSet.Changes) == 0 && r.ChangeSetFrom != "" {
			line("nothing to change: the server as found is the best")
		}
		for _, c := range r.ChangeSet.Changes {
			how := "SET GLOBAL"
			if c.Risk != nil && c.Risk.Restart {
				how = "restart"
			}
			line(fmt.Sprintf("%s: %s → %s (%s, %s)", c.Name, c.From, c.To, how, c.Finding))
		}
	}
	if len(r.Notes) > 0 {
		heading("Notes")
		for _, n := range r.Notes {
			line(n)
		}
	}
	return bw.Flush()
}
