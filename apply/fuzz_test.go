package apply

import (
	"testing"

	"github.com/stacktune/stacktune/changeset"
)

// FuzzParseIndexDDL: any text gives indexes with a table and a name, or
// an error; never a panic.
func FuzzParseIndexDDL(f *testing.F) {
	for _, seed := range []string{
		"ALTER TABLE `s`.`t` ADD INDEX `a` (`x`, `y` DESC), ALGORITHM=INPLACE, LOCK=NONE;",
		"CREATE INDEX i ON t (c(10)); ALTER TABLE t ADD KEY k (a)",
		"ALTER TABLE t DROP INDEX i", "DELETE FROM t", "ALTER TABLE ((", "",
		`{"format": 1, "changes": [{"kind": "ddl", "target": "s.t", "name": "i", "to": "(a)"}]}`,
		`{"proposals": [], "changes": {"format": 1, "changes": []}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		cs, err := ReadIndexChanges([]byte(sql), "db")
		if err != nil {
			return
		}
		set := &changeset.Set{Format: changeset.FormatVersion, Changes: cs}
		if err := set.Validate(); err != nil {
			t.Errorf("changes %+v from %q: %v", cs, sql, err)
		}
	})
}

// FuzzIndexGrammar: an index change that passes its grammar becomes DDL
// that a SQL parser reads as one ALTER TABLE adding that one index on
// that table over those key parts, and nothing else.
func FuzzIndexGrammar(f *testing.F) {
	for _, seed := range [][3]string{
		{"victim.t", "ix", "(`a`)"},
		{"victim.t", "ix", "(a), DROP COLUMN b"},
		{"s.t", "ix_a_b", "(a(10) DESC, `b c`)"},
		{"s.t", "ix`, DROP COLUMN `b", "(a)"},
		{"s.t` DROP COLUMN b, ADD INDEX `x", "ix", "(a)"},
		{"s.t", "i", "(`a;b`)"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, target, name, to string) {
		c := changeset.Change{Kind: changeset.Index, Target: target, Name: name, From: changeset.Absent, To: to}
		if c.Check() != nil {
			return
		}
		q, err := changeset.AddIndexSQL(c)
		if err != nil {
			t.Fatalf("%+v passed Check, AddIndexSQL: %v", c, err)
		}
		cs, err := ParseIndexDDL(q, "")
		if err != nil {
			// The SQL parser may not take every name MySQL takes (a
			// reserved word quoted, a character it does not know): what
			// it refuses is no injection.
			return
		}
		parts, _ := changeset.ParseKeyParts(to)
		if len(cs) != 1 || cs[0].Target != target || cs[0].Name != name || cs[0].To != changeset.FormatKeyParts(parts) {
			t.Fatalf("%s reads back as %+v, want %s on %s over %s", q, cs, name, target, changeset.FormatKeyParts(parts))
		}
	})
}
