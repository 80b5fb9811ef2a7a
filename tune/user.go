package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/input"
)

// UserStep is a step of the user's own: a change they make with commands
// (apply.CommandTarget: a git checkout of their fix, a build, a restart),
// measured, kept or reverted like the built-in steps. It runs in the
// first round only (the second round's diagnosis finds nothing new for
// it).
func UserStep(t *apply.CommandTarget) Step {
	planned := false
	return Step{Label: t.Label, Plan: func(_ context.Context, p *Pick) (*Work, error) {
		if planned {
			return &Work{Why: "a user step runs once"}, nil
		}
		planned = true
		return &Work{Targets: []apply.Target{t}, Findings: []Finding{{ID: "user-step", Title: t.Label,
			Evidence: []string{}, Change: "apply: " + strings.Join(t.Apply, " ") + "; revert: " + strings.Join(t.Revert, " "), Source: "the user's step"}}}, nil
	}}
}

// ParseStep reads a user step as --step takes it: NAME:APPLY_CMD:REVERT_CMD
// (the commands as apply.ParseCommandLine reads them; a ':' inside a
// command is written '\:').
func ParseStep(spec string) (*apply.CommandTarget, error) {
	parts := splitUnescaped(spec, ':')
	if len(parts) != 3 {
		return nil, fmt.Errorf("step %q: want NAME:APPLY_CMD:REVERT_CMD", spec)
	}
	on, err := ParseCommand(parts[1])
	if err != nil {
		return nil, fmt.Errorf("step %s: the apply command: %w", parts[0], err)
	}
	off, err := ParseCommand(parts[2])
	if err != nil {
		return nil, fmt.Errorf("step %s: the revert command: %w", parts[0], err)
	}
	return apply.NewCommandTarget(strings.TrimSpace(parts[0]), on, off, nil)
}

// ParseCommand reads a user's command line (apply.ParseCommandLine's
// quoting) into argv, refusing the shell's operators: the commands run
// without a shell, so "make && restart" would hand "&&" to make.
func ParseCommand(s string) ([]string, error) {
	argv, err := apply.ParseCommandLine(s)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("no command")
	}
	for _, a := range argv {
		if slices.Contains([]string{"&&", "||", "|", ";", ">", ">>", "<", "&"}, a) {
			return nil, fmt.Errorf("%q: the commands run without a shell; write sh -c '...' for a pipeline or a list", a)
		}
	}
	return argv, nil
}

// splitUnescaped splits s at sep, except where a backslash escapes it.
func splitUnescaped(s string, sep byte) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == sep:
			cur.WriteByte(sep)
			i++
		case s[i] == sep:
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(out, cur.String())
}

// ABOptions configure AB: two states of a stack that commands switch
// between (the user's code before and after a change), measured by one
// bench.
type ABOptions struct {
	// Bench is one measured run (its Runs must be 0 or 1).
	Bench benchrun.Options
	// BeforeBench runs before every run (the scenario's pre-run hook is
	// the bench's own).
	BeforeBench func(ctx context.Context) error
	// ToA and ToB put the stack in each state (the commands the user
	// gives); LabelA and LabelB name them in the history.
	ToA, ToB       func(ctx context.Context) error
	LabelA, LabelB string
	// AB is the test (the same as tune's); WarmUp an unrecorded run after
	// every switch (0: none).
	AB     abtest.Options
	WarmUp time.Duration
	// NoiseFloor measures A against itself first (abtest.NoiseFloor, the
	// test's fewest runs each, not recorded as A's runs): the smallest
	// change this setup can tell, and whether A is told apart from
	// itself, which would make a verdict on B the measurement's bias.
	NoiseFloor bool
	// History records every run when set, under both labels, in a
	// session of the ledger (command ab) with the decision.
	History *history.Store
	// Ledger is what the caller knows of the runs (scenario hash, app
	// commit, versions), set on each run recorded.
	Ledger   history.Meta
	Progress func(line string)
}

