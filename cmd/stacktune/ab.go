package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/tune"
)

// abOptions are the flags of `stacktune ab`.
type abOptions struct {
	a, b             string
	labelA, labelB   string
	scenario         string
	baseURL          string
	load             loadgen.Options
	seed             uint64
	warmUp           time.Duration
	minRuns, maxRuns int
	level            float64
	format           string
	history          string
	noHistory        bool
	noiseFloor       bool
}

func newABCmd() *cobra.Command {
	var o abOptions
	cmd := &cobra.Command{
		Use:   "ab --a CMD --b CMD [--scenario FILE | URL]",
		Short: "Prove a change of your own: two states you switch between with commands, measured interleaved",
		Long: `ab measures state B against state A of a stack the user switches between with
two commands (a git checkout of the fix, a build, the app's restart): A's command
runs first, then the runs alternate in blocks (ABBA), each switch followed by an
unrecorded warm-up run, until the same sequential test tune uses decides: better,
worse or within noise, with the median ratio of B's scores to A's and its
interval. Every run is stored in the history under its state's label.

First (--noise-floor, on by default) A is measured against itself the same
way, switched to A between blocks: its interval is the smallest change this
setup can tell, and A told apart from itself (a switch that changes the state,
a busy host) warns that a verdict on B may be the measurement's, with the
causes seen (other processes, steal, a warm-up effect).

The commands run without a shell (write sh -c '...' for a list such as
"git checkout fix && make && systemctl restart app"); ab refuses &&, |, ; and
redirections in them. The stack is left in the state measured last, as the
output says.`,
		Example: `  stacktune ab --a "sh -c 'git checkout main && make && systemctl restart app'" \
     --b "sh -c 'git checkout fix-n1 && make && systemctl restart app'" \
     --label-a main --label-b fix-n1 --scenario bench.yaml -d 10s`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			url := ""
			if len(args) == 1 {
				url = args[0]
			}
			return benchrun.MaskError(runAB(cmd.Context(), o, url, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.a, "a", "", "the command that puts the stack in state A (the original)")
	f.StringVar(&o.b, "b", "", "the command that puts the stack in state B (the change)")
	f.StringVar(&o.labelA, "label-a", "a", "state A's label in the output and the history")
	f.StringVar(&o.labelB, "label-b", "b", "state B's label in the output and the history")
	f.StringVar(&o.scenario, "scenario", "", "scenario file (YAML or TOML) instead of a URL")
	f.StringVar(&o.baseURL, "base-url", "", "with --scenario: override its base_url")
	f.IntVarP(&o.load.Connections, "connections", "c", loadgen.DefaultConnections, "connections (virtual users)")
	f.DurationVarP(&o.load.Duration, "duration", "d", 10*time.Second, "each measured run's duration")
	f.DurationVar(&o.load.Timeout, "timeout", loadgen.DefaultTimeout, "per-request timeout")
	f.Uint64Var(&o.seed, "seed", 1, "seed for scenario choices")
	f.DurationVar(&o.warmUp, "switch-warmup", 5*time.Second, "an unrecorded run after every switch (0: none)")
	f.IntVar(&o.minRuns, "min-runs", abtest.DefaultMinRuns, "runs of each state before the test may decide")
	f.IntVar(&o.maxRuns, "max-runs", abtest.DefaultMaxRuns, "runs of each state at most")
	f.Float64Var(&o.level, "level", abtest.DefaultLevel, "the test's confidence level")
	f.BoolVar(&o.noiseFloor, "noise-floor", true, "measure A against itself first: the smallest change the setup can tell, and whether A is told apart from itself")
	f.StringVar(&o.format, "format", report.Text, "output format: text, markdown or json")
	f.StringVar(&o.history, "history", "", "the run history (default $STACKTUNE_HISTORY or ~/.local/share/stacktune/history.db)")
	f.BoolVar(&o.noHistory, "no-history", false, "do not record the runs")
	return cmd
}

func runAB(ctx context.Context, o abOptions, url string, stdout, stderr io.Writer) error {
	if err := report.CheckFormat(o.format, report.ABFormats...); err != nil {
		return err
	}
	switch {
	case o.a == "" || o.b == "":
		return errors.New("give both states' commands: --a CMD and --b CMD")
	case url != "" && o.scenario != "":
		return errors.New("give either a URL or --scenario, not both")
	case url == "" && o.scenario == "":
		return errors.New("nothing to load: give a URL or --scenario FILE")
	case o.labelA == o.labelB:
		return fmt.Errorf("--label-a and --label-b are both %q: the history could not tell the states apart", o.labelA)
	case o.load.Duration <= 0:
		return errors.New("--duration must be above 0: every run is bounded")
	}
	if err := loadgen.CheckConnections(o.load.Connections); err != nil {
		return connectionsError(err)
	}
	var to [2]func(context.Context) error
	for i, s := range []string{o.a, o.b} {
		argv, err := tune.ParseCommand(s)
		if err != nil {
			return fmt.Errorf("--%s: %w", []string{"a", "b"}[i], err)
		}
		to[i] = apply.CommandCheck(argv...)
	}
	var store *history.Store
	if !o.noHistory {
		var err error
		if store, err = openHistory(o.history); err != nil {
			return err
		}
		defer store.Close()
	}
	res, err := tune.AB(ctx, tune.ABOptions{
		Bench:  benchrun.Options{URL: url, Scenario: o.scenario, BaseURL: o.baseURL, Load: o.load, Seed: o.seed},
		ToA:    to[0],
		ToB:    to[1],
		LabelA: o.labelA, LabelB: o.labelB,
		AB:         abtest.Options{Level: o.level, MinRuns: o.minRuns, MaxRuns: o.maxRuns},
		WarmUp:     o.warmUp,
		NoiseFloor: o.noiseFloor,
		History:    store,
		Progress: func(line string) {
			fmt.Fprintln(stderr, "ab:", line)
		},
	})
	if err != nil {
		return err
	}
	return report.AB(stdout, res, o.format)
}
