package apply

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// phpfpmChanges turns "pool|setting|from|to" into php-fpm-pool changes.
func phpfpmChanges(specs ...string) []changeset.Change {
	var out []changeset.Change
	for _, s := range specs {
		f := strings.Split(s, "|")
		out = append(out, changeset.Change{Kind: changeset.PHPFPM, Target: changeset.PHPFPMTarget(f[0]), Name: f[1], From: f[2], To: f[3]})
	}
	return out
}

// phpfpmWorkers asks the pool's status how many workers run and which
// process manager.
func phpfpmWorkers(t *testing.T, p *sandbox.PHPFPM) (string, int) {
	t.Helper()
	resp, err := p.Request(context.Background(), "/status", "json")
	if err != nil {
		t.Fatal(err)
	}
	pm, n := "", 0
	for _, part := range strings.Split(strings.Trim(string(resp.Body), "{}"), ",") {
		k, v, _ := strings.Cut(part, ":")
		switch strings.Trim(k, `"`) {
		case "process manager":
			pm = strings.Trim(v, `"`)
		case "total processes":
			for _, c := range v {
				n = n*10 + int(c-'0')
			}
		}
	}
	return pm, n
}

// TestPHPFPMTarget applies pool changes to a real PHP-FPM (a setting the
// pool has, one it leaves to the default), checks the reloaded master
// runs them (a static pool of 4 workers becomes 2), refuses a value
// php-fpm -t rejects without touching anything, refuses drifted advice,
// and rolls back to the files and workers it started with.
func TestPHPFPMTarget(t *testing.T) {
	p := sandboxtest.NewPHPFPM(t, sandbox.PHPFPMOptions{Pool: map[string]string{"pm": "static", "pm.max_children": "4"}})
	ctx := context.Background()
	opt := Options{StateDir: t.TempDir()}
	target := func(cs []changeset.Change) (*PHPFPM, error) {
		tg, err := NewPHPFPM(p.ConfigPath(), cs)
		if err != nil {
			return nil, err
		}
		tg.Test, tg.Reload = CommandCheck(p.TestCommand()...), p.Reload
		return tg, nil
	}
	old, _ := os.ReadFile(p.PoolPath())
	tg, err := target(phpfpmChanges("www|pm.max_children|4|2", "www|pm.max_requests|0|500"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := DryRun(ctx, []Target{tg}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 2 || plan.Steps[0].How != HowReload || plan.Steps[1].Note == "" {
		t.Errorf("plan %+v", plan.Steps)
	}
	// A second past the master's start, so its reload shows a later start.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	if _, err := Run(ctx, []Target{tg}, opt); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p.PoolPath())
	if !strings.Contains(string(b), "pm.max_children = 2\n") || !strings.Contains(string(b), "pm.max_requests = 500\n") {
		t.Fatalf("pool file:\n%s", b)
	}
	if pm, n := phpfpmWorkers(t, p); pm != "static" || n != 2 {
		t.Errorf("running %s with %d workers, want static with 2", pm, n)
	}
	applied := b

	bad, err := target(phpfpmChanges("www|pm.max_children|2|-3"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, []Target{bad}, opt); err == nil || !strings.Contains(err.Error(), "validating php-fpm") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(p.PoolPath()); string(b) != string(applied) {
		t.Errorf("a refused change changed the file:\n%s", b)
	}
	if _, n := phpfpmWorkers(t, p); n != 2 {
		t.Errorf("%d workers after a refused change", n)
	}
	drift, err := target(phpfpmChanges("www|pm.max_children|50|20"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, []Target{drift}, opt); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "advised from 50, running 2") {
		t.Errorf("drift: %v", err)
	}
	if _, err := NewPHPFPM(p.ConfigPath(), phpfpmChanges("api|pm|dynamic|static")); err == nil {
		t.Error("a pool the configuration lacks was accepted")
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	back, err := RollbackTargets(opt.StateDir, Services{PHPFPMConf: p.ConfigPath(), PHPFPMTest: CommandCheck(p.TestCommand()...), PHPFPMReload: p.Reload})
	if err != nil || len(back) != 1 {
		t.Fatalf("rollback targets %v %v", back, err)
	}
	if _, err := Rollback(ctx, back, opt); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p.PoolPath()); string(b) != string(old) {
		t.Errorf("rollback did not restore the pool:\n%s", b)
	}
	if pm, n := phpfpmWorkers(t, p); pm != "static" || n != 4 {
		t.Errorf("after the rollback %s with %d workers, want static with 4", pm, n)
	}
}
