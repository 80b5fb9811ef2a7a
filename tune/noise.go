package tune

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/internal/stats"
)

// Defaults of the noise check.
const (
	// DefaultNoiseLimit is the widest noise floor (half its interval, as
	// a fraction) the loop takes without saying so and adapting: ±10%.
	DefaultNoiseLimit = 0.10
	// noiseStop is the floor's width past which no decision can be
	// trusted: the loop stops and says what to change.
	noiseStop = 0.5
	// maxNoiseTries bounds the floors measured (each with runs twice as
	// long as the one before) when no budget is given.
	maxNoiseTries = 3
	// warmUpEffect: a first run this far from the median of the others
	// is a warm-up effect.
	warmUpEffect = 0.2
	// busyCores: another process using this much of a CPU is named.
	busyCores = 0.5
)

// Noise is what the loop found of its noise floor: how wide it was, the
// causes it could see, and what it did about it.
type Noise struct {
	// Limit is the widest floor taken without adapting (Options.NoiseLimit),
	// Width the last floor's (half its interval over its ratio: 0.14 is
	// ±14%).
	Limit float64 `json:"limit"`
	Width float64 `json:"width"`
	// Noisy is true when the last floor is still wider than Limit.
	Noisy bool `json:"noisy"`
	// Tries are the floors measured, the first at the run length asked
	// for, each next one with runs twice as long.
	Tries []NoiseTry `json:"tries"`
	// Causes are what the loop saw during the floors (each cause once,
	// as last seen).
	Causes []NoiseCause `json:"causes,omitempty"`
	// RunS is the run length the loop went on with, in seconds.
	RunS float64 `json:"run_s"`
}

// NoiseTry is one noise floor.
type NoiseTry struct {
	RunS     float64        `json:"run_s"`
	Runs     int            `json:"runs"`
	Interval [2]float64     `json:"interval"`
	Width    float64        `json:"width"`
	Verdict  abtest.Verdict `json:"decision"`
	// Host is the host's CPU over the floor and its busiest processes.
	Host *collect.HostUse `json:"host,omitempty"`
	// Idle is the host's CPU over a second before the floor, the stack
	// at rest: what runs then is the host's own noise.
	Idle *collect.HostUse `json:"idle,omitempty"`
	// Causes are the causes of noise seen in this floor.
	Causes []NoiseCause `json:"causes,omitempty"`
}

// Causes of noise (NoiseCause.Code).
const (
	// CauseOtherProcesses: the host was busy while the stack rested,
	// in the second before the floor (Value: the cores used besides
	// stacktune's; Processes: the busiest of them).
	CauseOtherProcesses = "other_processes"
	// CauseHostBusy: the host's CPUs were busy with the stack at rest
	// (Value: the busy share).
	CauseHostBusy = "host_busy"
	// CauseSteal: the hypervisor took CPU time (Value: the steal share).
	CauseSteal = "steal"
	// CauseWarmUp: the first run was far from the others (Value: its
	// ratio to their median).
	CauseWarmUp = "warm_up"
	// CauseToldApart: A against itself was told apart (Value: the ratio).
	CauseToldApart = "told_apart"
)

// NoiseCause is one cause of noise the loop could see.
type NoiseCause struct {
	Code      string               `json:"code"`
	Value     float64              `json:"value"`
	Processes []collect.ProcessUse `json:"processes,omitempty"`
}

// ErrTooNoisy is returned when the noise floor stays so wide that no
// decision could be trusted.
var ErrTooNoisy = fmt.Errorf("the host is too noisy to decide")

// faceNoise measures the noise floor, and while it is wider than the
// limit names the causes it sees and measures it again with runs twice
// as long, within the budget; past noiseStop it stops. It returns the
// last floor.
func (t *tuner) faceNoise(ctx context.Context, label string) (*abtest.Result, error) {
	limit := t.opt.NoiseLimit
	switch {
	case limit == 0:
		limit = DefaultNoiseLimit
	case limit < 0:
		limit = 0
	}
	n := &Noise{Limit: limit, Tries: []NoiseTry{}}
	t.res.Noise = n
	for try := 1; ; try++ {
		floor, nt, err := measureNoise(ctx, t.afterSwitch, t.measure(label, label), t.opt.AB, t.runLength(), t.opt.NoiseLimit >= 0)
		if err != nil {
			return floor, err
		}
		d := floor.Decision
		n.Tries = append(n.Tries, nt)
		n.Width, n.RunS = nt.Width, nt.RunS
		n.Noisy = limit > 0 && (nt.Width > limit || d.Verdict != abtest.WithinNoise)
		for _, c := range nt.Causes {
			if i := slices.IndexFunc(n.Causes, func(o NoiseCause) bool { return o.Code == c.Code }); i >= 0 {
				n.Causes[i] = c
			} else {
				n.Causes = append(n.Causes, c)
			}
		}
		if !n.Noisy {
			return floor, nil
		}
		t.say("noise: the stack against itself varied ±%.0f%% (limit ±%.0f%%)%s", nt.Width*100, limit*100, causeText(nt.Causes))
		if !t.canLengthen(try, floor) {
			if nt.Width > noiseStop {
				return floor, fmt.Errorf("%w: the stack measured against itself varied ±%.0f%% with runs of %s%s; "+
					"stop what else runs on the host, or give tune longer runs (-d) or a larger --budget", ErrTooNoisy, nt.Width*100, t.runLength(), causeText(n.Causes))
			}
			t.say("noise: going on with runs of %s; every decision says the smallest effect it could tell", t.runLength())
			return floor, nil
		}
		t.opt.Diagnose.Bench.Load.Duration *= 2
		t.say("noise: measuring the floor again with runs twice as long (%s)", t.runLength())
		t.res.Runs = nil
		delete(t.figures, label)
	}
}

