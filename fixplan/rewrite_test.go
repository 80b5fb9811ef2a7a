package fixplan

import (
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stmts []string
		want  string // the one query, or the error's words
		keys  string
		err   bool
	}{
		{name: "per-row id", stmts: []string{"SELECT id, name FROM users WHERE id = 3", "SELECT id, name FROM users WHERE id = 7", "select id, name from users where id = 3"},
			want: "SELECT id, name, id FROM users WHERE id IN (3, 7)", keys: "id"},
		{name: "friendship check per row (isFriend)", stmts: []string{
			"SELECT COUNT(1) FROM relations WHERE (one = 12 AND another = 40) OR (one = 40 AND another = 12) /*route='GET%20%2F',traceparent='00-a-b-01'*/",
			"SELECT COUNT(1) FROM relations WHERE (one = 12 AND another = 41) OR (one = 41 AND another = 12) /*route='GET%20%2F',traceparent='00-a-b-01'*/"},
			want: "SELECT one, another FROM relations WHERE (one = 12 AND another IN (40, 41)) OR (one IN (40, 41) AND another = 12)", keys: "another, one"},
		{name: "a constant beside the key, strings", stmts: []string{"SELECT * FROM comments WHERE user_id = 5 AND `entry`.`id` = 'a''b'", "SELECT * FROM comments WHERE user_id = 5 AND `entry`.`id` = 'c\\'d' ORDER BY id LIMIT 3"},
			want: "SELECT *, user_id, `entry`.`id` FROM comments WHERE user_id = 5 AND `entry`.`id` IN ('a''b', 'c\\'d')", keys: "`entry`.`id`"},
		{name: "literal first", stmts: []string{"SELECT name FROM t WHERE 1 = id", "SELECT name FROM t WHERE 2 = id"}, want: "SELECT name, id FROM t WHERE id IN (1, 2)", keys: "id"},
		{name: "negative numbers", stmts: []string{"SELECT a FROM t WHERE b = -1", "SELECT a FROM t WHERE b = -2"}, want: "SELECT a, b FROM t WHERE b IN (-1, -2)", keys: "b"},
		{name: "one call", stmts: []string{"SELECT a FROM t WHERE b = 1"}, want: "fewer than two", err: true},
		{name: "the same values", stmts: []string{"SELECT a FROM t WHERE b = 1", "SELECT a FROM t WHERE b = 1"}, want: "same values", err: true},
		{name: "an update", stmts: []string{"UPDATE t SET a = 1 WHERE b = 1", "UPDATE t SET a = 1 WHERE b = 2"}, want: "not a SELECT", err: true},
		{name: "a range", stmts: []string{"SELECT a FROM t WHERE b > 1", "SELECT a FROM t WHERE b > 2"}, want: "comparison", err: true},
		{name: "an average per row (the bookshop's)", stmts: []string{"SELECT AVG(rating) FROM reviews WHERE book_id = 4", "SELECT AVG(rating) FROM reviews WHERE book_id = 9"},
			want: "SELECT AVG(rating), book_id FROM reviews WHERE book_id IN (4, 9) GROUP BY book_id", keys: "book_id"},
		{name: "a count per row over an AND", stmts: []string{"SELECT COUNT(*) AS n, MAX(id) m FROM c WHERE e = 1 AND u = 2", "SELECT COUNT(*) AS n, MAX(id) m FROM c WHERE e = 1 AND u = 3"},
			want: "SELECT COUNT(*) AS n, MAX(id) m, u FROM c WHERE e = 1 AND u IN (2, 3) GROUP BY u", keys: "u"},
		{name: "a function", stmts: []string{"SELECT LOWER(a) FROM t WHERE b = 1", "SELECT LOWER(a) FROM t WHERE b = 2"}, want: "functions", err: true},
		{name: "a sum over an OR", stmts: []string{"SELECT SUM(a) FROM t WHERE b = 1 OR c = 1", "SELECT SUM(a) FROM t WHERE b = 2 OR c = 2"}, want: "over an OR", err: true},
		{name: "a lock", stmts: []string{"SELECT a FROM t WHERE b = 1 FOR UPDATE", "SELECT a FROM t WHERE b = 2 FOR UPDATE"}, want: "FOR", err: true},
		{name: "other statements", stmts: []string{"SELECT a FROM t WHERE b = 1", "SELECT a FROM u WHERE b = 2"}, want: "not the same statement", err: true},
		{name: "a subquery", stmts: []string{"SELECT a FROM t WHERE b = (SELECT 1)", "SELECT a FROM t WHERE b = (SELECT 2)"}, want: "column = literal", err: true},
		{name: "unterminated", stmts: []string{"SELECT a FROM t WHERE b = 'x", "SELECT a FROM t WHERE b = 'y"}, want: "unterminated", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(tc.stmts)
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Query() != tc.want {
				t.Errorf("query\n got %s\nwant %s", p.Query(), tc.want)
			}
			if k := strings.Join(p.Keys(), ", "); k != tc.keys {
				t.Errorf("keys %q, want %q", k, tc.keys)
			}
		})
	}
}

