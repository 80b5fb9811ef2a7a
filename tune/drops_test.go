package tune

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestIndexDropsStep: the loop takes a drop the way the advice says. The
// duplicate index is ignored, the A/B test measures the stack with and
// without it (the bench's app sees both states), the step is kept, and
// only then is the index dropped; the two transactions are in the
// journal, and rolling them back re-creates it ignored, then makes it
// seen: each step's server state is checked.
func TestIndexDropsStep(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	db := srv.DB()
	for _, q := range []string{"CREATE DATABASE lib",
		"CREATE TABLE lib.loans (loan_id INT PRIMARY KEY, isbn CHAR(13), KEY ix_isbn (isbn), KEY ix_isbn_again (isbn))",
		"INSERT INTO lib.loans VALUES (1, '9780000000001'), (2, '9780000000002')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	state := func() string {
		var ign sql.NullString
		if err := db.QueryRow("SELECT MAX(IGNORED) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'lib' AND INDEX_NAME = 'ix_isbn_again'").Scan(&ign); err != nil {
			t.Fatal(err)
		}
		switch ign.String {
		case "YES":
			return "ignored"
		case "NO":
			return "seen"
		}
		return "absent"
	}
	// The app: each request reads the index's state, as a query plan
	// would meet it.
	var mu sync.Mutex
	seen := map[string]int{}
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := state()
		mu.Lock()
		seen[s]++
		mu.Unlock()
		w.Write([]byte(s))
	}))
	defer app.Close()

	ignore := changeset.Change{Kind: changeset.Index, Target: "lib.loans", Name: "ix_isbn_again", From: "(`isbn`)", To: "(`isbn`) ignored",
		Direction: "drop", Activation: changeset.Dynamic, Finding: "index-duplicate", Evidence: []string{"ix_isbn_again(isbn) has the same columns as ix_isbn"}}
	advice := &indexadv.Result{Drops: []changeset.Change{ignore}, Proposals: []indexadv.Proposal{{Action: indexadv.ActionDrop, Table: "lib.loans",
		Index: "ix_isbn_again", Columns: []string{"isbn"}, Reason: indexadv.ReasonDuplicate, Change: ignore,
		Evidence: indexadv.ProposalEvidence{Of: "ix_isbn", OfColumns: []string{"isbn"}, Staged: "ignore_first"}}}}
	var first *diagnose.Result
	dir := t.TempDir()
	opt := Options{
		Diagnose: diagnose.Options{Bench: benchrun.Options{URL: app.URL, Load: loadgen.Options{Connections: 1, Duration: 100 * time.Millisecond, KeepAlive: true, Timeout: time.Second}}},
		Services: apply.Services{DB: db},
		Steps:    []Step{IndexDrops},
		StateDir: filepath.Join(dir, "state"),
		// The step's flow is the subject, not the measurement: a busy
		// host can set four short runs of one arm apart from the other's
		// by chance (p = 2.9%, the smallest 4 against 4 can reach), so
		// worse needs eight against eight at 99.9%.
		AB: abtest.Options{MinRuns: 8, MaxRuns: 8, Level: 0.999},
		// Short runs are noisy: the floor is not measured again.
		NoiseLimit: -1,
		diagnoseRun: func(context.Context, diagnose.Options) (*diagnose.Result, error) {
			if first == nil {
				first = &diagnose.Result{Server: "test", Indexes: advice}
				return first, nil
			}
			return &diagnose.Result{Server: "test"}, nil
		},
	}
	res, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if seen["ignored"] == 0 || seen["seen"] == 0 {
		t.Errorf("the bench did not measure both states: %v", seen)
	}
	var step *StepResult
	for i := range res.Steps {
		if res.Steps[i].Label == "index drops" {
			step = &res.Steps[i]
		}
	}
	if step == nil || step.RolledBack != "" || step.Skipped != "" {
		t.Fatalf("the drops step: %+v", step)
	}
	if !slices.ContainsFunc(step.Applied, func(s string) bool { return strings.Contains(s, "ix_isbn_again") && strings.Contains(s, "absent") }) {
		t.Errorf("the step's changes: %v", step.Applied)
	}
	if res.Final == nil || res.Final.RolledBack {
		t.Fatalf("final: %+v", res.Final)
	}
	if s := state(); s != "absent" {
		t.Fatalf("after the loop: %s", s)
	}
	// Undo as stacktune rollback does, one transaction at a time.
	for _, want := range []string{"ignored", "seen"} {
		back, err := apply.RollbackTargets(opt.StateDir, opt.Services)
		if err != nil || len(back) == 0 {
			t.Fatalf("rollback targets: %v %v", back, err)
		}
		if _, err := apply.Rollback(context.Background(), back, apply.Options{StateDir: opt.StateDir}); err != nil {
			t.Fatal(err)
		}
		if s := state(); s != want {
			t.Fatalf("after a rollback: %s, want %s", s, want)
		}
	}
}
