package indexadv

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// fasterAfterFirst is a clock whose first timed run takes 10 ms and every
// later one 1 ms: on a copy with one query, the query "got ten times
// faster" once the candidates were added, whatever the plan. It stands
// for what timing on a shared host can say, so that the plan alone is
// seen to decide.
func fasterAfterFirst() func() time.Time {
	var now time.Time
	calls := 0
	return func() time.Time {
		calls++
		switch {
		case calls == 2:
			now = now.Add(10 * time.Millisecond)
		case calls%2 == 0:
			now = now.Add(time.Millisecond)
		}
		return now
	}
}

// planSchema is three small tables shaped like the two cases a user saw
// "proven" on an unchanged plan, and one that a new index serves:
//
//   - entries: 14 rows per user, all public, KEY user_id (user_id,
//     created_at): the public entries of a user are read through that
//     index already.
//   - relations: 62 rows, no index: whatever indexes it is given, a full
//     scan of 62 rows stays the cheapest plan for an OR of one and another.
//   - comments: 6000 rows, no index on entry_id: a full scan becomes a ref.
func planSchema(ctx context.Context, db *sql.DB) error {
	stmts := []string{
		"CREATE DATABASE plans",
		"CREATE TABLE plans.entries (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, private TINYINT NOT NULL, title VARCHAR(255) NOT NULL, body TEXT NOT NULL, created_at DATETIME NOT NULL, KEY user_id (user_id, created_at)) ENGINE=InnoDB",
		"CREATE TABLE plans.relations (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, one INT NOT NULL, another INT NOT NULL, created_at DATETIME NOT NULL) ENGINE=InnoDB",
		"CREATE TABLE plans.comments (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, entry_id INT NOT NULL, user_id INT NOT NULL, comment TEXT NOT NULL, created_at DATETIME NOT NULL) ENGINE=InnoDB",
	}
	var rows []string
	for u := 1; u <= 200; u++ {
		for i := 0; i < 14; i++ {
			rows = append(rows, fmt.Sprintf("(%d, %d, 'title %d', 'body', '2026-01-01' + INTERVAL %d MINUTE)", u, 0, i, u*14+i))
		}
	}
	stmts = append(stmts, "INSERT INTO plans.entries (user_id, private, title, body, created_at) VALUES "+strings.Join(rows, ","))
	rows = rows[:0]
	for i := 0; i < 62; i++ {
		rows = append(rows, fmt.Sprintf("(%d, %d, '2026-01-01' + INTERVAL %d MINUTE)", i%8+1, (i*5)%8+1, i))
	}
	stmts = append(stmts, "INSERT INTO plans.relations (one, another, created_at) VALUES "+strings.Join(rows, ","))
	rows = rows[:0]
	for i := 0; i < 6000; i++ {
		rows = append(rows, fmt.Sprintf("(%d, %d, 'a comment', '2026-01-01' + INTERVAL %d MINUTE)", i%1500+1, i%97+1, i))
	}
	stmts = append(stmts, "INSERT INTO plans.comments (entry_id, user_id, comment, created_at) VALUES "+strings.Join(rows, ","),
		"ANALYZE TABLE plans.entries, plans.relations, plans.comments")
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%.60s: %w", s, err)
		}
	}
	return nil
}

// TestProvenByPlan: on a real MariaDB, with a clock that says every query
// got ten times faster once the candidates were added, an index is proven
// only where EXPLAIN chose it and the rows examined halved; the others are
// rejected with the plan and rows that say why.
func TestProvenByPlan(t *testing.T) {
	ctx := context.Background()
	prod := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	if err := planSchema(ctx, prod.DB()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		class digest.Class
		// proven and rejected are the candidates expected, as
		// "table(columns)", with the start of the reason.
		proven   []string
		rejected map[string]string
	}{
		{name: "entries: the existing index already serves the query, same plan",
			class:    digest.Class{ID: "PUBLIC", Sample: "SELECT id, user_id, private, title, body, created_at FROM entries WHERE user_id = 3 AND private = 0 ORDER BY created_at DESC LIMIT 5", SampleDB: "plans"},
			rejected: map[string]string{"plans.entries(user_id, private, created_at)": "the plan did not change: key user_id, rows 14 → 14"}},
		{name: "relations: (one, created_at) leaves the full scan of 62 rows",
			class: digest.Class{ID: "FRIENDS", Sample: "SELECT * FROM relations WHERE one = 7 OR another = 7 ORDER BY created_at DESC", SampleDB: "plans"},
			rejected: map[string]string{
				"plans.relations(one, created_at)":     "the plan did not change: key none (full scan), rows 62 → 62",
				"plans.relations(another, created_at)": "the plan did not change: key none (full scan), rows 62 → 62",
			}},
		{name: "comments: a full scan becomes a ref",
			class:  digest.Class{ID: "COUNT", Sample: "SELECT COUNT(*) FROM comments WHERE entry_id = 7", SampleDB: "plans"},
			proven: []string{"plans.comments(entry_id)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(ctx, Options{Classes: []digest.Class{tc.class}, Source: prod.DB(), Runs: 1, clock: fasterAfterFirst()})
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.MarshalIndent(struct{ Proposals, Rejected []Proposal }{res.Proposals, res.Rejected}, "", "  ")
			t.Logf("%s", js)
			got := map[string]Proposal{}
			for _, p := range res.Proposals {
				got[p.Table+"("+strings.Join(p.Columns, ", ")+")"] = p
			}
			rej := map[string]Proposal{}
			for _, p := range res.Rejected {
				rej[p.Table+"("+strings.Join(p.Columns, ", ")+")"] = p
			}
			if len(got) != len(tc.proven) || len(rej) != len(tc.rejected) {
				t.Errorf("%d proven, %d rejected; want %v and %v", len(got), len(rej), tc.proven, tc.rejected)
			}
			for _, want := range tc.proven {
				p, ok := got[want]
				if !ok {
					t.Errorf("%s not proven", want)
					continue
				}
				ev := p.Evidence.Plans[0]
				if !ev.Chosen || ev.RowsAfter*2 > ev.RowsBefore || !strings.Contains(ev.PlanBefore, "ALL") || !strings.Contains(ev.PlanAfter, "ref(ix_entry_id)") {
					t.Errorf("%s: evidence %+v, want a full scan become a ref through the index", want, ev)
				}
				words := strings.Join(p.Change.Evidence, "\n")
				for _, w := range []string{"plan before: comments: ALL", "plan after: comments: ref(ix_entry_id)", fmt.Sprintf("rows examined %d", ev.RowsBefore), fmt.Sprintf("rows examined %d", ev.RowsAfter)} {
					if !strings.Contains(words, w) {
						t.Errorf("%s: the change's evidence does not say %q:\n%s", want, w, words)
					}
				}
			}
			for want, why := range tc.rejected {
				p, ok := rej[want]
				if !ok {
					t.Errorf("%s not rejected", want)
					continue
				}
				if !strings.HasPrefix(p.Rejected, why) {
					t.Errorf("%s rejected for %q, want %q…", want, p.Rejected, why)
				}
				if len(p.Evidence.Plans) != 1 || p.Evidence.Plans[0].Chosen || p.Evidence.Plans[0].PlanBefore != p.Evidence.Plans[0].PlanAfter {
					t.Errorf("%s: evidence %+v, want the same plan before and after", want, p.Evidence.Plans)
				}
			}
		})
	}
}
