package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestSearchTPCC: `stacktune search --workload tpcc` on a throwaway
// MariaDB with a tiny load, reset by reloading: a short search whose
// JSON report holds the trials and the comparison, whose fixed setting
// is never touched, whose runs are in the history, and whose --emit
// directory is a change set apply reads; the server's drop-in is left
// as it was.
func TestSearchTPCC(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true, ServerDefaults: true})
	dsn := "--dsn=" + m.DSN("")
	if _, _, err := run(t, "", "tpcc", "prepare", dsn, "-w", "1", "--tiny"); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	emit := filepath.Join(tmp, "best")
	dropIn := filepath.Join(m.ConfDir(), "99-stacktune.cnf")
	args := []string{"search", dsn, "--workload", "tpcc", "--reset", "reload", "-d", "1s", "--warmup", "0s", "-c", "2",
		"--fix", "innodb_doublewrite=ON", "--fix", "innodb_flush_log_at_trx_commit=1", "--allow-durability-loss",
		"--knobs", "innodb_flush_neighbors,innodb_doublewrite,innodb_flush_log_at_trx_commit", "--memory-budget", "2G",
		"--screen", "1", "--trials", "1", "--top", "1", "--repeats", "4", "--no-audit", "--anchor", "2",
		"--mysql-conf", dropIn, "--mysql-check", "none", "--mysql-restart", "none",
		"--state", filepath.Join(tmp, "state"), "--history", filepath.Join(tmp, "h.db"), "--emit", emit, "--format", "json"}
	out, errOut, err := run(t, "", args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var res struct {
		Space struct {
			Knobs []struct{ Name string } `json:"knobs"`
			Left  []struct{ Name, Why string }
		} `json:"space"`
		Trials []struct {
			Phase    string            `json:"phase"`
			Config   map[string]string `json:"config"`
			Error    string            `json:"error"`
			Relative float64           `json:"relative"`
		} `json:"trials"`
		Comparison struct {
			Arms []struct {
				Name   string    `json:"name"`
				Scores []float64 `json:"scores"`
			} `json:"arms"`
			Decisions []struct {
				A, B     string
				Decision struct {
					Verdict string `json:"verdict"`
				} `json:"decision"`
			} `json:"decisions"`
		} `json:"comparison"`
		ChangeSet struct {
			Changes []struct{ Name string } `json:"changes"`
		} `json:"change_set"`
		ChangeSetFrom string   `json:"change_set_from"`
		ChangeSetWhy  string   `json:"change_set_why"`
		Notes         []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Space.Knobs) != 1 || res.Space.Knobs[0].Name != "innodb_flush_neighbors" {
		t.Errorf("space %+v", res.Space)
	}
	anchors, searched := 0, 0
	for _, tr := range res.Trials {
		switch tr.Phase {
		case "contest", "screen", "model":
			searched++
		}
		if tr.Error != "" {
			t.Errorf("trial failed: %s", tr.Error)
		}
		if tr.Phase == "anchor" {
			anchors++
			if len(tr.Config) != 0 || tr.Relative <= 0 {
				t.Errorf("an anchor runs %v, relative %v", tr.Config, tr.Relative)
			}
		}
		for k := range tr.Config {
			if k == "innodb_doublewrite" || k == "innodb_flush_log_at_trx_commit" {
				t.Errorf("a trial set the fixed %s", k)
			}
		}
	}
	// An anchor after every two search trials and after the last.
	if want := (searched + 1) / 2; searched == 0 || anchors != want {
		t.Errorf("%d anchors after %d search trials, want %d", anchors, searched, want)
	}
	// On a noisy machine the server as found may measure best: then the
	// comparison has that one arm, and nothing to change.
	arms := res.Comparison.Arms
	for _, a := range arms {
		if len(a.Scores) != 4 {
			t.Errorf("arm %s: %d runs, want 4", a.Name, len(a.Scores))
		}
	}
	switch {
	case len(arms) == 0:
		t.Error("no comparison")
	case len(arms) == 1:
		if arms[0].Name != "default" || len(res.ChangeSet.Changes) != 0 || !strings.Contains(strings.Join(res.Notes, " "), "is the default configuration") {
			t.Errorf("one arm %s, changes %v, notes %v", arms[0].Name, res.ChangeSet.Changes, res.Notes)
		}
	case len(res.Comparison.Decisions) == 0:
		t.Errorf("arms %v, no decision", arms)
	default:
		// The change set holds the best only when its rounds beat the
		// default; within noise (likely in 1 s runs), nothing.
		better := res.Comparison.Decisions[0].Decision.Verdict == "better"
		if better != (len(res.ChangeSet.Changes) > 0) || better != (res.ChangeSetFrom == "best") || res.ChangeSetWhy == "" {
			t.Errorf("arms %v, decisions %+v: change set from %q (%s), changes %v", arms, res.Comparison.Decisions, res.ChangeSetFrom, res.ChangeSetWhy, res.ChangeSet.Changes)
		}
	}
	if data, err := os.ReadFile(dropIn); err == nil && strings.Contains(string(data), "innodb") {
		t.Errorf("the drop-in is left with:\n%s", data)
	}
	if _, _, err := changeset.Read(emit); err != nil {
		t.Errorf("--emit: %v", err)
	}
	out, _, err = run(t, "", "history", "--history", filepath.Join(tmp, "h.db"))
	if err != nil || !strings.Contains(out, "default (round 4)") {
		t.Errorf("history: %v\n%s", err, out)
	}
	// Bad flags are refused before anything runs.
	for _, bad := range [][]string{
		{"search", dsn, "--workload", "nosuch"},
		{"search", dsn},
		{"search", dsn, "--workload", "tpcc", "--memory-budget", "lots"},
		{"search", dsn, "--workload", "tpcc", "--format", "html"},
		{"search", dsn, "--workload", "http"},
		{"search", dsn, "--workload", "tpcc", "--dry-run"},
		{"tune", dsn, "--workload", "tpcc", "--dry-run"},
		{"tune", dsn, "--workload", "tpcc", "--memory-budget", "lots"},
		{"search", dsn, "--workload", "tpcc", "--reset", "datadir", "--mysql-check", "none", "--state", filepath.Join(tmp, "s2"), "--no-history"},
	} {
		if _, _, err := run(t, "", bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestSearchHTTP: `stacktune search --workload http` on the second app
// (testdata/bookshop, its own schema and faults, not the reference app),
// as a new user runs it: a scenario file of its pages, a throwaway
// MariaDB with a my.cnf drop-in. Every trial runs the scenario (its
// pre_run reloads the data), the anchors measure the server as found,
// the change set follows the comparison, and the drop-in is left as
// found.
func TestSearchHTTP(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true, ServerDefaults: true})
	if _, err := m.DB().Exec("CREATE DATABASE bookshop"); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bookshop")
	if out, err := exec.Command("go", "build", "-o", bin, "../../testdata/bookshop").CombinedOutput(); err != nil {
		t.Fatalf("building the bookshop: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	app := exec.Command(bin, "-listen", addr, "-dsn", m.DSN("bookshop"))
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Process.Kill(); app.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the bookshop did not listen")
		}
	}
	scenario := filepath.Join(tmp, "bookshop.yaml")
	if err := os.WriteFile(scenario, []byte(`name: bookshop
base_url: http://`+addr+`
data:
  books: [1, 17, 230, 999, 1500]
  authors: [1, 42, 199]
pre_run:
  url: /initialize
  method: POST
  expect: {status: 200}
steps:
  - name: top
    weight: 2
    url: /
  - name: book
    weight: 5
    url: /books/{{books}}
    expect: {status: 200}
  - name: author
    weight: 3
    url: /authors/{{authors}}
    expect: {status: 200}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	dropIn := filepath.Join(m.ConfDir(), "99-stacktune.cnf")
	out, errOut, err := run(t, "", "search", "--dsn="+m.DSN(""), "--workload", "http", "--scenario", scenario, "-d", "1s", "-c", "2",
		"--knobs", "innodb_flush_neighbors,innodb_buffer_pool_size", "--memory-budget", "2G",
		"--screen", "2", "--trials", "1", "--top", "1", "--repeats", "4", "--anchor", "2",
		"--mysql-conf", dropIn, "--mysql-check", "none", "--mysql-restart", "none",
		"--state", filepath.Join(tmp, "state"), "--history", filepath.Join(tmp, "h.db"), "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	defer func() {
		if t.Failed() {
			t.Logf("the search's progress:\n%s", errOut)
		}
	}()
	var res struct {
		Workload string `json:"workload"`
		Trials   []struct {
			Phase    string            `json:"phase"`
			Config   map[string]string `json:"config"`
			Score    float64           `json:"score"`
			Relative float64           `json:"relative"`
			Error    string            `json:"error"`
		} `json:"trials"`
		Comparison    *struct{ Arms []struct{ Name string } } `json:"comparison"`
		ChangeSetFrom string                                  `json:"change_set_from"`
		ChangeSetWhy  string                                  `json:"change_set_why"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Workload != scenario {
		t.Errorf("workload %q", res.Workload)
	}
	anchors, searched := 0, 0
	for _, tr := range res.Trials {
		if tr.Error != "" || tr.Score <= 0 {
			t.Errorf("trial %s failed or scored nothing: %q, %v", tr.Phase, tr.Error, tr.Score)
		}
		switch tr.Phase {
		case "anchor":
			anchors++
			if len(tr.Config) != 0 || tr.Relative <= 0 {
				t.Errorf("an anchor runs %v, relative %v", tr.Config, tr.Relative)
			}
		case "audit", "contest", "screen", "model":
			searched++
			if tr.Relative <= 0 {
				t.Errorf("a %s trial has no relative score", tr.Phase)
			}
		}
	}
	if want := (searched + 1) / 2; searched == 0 || anchors != want {
		t.Errorf("%d anchors after %d search trials, want %d", anchors, searched, want)
	}
	if res.Comparison == nil || len(res.Comparison.Arms) == 0 || res.ChangeSetWhy == "" {
		t.Errorf("comparison %+v, change set from %q: %q", res.Comparison, res.ChangeSetFrom, res.ChangeSetWhy)
	}
	if data, err := os.ReadFile(dropIn); err == nil && strings.Contains(string(data), "innodb") {
		t.Errorf("the drop-in is left with:\n%s", data)
	}
	var pool string
	if err := m.DB().QueryRow("SELECT @@innodb_buffer_pool_size").Scan(&pool); err != nil || pool != "134217728" {
		t.Errorf("the buffer pool is left at %s (%v)", pool, err)
	}
}

// TestSearchHelp: each command's help lists what it does: tune's none of
// the search's flags, search's none of the loop's; tune --workload, the
// deprecated alias, still runs the search (its checks) and says to use
// stacktune search, on stderr.
func TestSearchHelp(t *testing.T) {
	searchOnly := []string{"--workload", "--trials", "--screen", "--top", "--repeats", "--anchor", "--memory-budget", "--reset", "--datadir", "--knobs", "--emit", "--no-audit", "--procedures", "--warmup", "--mysql-stop"}
	loopOnly := []string{"--min-runs", "--max-runs", "--noise-limit", "--dry-run", "--keep", "--nginx-conf", "--trace", "--app-restart", "--access-log", "--source"}
	for _, c := range []struct {
		cmd        string
		has, hasNo []string
	}{
		{"tune", loopOnly, searchOnly},
		{"search", searchOnly, loopOnly},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			out, _, err := run(t, "", c.cmd, "--help")
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range c.has {
				if !strings.Contains(out, "  "+f+" ") && !strings.Contains(out, ", "+f+" ") {
					t.Errorf("%s --help lacks %s", c.cmd, f)
				}
			}
			for _, f := range c.hasNo {
				if strings.Contains(out, "  "+f+" ") || strings.Contains(out, ", "+f+" ") {
					t.Errorf("%s --help lists %s", c.cmd, f)
				}
			}
		})
	}
	out, errOut, err := run(t, "", "tune", "--dsn=root@tcp(127.0.0.1:1)/", "--workload", "nosuch", "--format", "json")
	if err == nil || !strings.Contains(err.Error(), `--workload "nosuch": tpcc or http`) {
		t.Errorf("tune --workload nosuch: %v", err)
	}
	if !strings.Contains(errOut, "use stacktune search --workload nosuch") || strings.Contains(out, "deprecated") {
		t.Errorf("the deprecation is not said on stderr alone:\nstdout %q\nstderr %q", out, errOut)
	}
}