// ABResult is the decision between the two states: B against A.
type ABResult struct {
	Ratio      float64          `json:"ratio"`
	Interval   [2]float64       `json:"interval"`
	Decision   abtest.Verdict   `json:"decision"`
	Detectable float64          `json:"detectable"`
	Test       *abtest.Decision `json:"test"`
	A          []float64        `json:"a_scores"`
	B          []float64        `json:"b_scores"`
	LabelA     string           `json:"label_a"`
	LabelB     string           `json:"label_b"`
	// State is the state the stack was left in ("a" or "b": the last
	// one measured; AB does not switch back).
	State string `json:"state"`
	// Noise is A against itself, measured before the test
	// (ABOptions.NoiseFloor).
	Noise *NoiseTry `json:"noise,omitempty"`
}

// MarshalJSON writes an interval end that is not finite as null.
func (r ABResult) MarshalJSON() ([]byte, error) { return json.Marshal(r.JSONShape()) }

// JSONShape is the value MarshalJSON writes (see internal/jsonschema).
func (r ABResult) JSONShape() any {
	type plain ABResult
	return struct {
		plain
		Interval [2]*float64 `json:"interval"`
	}{plain(r), [2]*float64{abtest.Finite(r.Interval[0]), abtest.Finite(r.Interval[1])}}
}

// AB measures state B against state A interleaved (ToA first, then
// abtest.Run's blocks from A, a warm-up run after every switch), decided
// by the same test as tune's steps.
func AB(ctx context.Context, opt ABOptions) (_ *ABResult, err error) {
	if opt.ToA == nil || opt.ToB == nil {
		return nil, errors.New("ab: the commands of both states are needed")
	}
	if opt.LabelA == "" {
		opt.LabelA = "a"
	}
	if opt.LabelB == "" {
		opt.LabelB = "b"
	}
	meta := opt.Ledger
	meta.Command = history.CommandAB
	if opt.History != nil {
		if meta.Session, err = opt.History.StartSession(ctx, history.CommandAB, opt.LabelA+" / "+opt.LabelB); err != nil {
			return nil, err
		}
		defer func() {
			status := history.SessionDone
			if err != nil {
				status = history.SessionFailed
			}
			err = errors.Join(err, opt.History.EndSession(context.WithoutCancel(ctx), meta.Session, status))
		}()
	}
	say := func(format string, a ...any) {
		if opt.Progress != nil {
			opt.Progress(fmt.Sprintf(format, a...))
		}
	}
	bench := func(ctx context.Context, label string, d time.Duration) (*benchrun.Summary, error) {
		if opt.BeforeBench != nil {
			if err := opt.BeforeBench(ctx); err != nil {
				return nil, fmt.Errorf("before the bench: %w", err)
			}
		}
		bo := opt.Bench
		bo.Runs, bo.Label = 1, label
		if d > 0 {
			bo.Load.Duration = d
		}
		return benchrun.Run(ctx, bo)
	}
	warm := func(ctx context.Context) error {
		if opt.WarmUp <= 0 {
			return nil
		}
		_, err := bench(ctx, "(warm-up)", opt.WarmUp)
		return err
	}
	switchTo := func(to func(context.Context) error, name string) func(context.Context) error {
		return func(ctx context.Context) error {
			say("switching to %s", name)
			if err := to(ctx); err != nil {
				return fmt.Errorf("switching to %s: %w", name, err)
			}
			return warm(ctx)
		}
	}
	toA, toB := switchTo(opt.ToA, opt.LabelA), switchTo(opt.ToB, opt.LabelB)
	if err := toA(ctx); err != nil {
		return nil, err
	}
	// scored is one measured run, said with its score.
	scored := func(ctx context.Context, label string) (*benchrun.Summary, error) {
		sum, err := bench(ctx, label, 0)
		if err == nil {
			say("%s: score %.0f, %.1f req/s, p99 %.0f ms%s", label, sum.Score, sum.RPS, sum.LatencyMS.P99, failNote(sum))
		}
		return sum, err
	}
	var noise *NoiseTry
	if opt.NoiseFloor {
		fo := opt.AB
		fo.Start = abtest.A
		if fo.MinRuns <= 0 {
			fo.MinRuns = abtest.DefaultMinRuns
		}
		fo.MaxRuns = fo.MinRuns
		label := opt.LabelA + " (noise floor)"
		floorRun := func(ctx context.Context, _ abtest.Arm) (float64, error) {
			sum, err := scored(ctx, label)
			if err != nil {
				return 0, err
			}
			return sum.Score, nil
		}
		floor, nt, err := measureNoise(ctx, toA, floorRun, fo, opt.Bench.Load.Duration, true)
		if err != nil {
			return nil, fmt.Errorf("ab: noise floor: %w", err)
		}
		noise = &nt
		say("noise floor: %s%s", floor.Decision.Reason, causeText(nt.Causes))
		if opt.History != nil {
			if err := opt.History.SetNoise(ctx, meta.Session, nt.Width); err != nil {
				return nil, err
			}
		}
	}
	measure := func(ctx context.Context, arm abtest.Arm) (float64, error) {
		label := opt.LabelA
		if arm == abtest.B {
			label = opt.LabelB
		}
		sum, err := scored(ctx, label)
		if err != nil {
			return 0, err
		}
		if opt.History != nil {
			runs := history.FromSummary(sum)
			for i := range runs {
				meta.Set(&runs[i])
				runs[i].Arm = armCode(arm)
				if _, err := opt.History.Add(ctx, &runs[i]); err != nil {
					return 0, err
				}
			}
		}
		return sum.Score, nil
	}
	ab := opt.AB
	ab.Start = abtest.A
	r, err := abtest.Run(ctx, abtest.Experiment{ToA: toA, ToB: toB, Measure: measure}, ab)
	if err != nil {
		return nil, fmt.Errorf("ab: %w", err)
	}
	d := r.Decision
	res := &ABResult{Ratio: d.RatioMedian, Interval: [2]float64{d.CILow, d.CIHigh}, Decision: d.Verdict, Detectable: Detectable(&d),
		Test: &d, A: r.Scores(abtest.A), B: r.Scores(abtest.B), LabelA: opt.LabelA, LabelB: opt.LabelB, State: "a", Noise: noise}
	if r.State == abtest.B {
		res.State = "b"
	}
	if opt.History != nil {
		hd := history.Decision{LabelA: opt.LabelA, LabelB: opt.LabelB, Outcome: string(res.Decision), Ratio: finite(d.RatioMedian),
			Low: finite(d.CILow), High: finite(d.CIHigh), Runs: d.RunsA + d.RunsB}
		if err := opt.History.AddDecision(context.WithoutCancel(ctx), meta.Session, hd); err != nil {
			return res, err
		}
	}
	say("%s", d.Reason)
	return res, nil
}

