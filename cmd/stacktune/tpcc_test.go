package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
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
	// After runs: eleven conditions hold, and 11 holds only as loaded.
	out, _, err = run(t, "", "tpcc", "check", dsn)
	if err != nil || strings.Count(out, " ok: ") != 11 || !strings.Contains(out, "11 not checked: ") {
		t.Errorf("check: %v\n%s", err, out)
	}
	out, _, err = run(t, "", "history", "--history", hist)
	if err != nil || !strings.Contains(out, "first try") {
		t.Errorf("history: %v\n%s", err, out)
	}
	// An order line deleted and its order's line count lowered to match:
	// conditions 1-4 cannot see it.
	for _, q := range []string{
		"DELETE FROM tpcc.order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 1 AND ol_number = 1",
		"UPDATE tpcc.orders SET o_ol_cnt = o_ol_cnt - 1 WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = 1",
	} {
		if _, err := m.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err = run(t, "", "tpcc", "check", dsn, "--format", "markdown")
	if err == nil || !strings.Contains(out, "6 BROKEN") || !strings.Contains(out, "warehouse 1 district 2 order 1: o\\_ol\\_cnt") {
		t.Errorf("check of broken data: %v\n%s", err, out)
	}
	if _, _, err := run(t, "", "tpcc", "prepare", dsn); err == nil {
		t.Error("prepare without -w accepted")
	}
}

// TestTPCCRunServerGone kills the server once the run has New-Orders in
// its measured interval: the output says the server went away, when,
// and that it did not come back, the rates are over the time it was up,
// and the command exits non-zero.
func TestTPCCRunServerGone(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	dsn := "--dsn=" + m.DSN("")
	if _, _, err := run(t, "", "tpcc", "prepare", dsn, "-w", "1", "--tiny"); err != nil {
		t.Fatal(err)
	}
	var before int64
	if err := m.DB().QueryRow("SELECT SUM(d_next_o_id) FROM tpcc.district").Scan(&before); err != nil {
		t.Fatal(err)
	}
	killed := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			var n int64
			if err := m.DB().QueryRow("SELECT SUM(d_next_o_id) FROM tpcc.district").Scan(&n); err == nil && n >= before+50 {
				killed <- syscall.Kill(m.PID(), syscall.SIGKILL)
				return
			}
		}
		killed <- errors.New("no New-Orders in a minute")
	}()
	out, _, err := run(t, "", "tpcc", "run", dsn, "-d", "6s", "--warmup", "0s", "-c", "2", "--no-history")
	if kerr := <-killed; kerr != nil {
		t.Fatal(kerr)
	}
	if err == nil || !strings.Contains(err.Error(), "the server went away during the run") || !strings.Contains(err.Error(), "not back by the end of the run") {
		t.Errorf("err %v", err)
	}
	for _, want := range []string{"SERVER WENT AWAY at ", "into the measured interval), not back by the end of the run: ", "measured the server was up"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