func (t *tuner) runLength() time.Duration { return t.opt.Diagnose.Bench.Load.Duration }

// canLengthen says whether another floor with runs twice as long fits:
// within maxNoiseTries without a budget; with one, when the loop so far
// plus four such floors (the floor and the steps after it) fit in it.
func (t *tuner) canLengthen(tries int, floor *abtest.Result) bool {
	if t.opt.Budget <= 0 {
		return tries < maxNoiseTries
	}
	next := time.Duration(len(floor.Runs)) * (2*t.runLength() + t.opt.WarmUp)
	return time.Since(t.started)+4*next <= t.opt.Budget
}

// idleWindow is how long the host is watched, the stack at rest, before
// each noise floor.
const idleWindow = time.Second

// measureNoise measures one noise floor (abtest.NoiseFloor: A against
// itself, reached through toA) with runs of runLength, and what the host
// did meanwhile; with watchIdle, the host is first watched a second at
// rest, which names the work of other processes.
func measureNoise(ctx context.Context, toA func(context.Context) error, measure func(context.Context, abtest.Arm) (float64, error),
	opt abtest.Options, runLength time.Duration, watchIdle bool) (*abtest.Result, NoiseTry, error) {
	var idle *collect.HostUse
	if watchIdle {
		idle = idleHost(ctx)
	}
	before, _ := collect.ReadHostLoad("")
	floor, err := abtest.NoiseFloor(ctx, toA, measure, opt)
	if err != nil {
		return floor, NoiseTry{}, err
	}
	d := floor.Decision
	nt := NoiseTry{RunS: runLength.Seconds(), Runs: len(floor.Runs), Interval: [2]float64{d.CILow, d.CIHigh},
		Width: Detectable(&d), Verdict: d.Verdict, Idle: idle}
	if after, err := collect.ReadHostLoad(""); err == nil && before != nil {
		u := after.Since(before)
		nt.Host = &u
	}
	nt.Causes = noiseCauses(floor, nt.Host, idle)
	return floor, nt, nil
}

// idleHost is the host's CPU over idleWindow while nothing is measured
// (nil when /proc cannot be read or the context ends).
func idleHost(ctx context.Context) *collect.HostUse {
	a, err := collect.ReadHostLoad("")
	if err != nil {
		return nil
	}
	select {
	case <-time.After(idleWindow):
	case <-ctx.Done():
		return nil
	}
	b, err := collect.ReadHostLoad("")
	if err != nil {
		return nil
	}
	u := b.Since(a)
	return &u
}

// noiseCauses are the causes of noise seen in a floor: the first run far
// from the others (a warm-up), work on the host while the stack rests
// (other processes: neighbours, builds, cron jobs), steal during the
// floor, and A told apart from itself.
func noiseCauses(floor *abtest.Result, host, idle *collect.HostUse) []NoiseCause {
	var out []NoiseCause
	if d := floor.Decision; d.Verdict != abtest.WithinNoise {
		out = append(out, NoiseCause{Code: CauseToldApart, Value: d.RatioMedian})
	}
	if len(floor.Runs) >= 3 {
		var rest []float64
		for _, r := range floor.Runs[1:] {
			rest = append(rest, r.Score)
		}
		if m := stats.Median(rest); m > 0 {
			if q := floor.Runs[0].Score / m; q < 1-warmUpEffect || q > 1+warmUpEffect {
				out = append(out, NoiseCause{Code: CauseWarmUp, Value: round3(q)})
			}
		}
	}
	if idle != nil {
		// The stack at rest: what uses the CPU now is not the load.
		own := func(p collect.ProcessUse) bool { return p.PID == os.Getpid() }
		cores := idle.BusyCores - idle.Cores(own)
		if cores >= busyCores {
			var others []collect.ProcessUse
			for _, p := range idle.Busiest {
				if !own(p) && p.Cores >= busyCores/2 {
					others = append(others, p)
				}
			}
			out = append(out, NoiseCause{Code: CauseOtherProcesses, Value: round3(cores), Processes: others})
			if idle.Busy > 0.9 {
				out = append(out, NoiseCause{Code: CauseHostBusy, Value: round3(idle.Busy)})
			}
		}
	}
	if host != nil && host.Steal > 0.02 {
		out = append(out, NoiseCause{Code: CauseSteal, Value: round3(host.Steal)})
	}
	return out
}

// causeText is the causes in words, for progress lines (the report has
// its own).
func causeText(cs []NoiseCause) string {
	s := ""
	for _, c := range cs {
		switch c.Code {
		case CauseOtherProcesses:
			s += fmt.Sprintf("; other work on the host used %.1f cores", c.Value)
			if len(c.Processes) > 0 {
				s += ", the busiest"
			}
			for _, p := range c.Processes {
				s += fmt.Sprintf(" %s (pid %d) %.2f", p.Comm, p.PID, p.Cores)
			}
		case CauseHostBusy:
			s += fmt.Sprintf("; the host's CPUs were %.0f%% busy", c.Value*100)
		case CauseSteal:
			s += fmt.Sprintf("; the hypervisor took %.0f%% of the CPU time (steal)", c.Value*100)
		case CauseWarmUp:
			s += fmt.Sprintf("; the first run scored %.2fx the others (a warm-up effect: --warm-up)", c.Value)
		case CauseToldApart:
			s += fmt.Sprintf("; A against itself was told apart (%.2fx)", c.Value)
		}
	}
	return s
}