// MaxStepsFile bounds a steps file (ReadSteps), and MaxUserSteps the
// steps it and --step may give.
const (
	MaxStepsFile = 1 << 20
	MaxUserSteps = 100
)

// ReadSteps reads a steps file: one step per line as ParseStep reads it
// (NAME:APPLY_CMD:REVERT_CMD); empty lines and lines starting with '#'
// are skipped. Errors name the file and line.
func ReadSteps(path string) ([]*apply.CommandTarget, error) {
	b, err := input.ReadFile(path, MaxStepsFile)
	if err != nil {
		return nil, fmt.Errorf("steps file: %w", err)
	}
	var out []*apply.CommandTarget
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(out) == MaxUserSteps {
			return nil, fmt.Errorf("steps file %s: more than %d steps", path, MaxUserSteps)
		}
		t, err := ParseStep(line)
		if err != nil {
			return nil, fmt.Errorf("steps file %s line %d: %w", path, i+1, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// UserSteps turns the user's steps into loop steps, refusing two with
// one name (the report and the history tell steps apart by it).
func UserSteps(ts []*apply.CommandTarget) ([]Step, error) {
	if len(ts) > MaxUserSteps {
		return nil, fmt.Errorf("%d user steps: at most %d", len(ts), MaxUserSteps)
	}
	seen := map[string]bool{}
	var out []Step
	for _, t := range ts {
		if seen[t.Label] {
			return nil, fmt.Errorf("two user steps are named %q", t.Label)
		}
		seen[t.Label] = true
		out = append(out, UserStep(t))
	}
	return out, nil
}
