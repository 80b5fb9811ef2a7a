package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/refstack/workload"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

func TestIndexesCLIBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no dsn", []string{"indexes"}, "is required: indexes EXPLAINs"},
		{"bad format", []string{"indexes", "--dsn", "x@tcp(127.0.0.1:1)/", "--format", "xml"}, "unknown format"},
		{"bad limit", []string{"indexes", "--dsn", "x@tcp(127.0.0.1:1)/", "--limit", "0"}, "--limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := run(t, "", c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestIndexesCLIOnWorkload runs the workload with the slow log on, then
// `stacktune indexes --slowlog`: the friends query's OR gets one index per
// branch, proven on the copy, and nothing is applied without --apply.
func TestIndexesCLIOnWorkload(t *testing.T) {
	ctx := context.Background()
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"slow_query_log": "ON", "long_query_time": "0"}})
	if err := workload.Setup(ctx, m.DB(), "app", workload.DefaultScale); err != nil {
		t.Fatal(err)
	}
	// The window is the workload's run, not the setup's bulk load: its
	// 500-row INSERTs would be the writes each index is weighed against
	// (and outweigh the 2-second run's reads; TestWriteCostTPCC shows
	// that verdict).
	if err := os.Truncate(m.SlowLogPath(), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := m.DB().Exec("FLUSH SLOW LOGS"); err != nil {
		t.Fatal(err)
	}
	if _, err := workload.Run(ctx, m.DB(), workload.Options{Database: "app", Duration: 2 * time.Second, MaxPages: 200, Connections: 2}); err != nil {
		t.Fatal(err)
	}
	dsn := m.DSN("app")
	out, stderr, err := run(t, "", "indexes", "--dsn", dsn, "--slowlog", m.SlowLogPath(), "--format", "json", "--runs", "3")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var res struct {
		Proposals []struct {
			Action     string          `json:"action"`
			Index      string          `json:"index"`
			Reason     string          `json:"reason"`
			Benefit    json.RawMessage `json:"benefit"`
			WriteCost  json.RawMessage `json:"write_cost"`
			Evidence   json.RawMessage `json:"evidence"`
			Table      string          `json:"table"`
			Columns    []string        `json:"columns"`
			DDL        string          `json:"ddl"`
			Queries    []string        `json:"queries"`
			RowsBefore int64           `json:"rows_before"`
			RowsAfter  int64           `json:"rows_after"`
			TimeBefore float64         `json:"time_before_ms"`
			TimeAfter  float64         `json:"time_after_ms"`
		} `json:"proposals"`
		Skipped []struct {
			ID, Reason string
		} `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	found := map[string]bool{}
	adds := 0
	for _, p := range res.Proposals {
		if p.Index == "" || len(p.Benefit) == 0 || string(p.Benefit) == "null" || len(p.Evidence) == 0 {
			t.Errorf("a proposal without index, benefit or evidence: %+v", p)
		}
		if p.Action != "add" {
			if p.Action != "drop" || p.Reason == "query" {
				t.Errorf("proposal %s %s: %s", p.Action, p.Index, p.Reason)
			}
			continue
		}
		adds++
		if p.Reason != "query" || string(p.WriteCost) == "null" {
			t.Errorf("add %s: reason %q, write cost %s", p.Index, p.Reason, p.WriteCost)
		}
		key := p.Table + "(" + strings.Join(p.Columns, ", ") + ")"
		found[key] = true
		if p.RowsAfter*10 > p.RowsBefore || len(p.Queries) == 0 || !strings.Contains(p.DDL, "ALGORITHM=INPLACE, LOCK=NONE") {
			t.Errorf("%s: %+v", key, p)
		}
	}
	for _, want := range []string{"app.relations(one, created_at)", "app.relations(another, created_at)"} {
		if !found[want] {
			t.Errorf("no proposal %s in\n%s", want, out)
		}
	}
	// The bulk INSERTs of the setup are in the log: skipped with a reason.
	for _, s := range res.Skipped {
		if s.Reason == "" {
			t.Errorf("skip without a reason: %+v", s)
		}
	}
	var n int
	if err := m.DB().QueryRow("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'relations'").Scan(&n); err != nil || n != 1 {
		t.Errorf("the user's server was changed without --apply: %d index columns on relations (%v)", n, err)
	}

	// The documented pipeline: --format sql (and --format json) are what
	// apply --ddl reads; each apply is a transaction rollback undoes.
	newIndexes := func() int {
		t.Helper()
		var n int
		if err := m.DB().QueryRow("SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'app' AND INDEX_NAME LIKE 'ix\\_%'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	sqlOut, _, err := run(t, "", "indexes", "--dsn", dsn, "--slowlog", m.SlowLogPath(), "--format", "sql", "--runs", "3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-- Index changes from stacktune indexes.", "--   proven on a copy: rows examined", "ALTER TABLE `app`.`relations` ADD INDEX", "ADD INDEX `ix_one_created_at` (`one`, `created_at`)"} {
		if !strings.Contains(sqlOut, want) {
			t.Errorf("--format sql lacks %q:\n%s", want, sqlOut)
		}
	}
	// Each output is its own proof on the copy: on a busy host one may
	// keep an index the other found no faster, so each file is checked
	// against the indexes it holds.
	sqlAdds := 0
	for _, l := range strings.Split(sqlOut, "\n") {
		if !strings.HasPrefix(l, "--") {
			sqlAdds += strings.Count(l, "ADD INDEX `")
		}
	}
	state := t.TempDir()
	for _, f := range []struct {
		name, data string
		adds       int
	}{{"ix.sql", sqlOut, sqlAdds}, {"ix.json", out, adds}} {
		path := filepath.Join(t.TempDir(), f.name)
		if err := os.WriteFile(path, []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
		applied, errOut, err := run(t, "", "apply", "--dsn", dsn, "--state", state, "--ddl", path)
		if err != nil {
			t.Fatalf("apply --ddl %s: %v\n%s", f.name, err, errOut)
		}
		if got := newIndexes(); got != f.adds || !strings.Contains(applied, "app.relations.ix_one_created_at: absent → (`one`, `created_at`)") {
			t.Errorf("apply --ddl %s: %d indexes added, want %d:\n%s", f.name, got, f.adds, applied)
		}
		if _, errOut, err := run(t, "", "rollback", "--dsn", dsn, "--state", state); err != nil {
			t.Fatalf("rollback: %v\n%s", err, errOut)
		}
		if got := newIndexes(); got != 0 {
			t.Errorf("after the rollback of %s: %d indexes left", f.name, got)
		}
	}
	// The text report is no input for apply, and says which formats are.
	textPath := filepath.Join(t.TempDir(), "ix.txt")
	textOut, _, _ := run(t, "", "indexes", "--dsn", dsn, "--slowlog", m.SlowLogPath(), "--runs", "1")
	_ = os.WriteFile(textPath, []byte(textOut), 0o644)
	if _, _, err := run(t, "", "apply", "--dsn", dsn, "--state", state, "--ddl", textPath); err == nil || !strings.Contains(err.Error(), "--format sql or --format json") {
		t.Errorf("apply --ddl of the text report: %v", err)
	}

	// Text and Markdown render the same advice; --apply then adds them.
	if testing.Verbose() {
		t.Logf("json:\n%s", out)
	}
	text, _, err := run(t, "", "indexes", "--dsn", dsn, "--slowlog", m.SlowLogPath(), "--runs", "1", "--apply", "--state", state)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		t.Logf("text:\n%s", text)
	}
	for _, want := range []string{"Proposals:", "ADD INDEX `ix_one_created_at`", "full table scan of relations", "Applied"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if err := m.DB().QueryRow("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'relations' AND INDEX_NAME LIKE 'ix_%'").Scan(&n); err != nil || n < 4 {
		t.Errorf("--apply: %d new index columns on relations (%v)", n, err)
	}
	md, _, err := run(t, "", "indexes", "--dsn", dsn, "--slowlog", m.SlowLogPath(), "--runs", "1", "--format", "markdown")
	if err != nil || !strings.Contains(md, "# Index advice") {
		t.Errorf("markdown: %v\n%s", err, md)
	}
}

