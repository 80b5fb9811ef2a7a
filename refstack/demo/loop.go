package demo

import (
	"context"
	"fmt"
	"github.com/stacktune/stacktune/appcpu"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/tune"
)

// LoopOptions configures Loop. The zero value is the full loop.
type LoopOptions struct {
	// Quick is the shortened loop (QuickDuration runs, one look of
	// QuickRuns runs per state, a shorter diagnosis).
	Quick bool
	// Scale is the data scale (refapp.Generate); default 1.
	Scale int
	// MinRuns and MaxRuns bound the runs per state of each step's A/B
	// test (abtest: default 4 to 8; Quick: 4).
	MinRuns, MaxRuns int
	// Duration is one bench run; default FullDuration (Quick:
	// QuickDuration).
	Duration time.Duration
	// Connections is the bench's virtual users; default 8.
	Connections int
	// Dir holds the servers, the files the loop applies, the apply
	// journal, the history, each diagnosis and each step's change set.
	// Empty means a temporary directory removed at the end.
	Dir string
	// HistoryPath is the SQLite history the runs are recorded in;
	// default Dir/history.db.
	HistoryPath string
	// AllowDurabilityLoss lets the my.cnf step take the audit's
	// durability changes (the demo's database is throwaway).
	AllowDurabilityLoss bool
	// Progress receives one line per step; nil for none.
	Progress io.Writer
}

// Default durations and runs.
const (
	FullDuration  = 10 * time.Second
	QuickDuration = 4 * time.Second
	QuickRuns     = 4
)

// LoopResult is the loop: the shape of `stacktune demo --format json`,
// `stacktune tune`'s.
type LoopResult = tune.Result

// loop is one run of Loop.
type loop struct {
	opt      LoopOptions
	st       *stack
	dir      string
	scenario string
	hist     *history.Store
	histPath string
	cleanup  []func()
	say      func(string, ...any)
}

// Loop starts the reference stack and runs `stacktune tune` on it (the
// same loop, package tune) with the demo's own steps added: the noise
// floor, the diagnosis, each step applied with apply and decided by an
// interleaved A/B test, the second audit, the restart check.
func Loop(ctx context.Context, opt LoopOptions) (*LoopResult, error) {
	r, err := StartReference(ctx, opt)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Tune(ctx)
}

// Reference is the reference stack started for a loop, and the loop's
// options on it: what Loop runs, for a caller (a benchmark) that measures
// more on the same stack.
type Reference struct{ l *loop }

// StartReference starts the reference stack in opt.Dir (or a temporary
// directory) and opens the history. Close stops it.
func StartReference(ctx context.Context, opt LoopOptions) (_ *Reference, err error) {
	if opt.Scale <= 0 {
		opt.Scale = 1
	}
	if opt.Duration <= 0 {
		opt.Duration = FullDuration
		if opt.Quick {
			opt.Duration = QuickDuration
		}
	}
	if opt.Quick && opt.MinRuns == 0 && opt.MaxRuns == 0 {
		opt.MinRuns, opt.MaxRuns = QuickRuns, QuickRuns
	}
	if opt.Connections <= 0 {
		opt.Connections = 8
	}
	l := &loop{opt: opt, say: func(format string, a ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "stacktune demo: "+format+"\n", a...)
		}
	}}
	r := &Reference{l}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	l.dir = opt.Dir
	if l.dir == "" {
		// Short: unix socket paths live under it.
		if l.dir, err = os.MkdirTemp("", "stdemo-"); err != nil {
			return nil, err
		}
		dir := l.dir
		l.cleanup = append(l.cleanup, func() { os.RemoveAll(dir) })
	} else if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return nil, err
	}
	l.histPath = opt.HistoryPath
	if l.histPath == "" {
		l.histPath = filepath.Join(l.dir, "history.db")
	}
	if l.hist, err = history.Open(l.histPath); err != nil {
		return nil, err
	}
	l.cleanup = append(l.cleanup, func() { l.hist.Close() })
	l.scenario = filepath.Join(l.dir, "scenario.yaml")
	if err := os.WriteFile(l.scenario, refapp.Scenario, 0o644); err != nil {
		return nil, err
	}
	if l.st, err = startStack(ctx, l.dir, opt.Scale, l.say); err != nil {
		return nil, err
	}
	l.cleanup = append(l.cleanup, l.st.stop)
	return r, nil
}

// Close stops the stack and removes its temporary directory.
func (r *Reference) Close() {
	for i := len(r.l.cleanup) - 1; i >= 0; i-- {
		r.l.cleanup[i]()
	}
	r.l.cleanup = nil
}

// Tune runs the loop on the stack (tune.Run with TuneOptions).
func (r *Reference) Tune(ctx context.Context) (*LoopResult, error) {
	l := r.l
	res, err := tune.Run(ctx, r.TuneOptions())
	if res != nil {
		res.Stack.Description = ""
		res.Stack.Scale, res.Stack.Quick = l.opt.Scale, l.opt.Quick
		if l.opt.Dir != "" || l.opt.HistoryPath != "" {
			res.History = l.histPath
		}
	}
	return res, err
}

