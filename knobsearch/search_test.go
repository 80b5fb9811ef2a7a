package knobsearch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/mysqlvar"
)

// fakeSnapshot is MariaDB 10.11 with its compiled-in defaults on a host
// of ram bytes.
func fakeSnapshot(ram int64) *collect.Snapshot {
	vars := map[string]string{
		"innodb_buffer_pool_size": "134217728", "innodb_log_file_size": "100663296", "innodb_log_buffer_size": "16777216",
		"innodb_io_capacity": "200", "innodb_io_capacity_max": "2000", "innodb_max_dirty_pages_pct": "90.000000",
		"innodb_adaptive_flushing_lwm": "10.000000", "innodb_lru_scan_depth": "1536", "innodb_flush_neighbors": "1",
		"innodb_flush_method": "O_DIRECT", "innodb_adaptive_hash_index": "OFF", "innodb_change_buffering": "none",
		"innodb_purge_threads": "4", "innodb_spin_wait_delay": "4", "innodb_flush_log_at_trx_commit": "1",
		"innodb_doublewrite": "ON", "sync_binlog": "0", "log_bin": "OFF", "thread_handling": "one-thread-per-connection",
		"key_buffer_size": "134217728", "aria_pagecache_buffer_size": "134217728", "query_cache_type": "OFF",
		"query_cache_size": "1048576", "sort_buffer_size": "2097152", "join_buffer_size": "262144",
		"read_buffer_size": "131072", "read_rnd_buffer_size": "262144", "thread_stack": "299008",
		"net_buffer_length": "16384", "max_connections": "151", "performance_schema": "OFF",
		"version": "10.11.19-MariaDB",
	}
	return &collect.Snapshot{
		Taken: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), Host: "testhost",
		MySQL: &collect.MySQL{Flavor: "mariadb", Version: "10.11.19-MariaDB", VersionNumber: mysqlvar.V(10, 11, 19), Variables: vars},
		Linux: &collect.Linux{Cores: 2, Memory: collect.Memory{TotalBytes: ram, AvailableBytes: ram},
			Processes: []collect.Process{{PID: 10, Name: "mariadbd", Pattern: "mariadbd", RSSBytes: 200 * mib}}},
	}
}

// fakeServer keeps the configuration it runs and checks every Apply
// against the rules the search must keep.
type fakeServer struct {
	t        *testing.T
	snap     *collect.Snapshot
	opt      advise.Options
	fixed    map[string]string
	current  Config
	applied  []Config
	undone   int
	failOn   func(Config) error
	overSeen int
}

func (f *fakeServer) Apply(_ context.Context, c Config, _ string) error {
	if len(f.current) != 0 {
		f.t.Errorf("Apply over %v: the last configuration was not undone", f.current)
	}
	for name := range f.fixed {
		if _, ok := c[name]; ok {
			f.t.Errorf("a configuration touches the fixed %s: %v", name, c)
		}
	}
	b, ok := advise.BudgetWith(f.snap, f.opt, c)
	if !ok || b.Total() > b.RAM {
		f.overSeen++
		f.t.Errorf("a configuration over the memory budget was tried: %v (%s)", c, b.Formula())
	}
	f.applied = append(f.applied, maps.Clone(c))
	if f.failOn != nil {
		if err := f.failOn(c); err != nil {
			return err
		}
	}
	f.current = maps.Clone(c)
	return nil
}

func (f *fakeServer) Undo(context.Context) error {
	f.undone++
	f.current = nil
	return nil
}

// fakeWorkload scores the server's current configuration with a
// synthetic response surface and noise: the buffer pool matters most
// (log of its size, up to the data's 2 GiB), the redo log some, the
// neighbour flushing a little, the rest not at all.
type fakeWorkload struct {
	srv    *fakeServer
	r      *rand.Rand
	noise  float64
	resets int
	runs   int
	// speed, when set, is the host's speed at run n (from 1): every
	// score is multiplied by it.
	speed func(n int) float64
}

