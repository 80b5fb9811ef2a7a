package knobsearch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/internal/stats"
	"github.com/stacktune/stacktune/mysqlvar"
)

// Workload is what a trial measures.
type Workload interface {
	// Name names the workload in reports ("tpcc 10w 16c", a scenario).
	Name() string
	// Reset brings the data back to where every trial starts (a data
	// dir restored; nothing for a scenario whose pre_run resets its app).
	Reset(ctx context.Context) error
	// Measure runs the workload once, recorded under label. observe,
	// when set, is run while the load runs and is waited for.
	Measure(ctx context.Context, label string, observe func(ctx context.Context)) (Measurement, error)
}

// Measurement is one run's outcome.
type Measurement struct {
	// Score: higher is better (tpmC, a scenario's score).
	Score float64 `json:"score"`
	// Summary is one line for people.
	Summary string `json:"summary"`
	// Passed says the run met its own limits (response times, errors).
	Passed bool `json:"passed"`
}

// Server makes the database server run a configuration, and undoes it.
// Apply is called with the server as found (after Undo); Undo after a
// successful Apply only.
type Server interface {
	Apply(ctx context.Context, c Config, label string) error
	Undo(ctx context.Context) error
}

// Arm is a named configuration the final comparison measures besides
// the default, the audit's and the best (MySQLTuner's advice, say).
type Arm struct {
	Name   string `json:"name"`
	Config Config `json:"config"`
}

// Options configures Run.
type Options struct {
	Workload Workload
	Server   Server
	// DB reads the server's variables and status for the snapshot of the
	// first trial (its audit and the memory budget); Snapshot, when set,
	// is used instead (tests, or one saved by stacktune collect).
	DB       *sql.DB
	Snapshot *collect.Snapshot
	// CollectInterval is the snapshot's status interval during the
	// first trial (default 10 s; it must end before the trial does).
	CollectInterval time.Duration
	Constraints     Constraints
	// Screen is the number of space-filling samples that rank the knobs
	// (default 10); Top how many knobs the model searches (default 4);
	// Trials the model's trials (default 12); Repeats the rounds of the
	// final comparison (default 5, at least 4: fewer cannot show a
	// difference at 95%).
	Screen, Top, Trials, Repeats int
	// MaxTime bounds the search phases (the final comparison is not cut):
	// past it, no new screening or model trial starts. 0: no bound.
	MaxTime time.Duration
	// Anchor: the server as found is measured again after every Anchor
	// search trials (default 6; negative: never) and after the last, and
	// each search trial is scored against the as-found runs around it
	// (Trial.Relative): a host whose speed moves during the search
	// moves the anchors as much.
	Anchor int
	// NoAudit starts without the audit's advice.
	NoAudit bool
	// Compare are more configurations for the final comparison.
	Compare []Arm
	// Seed makes the samples and proposals repeatable (default 1).
	Seed uint64
	// Progress receives a line per step.
	Progress func(string)
	now      func() time.Time
}

