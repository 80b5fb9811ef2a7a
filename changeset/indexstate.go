package changeset

import (
	"errors"
	"fmt"
	"strings"
)

// An index change moves one index between three states, each written
// as a From or To: absent, present ("(`a`, `b`)": its key parts), and
// present but ignored by the optimizer ("(`a`, `b`) ignored": MariaDB
// 10.6's IGNORED, MySQL 8's INVISIBLE; the index is still maintained, so
// making it seen again is instant). The changes are: add (absent → key
// parts), ignore (key parts → the same parts ignored), see again (the
// reverse) and drop (key parts, seen or ignored → absent). A drop and an
// ignore must name the parts they start from, so that a rollback can
// re-create the index and apply can see drift; the primary key is never
// dropped or ignored.

// Ignored is the word that follows the key parts of an ignored index.
const Ignored = "ignored"

// IndexState is one state of an index, parsed.
type IndexState struct {
	// Absent: no such index; Parts and Ignored are then empty.
	Absent  bool
	Parts   []KeyPart
	Ignored bool
}

// ParseIndexState reads "absent", "(key parts)" or "(key parts)
// ignored" (the key parts as ParseKeyParts reads them; one blank before
// the word, nothing after it).
func ParseIndexState(s string) (IndexState, error) {
	if s == Absent {
		return IndexState{Absent: true}, nil
	}
	parts, rest := s, ""
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		parts, rest = s[:i+1], s[i+1:]
	}
	st := IndexState{}
	switch rest {
	case "":
	case " " + Ignored:
		st.Ignored = true
	default:
		if strings.TrimSpace(rest) == "" {
			parts = s // ParseKeyParts says what follows is wrong
		} else {
			return IndexState{}, fmt.Errorf("index state %q: want key parts, optionally followed by %q, or %q", s, " "+Ignored, Absent)
		}
	}
	ps, err := ParseKeyParts(parts)
	if err != nil {
		return IndexState{}, err
	}
	st.Parts = ps
	return st, nil
}

// String writes the state as a From or To holds it.
func (s IndexState) String() string {
	if s.Absent {
		return Absent
	}
	out := FormatKeyParts(s.Parts)
	if s.Ignored {
		out += " " + Ignored
	}
	return out
}

// Action names what an index change does: "add", "drop", "ignore",
// "see" (an ignored index made seen again) or "none".
func IndexAction(from, to IndexState) string {
	switch {
	case from.Absent && to.Absent:
		return "none"
	case to.Absent:
		return "drop"
	case from.Absent:
		return "add"
	case to.Ignored && !from.Ignored:
		return "ignore"
	case from.Ignored && !to.Ignored:
		return "see"
	}
	return "none"
}

// checkIndexStates is the grammar of an index change's From and To.
func checkIndexStates(c *Change) error {
	to, err := ParseIndexState(c.To)
	if err != nil {
		return err
	}
	if c.From == "" {
		// The advice of older versions: an add that did not say.
		if to.Absent || to.Ignored {
			return errors.New("a drop or an ignore must say the key parts it starts from (from)")
		}
		return nil
	}
	from, err := ParseIndexState(c.From)
	if err != nil {
		return fmt.Errorf("from: %w", err)
	}
	switch IndexAction(from, to) {
	case "none":
		if from.Absent {
			return errors.New("from absent to absent changes nothing")
		}
		if !sameKeyParts(from.Parts, to.Parts) {
			return errors.New("an index's key parts change only by a drop and an add")
		}
		return nil
	case "add":
		if to.Ignored {
			return errors.New("an index is added seen; ignoring it is a change of its own")
		}
	case "ignore", "see":
		if !sameKeyParts(from.Parts, to.Parts) {
			return errors.New("ignoring an index keeps its key parts")
		}
	}
	if IndexAction(from, to) != "add" && strings.EqualFold(c.Name, "PRIMARY") {
		return errors.New("the primary key is never dropped or ignored")
	}
	return nil
}

func sameKeyParts(a, b []KeyPart) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i].Column, b[i].Column) || a[i].Length != b[i].Length || a[i].Desc != b[i].Desc {
			return false
		}
	}
	return true
}

// IndexStatement is the one statement that moves an index change's
// index from From to To, built from the parsed parts: ADD INDEX and DROP
// INDEX online (ALGORITHM=INPLACE, LOCK=NONE), ALTER INDEX ... IGNORED /
// NOT IGNORED on MariaDB, INVISIBLE / VISIBLE on MySQL (mysql). "" when
// it changes nothing.
func IndexStatement(c Change, mysql bool) (string, error) {
	if err := c.Check(); err != nil {
		return "", fmt.Errorf("index %s on %s: %w", c.Name, c.Target, err)
	}
	from := IndexState{Absent: true}
	if c.From != "" {
		from, _ = ParseIndexState(c.From)
	}
	to, _ := ParseIndexState(c.To)
	switch IndexAction(from, to) {
	case "add":
		return AddIndexSQL(c)
	case "drop":
		return DropIndexSQL(c), nil
	case "ignore", "see":
		return VisibilitySQL(c.Target, c.Name, to.Ignored, mysql), nil
	}
	return "", nil
}

// VisibilitySQL makes an index ignored by the optimizer or seen again:
// MariaDB's ALTER INDEX ... IGNORED / NOT IGNORED, MySQL's INVISIBLE /
// VISIBLE (metadata only: instant, the index still maintained).
func VisibilitySQL(table, name string, ignored, mysql bool) string {
	word := map[[2]bool]string{{true, false}: "IGNORED", {false, false}: "NOT IGNORED", {true, true}: "INVISIBLE", {false, true}: "VISIBLE"}[[2]bool{ignored, mysql}]
	return fmt.Sprintf("ALTER TABLE %s ALTER INDEX %s %s", QuoteTable(table), QuoteIdent(name), word)
}