func (w *fakeWorkload) Name() string                { return "fake" }
func (w *fakeWorkload) Reset(context.Context) error { w.resets++; return nil }
func (w *fakeWorkload) Measure(ctx context.Context, _ string, observe func(context.Context)) (Measurement, error) {
	if observe != nil {
		observe(ctx)
	}
	w.runs++
	score := surface(w.srv.current) * (1 + w.noise*w.r.NormFloat64())
	if w.speed != nil {
		score *= w.speed(w.runs)
	}
	return Measurement{Score: score, Summary: fmt.Sprintf("score %.0f", score), Passed: true}, nil
}

// surface is the fake workload's score of c without noise.
func surface(c Config) float64 {
	get := func(name, def string) float64 {
		v, ok := c[name]
		if !ok {
			v = def
		}
		f, _ := number(v)
		return f
	}
	bp := math.Min(get("innodb_buffer_pool_size", "134217728"), 2*gib)
	redo := get("innodb_log_file_size", "100663296")
	score := 1000 * (1 + 2*math.Log2(bp/(128*mib))/4) * (1 + 0.1*math.Log2(redo/(96*mib))/4.4)
	if c["innodb_flush_neighbors"] == "0" {
		score *= 1.05
	}
	return score
}

func newFakes(t *testing.T, c Constraints, ram int64, seed uint64) (*fakeServer, *fakeWorkload, Options) {
	snap := fakeSnapshot(ram)
	srv := &fakeServer{t: t, snap: snap, opt: c.adviseOptions(), fixed: map[string]string{}}
	for k := range c.Fixed {
		srv.fixed[mysqlvar.Norm(k)] = c.Fixed[k]
	}
	w := &fakeWorkload{srv: srv, r: rand.New(rand.NewPCG(seed, 9)), noise: 0.03}
	return srv, w, Options{Workload: w, Server: srv, Snapshot: snap, Constraints: c, Seed: seed, Screen: 8, Trials: 10, Repeats: 4}
}