// TestIndexesCLIPerformanceSchema takes the classes from
// performance_schema (MariaDB's digests have no sample: they come from the
// statement history) while the workload runs.
func TestIndexesCLIPerformanceSchema(t *testing.T) {
	ctx := context.Background()
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{
		"performance_schema": "ON", "performance-schema-consumer-events-statements-history-long": "ON", "performance-schema-consumer-events-statements-current": "ON",
	}})
	if err := workload.Setup(ctx, m.DB(), "app", workload.DefaultScale); err != nil {
		t.Fatal(err)
	}
	// MariaDB's digests miss server-side prepared statements, so the
	// load is sent as plain text, inside the sampling interval.
	done := make(chan error, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		conn, err := m.DB().Conn(ctx)
		if err != nil {
			done <- err
			return
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "USE app"); err != nil {
			done <- err
			return
		}
		for i := 1; i <= 60; i++ {
			rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT * FROM relations WHERE one = %d OR another = %d ORDER BY created_at DESC", i, i))
			if err != nil {
				done <- err
				return
			}
			rows.Close()
		}
		done <- nil
	}()
	out, stderr, err := run(t, "", "indexes", "--dsn", m.DSN("app"), "--interval", "2s", "--format", "json", "--runs", "1")
	if werr := <-done; werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if testing.Verbose() {
		t.Logf("%s", out)
	}
	var res struct {
		Proposals []struct {
			Table   string   `json:"table"`
			Columns []string `json:"columns"`
		} `json:"proposals"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, p := range res.Proposals {
		found[p.Table+"("+strings.Join(p.Columns, ", ")+")"] = true
	}
	for _, want := range []string{"app.relations(one, created_at)", "app.relations(another, created_at)"} {
		if !found[want] {
			t.Errorf("no proposal %s in\n%s", want, out)
		}
	}
}

func TestIndexesRender(t *testing.T) {
	res := &indexadv.Result{
		Proposals: []indexadv.Proposal{{Action: indexadv.ActionAdd, Index: "ix_a_b", Reason: indexadv.ReasonQuery, Table: "app.t", Columns: []string{"a", "b DESC"}, DDL: "ALTER TABLE `app`.`t` ADD INDEX `ix_a_b` (`a`, `b` DESC), ALGORITHM=INPLACE, LOCK=NONE;",
			Queries: []string{"Q1"}, RowsBefore: 10000, RowsAfter: 3, TimeBeforeMS: 12.5, TimeAfterMS: 0.2, IndexBytes: 16384,
			Reasons: []string{"equality columns"}, Evidence: indexadv.ProposalEvidence{Plans: []indexadv.Evidence{{Query: "Q1", PlanBefore: "t: ALL, 10000 rows", PlanAfter: "t: ref(ix_a_b), 3 rows"}}},
			WriteRows: 1000, WriteBeforeMS: -1, WriteAfterMS: -1}},
		Skipped:  []indexadv.Skip{{ID: "Q2", Reason: "no sample query"}},
		Rejected: []indexadv.Proposal{{Table: "app.t", Columns: []string{"c"}, Rejected: "did not help"}},
		Existing: []indexadv.Finding{{Table: "app.t", Index: "k", Kind: "redundant", Detail: "k(a) is a left prefix of k2(a, b)", DDL: "ALTER TABLE `app`.`t` DROP INDEX `k`, ALGORITHM=INPLACE, LOCK=NONE;"}},
		Queries:  []indexadv.QueryReport{{ID: "Q1", Fingerprint: "select * from t where a = ?", Count: 9, Plan: "t: ALL, 10000 rows", Problems: []string{"full table scan of t (10000 rows)"}}},
		Covered:  []string{"app.t(x) for Q3: already served by index PRIMARY"},
		Copies:   []indexadv.Copy{{Table: "app.t", Rows: 10000, Note: "all 10000 rows"}},
		Server:   "10.11",
	}
	for format, wants := range map[string][]string{
		"text":     {"Proposals: 1", "add app.t ix_a_b (a, b DESC)  for Q1", "rows examined 10,000 → 3", "write cost not measurable", "DDL, one statement per table:", "Tried and rejected:", "redundant", "Skipped:\n  Q2: no sample query", "Nothing was applied"},
		"markdown": {"# Index advice", "| add | app.t | ix\\_a\\_b | a, b DESC | query |", "```sql", "## Skipped", "## Duplicate and redundant existing indexes"},
		"json":     {`"proposals": [`, `"action": "add"`, `"index": "ix_a_b"`, `"reason": "query"`, `"rows_before": 10000`, `"time_after_ms": 0.2`, `"skipped": [`, `"queries": [`},
	} {
		var b strings.Builder
		if err := report.Indexes(&b, res, format); err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s lacks %q:\n%s", format, w, b.String())
			}
		}
	}
	// An empty result still has the JSON arrays and a plain text report.
	var b strings.Builder
	if err := report.Indexes(&b, &indexadv.Result{Proposals: []indexadv.Proposal{}, Skipped: []indexadv.Skip{}}, "json"); err != nil || !strings.Contains(b.String(), `"proposals": []`) || !strings.Contains(b.String(), `"skipped": []`) {
		t.Errorf("empty json: %v %s", err, b.String())
	}
	b.Reset()
	if err := report.Indexes(&b, &indexadv.Result{}, "text"); err != nil || !strings.Contains(b.String(), "Nothing to apply.") {
		t.Errorf("empty text: %v %s", err, b.String())
	}
}
