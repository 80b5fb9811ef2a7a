package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/internal/sandbox"
	"github.com/stacktune/stacktune/internal/sandbox/sandboxtest"
)

// TestTPCCCommands: prepare, run (recorded in the history, with its
// label), check, history; a second prepare finishes nothing and fails
// nothing; a run with no load says to prepare.
func TestTPCCCommands(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	dsn := "--dsn=" + m.DSN("")
	hist := filepath.Join(t.TempDir(), "history.db")
	if _, _, err := run(t, "", "tpcc", "run", dsn, "--no-history", "-d", "1s"); err == nil || !strings.Contains(err.Error(), "prepare") {
		t.Errorf("run before prepare: %v", err)
	}
	out, _, err := run(t, "", "tpcc", "prepare", dsn, "-w", "1", "--tiny")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "loaded 1 warehouses") || !strings.Contains(out, "5 loaded") || !strings.Contains(out, "not TPC-C") {
		t.Errorf("prepare: %s", out)
	}
	out, _, err = run(t, "", "tpcc", "prepare", dsn, "-w", "1", "--tiny", "--format", "json")
	if err != nil || !strings.Contains(out, `"units_skipped": 5`) {
		t.Errorf("second prepare: %v\n%s", err, out)
	}
	out, _, err = run(t, "", "tpcc", "run", dsn, "-d", "2s", "--warmup", "0s", "-c", "2", "--label", "first try", "--history", hist)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for _, want := range []string{"TPC-C run: 1 warehouses", "tpmC", "New-Order", "Stock-Level", "p90 limit", "not a TPC-C result"} {
		if !strings.Contains(out, want) {
			t.Errorf("run output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = run(t, "", "tpcc", "run", dsn, "-d", "1s", "--warmup", "0s", "-c", "2", "--no-history", "--format", "json")
	var res struct {
		TpmC         float64 `json:"tpmc"`
		Transactions []struct {
			Name string `json:"name"`
		} `json:"transactions"`
	}
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.TpmC <= 0 || len(res.Transactions) != 5 {
		t.Errorf("json run: %v %+v\n%s", err, res, out)
	}
	out, _, err = run(t, "", "tpcc", "check", dsn)
	if err != nil || strings.Count(out, " ok: ") != 4 {
		t.Errorf("check: %v\n%s", err, out)
	}
	out, _, err = run(t, "", "history", "--history", hist)
	if err != nil || !strings.Contains(out, "first try") {
		t.Errorf("history: %v\n%s", err, out)
	}
	if _, err := m.DB().Exec("UPDATE tpcc.warehouse SET w_ytd = 0"); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "", "tpcc", "check", dsn, "--format", "markdown")
	if err == nil || !strings.Contains(out, "BROKEN") {
		t.Errorf("check of broken data: %v\n%s", err, out)
	}
	if _, _, err := run(t, "", "tpcc", "prepare", dsn); err == nil {
		t.Error("prepare without -w accepted")
	}
}
