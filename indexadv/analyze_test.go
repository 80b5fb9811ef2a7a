package indexadv

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestAnalyze(t *testing.T) {
	cases := []struct {
		name, sql   string
		kind        string
		eq, rng     []string
		or          []Branch
		order       []OrderCol
		group       []string
		explain     string
		issue       string
		star        bool
		wantErr     error
		errContains string
	}{
		{name: "workload friends", sql: "SELECT * FROM relations WHERE one = 7 OR another = 7 ORDER BY created_at DESC",
			kind: "select", or: []Branch{{Eq: []string{"one"}}, {Eq: []string{"another"}}},
			order: []OrderCol{{"created_at", true}}, issue: "OR across different columns", star: true},
		{name: "eq range order", sql: "SELECT id, body FROM entries e WHERE e.user_id = 3 AND created_at > '2026-01-01' ORDER BY created_at",
			kind: "select", eq: []string{"user_id"}, rng: []string{"created_at"}, order: []OrderCol{{"created_at", false}}},
		{name: "in and group", sql: "SELECT entry_id, COUNT(*) FROM comments WHERE entry_id IN (1,2,3) GROUP BY entry_id",
			kind: "select", eq: []string{"entry_id"}, group: []string{"entry_id"}},
		{name: "or same column", sql: "SELECT * FROM t WHERE a = 1 OR a = 2", kind: "select", eq: []string{"a"}, star: true},
		{name: "function", sql: "SELECT * FROM t WHERE DATE(created_at) = '2026-01-01'", kind: "select", issue: "function or cast on column t.created_at", star: true},
		{name: "wildcard", sql: "SELECT id FROM users WHERE email LIKE '%@example.com'", kind: "select", issue: "leading wildcard"},
		{name: "prefix like", sql: "SELECT id FROM users WHERE email LIKE 'bob%'", kind: "select", rng: []string{"email"}},
		{name: "update", sql: "UPDATE users SET nick_name = 'x' WHERE account_name = 'bob' LIMIT 1", kind: "update",
			eq: []string{"account_name"}, explain: "SELECT * FROM `users` WHERE `account_name`=_UTF8MB4'bob' LIMIT 1"},
		{name: "delete", sql: "DELETE FROM comments WHERE entry_id = 5 AND created_at < '2026-01-01'", kind: "delete",
			eq: []string{"entry_id"}, rng: []string{"created_at"}},
		{name: "placeholder", sql: "SELECT * FROM t WHERE a = ?", wantErr: ErrPlaceholder},
		{name: "select into outfile", sql: "SELECT * FROM t WHERE a = 1 INTO OUTFILE '/tmp/x'", wantErr: ErrUnsupported},
		{name: "insert", sql: "INSERT INTO t VALUES (1)", wantErr: ErrUnsupported},
		{name: "garbage", sql: "SELEC * FORM t", errContains: "parse"},
		{name: "two statements", sql: "SELECT 1 FROM t; SELECT 2 FROM t", errContains: "2 statements"},
		{name: "no table", sql: "SELECT 1", errContains: "reads no table"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := Analyze(c.sql)
			if c.wantErr != nil || c.errContains != "" {
				if err == nil || (c.wantErr != nil && !errors.Is(err, c.wantErr)) || !strings.Contains(err.Error(), c.errContains) {
					t.Fatalf("err = %v, want %v %q", err, c.wantErr, c.errContains)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tu := q.Tables[0]
			if q.Kind != c.kind || !reflect.DeepEqual(tu.Eq, c.eq) || !reflect.DeepEqual(tu.Range, c.rng) ||
				!reflect.DeepEqual(tu.Or, c.or) || !reflect.DeepEqual(tu.Order, c.order) || !reflect.DeepEqual(tu.Group, c.group) || tu.Star != c.star {
				t.Errorf("got kind %s eq %v range %v or %v order %v group %v star %v", q.Kind, tu.Eq, tu.Range, tu.Or, tu.Order, tu.Group, tu.Star)
			}
			if c.explain != "" && q.Explain != c.explain {
				t.Errorf("explain = %q, want %q", q.Explain, c.explain)
			}
			if c.issue != "" && !strings.Contains(strings.Join(q.Issues, "\n"), c.issue) {
				t.Errorf("issues %q lack %q", q.Issues, c.issue)
			}
		})
	}
}

func TestAnalyzeJoin(t *testing.T) {
	q, err := Analyze("SELECT c.comment, u.nick_name FROM comments c JOIN users u ON u.id = c.user_id WHERE c.entry_id = 9 ORDER BY c.created_at DESC")
	if err != nil {
		t.Fatal(err)
	}
	c, u := q.Tables[0], q.Tables[1]
	if !reflect.DeepEqual(c.Eq, []string{"entry_id"}) || u.Eq != nil || !reflect.DeepEqual(c.JoinEq, []string{"user_id"}) || !reflect.DeepEqual(u.JoinEq, []string{"id"}) {
		t.Errorf("eq: comments %v %v users %v %v", c.Eq, c.JoinEq, u.Eq, u.JoinEq)
	}
	if !reflect.DeepEqual(c.Order, []OrderCol{{"created_at", true}}) {
		t.Errorf("order %v", c.Order)
	}
	if !reflect.DeepEqual(c.Columns, []string{"user_id", "comment", "entry_id", "created_at"}) {
		t.Errorf("columns %v", c.Columns)
	}
}

func TestAnalyzeWithResolver(t *testing.T) {
	cols := map[string]bool{"comments.entry_id": true, "comments.created_at": true, "users.nick_name": true}
	q, err := AnalyzeWith("SELECT nick_name FROM comments c JOIN users u ON u.id = c.user_id WHERE entry_id = 9 ORDER BY created_at", func(_, table, col string) bool {
		return cols[table+"."+col]
	})
	if err != nil {
		t.Fatal(err)
	}
	c := q.Tables[0]
	if !reflect.DeepEqual(c.Eq, []string{"entry_id"}) || !reflect.DeepEqual(c.Order, []OrderCol{{"created_at", false}}) {
		t.Errorf("comments: eq %v order %v", c.Eq, c.Order)
	}
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM relations WHERE one = 7 OR another = 7 ORDER BY created_at DESC",
		"UPDATE users SET a = 1 WHERE b LIKE '%x' AND DATE(c) = 1",
		"DELETE t FROM t JOIN u ON t.a = u.b WHERE (t.x = 1 OR u.y > 2)",
		"SELECT a FROM (SELECT * FROM t WHERE c IN (SELECT d FROM e)) x GROUP BY a HAVING COUNT(*) > 1",
		"SELECT", "", ";;", "SELECT * FROM t WHERE a = ? OR b BETWEEN 1 AND 2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := Analyze(s)
		if err == nil && (q == nil || len(q.Tables) == 0 || q.Explain == "") {
			t.Fatalf("no error and no result for %q", s)
		}
	})
}
