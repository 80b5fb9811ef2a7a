package fingerprint

import (
	"testing"
)

// mergeCases are groups of statements one application may write for one
// query: pt-query-digest puts each group's members in different classes
// (split), and the merged view must put them in one.
var mergeCases = []struct {
	name    string
	queries []string
	split   bool // pt-query-digest gives them different fingerprints
}{
	{"spaces around =", []string{"SELECT * FROM entries WHERE id = 5", "SELECT * FROM entries WHERE id=5", "select * from entries where id =5"}, true},
	{"sqlcommenter tag at the end", []string{
		"SELECT COUNT(1) FROM relations WHERE (one = 1 AND another = 2) OR (one = 2 AND another = 1)",
		"SELECT COUNT(1) FROM relations WHERE (one = 1 AND another = 2) OR (one = 2 AND another = 1) /*action='index',route='%2F',traceparent='00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'*/",
	}, true},
	{"marginalia tag at the end", []string{
		"SELECT AVG(rating) FROM reviews WHERE book_id = 7",
		"SELECT AVG(rating) FROM reviews WHERE book_id = 7 /*application:bookshop,controller:authors,action:show*/",
	}, true},
	{"tag at the start", []string{"/*route='/x'*/ SELECT a FROM t WHERE b = 1", "SELECT a FROM t WHERE b = 1"}, false},
	{"spaces in calls and lists", []string{"SELECT COUNT( * ) FROM t WHERE a IN (1,2) AND b = 1", "SELECT count(*) FROM t WHERE a IN (1, 2) AND b=1"}, true},
	{"trailing semicolon", []string{"SELECT a FROM t;", "SELECT a FROM t"}, true},
}

// TestMergedAgainstPT checks, with pt-query-digest's own fingerprint code,
// that each group is what the case says for pt (split or not), that
// Fingerprint still equals pt's for every member (tags and spacing do not
// change the IDs of the digest), and that Merged puts the group in one
// class.
func TestMergedAgainstPT(t *testing.T) {
	var all []string
	for _, c := range mergeCases {
		all = append(all, c.queries...)
	}
	pt := ptRewrite(t, all)
	i := 0
	for _, c := range mergeCases {
		t.Run(c.name, func(t *testing.T) {
			fps := map[string]bool{}
			merged := map[string]bool{}
			for _, q := range c.queries {
				fp := Fingerprint(q)
				if fp != pt[i] {
					t.Errorf("Fingerprint(%q) = %q, pt-query-digest %q", q, fp, pt[i])
				}
				i++
				fps[fp] = true
				merged[MergedID(fp)] = true
			}
			if got := len(fps) > 1; got != c.split {
				t.Errorf("pt-query-digest split = %v, want %v: %v", got, c.split, fps)
			}
			if len(merged) != 1 {
				t.Errorf("merged view: %d classes, want 1 (%v)", len(merged), fps)
			}
		})
	}
}

func TestMerged(t *testing.T) {
	cases := []struct{ in, want string }{
		{"select a from t where id = ?", "select a from t where id=?"},
		{"select a from t where id = ? ", "select a from t where id=?"},
		{"select ?;", "select ?"},
		{"select ? ;  ", "select ?"},
		{"select `a = b` from t where x <> ?", "select `a = b` from t where x<>?"},
		{"select count( * ) from t", "select count(*)from t"},
		{"select a , b from t", "select a,b from t"},
		{"select a b   c", "select a b c"},
		{"select `unterminated =  x", "select `unterminated =  x"},
		{"", ""},
		{"   ", ""},
	}
	for _, c := range cases {
		got := Merged(c.in)
		if got != c.want {
			t.Errorf("Merged(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := Merged(got); again != got {
			t.Errorf("Merged is not idempotent on %q: %q", got, again)
		}
	}
	if MergedID("select ?") != ID("select ?") {
		t.Error("MergedID of a fingerprint with nothing to merge differs from its ID")
	}
}

func FuzzMerged(f *testing.F) {
	for _, s := range []string{"select a from t where id = ?", "select `a = b`", "select ? ;", "a ( b ) , c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := Merged(s)
		if Merged(m) != m {
			t.Errorf("Merged not idempotent: %q -> %q -> %q", s, m, Merged(m))
		}
		if len(m) > len(s) {
			t.Errorf("Merged grew %q to %q", s, m)
		}
	})
}
