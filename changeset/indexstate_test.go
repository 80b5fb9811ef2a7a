package changeset

import (
	"strings"
	"testing"
)

// TestIndexStatement: each move between an index's states is one
// statement in each server's words, built from the parsed parts.
func TestIndexStatement(t *testing.T) {
	for _, tc := range []struct {
		name, from, to, mariadb, mysql string
	}{
		{"add", Absent, "(a, b(10) desc)", "ALTER TABLE `s`.`t` ADD INDEX `ix` (`a`, `b`(10) DESC), ALGORITHM=INPLACE, LOCK=NONE", ""},
		{"ignore", "(`a`)", "(`a`) ignored", "ALTER TABLE `s`.`t` ALTER INDEX `ix` IGNORED", "ALTER TABLE `s`.`t` ALTER INDEX `ix` INVISIBLE"},
		{"see again", "(`a`) ignored", "(`a`)", "ALTER TABLE `s`.`t` ALTER INDEX `ix` NOT IGNORED", "ALTER TABLE `s`.`t` ALTER INDEX `ix` VISIBLE"},
		{"drop an ignored one", "(`a`) ignored", Absent, "ALTER TABLE `s`.`t` DROP INDEX `ix`, ALGORITHM=INPLACE, LOCK=NONE", ""},
		{"drop", "(`a`)", Absent, "ALTER TABLE `s`.`t` DROP INDEX `ix`, ALGORITHM=INPLACE, LOCK=NONE", ""},
		{"nothing", "(`a`)", "(a)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Change{Kind: Index, Target: "s.t", Name: "ix", From: tc.from, To: tc.to}
			q, err := IndexStatement(c, false)
			if err != nil || q != tc.mariadb {
				t.Fatalf("MariaDB: %q %v, want %q", q, err, tc.mariadb)
			}
			want := tc.mysql
			if want == "" {
				want = tc.mariadb
			}
			if q, err := IndexStatement(c, true); err != nil || q != want {
				t.Fatalf("MySQL: %q %v, want %q", q, err, want)
			}
		})
	}
}

func TestIndexStateRoundTrip(t *testing.T) {
	for _, s := range []string{"absent", "(`a`)", "(`a`, `b`(10) DESC) ignored"} {
		st, err := ParseIndexState(s)
		if err != nil || st.String() != s {
			t.Errorf("%q: %q %v", s, st.String(), err)
		}
	}
}

// FuzzParseIndexState: whatever reads as a state writes back as a state
// that reads the same.
func FuzzParseIndexState(f *testing.F) {
	for _, s := range []string{"absent", "(`a`)", "(a) ignored", "(a) ignored; DROP TABLE t", "(a)ignored", "absent ", "((", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseIndexState(s)
		if err != nil {
			return
		}
		again, err := ParseIndexState(st.String())
		if err != nil || again.String() != st.String() {
			t.Fatalf("%q -> %q -> %q %v", s, st.String(), again.String(), err)
		}
	})
}

// TestIndexChangesOnDisk: a set that adds, ignores and drops indexes is
// written with its SQL view (one ALTER TABLE adding and dropping, the
// ignore a statement of its own with MySQL's words in a comment) and
// read back as it was.
func TestIndexChangesOnDisk(t *testing.T) {
	s := &Set{Format: FormatVersion, Source: "test", Changes: []Change{
		{Kind: Index, Target: "lib.loans", Name: "ix_due", From: "(`due`)", To: "(`due`) ignored", Evidence: []string{"unused for 2 days"}},
		{Kind: Index, Target: "lib.loans", Name: "ix_isbn_again", From: "(`isbn`)", To: Absent},
		{Kind: Index, Target: "lib.loans", Name: "ix_member_due", From: Absent, To: "(`member_no`, `due`)"},
	}}
	dir := t.TempDir()
	if _, err := Write(dir, s); err != nil {
		t.Fatal(err)
	}
	files, err := Render(s)
	if err != nil {
		t.Fatal(err)
	}
	view := string(files[IndexFile])
	for _, want := range []string{
		"ALTER TABLE `lib`.`loans` ALTER INDEX `ix_due` IGNORED;\n",
		"-- on MySQL 8: ALTER TABLE `lib`.`loans` ALTER INDEX `ix_due` INVISIBLE;\n",
		"ALTER TABLE `lib`.`loans` DROP INDEX `ix_isbn_again`, ADD INDEX `ix_member_due` (`member_no`, `due`), ALGORITHM=INPLACE, LOCK=NONE;\n",
	} {
		if !strings.Contains(view, want) {
			t.Errorf("the SQL view lacks %q:\n%s", want, view)
		}
	}
	back, _, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Changes) != 3 || back.Changes[0].To != "(`due`) ignored" || back.Changes[1].To != Absent {
		t.Errorf("read back: %+v", back.Changes)
	}
}