// AnchorFlag is Options.Anchor for a command-line flag, where 0 means
// never (the option's 0 is its default).
func AnchorFlag(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// Phase is the part of the search a trial belongs to, as a stable code
// (docs/json.md).
type Phase string

// Phases of a trial.
const (
	PhaseDefault = Phase("default") // the server as found, first
	PhaseAudit   = Phase("audit")   // the audit's configuration
	// PhaseContest is the settings a 2015 tpcc-mysql tuning contest's
	// write-up found effective (contestValues), the search's second
	// starting point.
	PhaseContest = Phase("contest")
	PhaseScreen  = Phase("screen")  // the Latin hypercube's samples
	PhaseModel   = Phase("model")   // TPE's proposals
	PhaseAnchor  = Phase("anchor")  // the server as found, measured again
	PhaseCompare = Phase("compare") // the final comparison's rounds
)

// Codes lists the phases.
func (Phase) Codes() []string {
	return []string{string(PhaseDefault), string(PhaseAudit), string(PhaseContest), string(PhaseScreen),
		string(PhaseModel), string(PhaseAnchor), string(PhaseCompare)}
}

// Trial is one measured configuration.
type Trial struct {
	N      int    `json:"n"`
	Phase  Phase  `json:"phase"`
	Label  string `json:"label"`
	Config Config `json:"config"`
	// Score is the measurement's (0 when the trial failed: Error says
	// why, and the model counts it below every other).
	Score float64 `json:"score"`
	// Relative is Score over the server as found's score at the trial's
	// time: its anchors' (PhaseDefault, PhaseAnchor) interpolated by
	// trial number between the one before and the one after, or the
	// last one before when none came after. The search ranks by it;
	// 0 for a failed trial and in the comparison, which has a design
	// of its own against drift.
	Relative float64       `json:"relative,omitempty"`
	Summary  string        `json:"summary,omitempty"`
	Error    string        `json:"error,omitempty"`
	Budget   string        `json:"memory_budget"`
	Reset    time.Duration `json:"reset_ns"`
	Apply    time.Duration `json:"apply_ns"`
	Measure  time.Duration `json:"measure_ns"`
}

// OK reports whether the trial measured.
func (t Trial) OK() bool { return t.Error == "" }

// Skipped is a candidate never tried, and why.
type Skipped struct {
	Phase  Phase  `json:"phase"`
	Config Config `json:"config"`
	Why    string `json:"why"`
}

// Comparison is the final measurement: the arms interleaved, round by
// round, and the decisions of package abtest.
type Comparison struct {
	Arms []ArmScores `json:"arms"`
	// Decisions compare the best with each other arm ("best vs
	// default", ...) and the audit with the default.
	Decisions []Decision `json:"decisions"`
}

// ArmScores are an arm's scores over the rounds.
type ArmScores struct {
	Name   string    `json:"name"`
	Config Config    `json:"config"`
	Scores []float64 `json:"scores"`
	Median float64   `json:"median"`
}

// Decision is B against A.
type Decision struct {
	A        string          `json:"a"`
	B        string          `json:"b"`
	Decision abtest.Decision `json:"decision"`
}

// Result is a search's outcome.
type Result struct {
	Workload string `json:"workload"`
	Space    *Space `json:"space"`
	// Audit is the audit's configuration (its MySQL changes, less
	// observability and what cannot be applied), AuditNotes what of the
	// audit was left out and why.
	Audit      Config       `json:"audit"`
	AuditNotes []string     `json:"audit_notes,omitempty"`
	Trials     []Trial      `json:"trials"`
	Skipped    []Skipped    `json:"skipped,omitempty"`
	Importance []Importance `json:"importance"`
	Searched   []string     `json:"searched"`
	// Best is the index in Trials of the best configuration found.
	Best       int           `json:"best"`
	Comparison *Comparison   `json:"comparison,omitempty"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	// SearchTime is the time to the best configuration, before the
	// final comparison.
	SearchTime time.Duration `json:"search_ns"`
	// ChangeSet is the configuration the comparison supports as a change
	// set for stacktune apply: ChangeSetFrom names its arm ("best" or
	// "audit"; "" when no configuration measured better than the server
	// as found, and the change set is empty), ChangeSetWhy says why.
	ChangeSet     *changeset.Set `json:"change_set"`
	ChangeSetFrom string         `json:"change_set_from"`
	ChangeSetWhy  string         `json:"change_set_why"`
	Notes         []string       `json:"notes,omitempty"`
}

// BestTrial is the best trial.
func (r *Result) BestTrial() Trial {
	if r.Best < 0 || r.Best >= len(r.Trials) {
		return Trial{}
	}
	return r.Trials[r.Best]
}

// search is one run's state.
type search struct {
	opt     Options
	res     *Result
	space   *Space
	extras  Config // the audit's changes outside the space, under every candidate
	tried   map[string]bool
	pending bool // a configuration is applied and not undone
	start   time.Time
	rng     *rand.Rand
	auditFi map[string]advise.Finding
}

func (s *search) log(format string, args ...any) {
	if s.opt.Progress != nil {
		s.opt.Progress(fmt.Sprintf(format, args...))
	}
}

// Run searches the knobs (see the package comment) and returns what it
// measured, the best configuration and its comparison. The server is
// left as it was found (every configuration undone) whatever happens; an
// error with a non-nil Result says how far it got.
func Run(ctx context.Context, opt Options) (res *Result, err error) {
	if opt.Workload == nil || opt.Server == nil {
		return nil, errors.New("knobsearch: a workload and a server are needed")
	}
	if opt.DB == nil && opt.Snapshot == nil {
		return nil, errors.New("knobsearch: a server connection (or a snapshot) is needed")
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opt.Screen, 10)
	def(&opt.Top, 4)
	def(&opt.Trials, 12)
	def(&opt.Repeats, 5)
	if opt.Anchor == 0 {
		opt.Anchor = 6
	}
	if opt.Repeats < 4 {
		return nil, fmt.Errorf("knobsearch: %d repeats: at least 4 (3 against 3 can never show a difference at 95%%)", opt.Repeats)
	}
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	if opt.CollectInterval <= 0 {
		opt.CollectInterval = 10 * time.Second
	}
	if opt.now == nil {
		opt.now = time.Now
	}
	s := &search{opt: opt, res: &Result{Workload: opt.Workload.Name(), Best: -1}, tried: map[string]bool{}, extras: Config{},
		start: opt.now(), rng: rand.New(rand.NewPCG(opt.Seed, 0x6b6e6f62))}
	defer func() {
		// Leave the server as found, even after Ctrl-C.
		if s.pending {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
			defer cancel()
			if uerr := s.opt.Server.Undo(cctx); uerr != nil {
				err = errors.Join(err, fmt.Errorf("knobsearch: putting the server back: %w", uerr))
			}
		}
		s.res.Elapsed = opt.now().Sub(s.start)
	}()
	if err := s.baseline(ctx); err != nil {
		return s.res, err
	}
	if err := s.starts(ctx); err != nil {
		return s.res, err
	}
	if err := s.screen(ctx); err != nil {
		return s.res, err
	}
	if err := s.model(ctx); err != nil {
		return s.res, err
	}
	if s.opt.Anchor > 0 && s.sinceAnchor() > 0 {
		if err := s.anchor(ctx); err != nil {
			return s.res, err
		}
	}
	s.noteDrift()
	s.pickBest()
	s.res.SearchTime = opt.now().Sub(s.start)
	if err := s.compare(ctx); err != nil {
		return s.res, err
	}
	if err := s.finish(ctx); err != nil {
		return s.res, err
	}
	s.res.ChangeSetFrom, s.res.ChangeSetWhy = choose(s.res.Comparison, s.bestName())
	s.res.ChangeSet = s.changeSet()
	return s.res, nil
}

// trial measures c: reset the data, undo the last configuration, apply
// c, run. A failure to reset or undo ends the search (the next trial
// could not start from the same place); a failure to apply or to run
// is the trial's.
func (s *search) trial(ctx context.Context, phase Phase, label string, c Config, observe func(context.Context)) (Trial, error) {
	t := Trial{N: len(s.res.Trials) + 1, Phase: phase, Label: label, Config: maps.Clone(c)}
	if s.space != nil {
		t.Budget = s.space.budgetTotal(c)
	}
	s.log("trial %d (%s): %s", t.N, label, c)
	t0 := s.opt.now()
	if err := s.opt.Workload.Reset(ctx); err != nil {
		return t, fmt.Errorf("knobsearch: resetting the data for trial %d: %w", t.N, err)
	}
	if s.pending {
		if err := s.opt.Server.Undo(ctx); err != nil {
			return t, fmt.Errorf("knobsearch: undoing the configuration of trial %d: %w", t.N-1, err)
		}
		s.pending = false
	}
	t1 := s.opt.now()
	t.Reset = t1.Sub(t0)
	if len(c) > 0 {
		if err := s.opt.Server.Apply(ctx, c, label); err != nil {
			if ctx.Err() != nil {
				return t, ctx.Err()
			}
			if errors.Is(err, ErrServerState) {
				return t, fmt.Errorf("knobsearch: trial %d: %w", t.N, err)
			}
			t.Error = "apply: " + err.Error()
			t.Apply = s.opt.now().Sub(t1)
			s.record(t)
			return t, nil
		}
		s.pending = true
	}
	t2 := s.opt.now()
	t.Apply = t2.Sub(t1)
	m, err := s.opt.Workload.Measure(ctx, label, observe)
	t.Measure = s.opt.now().Sub(t2)
	if ctx.Err() != nil {
		return t, ctx.Err()
	}
	if err != nil {
		t.Error = err.Error()
	} else {
		t.Score, t.Summary = m.Score, m.Summary
	}
	s.record(t)
	return t, nil
}

func (s *search) record(t Trial) {
	s.res.Trials = append(s.res.Trials, t)
	s.tried[t.Config.String()] = true
	s.rescore()
	if t.OK() {
		s.log("trial %d: %s", t.N, t.Summary)
	} else {
		s.log("trial %d failed: %s", t.N, t.Error)
	}
}

// isAnchor says whether a trial measured the server as found for the
// search's scale: the first trial and the anchors.
func isAnchor(t Trial) bool {
	return t.OK() && (t.Phase == PhaseDefault || t.Phase == PhaseAnchor)
}

// anchors are the trials that measured the server as found, in order.
func (s *search) anchors() []Trial {
	var anchors []Trial
	for _, t := range s.res.Trials {
		if isAnchor(t) {
			anchors = append(anchors, t)
		}
	}
	return anchors
}

// sinceAnchor counts the trials since the server as found was last
// measured (an anchor that failed counts as measured: it is not tried
// again at once).
func (s *search) sinceAnchor() int {
	n := 0
	for i := len(s.res.Trials) - 1; i >= 0; i-- {
		if p := s.res.Trials[i].Phase; p == PhaseDefault || p == PhaseAnchor {
			break
		}
		n++
	}
	return n
}

// rescore sets every search trial's Relative from the anchors measured
// so far: a new anchor moves those of the trials since the last one.
func (s *search) rescore() {
	anchors := s.anchors()
	for i := range s.res.Trials {
		t := &s.res.Trials[i]
		t.Relative = 0
		if !t.OK() || t.Phase == PhaseCompare || len(anchors) == 0 {
			continue
		}
		if level := anchorLevel(anchors, t.N); level > 0 {
			t.Relative = t.Score / level
		}
	}
}

// anchorLevel is the server as found's score at trial n: interpolated
// between the anchors before and after n, the nearest one when n is
// outside them.
func anchorLevel(anchors []Trial, n int) float64 {
	j := slices.IndexFunc(anchors, func(a Trial) bool { return a.N >= n })
	switch {
	case j < 0:
		return anchors[len(anchors)-1].Score
	case j == 0 || anchors[j].N == n:
		return anchors[j].Score
	}
	a, b := anchors[j-1], anchors[j]
	f := float64(n-a.N) / float64(b.N-a.N)
	return a.Score + f*(b.Score-a.Score)
}

// observations are what the model sees of the search trials: the
// point and the relative score, a failed trial below all. The anchors
// repeat the first trial and are left out.
func (s *search) observations() []observation {
	var obs []observation
	for _, t := range s.res.Trials {
		if t.Phase == PhaseCompare || t.Phase == PhaseAnchor {
			continue
		}
		score := -1.0
		if t.OK() {
			score = t.Relative
		}
		obs = append(obs, observation{point: s.space.point(t.Config), score: score})
	}
	return obs
}

// anchor measures the server as found again.
func (s *search) anchor(ctx context.Context) error {
	n := 1
	for _, t := range s.res.Trials {
		if t.Phase == PhaseAnchor {
			n++
		}
	}
	_, err := s.trial(ctx, PhaseAnchor, fmt.Sprintf("as found (anchor %d)", n), nil, nil)
	return err
}

// noteDrift says how far the anchors moved, when they moved more than
// a tenth.
func (s *search) noteDrift() {
	var scores []float64
	for _, t := range s.anchors() {
		scores = append(scores, t.Score)
	}
	if len(scores) < 2 {
		return
	}
	lo, hi := slices.Min(scores), slices.Max(scores)
	if lo > 0 && hi/lo > 1.1 {
		s.res.Notes = append(s.res.Notes, fmt.Sprintf("the server as found scored %.0f to %.0f over its %d runs during the search (%.2fx): the host's speed moved, and each trial is ranked against the runs around it", lo, hi, len(scores), hi/lo))
	}
}

// baseline measures the server as found, taking the snapshot its audit
// and its memory budget come from while it runs.
func (s *search) baseline(ctx context.Context) error {
	snap := s.opt.Snapshot
	var snapErr error
	var observe func(context.Context)
	if snap == nil {
		observe = func(ctx context.Context) {
			cfg := collect.Config{DB: s.opt.DB, Values: map[string]string{"interval": s.opt.CollectInterval.String()}}
			snap, snapErr = collect.Take(ctx, cfg)
		}
	}
	t, err := s.trial(ctx, PhaseDefault, "default", nil, observe)
	if err != nil {
		return err
	}
	if !t.OK() {
		return fmt.Errorf("knobsearch: the server as found does not run the workload: %s", t.Error)
	}
	if snapErr != nil || snap == nil {
		return fmt.Errorf("knobsearch: the snapshot of the first trial: %w", errors.Join(snapErr, errors.New("none taken")))
	}
	for _, e := range snap.Errors {
		if e.Collector == "mysql" && !e.Partial {
			return fmt.Errorf("knobsearch: the snapshot of the first trial: %s", e.Error)
		}
	}
	space, err := NewSpace(snap, s.opt.Constraints)
	if err != nil {
		return err
	}
	s.space, s.res.Space = space, space
	for name, f := range space.Fixed {
		if !f.Holds {
			s.res.Notes = append(s.res.Notes, fmt.Sprintf("%s is fixed at %s but the server runs %s: the search leaves it as it runs", name, f.Want, orNone(f.Running)))
		}
	}
	if !s.opt.NoAudit {
		s.audit(snap)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// audit turns the audit of the snapshot into the audit's configuration
// and the extras every candidate carries.
func (s *search) audit(snap *collect.Snapshot) {
	opt := s.space.opt
	ar := advise.Audit(snap, opt)
	s.res.Audit = Config{}
	s.auditFi = map[string]advise.Finding{}
	for _, f := range ar.Findings {
		for _, ch := range f.Changes() {
			switch {
			case ch.Kind != changeset.MySQLVariable:
				continue
			case advise.Observability(f.ID):
				s.res.AuditNotes = append(s.res.AuditNotes, fmt.Sprintf("%s %s=%s left out: observability, not speed", f.ID, ch.Name, ch.To))
				continue
			}
			name := mysqlvar.Norm(ch.Name)
			if dyn, _ := mysqlvar.Dynamic(s.space.Server.Flavor, s.space.Server.Version, name); !dyn && !s.opt.Constraints.CanRestart {
				s.res.AuditNotes = append(s.res.AuditNotes, fmt.Sprintf("%s %s=%s left out: it takes a restart, and there is no way to restart the server", f.ID, ch.Name, ch.To))
				continue
			}
			s.res.Audit[name] = ch.To
			s.auditFi[name] = f
		}
	}
	s.extras = Config{}
	for k, v := range s.res.Audit {
		if s.space.Knob(k) == nil {
			s.extras[k] = v
		}
	}
}

// starts measures the audit's configuration and the settings of the 2015
// tpcc-mysql contest (PhaseContest).
func (s *search) starts(ctx context.Context) error {
	if len(s.res.Audit) > 0 {
		if err := s.try(ctx, PhaseAudit, "audit", s.res.Audit); err != nil {
			return err
		}
	}
	contest := maps.Clone(s.extras)
	for name, v := range contestValues(s.space.Knobs) {
		s.space.set(contest, s.space.Knob(name), v)
	}
	// The contest settings' buffer pool is as large as the budget allows
	// with their other buffers: smaller by a step until it fits.
	if k := s.space.Knob("innodb_buffer_pool_size"); k != nil {
		for i := 0; i < 16; i++ {
			if ok, _ := s.space.Feasible(contest); ok {
				break
			}
			n, _ := mysqlvar.ParseInt(contest[k.Name])
			if n == 0 || float64(n)-k.Step < k.Min {
				break
			}
			s.space.set(contest, k, fmt.Sprint(n-int64(k.Step)))
		}
	}
	return s.try(ctx, PhaseContest, "the contest's settings", contest)
}

// try measures c unless it is over the budget or already measured.
func (s *search) try(ctx context.Context, phase Phase, label string, c Config) error {
	if ok, why := s.space.Feasible(c); !ok {
		s.res.Skipped = append(s.res.Skipped, Skipped{Phase: phase, Config: c, Why: why})
		s.log("%s: not tried: %s", label, why)
		return nil
	}
	if s.tried[c.String()] {
		s.log("%s: already measured: %s", label, c)
		return nil
	}
	if _, err := s.trial(ctx, phase, label, c, nil); err != nil {
		return err
	}
	if s.opt.Anchor > 0 && s.sinceAnchor() >= s.opt.Anchor {
		return s.anchor(ctx)
	}
	return nil
}

func (s *search) outOfTime() bool {
	return s.opt.MaxTime > 0 && s.opt.now().Sub(s.start) >= s.opt.MaxTime
}

// screen measures a maximin Latin hypercube over every knob. A sample
// over the budget is drawn again inside its cells (up to 20 times) and
// else left out.
func (s *search) screen(ctx context.Context) error {
	if len(s.space.Knobs) == 0 {
		s.res.Notes = append(s.res.Notes, "no knob to search: every catalogue knob is fixed, absent or out of the constraints")
		return nil
	}
	n, d := s.opt.Screen, len(s.space.Knobs)
	pts := latinHypercube(s.rng, n, d, 50)
	for i, p := range pts {
		if s.outOfTime() {
			s.res.Notes = append(s.res.Notes, fmt.Sprintf("screening stopped after %d of %d samples: the search's time is up", i, n))
			return nil
		}
		c := s.space.config(p, s.extras)
		for redraw := 0; redraw < 20; redraw++ {
			if ok, _ := s.space.Feasible(c); ok {
				break
			}
			s.res.Skipped = append(s.res.Skipped, Skipped{Phase: PhaseScreen, Config: c, Why: s.why(c)})
			for j := range p {
				cell := math.Floor(p[j] * float64(n))
				p[j] = (cell + s.rng.Float64()) / float64(n)
			}
			c = s.space.config(p, s.extras)
		}
		if err := s.try(ctx, PhaseScreen, fmt.Sprintf("screen %d/%d", i+1, n), c); err != nil {
			return err
		}
	}
	return nil
}

func (s *search) why(c Config) string {
	_, why := s.space.Feasible(c)
	return why
}

// model ranks the knobs and searches the top ones with TPE, the others
// held at the best configuration so far.
func (s *search) model(ctx context.Context) error {
	if len(s.space.Knobs) == 0 {
		return nil
	}
	s.res.Importance = rankKnobs(s.space.Knobs, s.observations())
	var dims []int
	for _, imp := range s.res.Importance[:min(s.opt.Top, len(s.res.Importance))] {
		dims = append(dims, slices.IndexFunc(s.space.Knobs, func(k Knob) bool { return k.Name == imp.Knob }))
		s.res.Searched = append(s.res.Searched, imp.Knob)
	}
	s.log("knobs by |rho|: %s; searching %s", importanceText(s.res.Importance), strings.Join(s.res.Searched, ", "))
	t := &tpe{r: s.rng, gamma: 0.25, candidates: 24}
	for i := 0; i < s.opt.Trials; i++ {
		if s.outOfTime() {
			s.res.Notes = append(s.res.Notes, fmt.Sprintf("the model stopped after %d of %d trials: the search's time is up", i, s.opt.Trials))
			return nil
		}
		inc := s.incumbent()
		base := s.space.point(inc)
		p, rejected, ok := t.propose(s.space.Knobs, dims, s.observations(), base, func(x []float64) bool {
			c := s.space.config(x, s.extras)
			if feasible, _ := s.space.Feasible(c); !feasible {
				return false
			}
			return !s.tried[c.String()]
		})
		if rejected > 0 {
			s.res.Skipped = append(s.res.Skipped, Skipped{Phase: PhaseModel, Why: fmt.Sprintf("%d candidates of model trial %d over the memory budget or already measured, never tried", rejected, i+1)})
		}
		if !ok {
			s.res.Notes = append(s.res.Notes, fmt.Sprintf("the model found no new feasible candidate at trial %d", i+1))
			return nil
		}
		if err := s.try(ctx, PhaseModel, fmt.Sprintf("model %d/%d", i+1, s.opt.Trials), s.space.config(p, s.extras)); err != nil {
			return err
		}
	}
	return nil
}

func importanceText(imp []Importance) string {
	var parts []string
	for _, x := range imp {
		parts = append(parts, fmt.Sprintf("%s %+.2f", x.Knob, x.Rho))
	}
	return strings.Join(parts, ", ")
}

// candidate says whether a trial's configuration can be the answer:
// the starting points' (as found, the audit's, the 2015 tpcc-mysql contest's) and the
// model's. A screening sample ranks the knobs and feeds the model, but
// it holds random values of every knob, most of which the score says
// nothing about: none is taken as the answer, nor as the base of the
// model's trials.
func candidate(t Trial) bool {
	return t.OK() && t.Phase != PhaseScreen && t.Phase != PhaseCompare && t.Phase != PhaseAnchor
}

// incumbent is the configuration of the best candidate so far; the
// model holds the knobs it does not search at its values.
func (s *search) incumbent() Config {
	best := -1
	for i, t := range s.res.Trials {
		if candidate(t) && (best < 0 || t.Relative > s.res.Trials[best].Relative) {
			best = i
		}
	}
	if best < 0 {
		return maps.Clone(s.extras)
	}
	return s.res.Trials[best].Config
}

func (s *search) pickBest() {
	for i, t := range s.res.Trials {
		if candidate(t) && (s.res.Best < 0 || t.Relative > s.res.Trials[s.res.Best].Relative) {
			s.res.Best = i
		}
	}
}

// bestName is the comparison's name of the best configuration: "best",
// or the arm that holds the same configuration ("audit", "default").
func (s *search) bestName() string {
	best := s.res.BestTrial().Config.String()
	if len(s.res.Audit) > 0 && s.res.Audit.String() == best {
		return "audit"
	}
	if best == (Config{}).String() {
		return "default"
	}
	for _, a := range s.opt.Compare {
		if a.Config.String() == best {
			return a.Name
		}
	}
	return "best"
}

// choose picks the configuration to hand to apply from the comparison,
// so an unattended search never emits what its own measurement does not
// support: of the search's best and the audit's, those abtest found
// better than the default, the one with the higher median; none when
// neither is (the search's best may be a noisy trial's luck: a single
// run picks it, the comparison's rounds judge it). Without a
// comparison, the best. why says which and on what evidence.
func choose(cmp *Comparison, bestName string) (from, why string) {
	if cmp == nil {
		return "best", "no comparison was run: the best single trial"
	}
	// The candidates: the best under its arm's name (an extra arm's
	// configuration, MySQLTuner's say, is still the search's best), and
	// the audit's unless the best is the audit's.
	type candidate struct{ from, arm string }
	cands := []candidate{{"best", bestName}, {"audit", "audit"}}
	if bestName == "audit" {
		cands = cands[1:]
	}
	var evidence []string
	top := 0.0
	for _, c := range cands {
		i := slices.IndexFunc(cmp.Decisions, func(d Decision) bool { return d.A == "default" && d.B == c.arm })
		if c.arm == "default" || i < 0 {
			continue
		}
		d := cmp.Decisions[i].Decision
		evidence = append(evidence, fmt.Sprintf("%s vs default: %s %.2fx [%.2f, %.2f]", c.arm, strings.ReplaceAll(string(d.Verdict), "_", " "), d.RatioMedian, d.CILow, d.CIHigh))
		if m := armMedian(cmp, c.arm); d.Verdict == abtest.Better && (from == "" || m > top) {
			from, top = c.from, m
		}
	}
	ev := strings.Join(evidence, "; ")
	if from == "" {
		return "", "no configuration measured better than the server as found (" + ev + "): nothing to change"
	}
	return from, "the " + from + " configuration (" + ev + ")"
}

// armMedian is the named arm's median score (0 without the arm).
func armMedian(cmp *Comparison, name string) float64 {
	i := slices.IndexFunc(cmp.Arms, func(a ArmScores) bool { return a.Name == name })
	if i < 0 {
		return 0
	}
	return cmp.Arms[i].Median
}

// compare measures the default, the audit's, the best and the extra
// arms in rounds, each round in the mirror order of the one before
// (A B C, C B A, ...: a drift over the session adds as much to every
// arm), and decides with package abtest.
func (s *search) compare(ctx context.Context) error {
	best := s.res.BestTrial()
	arms := []Arm{{Name: "default", Config: Config{}}}
	if len(s.res.Audit) > 0 {
		arms = append(arms, Arm{Name: "audit", Config: s.res.Audit})
	}
	arms = append(arms, s.opt.Compare...)
	bestName := s.bestName()
	if bestName != "best" {
		s.res.Notes = append(s.res.Notes, fmt.Sprintf("the best configuration found is the %s configuration", bestName))
	} else {
		arms = append(arms, Arm{Name: "best", Config: best.Config})
	}
	arms = slices.DeleteFunc(arms, func(a Arm) bool {
		ok, why := s.space.Feasible(a.Config)
		if !ok && a.Name != "default" {
			s.res.Notes = append(s.res.Notes, fmt.Sprintf("arm %s not compared: %s", a.Name, why))
		}
		return !ok && a.Name != "default"
	})
	return s.compareArms(ctx, arms, bestName)
}

func (s *search) compareArms(ctx context.Context, arms []Arm, bestName string) error {
	cmp := &Comparison{}
	for _, a := range arms {
		cmp.Arms = append(cmp.Arms, ArmScores{Name: a.Name, Config: a.Config})
	}
	for r := 0; r < s.opt.Repeats; r++ {
		order := make([]int, len(arms))
		for i := range order {
			order[i] = i
		}
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			t, err := s.trial(ctx, PhaseCompare, fmt.Sprintf("%s (round %d)", arms[i].Name, r+1), arms[i].Config, nil)
			if err != nil {
				s.res.Comparison = cmp
				return err
			}
			if !t.OK() {
				s.res.Comparison = cmp
				return fmt.Errorf("knobsearch: the comparison's %s run failed: %s", arms[i].Name, t.Error)
			}
			cmp.Arms[i].Scores = append(cmp.Arms[i].Scores, t.Score)
		}
	}
	for i := range cmp.Arms {
		cmp.Arms[i].Median = stats.Median(cmp.Arms[i].Scores)
	}
	idx := func(name string) int {
		return slices.IndexFunc(cmp.Arms, func(a ArmScores) bool { return a.Name == name })
	}
	decide := func(a, b string) {
		ia, ib := idx(a), idx(b)
		if ia < 0 || ib < 0 || ia == ib {
			return
		}
		d, err := abtest.Compare(cmp.Arms[ia].Scores, cmp.Arms[ib].Scores, abtest.Options{Seed: s.opt.Seed})
		if err != nil {
			s.res.Notes = append(s.res.Notes, fmt.Sprintf("%s vs %s: %v", b, a, err))
			return
		}
		cmp.Decisions = append(cmp.Decisions, Decision{A: a, B: b, Decision: d})
	}
	for _, a := range cmp.Arms {
		if a.Name != bestName {
			decide(a.Name, bestName)
		}
	}
	if bestName != "audit" {
		decide("default", "audit")
	}
	s.res.Comparison = cmp
	return nil
}

// finish leaves the server as found: the data reset and the last
// configuration undone.
func (s *search) finish(ctx context.Context) error {
	if err := s.opt.Workload.Reset(ctx); err != nil {
		return fmt.Errorf("knobsearch: the final reset: %w", err)
	}
	if s.pending {
		if err := s.opt.Server.Undo(ctx); err != nil {
			return fmt.Errorf("knobsearch: undoing the last configuration: %w", err)
		}
		s.pending = false
	}
	return nil
}