// TestSearchHonoursFixAndBudget: the fixed settings are never written,
// nothing over the memory budget is ever applied (the fake server checks
// every Apply with the audit's budget), durability knobs stay out unless
// allowed, and the server ends as found.
func TestSearchHonoursFixAndBudget(t *testing.T) {
	for _, tc := range []struct {
		name       string
		c          Constraints
		wantIn     []string
		wantOut    []string
		wantSkips  bool
		wantNoBest bool
	}{
		{name: "contest rules: two durability knobs fixed, the third allowed but the binary log is off",
			c: Constraints{Fixed: map[string]string{"innodb_doublewrite": "1", "innodb-flush-log-at-trx-commit": "1"}, AllowDurabilityLoss: true,
				MemoryLimit: 3 * gib, CanRestart: true},
			wantIn: []string{"innodb_buffer_pool_size", "innodb_log_buffer_size", "innodb_flush_method"}, wantOut: []string{"innodb_doublewrite", "innodb_flush_log_at_trx_commit", "sync_binlog"},
			wantSkips: true},
		{name: "no durability loss, no restart",
			c:      Constraints{MemoryLimit: 3 * gib},
			wantIn: []string{"innodb_buffer_pool_size", "innodb_flush_neighbors"}, wantOut: []string{"innodb_flush_log_at_trx_commit", "innodb_doublewrite", "innodb_log_buffer_size", "innodb_flush_method", "thread_handling"}},
		{name: "durability allowed",
			c:      Constraints{MemoryLimit: 3 * gib, AllowDurabilityLoss: true, CanRestart: true},
			wantIn: []string{"innodb_flush_log_at_trx_commit", "innodb_doublewrite"}},
		{name: "buffer pool fixed too",
			c:       Constraints{MemoryLimit: 3 * gib, CanRestart: true, Fixed: map[string]string{"innodb_buffer_pool_size": "134217728"}},
			wantOut: []string{"innodb_buffer_pool_size"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, w, opt := newFakes(t, tc.c, 16*gib, 7)
			res, err := Run(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			in := names(res.Space.Knobs)
			for _, n := range tc.wantIn {
				if !slices.Contains(in, n) {
					t.Errorf("%s not in the space %v (left out: %v)", n, in, res.Space.Left)
				}
			}
			for _, n := range tc.wantOut {
				if slices.Contains(in, n) {
					t.Errorf("%s in the space", n)
				}
				for _, c := range srv.applied {
					if _, ok := c[n]; ok {
						t.Errorf("%s was applied: %v", n, c)
					}
				}
			}
			if srv.overSeen > 0 {
				t.Errorf("%d configurations over the budget applied", srv.overSeen)
			}
			if tc.wantSkips && len(res.Skipped) == 0 {
				t.Error("no candidate was refused for the budget: the test does not reach the limit")
			}
			for _, sk := range res.Skipped {
				if sk.Config != nil {
					if ok, _ := res.Space.Feasible(sk.Config); ok {
						t.Errorf("skipped a feasible candidate: %v (%s)", sk.Config, sk.Why)
					}
				}
			}
			// Each trial resets, and each applied configuration is undone.
			if len(srv.current) != 0 || srv.undone != len(srv.applied) {
				t.Errorf("server left with %v; %d applied, %d undone", srv.current, len(srv.applied), srv.undone)
			}
			if w.resets != len(res.Trials)+1 {
				t.Errorf("%d resets for %d trials", w.resets, len(res.Trials))
			}
		})
	}
}

// TestSearchFinds: on the synthetic surface the search finds the buffer
// pool, ranks it first, ends well above the default, proves it with the
// comparison, and its change set is one apply takes.
func TestSearchFinds(t *testing.T) {
	_, _, opt := newFakes(t, Constraints{MemoryLimit: 4 * gib, CanRestart: true, Fixed: map[string]string{"innodb_doublewrite": "ON"}}, 16*gib, 3)
	res, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Importance[0].Knob != "innodb_buffer_pool_size" || res.Importance[0].Rho < 0.5 {
		t.Errorf("importance %v", res.Importance)
	}
	if !slices.Contains(res.Searched, "innodb_buffer_pool_size") || len(res.Searched) != 4 {
		t.Errorf("searched %v", res.Searched)
	}
	best := res.BestTrial()
	def := res.Trials[0]
	if def.Phase != PhaseDefault || best.Score < 2*def.Score {
		t.Errorf("best %.0f (%v), default %.0f", best.Score, best.Config, def.Score)
	}
	phases := map[Phase]int{}
	for _, tr := range res.Trials {
		phases[tr.Phase]++
	}
	if phases[PhaseScreen] == 0 || phases[PhaseModel] == 0 || phases[PhaseContest] != 1 || phases[PhaseCompare] != 4*len(res.Comparison.Arms) {
		t.Errorf("phases %v", phases)
	}
	var vsDefault *Decision
	for i, d := range res.Comparison.Decisions {
		if d.A == "default" && d.B == "best" {
			vsDefault = &res.Comparison.Decisions[i]
		}
	}
	if vsDefault == nil || vsDefault.Decision.Verdict != abtest.Better || vsDefault.Decision.CILow < 1.5 {
		t.Errorf("best vs default: %+v", vsDefault)
	}
	if res.ChangeSetFrom != "best" || !strings.Contains(res.ChangeSetWhy, "best vs default: better") {
		t.Errorf("the change set holds %q: %s", res.ChangeSetFrom, res.ChangeSetWhy)
	}
	set := res.ChangeSet
	if err := set.Validate(); err != nil {
		t.Fatal(err)
	}
	var bp *changeset.Change
	for i, c := range set.Changes {
		if c.Name == "innodb_buffer_pool_size" {
			bp = &set.Changes[i]
		}
		if c.Name == "innodb_doublewrite" {
			t.Error("the change set touches the fixed innodb_doublewrite")
		}
	}
	if bp == nil || bp.From != "134217728" || bp.Finding != FindingID || bp.Activation != changeset.Dynamic || len(bp.Evidence) < 2 {
		t.Errorf("buffer pool change %+v", bp)
	}
	dir := filepath.Join(t.TempDir(), "best")
	if _, err := changeset.Write(dir, set); err != nil {
		t.Fatal(err)
	}
	back, _, err := changeset.Read(dir)
	if err != nil || len(back.Changes) != len(set.Changes) {
		t.Fatalf("the change set does not read back: %v", err)
	}
}

// TestSearchSurvivesFailures: a configuration the server refuses is a
// failed trial and the search goes on; a rollback that could not finish
// stops it; a cancelled search still leaves the server as found.
func TestSearchSurvivesFailures(t *testing.T) {
	t.Run("refused configuration", func(t *testing.T) {
		srv, _, opt := newFakes(t, Constraints{MemoryLimit: 4 * gib, CanRestart: true}, 16*gib, 5)
		srv.failOn = func(c Config) error {
			if c["innodb_flush_method"] == "O_DSYNC" {
				return errors.New("the server did not start")
			}
			return nil
		}
		res, err := Run(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		failed := 0
		for _, tr := range res.Trials {
			if !tr.OK() {
				failed++
				if !strings.Contains(tr.Error, "did not start") || tr.Config["innodb_flush_method"] != "O_DSYNC" {
					t.Errorf("failed trial %+v", tr)
				}
			}
		}
		if failed == 0 {
			t.Error("no trial tried O_DSYNC: the test proves nothing")
		}
		if res.BestTrial().Config["innodb_flush_method"] == "O_DSYNC" {
			t.Error("a failed configuration won")
		}
	})
	t.Run("server state lost", func(t *testing.T) {
		srv, _, opt := newFakes(t, Constraints{MemoryLimit: 4 * gib, CanRestart: true}, 16*gib, 5)
		srv.failOn = func(c Config) error {
			if len(srv.applied) == 3 {
				return fmt.Errorf("%w: leftovers", ErrServerState)
			}
			return nil
		}
		res, err := Run(context.Background(), opt)
		if !errors.Is(err, ErrServerState) || res == nil || len(res.Trials) != 3 {
			t.Errorf("err %v, trials %d", err, len(res.Trials))
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		srv, w, opt := newFakes(t, Constraints{MemoryLimit: 4 * gib, CanRestart: true}, 16*gib, 5)
		ctx, cancel := context.WithCancel(context.Background())
		srv.failOn = func(Config) error {
			if len(srv.applied) == 4 {
				cancel()
			}
			return nil
		}
		_, err := Run(ctx, opt)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v", err)
		}
		if len(srv.current) != 0 || srv.undone != len(srv.applied) {
			t.Errorf("cancelled search left %v (%d applied, %d undone)", srv.current, len(srv.applied), srv.undone)
		}
		_ = w
	})
}

func TestSpaceFeasible(t *testing.T) {
	snap := fakeSnapshot(16 * gib)
	s, err := NewSpace(snap, Constraints{MemoryLimit: 3 * gib, CanRestart: true})
	if err != nil {
		t.Fatal(err)
	}
	bp := s.Knob("innodb_buffer_pool_size")
	if bp == nil || bp.Min != 128*mib || int64(bp.Max) > s.Budget.PoolRoom || bp.Max < gib {
		t.Fatalf("buffer pool knob %+v, room %d", bp, s.Budget.PoolRoom)
	}
	for _, c := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"as found", Config{}, true},
		{"largest pool", Config{"innodb_buffer_pool_size": bp.value(1)}, true},
		{"largest pool and a larger log buffer", Config{"innodb_buffer_pool_size": bp.value(1), "innodb_log_buffer_size": fmt.Sprint(256 * mib)}, false},
		{"more connections than fit", Config{"innodb_buffer_pool_size": bp.value(1), "max_connections": "2000"}, false},
		{"redo log below the log buffer", Config{"innodb_log_file_size": fmt.Sprint(48 * mib), "innodb_log_buffer_size": fmt.Sprint(64 * mib)}, false},
	} {
		if ok, why := s.Feasible(c.cfg); ok != c.ok {
			t.Errorf("%s: feasible %v (%s), want %v", c.name, ok, why, c.ok)
		}
	}
	// No RAM known and no limit: no budget, no search.
	snap.Linux = nil
	if _, err := NewSpace(snap, Constraints{}); !errors.Is(err, ErrNoBudget) {
		t.Errorf("no RAM: %v", err)
	}
	// A limit stands in for the RAM of a server collected elsewhere.
	if _, err := NewSpace(snap, Constraints{MemoryLimit: 2 * gib}); err != nil {
		t.Errorf("with a limit: %v", err)
	}
}

