package knobsearch

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
	"github.com/stacktune/stacktune/tpcc"
)

// TestSearchOnMariaDB runs a short search on a throwaway MariaDB with a
// tiny TPC-C load: every trial restores the same data, applies its
// configuration through apply's transaction (the drop-in in conf.d,
// SET GLOBAL or a restart) and runs TPC-C; the contest's fixed settings
// are never written; the server ends with its variables and its conf.d
// as they started, and the winner is a change set apply takes.
func TestSearchOnMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB and runs about 20 short TPC-C trials")
	}
	ctx := context.Background()
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true, ServerDefaults: true})
	if _, err := m.DB().Exec("CREATE DATABASE tpcc"); err != nil {
		t.Fatal(err)
	}
	cfg, err := mysql.ParseDSN(m.DSN("tpcc"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = quiet{} // every restore leaves dead connections it would log
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	if _, err := tpcc.Load(ctx, db, tpcc.LoadOptions{Warehouses: 1, Sizes: tpcc.TinySizes}); err != nil {
		t.Fatal(err)
	}
	snapDir := filepath.Join(t.TempDir(), "snap")
	if _, err := m.SnapshotData(ctx, snapDir); err != nil {
		t.Fatal(err)
	}
	before := variables(t, m.DB())
	state := t.TempDir()
	w, err := NewTPCC(ctx, TPCC{DB: db, Run: tpcc.RunOptions{Duration: time.Second, Connections: 2},
		ResetData: func(ctx context.Context) error { _, err := m.RestoreData(ctx, snapDir); return err }})
	if err != nil {
		t.Fatal(err)
	}
	dropIn := filepath.Join(m.ConfDir(), "99-stacktune.cnf")
	sv := apply.Services{DB: m.DB(), MySQLConf: dropIn, MySQLCheck: m.CheckConfig, MySQLRestart: m.Restart, MySQLRestartHint: "restart the sandbox"}
	fixed := map[string]string{"innodb_doublewrite": "ON", "innodb_flush_log_at_trx_commit": "1"}
	// The budget counts the host's other services (other tests' servers
	// on a busy host): 3 GiB leaves the pool room to grow beside them.
	res, err := Run(ctx, Options{
		Workload: w, Server: &MySQL{Services: sv, StateDir: state}, DB: m.DB(), CollectInterval: time.Second,
		Constraints: Constraints{Fixed: fixed, AllowDurabilityLoss: true, MemoryLimit: 3 * gib, CanRestart: true,
			Only: []string{"innodb_buffer_pool_size", "innodb_log_buffer_size", "innodb_flush_neighbors", "innodb_doublewrite", "innodb_flush_log_at_trx_commit"}},
		Screen: 2, Trials: 1, Top: 2, Repeats: 4, NoAudit: true, Seed: 2,
		Progress: func(s string) { t.Log(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Space.Knobs); strings.Join(got, ",") != "innodb_buffer_pool_size,innodb_log_buffer_size,innodb_flush_neighbors" {
		t.Errorf("space %v; left out %+v; budget %+v", got, res.Space.Left, res.Space.Budget)
	}
	restarted := false
	for _, tr := range res.Trials {
		if !tr.OK() {
			t.Errorf("trial %d failed: %s", tr.N, tr.Error)
		}
		for name := range fixed {
			if _, ok := tr.Config[name]; ok {
				t.Errorf("trial %d touched the fixed %s", tr.N, name)
			}
		}
		if ok, why := res.Space.Feasible(tr.Config); !ok {
			t.Errorf("trial %d over the budget: %s", tr.N, why)
		}
		restarted = restarted || tr.Config["innodb_log_buffer_size"] != ""
	}
	if !restarted {
		t.Log("no trial changed innodb_log_buffer_size (restart-only): the restart path was not exercised")
	}
	if res.Comparison == nil || len(res.Comparison.Arms) < 1 || len(res.Comparison.Arms[0].Scores) != 4 {
		t.Errorf("comparison %+v", res.Comparison)
	}
	// As found: every variable, and conf.d.
	after := variables(t, m.DB())
	for k, v := range before {
		if k == "gtid_binlog_pos" || k == "gtid_current_pos" || strings.HasPrefix(k, "timestamp") {
			continue
		}
		if !mysqlvar.Equal(after[k], v) {
			t.Errorf("after the search %s = %q, before %q", k, after[k], v)
		}
	}
	if data, err := os.ReadFile(dropIn); err == nil && len(strings.TrimSpace(string(data))) > 0 {
		t.Errorf("the drop-in is left with:\n%s", data)
	}
	if info, err := tpcc.ReadInfo(ctx, db); err != nil || !info.Complete {
		t.Errorf("data after the search: %+v %v", info, err)
	}
	// The winner goes through apply as a change set.
	if len(res.ChangeSet.Changes) > 0 {
		dir := filepath.Join(t.TempDir(), "winner")
		if _, err := changeset.Write(dir, res.ChangeSet); err != nil {
			t.Fatal(err)
		}
		set, _, err := changeset.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		targets, _, err := apply.FromChangeSet(set, sv)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := apply.Run(ctx, targets, apply.Options{StateDir: t.TempDir()}); err != nil {
			t.Fatalf("applying the winner: %v", err)
		}
		now := variables(t, m.DB())
		for _, c := range set.Changes {
			if !mysqlvar.Equal(now[c.Name], c.To) {
				t.Errorf("after apply %s = %s, the winner says %s", c.Name, now[c.Name], c.To)
			}
		}
	}
}

func variables(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query("SHOW GLOBAL VARIABLES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

type quiet struct{}

func (quiet) Print(...any) {}
