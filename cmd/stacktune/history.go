package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/atomicfile"
	"github.com/stacktune/stacktune/report"
)

// historyOptions are the flags of `stacktune history`.
type historyOptions struct {
	db       string
	target   string
	scenario string
	since    string
	labels   []string
	limit    int
	format   string
	chart    string
}

func newHistoryCmd() *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Score transitions of the recorded bench runs, as a table and a chart",
		Long: `history prints the score transition table of the runs "stacktune bench" recorded:
one row per label in the order the labels were first run (label, runs, min/median/max
score, median relative to the first step and to the previous one), and with --chart
draws it as an SVG, PNG or HTML file (by the file's extension; the HTML chart is
interactive, with ECharts inlined, and works offline).

--format html prints one self-contained page instead (no script, nothing loaded
from anywhere): the chart of each step's median score as inline SVG, the table,
and every run.`,
		Example: `  stacktune history
  stacktune history --target http://127.0.0.1:8080/ --format markdown
  stacktune history --format html > scores.html
  stacktune history --chart scores.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runHistory(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.db, "history", "", "history database (default $STACKTUNE_HISTORY or ~/.local/share/stacktune/history.db)")
	f.StringVar(&o.target, "target", "", "only runs against this target URL")
	f.StringVar(&o.scenario, "scenario", "", "only runs of this scenario name")
	f.StringVar(&o.since, "since", "", "only runs at or after this time (RFC 3339 or 2006-01-02 15:04:05)")
	f.StringSliceVar(&o.labels, "label", nil, "only these labels")
	f.IntVar(&o.limit, "limit", 0, "only the last N runs (0 = all)")
	f.StringVar(&o.format, "format", report.Text, "table format: "+strings.Join(report.TransitionFormats, ", "))
	f.StringVar(&o.chart, "chart", "", "also draw the transitions into this file: .svg, .png or .html")
	return cmd
}

func runHistory(ctx context.Context, o historyOptions, stdout io.Writer) error {
	if err := report.CheckFormat(o.format, report.TransitionFormats...); err != nil {
		return err
	}
	kind := ""
	if o.chart != "" {
		var err error
		if kind, err = report.ChartKind(o.chart); err != nil {
			return err
		}
	}
	since, err := parseTimeFlag("since", o.since)
	if err != nil {
		return err
	}
	path := o.db
	if path == "" {
		if path, err = history.DefaultPath(); err != nil {
			return err
		}
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no history at %s yet: run stacktune bench first (%w)", path, err)
	}
	store, err := history.Open(path)
	if err != nil {
		return err
	}
	defer store.Close()
	runs, err := store.Runs(ctx, history.Filter{Target: o.target, Scenario: o.scenario, Since: since, Labels: o.labels, Limit: o.limit})
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		return fmt.Errorf("no runs in %s match", path)
	}
	steps := history.Transitions(runs)
	if o.format == report.HTML {
		// The page names the runs' target, scenario and dates, and lists
		// every run.
		err = report.WriteHTMLPage(stdout, report.TransitionsHTMLPage(steps, runs))
	} else {
		err = report.Transitions(stdout, steps, o.format)
	}
	if err != nil {
		return err
	}
	if kind == "" {
		return nil
	}
	return atomicfile.Write(o.chart, 0o644, func(w io.Writer) error {
		if err := report.TransitionsChart(w, steps, runs, kind); err != nil {
			return fmt.Errorf("drawing the chart: %w", err)
		}
		return nil
	})
}