// TestChoose: the change set holds what the comparison supports, never a
// configuration whose rounds did not beat the server as found.
func TestChoose(t *testing.T) {
	dec := func(b string, v abtest.Verdict) Decision {
		return Decision{A: "default", B: b, Decision: abtest.Decision{Verdict: v, RatioMedian: 1.3, CILow: 1.1, CIHigh: 1.5}}
	}
	arms := func(best, audit float64) []ArmScores {
		return []ArmScores{{Name: "default", Median: 100}, {Name: "audit", Median: audit}, {Name: "best", Median: best}}
	}
	for _, c := range []struct {
		name     string
		cmp      *Comparison
		bestName string
		want     string
		why      string
	}{
		{"no comparison: the best trial", nil, "best", "best", "no comparison"},
		{"both better, best higher", &Comparison{Arms: arms(140, 130), Decisions: []Decision{dec("best", abtest.Better), dec("audit", abtest.Better)}}, "best", "best", "best vs default: better"},
		{"both better, audit higher", &Comparison{Arms: arms(130, 140), Decisions: []Decision{dec("best", abtest.Better), dec("audit", abtest.Better)}}, "best", "audit", "audit vs default: better"},
		{"best within noise, audit better", &Comparison{Arms: arms(150, 130), Decisions: []Decision{dec("best", abtest.WithinNoise), dec("audit", abtest.Better)}}, "best", "audit", "best vs default: within noise"},
		{"best better, audit within noise", &Comparison{Arms: arms(130, 150), Decisions: []Decision{dec("best", abtest.Better), dec("audit", abtest.WithinNoise)}}, "best", "best", "audit vs default: within noise"},
		{"neither better: nothing", &Comparison{Arms: arms(105, 110), Decisions: []Decision{dec("best", abtest.WithinNoise), dec("audit", abtest.WithinNoise)}}, "best", "", "nothing to change"},
		{"best worse: nothing", &Comparison{Arms: arms(80, 100), Decisions: []Decision{dec("best", abtest.Worse)}}, "best", "", "best vs default: worse"},
		{"the best is the audit", &Comparison{Arms: arms(0, 140), Decisions: []Decision{dec("audit", abtest.Better)}}, "audit", "audit", "audit vs default: better"},
		{"the best is the audit, within noise", &Comparison{Arms: arms(0, 110), Decisions: []Decision{dec("audit", abtest.WithinNoise)}}, "audit", "", "(audit vs default: within noise 1.30x [1.10, 1.50]): nothing"},
		{"the best is the default", &Comparison{Arms: arms(0, 110), Decisions: []Decision{dec("audit", abtest.WithinNoise)}}, "default", "", "nothing to change"},
		{"the best is an extra arm", &Comparison{Arms: append(arms(0, 100), ArmScores{Name: "mysqltuner", Median: 140}), Decisions: []Decision{dec("mysqltuner", abtest.Better), dec("audit", abtest.WithinNoise)}}, "mysqltuner", "best", "mysqltuner vs default: better"},
	} {
		t.Run(c.name, func(t *testing.T) {
			from, why := choose(c.cmp, c.bestName)
			if from != c.want || !strings.Contains(why, c.why) {
				t.Errorf("choose = %q, %q; want %q with %q", from, why, c.want, c.why)
			}
		})
	}
}

