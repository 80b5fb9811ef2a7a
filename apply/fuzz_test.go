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