// TuneOptions are tune's options for the reference stack (see
// tuneOptions).
func (r *Reference) TuneOptions() tune.Options { return r.l.tuneOptions(r.l.hist) }

// tuneOptions are tune's options for the reference stack: its servers
// reached directly (apply.Services), the demo's steps, the bench of the
// reference app's scenario with /initialize and InnoDB's purge before
// every run.
func (l *loop) tuneOptions(hist *history.Store) tune.Options {
	st, opt := l.st, l.opt
	diagDur := 2 * opt.Duration
	proofRuns := 5
	if opt.Quick {
		diagDur, proofRuns = opt.Duration+3*time.Second, 3
	}
	warmUp := min(opt.Duration/2, 5*time.Second)
	traceDur := diagnose.DefaultTraceDuration
	if opt.Quick {
		traceDur = 5 * time.Second
	}
	return tune.Options{
		Diagnose: diagnose.Options{
			DSN: st.db.DSN(""), SlowLog: st.db.SlowLogPath(),
			Bench: benchrun.Options{Scenario: l.scenario, BaseURL: st.nginx.URL(),
				Load: loadgen.Options{Connections: opt.Connections, Duration: opt.Duration, KeepAlive: true, Timeout: 30 * time.Second}},
			// The registered collectors, set as the CLI's flags would set
			// them (collect.Registered); one that fails is recorded.
			Collect: collect.Config{Values: map[string]string{
				"nginx-conf": st.nginx.ConfigPath(),
				"memcached":  collect.JoinAddr(st.mc.Network(), st.mc.Addr()),
			}},
			// Sessions copy long_query_time when they connect: a fresh pool.
			AppRestart: st.restartApp, AppRestartName: "the reference app's restart",
			BeforeBench: l.initialize,
			Database:    appDB, Classes: 20, ProofRuns: proofRuns,
			// A trace run after the diagnosis run (requests one at a time,
			// statements from performance_schema's history), the app's
			// CPU sampled by Go's profiler in this process: per endpoint
			// its app CPU, DB and other time, and its flame graph.
			Requests: diagnose.RequestOptions{Trace: diagnose.TracePFS, TraceDuration: traceDur, Sampler: &appcpu.InProcess{}},
			Audit:    advise.Options{AllowDurabilityLoss: opt.AllowDurabilityLoss},
			// The loop audits the snapshot as it was taken.
			AuditCaptureSettings: true,
			Progress:             func(line string) { l.say("diagnosis: %s", line) },
		},
		DiagnoseDuration: diagDur,
		Services: apply.Services{DB: st.appDB, Schema: appDB,
			MySQLConf: filepath.Join(st.db.ConfDir(), "99-stacktune.cnf"), MySQLCheck: st.db.CheckConfig, MySQLRestart: st.db.Restart,
			MySQLRestartHint: "the demo's throwaway server restarts itself",
			Nginx:            true, NginxConf: st.nginx.ConfigPath(), NginxTest: st.nginx.Test, NginxReload: st.nginx.Reload, NginxProbe: st.probeNginx},
		Steps:          l.steps(),
		StateDir:       filepath.Join(l.dir, "apply"),
		History:        hist,
		AB:             abtest.Options{MinRuns: opt.MinRuns, MaxRuns: opt.MaxRuns},
		WarmUp:         warmUp,
		AppRestart:     st.restartApp,
		AppRestartName: "the reference app's restart",
		KeepDir:        filepath.Join(l.dir, "diagnosis"),
		Progress:       func(line string) { l.say("%s", line) },
	}
}

// initialize resets the app's data to the generated set (GET
// /initialize), so every run starts from the same data.
func (l *loop) initialize(ctx context.Context) error {
	if err := getOK(ctx, freshClient(5*time.Minute), l.st.nginx.URL()+"initialize", "initialize through nginx"); err != nil {
		return err
	}
	return l.waitPurge(ctx)
}

// waitPurge waits (at most purgeWait) until InnoDB has purged the rows
// /initialize deleted: until then every scan of those tables still walks
// the delete-marked rows, and a run started at once would be slower than
// one started after a pause (a step's apply): the runs would not be
// comparable.
func (l *loop) waitPurge(ctx context.Context) error {
	deadline := time.Now().Add(purgeWait)
	for {
		var name string
		var n int64
		if err := l.st.db.DB().QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'").Scan(&name, &n); err != nil {
			return fmt.Errorf("reading the purge backlog: %w", err)
		}
		if n <= purgeDone || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// The purge wait's bound and the backlog counted as done.
const (
	purgeWait = 30 * time.Second
	purgeDone = 10
)