// TestSearchDrift: on a host whose speed moves during the search, each
// trial's relative score is its configuration's true ratio to the
// server as found when the anchors bracket it, and the drift is noted.
// Without anchors the same search mis-scores trials by the drift: the
// no-anchor case shows the check can fail.
func TestSearchDrift(t *testing.T) {
	for _, tc := range []struct {
		name   string
		anchor int
		speed  func(n int) float64
		// maxErr bounds, and minErr floors, the largest relative error
		// of a search trial's Relative against the true ratio.
		maxErr, minErr float64
		wantNote       bool
	}{
		{name: "a steady host", anchor: 0, speed: func(int) float64 { return 1 }, maxErr: 0.05},
		{name: "a host that speeds up threefold, anchored", anchor: 0, speed: func(n int) float64 { return 1 + 0.08*float64(n-1) }, maxErr: 0.05, wantNote: true},
		{name: "a host that speeds up threefold, no anchors", anchor: -1, speed: func(n int) float64 { return 1 + 0.08*float64(n-1) }, minErr: 0.5},
		{name: "a host that slows down twofold and back, anchored every 3", anchor: 3, speed: func(n int) float64 {
			return 1 - 0.5*math.Max(0, 1-math.Abs(float64(n)-13)/8)
		}, maxErr: 0.08, wantNote: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, w, opt := newFakes(t, Constraints{MemoryLimit: 4 * gib, CanRestart: true}, 16*gib, 3)
			w.noise, w.speed, opt.Anchor = 0.005, tc.speed, tc.anchor
			res, err := Run(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			def := surface(nil)
			worst, anchors, last := 0.0, 0, 0
			for _, tr := range res.Trials {
				switch tr.Phase {
				case PhaseCompare:
					continue
				case PhaseAnchor:
					anchors++
					if tr.Config.String() != (Config{}).String() {
						t.Errorf("anchor %d runs %v", tr.N, tr.Config)
					}
				default:
					last = tr.N
				}
				if !tr.OK() {
					continue
				}
				truth := surface(tr.Config) / def
				worst = math.Max(worst, math.Abs(tr.Relative-truth)/truth)
			}
			if tc.anchor >= 0 && (anchors == 0 || res.Trials[last].Phase != PhaseAnchor) {
				t.Errorf("%d anchors; the trial after the last search trial (%d) is not one", anchors, last)
			}
			if tc.anchor < 0 && anchors != 0 {
				t.Errorf("%d anchors with Anchor %d", anchors, tc.anchor)
			}
			if tc.maxErr > 0 && worst > tc.maxErr {
				t.Errorf("a trial's relative score is %.0f%% off its true ratio (at most %.0f%%)", 100*worst, 100*tc.maxErr)
			}
			if worst < tc.minErr {
				t.Errorf("the worst relative score is %.0f%% off; without anchors the drift should show (at least %.0f%%)", 100*worst, 100*tc.minErr)
			}
			t.Logf("worst %.3f, %d anchors, %d trials", worst, anchors, len(res.Trials))
			noted := slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "the host's speed moved") })
			if noted != tc.wantNote {
				t.Errorf("drift noted %v, want %v: %q", noted, tc.wantNote, res.Notes)
			}
			if best := res.BestTrial(); best.Relative < 0.95*surface(best.Config)/def {
				t.Errorf("best %v relative %.2f, true %.2f", best.Config, best.Relative, surface(best.Config)/def)
			}
		})
	}
}
