package indexadv

import (
	"reflect"
	"strings"
	"testing"
)

func names(cs []*Candidate) [][]string {
	var out [][]string
	for _, c := range cs {
		out = append(out, c.ColumnNames())
	}
	return out
}

func TestCandidates(t *testing.T) {
	card := func(_, _, col string) int64 {
		return map[string]int64{"status": 3, "user_id": 1000, "entry_id": 5000}[col]
	}
	cases := []struct {
		name, sql string
		want      [][]string
		covering  bool
	}{
		{"or branches", "SELECT * FROM relations WHERE one = 7 OR another = 7 ORDER BY created_at DESC", [][]string{{"one", "created_at"}, {"another", "created_at"}}, false},
		{"selective first then range", "SELECT * FROM orders WHERE status = 1 AND user_id = 5 AND created_at > '2026-01-01' ORDER BY created_at", [][]string{{"user_id", "status", "created_at"}}, false},
		{"group by", "SELECT entry_id, COUNT(*) FROM comments GROUP BY entry_id", [][]string{{"entry_id"}}, false},
		{"mixed order directions", "SELECT * FROM t WHERE a = 1 ORDER BY b DESC, c", [][]string{{"a", "b DESC", "c"}}, false},
		{"join inner table", "SELECT u.nick_name FROM users u JOIN comments c ON c.user_id = u.id WHERE u.id = 4", [][]string{{"id", "nick_name"}}, true},
		{"covering", "SELECT id, body FROM entries WHERE user_id = 3 ORDER BY created_at DESC", [][]string{{"user_id", "created_at", "id", "body"}}, true},
		{"order by an aggregate's alias (refapp footprints): no such column", "SELECT owner_id, DATE(created_at) AS date, MAX(created_at) AS updated FROM footprints WHERE user_id = 7 GROUP BY owner_id, DATE(created_at) ORDER BY updated DESC LIMIT 50",
			[][]string{{"user_id", "owner_id", "created_at"}}, true},
		{"order by a column's alias: the column", "SELECT created_at AS t, id FROM entries WHERE user_id = 3 ORDER BY t DESC", [][]string{{"user_id", "created_at", "id"}}, true},
		{"aliases swapped: no loop", "SELECT a AS b, b AS a FROM t WHERE c = 1 ORDER BY a", [][]string{{"c", "b", "a"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := Analyze(c.sql)
			if err != nil {
				t.Fatal(err)
			}
			got := Candidates("Q1", "app", q.Tables[0], card)
			if !reflect.DeepEqual(names(got), c.want) || got[0].Covering != c.covering {
				t.Errorf("got %v covering %v, want %v", names(got), got[0].Covering, c.want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	mk := func(id string, cols ...string) *Candidate {
		c := &Candidate{Schema: "app", Table: "t", Queries: []string{id}, Reasons: []string{"r"}}
		for _, col := range cols {
			c.Columns = append(c.Columns, IndexCol{Name: col})
		}
		return c
	}
	existing := map[string][]Index{"app.t": {{Name: "PRIMARY", Columns: []IndexCol{{Name: "id"}}, Unique: true}, {Name: "k", Columns: []IndexCol{{Name: "x"}, {Name: "y"}}}}}
	kept, covered := Merge([]*Candidate{mk("A", "a"), mk("B", "a", "b"), mk("C", "a", "b"), mk("D", "x"), mk("E", "c")}, existing)
	if !reflect.DeepEqual(names(kept), [][]string{{"a", "b"}, {"c"}}) || !reflect.DeepEqual(kept[0].Queries, []string{"B", "C", "A"}) {
		t.Errorf("kept %v queries %v", names(kept), kept[0].Queries)
	}
	if len(covered) != 1 {
		t.Errorf("covered %v", covered)
	}
	if got := kept[0].DDL(); got != "ALTER TABLE `app`.`t` ADD INDEX `ix_a_b` (`a`, `b`), ALGORITHM=INPLACE, LOCK=NONE;" {
		t.Errorf("ddl %s", got)
	}
}

func TestExistingFindings(t *testing.T) {
	ixs := []Index{
		{Name: "PRIMARY", Columns: []IndexCol{{Name: "id"}}, Unique: true},
		{Name: "a", Columns: []IndexCol{{Name: "user_id"}}},
		{Name: "b", Columns: []IndexCol{{Name: "user_id"}, {Name: "created_at"}}},
		{Name: "c", Columns: []IndexCol{{Name: "user_id"}, {Name: "created_at"}}},
		{Name: "u", Columns: []IndexCol{{Name: "email"}}, Unique: true},
		{Name: "e", Columns: []IndexCol{{Name: "email"}, {Name: "id"}}},
	}
	got := ExistingFindings("app", "t", ixs)
	var short []string
	for _, f := range got {
		short = append(short, f.Index+" "+f.Kind+" "+f.Of)
	}
	want := []string{"a redundant b", "c duplicate b"}
	if !reflect.DeepEqual(short, want) {
		t.Errorf("got %v, want %v", short, want)
	}
}

func TestFitTypes(t *testing.T) {
	types := map[string]string{"user_id": "int", "created_at": "datetime", "id": "int", "body": "text", "title": "varchar"}
	typeOf := func(_, _, col string) string { return types[col] }
	mk := func(sql string) *Candidate {
		q, err := Analyze(sql)
		if err != nil {
			t.Fatal(err)
		}
		return Candidates("Q", "app", q.Tables[0], func(_, _, _ string) int64 { return 0 })[0]
	}
	c := mk("SELECT id, body FROM entries WHERE user_id = 3 ORDER BY created_at DESC")
	if !FitTypes(c, typeOf) || c.Covering || !reflect.DeepEqual(c.ColumnNames(), []string{"user_id", "created_at"}) {
		t.Errorf("text column in a covering variant: %v covering %v", c.ColumnNames(), c.Covering)
	}
	c = mk("SELECT id, title FROM entries WHERE user_id = 3")
	if !FitTypes(c, typeOf) || !c.Covering || !reflect.DeepEqual(c.ColumnNames(), []string{"user_id", "id", "title"}) {
		t.Errorf("narrow covering variant: %v covering %v", c.ColumnNames(), c.Covering)
	}
	c = mk("SELECT * FROM entries WHERE body = 'x'")
	if !FitTypes(c, typeOf) || c.Columns[0].SubPart != prefixLength || !strings.Contains(c.DDL(), "`body`(255)") {
		t.Errorf("text key column: %s", c.DDL())
	}
	if c := mk("SELECT * FROM entries WHERE nosuch = 1"); FitTypes(c, typeOf) {
		t.Errorf("unknown column kept: %v", c.ColumnNames())
	}
}

func TestCandidatesJoinKey(t *testing.T) {
	q, err := Analyze("SELECT u.nick_name, c.comment FROM users u JOIN comments c ON c.user_id = u.id WHERE u.id = 4")
	if err != nil {
		t.Fatal(err)
	}
	got := Candidates("Q", "app", q.Tables[1], func(_, _, _ string) int64 { return 0 })
	if !reflect.DeepEqual(names(got), [][]string{{"user_id", "comment"}}) {
		t.Errorf("inner table of a join: %v", names(got))
	}
}

func TestUniquify(t *testing.T) {
	mk := func(cols ...string) *Candidate {
		c := &Candidate{Schema: "app", Table: "t"}
		for _, col := range cols {
			c.Columns = append(c.Columns, IndexCol{Name: col})
		}
		return c
	}
	a, b := mk("a"), mk("a", "b")
	Uniquify([]*Candidate{a, b}, map[string][]Index{"app.t": {{Name: "IX_A", Columns: []IndexCol{{Name: "z"}}}}})
	if a.Name() != "ix_a_2" || b.Name() != "ix_a_b" || !strings.Contains(a.DDL(), "`ix_a_2`") {
		t.Errorf("names %s %s", a.Name(), b.Name())
	}
}
