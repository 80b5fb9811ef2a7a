package indexadv

import (
	"strings"
	"testing"
)

// TestJudge: an index is proven by the plan: EXPLAIN chooses it and the
// rows examined halve, and it is not slower; time alone proves nothing,
// and fewer rows at a higher time is no proof.
func TestJudge(t *testing.T) {
	scan := []QueryPlanTable{{Table: "t", Access: "ALL", Rows: 1000}}
	withIx := []QueryPlanTable{{Table: "t", Access: "ref", Key: "ix_a", Rows: 10}}
	ix := indexRef{name: "ix_a"}
	for _, tc := range []struct {
		name          string
		before, after measurement
		ix            indexRef
		ok            bool
		why           string
	}{
		{"rows halved, time halved", measurement{rows: 1000, ms: 4, tables: scan}, measurement{rows: 1, ms: 2, tables: withIx}, ix, true, ""},
		{"rows halved, time the same", measurement{rows: 1000, ms: 4, tables: scan}, measurement{rows: 10, ms: 4.2, tables: withIx}, ix, true, ""},
		{"rows halved, too fast to time", measurement{rows: 1000, ms: 0.05, tables: scan}, measurement{rows: 1, ms: 0.2, tables: withIx}, ix, true, ""},
		{"rows halved, slower", measurement{rows: 1000, ms: 4, tables: scan}, measurement{rows: 400, ms: 6, tables: withIx}, ix, false, "halved the rows examined (1000 -> 400) but took longer on the copy (4.00 ms -> 6.00 ms)"},
		// Before plans were the proof, a 30% cut in time proved an index
		// whatever the rows: this case expected true.
		{"rows not halved, time cut by 30%", measurement{rows: 1000, ms: 10, tables: scan}, measurement{rows: 900, ms: 6, tables: withIx}, ix, false, "did not halve the rows examined: EXPLAIN chose ix_a, rows 1000 → 900"},
		{"time cut by 30% of a trifle", measurement{rows: 1000, ms: 0.1, tables: scan}, measurement{rows: 900, ms: 0.05, tables: withIx}, ix, false, "did not halve"},
		{"neither", measurement{rows: 1000, ms: 10, tables: scan}, measurement{rows: 800, ms: 9, tables: withIx}, ix, false, "did not halve"},
		{"worse on both", measurement{rows: 1000, ms: 10, tables: scan}, measurement{rows: 2000, ms: 20, tables: withIx}, ix, false, "did not halve"},

		// The plan did not change: faster is no proof (the user's entries
		// and relations).
		{"same plan through the existing index, faster", measurement{rows: 14, ms: 4, tables: []QueryPlanTable{{Table: "entries", Access: "ref", Key: "user_id", Rows: 14}}},
			measurement{rows: 14, ms: 1, tables: []QueryPlanTable{{Table: "entries", Access: "ref", Key: "user_id", Rows: 14}}}, indexRef{name: "ix_user_id_private_created_at"},
			false, "the plan did not change: key user_id, rows 14 → 14"},
		{"same full scan, faster", measurement{rows: 62, ms: 4, tables: []QueryPlanTable{{Table: "relations", Access: "ALL", Rows: 62}}},
			measurement{rows: 62, ms: 1, tables: []QueryPlanTable{{Table: "relations", Access: "ALL", Rows: 62}}}, indexRef{name: "ix_one_created_at"},
			false, "the plan did not change: key none (full scan), rows 62 → 62"},
		{"same plan, the statistics' rows moved", measurement{rows: 1000, ms: 4, tables: scan}, measurement{rows: 400, ms: 1, tables: []QueryPlanTable{{Table: "t", Access: "ALL", Rows: 400}}}, ix,
			false, "the plan did not change: key none (full scan), rows 1000 → 400"},
		{"another index chosen", measurement{rows: 1000, ms: 4, tables: scan}, measurement{rows: 10, ms: 1, tables: []QueryPlanTable{{Table: "t", Access: "ref", Key: "ix_b", Rows: 10}}}, ix,
			false, "EXPLAIN did not choose ix_a: key none (full scan) → ix_b, rows 1000 → 10"},
		{"chosen, the same rows, faster", measurement{rows: 14, ms: 4, tables: []QueryPlanTable{{Table: "t", Access: "ref", Key: "user_id", Rows: 14}}},
			measurement{rows: 14, ms: 1, tables: []QueryPlanTable{{Table: "t", Access: "ref", Key: "ix_a", Rows: 14}}}, ix,
			false, "did not halve the rows examined: EXPLAIN chose ix_a, rows 14 → 14"},
		{"an index_merge using it", measurement{rows: 20000, ms: 4, tables: []QueryPlanTable{{Table: "t", Access: "ALL", Rows: 20000}}},
			measurement{rows: 40, ms: 1, tables: []QueryPlanTable{{Table: "t", Access: "index_merge", Key: "ix_b,ix_a", Rows: 40}}}, ix, true, ""},
		{"through the index on its alias", measurement{rows: 1000, ms: 4, tables: []QueryPlanTable{{Table: "e", Access: "ALL", Rows: 1000}}},
			measurement{rows: 10, ms: 4, tables: []QueryPlanTable{{Table: "e", Access: "ref", Key: "IX_A", Rows: 10}}}, indexRef{name: "ix_a", tables: map[string]bool{"e": true}}, true, ""},
		{"an index of that name on another table of the join", measurement{rows: 1000, ms: 4, tables: []QueryPlanTable{{Table: "e", Access: "ALL", Rows: 1000}, {Table: "c", Access: "ALL", Rows: 1}}},
			measurement{rows: 20, ms: 1, tables: []QueryPlanTable{{Table: "e", Access: "ALL", Rows: 10}, {Table: "c", Access: "ref", Key: "ix_a", Rows: 1}}}, indexRef{name: "ix_a", tables: map[string]bool{"e": true}},
			false, "EXPLAIN did not choose ix_a: key e none (full scan), c none (full scan) → e none (full scan), c ix_a, rows 1000 → 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, ok := judge(tc.before, tc.after, tc.ix)
			if ok != tc.ok || !strings.HasPrefix(why, tc.why) || (tc.why == "") != (why == "") {
				t.Errorf("judge(%+v, %+v) = %q, %v; want %q…, %v", tc.before, tc.after, why, ok, tc.why, tc.ok)
			}
		})
	}
}
