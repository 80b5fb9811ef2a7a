package indexadv

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/refstack/workload"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestRunOnWorkload is the ISUCON5 qualifier write-up's case: the workload's relations table
// has no index on one/another, and the friends query ORs them.
func TestRunOnWorkload(t *testing.T) {
	ctx := context.Background()
	prod := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	if err := workload.Setup(ctx, prod.DB(), "app", workload.DefaultScale); err != nil {
		t.Fatal(err)
	}
	// A duplicate index, to be reported.
	if _, err := prod.DB().Exec("ALTER TABLE app.entries ADD INDEX user_only (user_id)"); err != nil {
		t.Fatal(err)
	}
	// The tabular EXPLAIN reader, on the same server.
	rows, err := prod.DB().Query("EXPLAIN SELECT * FROM app.relations WHERE one = 7 ORDER BY created_at")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := scanTabular(rows)
	rows.Close()
	if err != nil || tab.Format != "tabular" || len(tab.Tables) != 1 || !tab.Tables[0].FullScan() || !tab.Filesort || tab.Rows < 10000 {
		t.Errorf("tabular plan %+v %v", tab, err)
	}

	classes := []digest.Class{
		{ID: "FRIENDS", Fingerprint: "select * from relations where one = ? or another = ? order by created_at desc",
			Sample: "SELECT * FROM relations WHERE one = 7 OR another = 7 ORDER BY created_at DESC", SampleDB: "app",
			Count: 500, RowsExaminedTotal: 500 * 20000, RowsSentTotal: 500 * 40},
		{ID: "USER", Fingerprint: "select id, account_name, nick_name from users where id = ?",
			Sample: "SELECT id, account_name, nick_name FROM users WHERE id = 5", Databases: map[string]int64{"app": 5000},
			Count: 5000, RowsExaminedTotal: 5000, RowsSentTotal: 5000},
		{ID: "COUNT", Fingerprint: "select count(*) from comments where entry_id in(?+)",
			Sample: "SELECT COUNT(*) FROM comments WHERE entry_id IN (1,2,3,4,5)", SampleDB: "app", Count: 500},
		{ID: "TOUCH", Fingerprint: "update users set nick_name = ? where id = ?",
			Sample: "UPDATE users SET nick_name = 'x' WHERE id = 3", SampleDB: "app", Count: 100},
		{ID: "ENTRIES", Fingerprint: "select id, body, created_at from entries where user_id = ? order by created_at desc limit ?",
			Sample: "SELECT id, body, created_at FROM entries WHERE user_id = 3 ORDER BY created_at DESC LIMIT 5", SampleDB: "app", Count: 500},
		{ID: "DEL", Fingerprint: "delete from comments where entry_id = ?",
			Sample: "DELETE FROM comments WHERE entry_id = 7", SampleDB: "app", Count: 50},
		{ID: "JOIN", Fingerprint: "select c.comment, nick_name from comments c join users u on u.id = c.user_id where entry_id = ?",
			Sample: "SELECT c.comment, nick_name FROM comments c JOIN users u ON u.id = c.user_id WHERE entry_id = 8", SampleDB: "app", Count: 50},
		{ID: "FUNC", Fingerprint: "select id from entries where abs(user_id) = ?",
			Sample: "SELECT id FROM entries WHERE ABS(user_id) = 3", SampleDB: "app", Count: 5},
		{ID: "BROKEN", Fingerprint: "selec garbage", Sample: "SELEC garbage FORM x", SampleDB: "app"},
		{ID: "GONE", Fingerprint: "select * from gone where a = ?", Sample: "SELECT * FROM gone WHERE a = 1", SampleDB: "app"},
		{ID: "NOSAMPLE", Fingerprint: "select * from users where email = ?"},
	}
	res, err := Run(ctx, Options{Classes: classes, Source: prod.DB(), Runs: 3})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.MarshalIndent(res, "", "  ")
	t.Logf("%s", js)

	got := map[string]Proposal{}
	for _, p := range res.Proposals {
		got[string(p.Action)+" "+p.Table+"("+strings.Join(p.Columns, ", ")+")"] = p
	}
	for _, want := range []string{"app.relations(one, created_at)", "app.relations(another, created_at)", "app.comments(entry_id)"} {
		p, ok := got["add "+want]
		if !ok {
			t.Errorf("no proposal %s", want)
			continue
		}
		if p.RowsAfter*10 > p.RowsBefore {
			t.Errorf("%s: rows %d → %d, want far fewer", want, p.RowsBefore, p.RowsAfter)
		}
		if p.IndexBytes <= 0 || !strings.HasSuffix(p.DDL, "ALGORITHM=INPLACE, LOCK=NONE;") {
			t.Errorf("%s: size %d ddl %s", want, p.IndexBytes, p.DDL)
		}
	}
	if p := got["add app.relations(one, created_at)"]; len(p.Evidence.Plans) == 0 || !strings.Contains(p.Evidence.Plans[0].PlanAfter, "index_merge") {
		t.Errorf("friends plan after: %+v", p.Evidence.Plans)
	}
	if q := got["add app.comments(entry_id)"].Queries; !reflect.DeepEqual(q, []string{"COUNT", "DEL", "JOIN"}) {
		t.Errorf("comments(entry_id) serves %v, want COUNT, DEL and JOIN", q)
	}
	if len(res.DDL) != 2 || res.DDL[1].DDL != "ALTER TABLE `app`.`relations` ADD INDEX `ix_another_created_at` (`another`, `created_at`), ADD INDEX `ix_one_created_at` (`one`, `created_at`), ALGORITHM=INPLACE, LOCK=NONE;" {
		t.Errorf("per-table DDL %+v", res.DDL)
	}
	// Three adds, and the duplicate index of the setup as a drop: a
	// redundant prefix of entries' own (user_id, created_at).
	if len(res.Proposals) != 4 {
		t.Errorf("%d proposals, want 3 adds and 1 drop", len(res.Proposals))
	}
	if p := got["drop app.entries(user_id)"]; p.Index != "user_only" || p.Reason != ReasonRedundant || p.Evidence.Of != "user_id" || p.Change.To != "(`user_id`) ignored" {
		t.Errorf("the drop of user_only: %+v", p)
	}
	skipped := map[string]string{}
	for _, s := range res.Skipped {
		skipped[s.ID] = s.Reason
	}
	for id, want := range map[string]string{"BROKEN": "parser", "GONE": "no longer exists", "NOSAMPLE": "no sample"} {
		if !strings.Contains(skipped[id], want) {
			t.Errorf("skip %s: %q, want %q", id, skipped[id], want)
		}
	}
	problems := map[string]string{}
	for _, q := range res.Queries {
		problems[q.ID] = strings.Join(q.Problems, "; ")
	}
	for id, want := range map[string]string{"FRIENDS": "full table scan", "USER": "N+1", "COUNT": "full table scan", "FUNC": "user_id is indexed (user_id) but compared through a function"} {
		if !strings.Contains(problems[id], want) {
			t.Errorf("problems of %s: %q, want %q", id, problems[id], want)
		}
	}
	if !strings.Contains(problems["FRIENDS"], "OR across different columns") || !strings.Contains(problems["FRIENDS"], "filesort") {
		t.Errorf("FRIENDS problems %q", problems["FRIENDS"])
	}
	// The N+1 pattern is typed data too, on its class only.
	for _, q := range res.Queries {
		switch {
		case q.ID == "USER" && (q.NPlusOne == nil || q.NPlusOne.Calls != 5000 || q.NPlusOne.RowsPerCall != 1 || !strings.Contains(q.NPlusOne.Problem, "called 5000 times")):
			t.Errorf("USER N+1 %+v, want 5000 calls of 1 row", q.NPlusOne)
		case q.ID != "USER" && q.NPlusOne != nil:
			t.Errorf("%s reported as N+1: %+v", q.ID, q.NPlusOne)
		}
	}
	if len(res.Existing) != 1 || res.Existing[0].Index != "user_only" {
		t.Errorf("existing findings %+v", res.Existing)
	}
	// Above the row limit a sample is copied, and the report says so. The
	// sample's queries take about a millisecond: one run each let a
	// busy host's hiccup call an index slower (CI once); the median of
	// three does not.
	small, err := Run(ctx, Options{Classes: classes[:1], Source: prod.DB(), Runs: 3, RowLimit: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Copies) != 1 || !small.Copies[0].Sample || small.Copies[0].Rows != 5000 || !strings.Contains(small.Copies[0].Note, "sample") {
		t.Errorf("copies with a 5000-row limit: %+v", small.Copies)
	}
	if len(small.Proposals) != 3 || small.Proposals[2].Action != ActionDrop {
		t.Errorf("proposals on a sample: %+v", small.Proposals)
	}
	// Nothing was applied to the user's server.
	ixs, err := Indexes(ctx, prod.DB(), "app", "relations")
	if err != nil || len(ixs) != 1 {
		t.Errorf("relations indexes on the user's server: %+v %v", ixs, err)
	}
}

// TestRunWithoutSandbox: when the throwaway server cannot start, the
// findings are still returned, with no unproven proposal.
func TestRunWithoutSandbox(t *testing.T) {
	ctx := context.Background()
	prod := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	if err := workload.Setup(ctx, prod.DB(), "app", workload.Scale{Users: 50, RelationsPerUser: 5, EntriesPerUser: 1, CommentsPerEntry: 1}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, Options{
		Classes: []digest.Class{{ID: "FRIENDS", Sample: "SELECT * FROM relations WHERE one = 7 OR another = 7", SampleDB: "app"}},
		Source:  prod.DB(), Sandbox: sandbox.MariaDBOptions{Binary: "/nonexistent/mariadbd"},
	})
	if err == nil || res == nil || len(res.Queries) != 1 || len(res.Proposals) != 0 {
		t.Fatalf("res %+v err %v", res, err)
	}
	if !strings.Contains(strings.Join(res.Queries[0].Problems, "; "), "full table scan") {
		t.Errorf("problems %v", res.Queries[0].Problems)
	}
}