// TestMatch: each call's rows are the one query's rows its WHERE
// selects (the friendship check: either direction of the pair).
func TestMatch(t *testing.T) {
	p, err := Build([]string{
		"SELECT COUNT(1) FROM relations WHERE (one = 12 AND another = 40) OR (one = 40 AND another = 12)",
		"SELECT COUNT(1) FROM relations WHERE (one = 12 AND another = 41) OR (one = 41 AND another = 12)"})
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name     string
		call     int
		one, ano string
		want     bool
	}{
		{"first call, forward", 0, "12", "40", true},
		{"first call, backward", 0, "40", "12", true},
		{"first call, the second's row", 0, "12", "41", false},
		{"second call", 1, "41", "12", true},
	} {
		if got := p.match(tc.call, []*string{s(tc.one), s(tc.ano)}); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
	if p.match(0, []*string{nil, s("40")}) {
		t.Error("NULL matched")
	}
}

func TestProveCommand(t *testing.T) {
	for _, tc := range []struct {
		name, scenario, url, want string
	}{
		{"scenario", "/srv/shop.yaml", "", "stacktune ab --a '" + PlaceholderA + "' --b '" + PlaceholderB + "' --scenario /srv/shop.yaml --connections 8 --duration 10s"},
		{"scenario with a base URL", "my shop.yaml", "http://127.0.0.1:8080/", "--scenario 'my shop.yaml' --base-url http://127.0.0.1:8080/ --connections 8"},
		{"a URL", "", "http://shop/?a=1&b=2", "--duration 10s 'http://shop/?a=1&b=2'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ProveCommand(tc.scenario, tc.url, 8, 10e9); !strings.Contains(got, tc.want) {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func FuzzBuild(f *testing.F) {
	for _, s := range []string{"SELECT COUNT(1) FROM relations WHERE (one = 12 AND another = 40) OR (one = 40 AND another = 12)",
		"SELECT * FROM t WHERE a = 'x''y' AND b = 3 ORDER BY c LIMIT 1", "select a from t where `b`.`c` = -1.5e3", "SELECT a FROM t WHERE ((b = 1))", "SELECT /* x */ a FROM t # c\nWHERE b = \"q\\\"\""} {
		f.Add(s, "2")
	}
	f.Fuzz(func(t *testing.T, q, v string) {
		p, err := Build([]string{q, strings.Replace(q, "1", v, 1)})
		if err != nil {
			return
		}
		if !strings.HasPrefix(p.Query(), "SELECT ") || len(p.Keys()) == 0 || p.Distinct() < 2 {
			t.Errorf("%q: query %q keys %v distinct %d", q, p.Query(), p.Keys(), p.Distinct())
		}
		// The one query lexes back, its parentheses balanced.
		toks, err := lex(p.Query())
		if err != nil {
			t.Fatalf("%q: the one query %q does not lex: %v", q, p.Query(), err)
		}
		depth := 0
		for _, tk := range toks {
			switch tk.text {
			case "(":
				depth++
			case ")":
				depth--
			}
			if depth < 0 {
				break
			}
		}
		if depth != 0 {
			t.Errorf("%q: the one query %q has unbalanced parentheses", q, p.Query())
		}
	})
}
