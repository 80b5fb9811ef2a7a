package indexadv

import (
	"fmt"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// Candidate is an index worth trying.
type Candidate struct {
	Schema, Table string
	Columns       []IndexCol
	// Covering is set when the index also holds every other column its
	// query reads, so the table rows need not be read.
	Covering bool
	// Base are the columns without the covering extras: an existing index
	// that serves them makes the candidate unnecessary.
	Base []IndexCol
	// Queries are the IDs of the classes it serves.
	Queries []string
	// Reasons say which rule built it, one per query.
	Reasons []string
	name    string
}

// Uniquify renames candidates whose name is taken, on their table, by an
// existing index or another candidate: ix_a_b_2, ix_a_b_3...
func Uniquify(cands []*Candidate, existing map[string][]Index) {
	taken := map[string]bool{}
	for table, ixs := range existing {
		for _, ix := range ixs {
			taken[table+"."+strings.ToLower(ix.Name)] = true
		}
	}
	for _, c := range cands {
		base := c.Name()
		name := base
		for i := 2; taken[c.Key()+"."+strings.ToLower(name)]; i++ {
			suffix := fmt.Sprintf("_%d", i)
			if len(base)+len(suffix) > 64 {
				base = base[:64-len(suffix)]
			}
			name = base + suffix
		}
		c.name = name
		taken[c.Key()+"."+strings.ToLower(name)] = true
	}
}

// Key identifies a table.
func (c *Candidate) Key() string { return c.Schema + "." + c.Table }

// Name is the index name used in the DDL: ix_ and the column names, or
// the name set by Uniquify.
func (c *Candidate) Name() string {
	if c.name != "" {
		return c.name
	}
	parts := []string{"ix"}
	for _, col := range c.Columns {
		parts = append(parts, col.Name)
	}
	n := strings.Join(parts, "_")
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// Change is the change adding the index.
func (c *Candidate) Change() changeset.Change {
	return changeset.Change{Kind: changeset.Index, Target: c.Key(), Name: c.Name(), From: changeset.Absent,
		To: "(" + strings.Join(colStrings(c.Columns), ", ") + ")", Direction: "add", Activation: changeset.Dynamic,
		Finding: "index", Title: c.Name() + " on " + c.Key() + " for " + strings.Join(c.Queries, ", ")}
}

// DDL is the online ALTER adding the index; for a candidate whose
// names no DDL of stacktune's may hold (FitTypes rejects it), a comment
// saying why.
func (c *Candidate) DDL() string {
	q, err := changeset.AddIndexSQL(c.Change())
	if err != nil {
		return "-- " + strings.Join(strings.Fields(err.Error()), " ")
	}
	return q + ";"
}

// ColumnNames lists the columns, DESC marked.
func (c *Candidate) ColumnNames() []string {
	out := make([]string, len(c.Columns))
	for i, col := range c.Columns {
		out[i] = col.Name
		if col.Desc {
			out[i] += " DESC"
		}
	}
	return out
}

// maxCovering bounds a covering variant: at most this many columns.
const maxCovering = 5

// Cardinality returns the number of distinct values of a column, or 0 when
// unknown.
type Cardinality func(schema, table, column string) int64

// Candidates builds the candidates for one table use of a query (class id),
// following the rules: equality columns first, most selective first, then
// the range column, then the GROUP BY or ORDER BY columns in order and
// direction; one index per OR branch; a covering variant when narrow.
func Candidates(id, schema string, t *TableUse, card Cardinality) []*Candidate {
	var out []*Candidate
	build := func(eq, rng []string, why string) {
		cols := orderBySelectivity(eq, func(c string) int64 { return card(schema, t.Name, c) })
		var ic []IndexCol
		seen := map[string]bool{}
		for _, c := range cols {
			ic = append(ic, IndexCol{Name: c})
			seen[c] = true
		}
		if len(rng) > 0 && !seen[rng[0]] {
			ic = append(ic, IndexCol{Name: rng[0]})
			seen[rng[0]] = true
		} else if len(rng) == 0 {
			ic = appendSort(ic, seen, t)
		}
		if len(ic) == 0 {
			return
		}
		c := &Candidate{Schema: schema, Table: t.Name, Columns: ic, Base: ic, Queries: []string{id}, Reasons: []string{why}}
		if !t.Star {
			var rest []string
			for _, col := range t.Columns {
				if !seen[col] {
					rest = append(rest, col)
				}
			}
			if len(rest) > 0 && len(ic)+len(rest) <= maxCovering {
				c.Columns = append([]IndexCol(nil), ic...)
				for _, col := range rest {
					c.Columns = append(c.Columns, IndexCol{Name: col})
				}
				c.Covering = true
				c.Reasons[0] += ", covering"
			}
		}
		out = append(out, c)
	}
	if len(t.Or) > 0 {
		for i, br := range t.Or {
			build(append(append([]string{}, t.Eq...), br.Eq...), append(append([]string{}, br.Range...), t.Range...),
				fmt.Sprintf("OR branch %d of %d: its own index so the optimizer can union them", i+1, len(t.Or)))
		}
		return out
	}
	if len(t.Eq)+len(t.Range) == 0 && len(t.JoinEq) > 0 {
		build(t.JoinEq, nil, "join key: the lookup column when the table is read second")
		return out
	}
	build(t.Eq, t.Range, "equality columns, then range, then sort columns")
	return out
}

// appendSort adds the GROUP BY columns, or else the ORDER BY columns, in
// order; directions are kept only when they are mixed (a uniform order is
// read backwards from an ascending index).
func appendSort(ic []IndexCol, seen map[string]bool, t *TableUse) []IndexCol {
	var sortCols []OrderCol
	if len(t.Group) > 0 {
		for _, g := range t.Group {
			sortCols = append(sortCols, OrderCol{Column: g})
		}
	} else {
		sortCols = t.Order
	}
	mixed := false
	for _, o := range sortCols {
		if o.Desc != sortCols[0].Desc {
			mixed = true
		}
	}
	for _, o := range sortCols {
		if !seen[o.Column] {
			ic = append(ic, IndexCol{Name: o.Column, Desc: mixed && o.Desc})
			seen[o.Column] = true
		}
	}
	return ic
}

func orderBySelectivity(cols []string, card func(string) int64) []string {
	out := append([]string(nil), cols...)
	cards := map[string]int64{}
	for _, c := range out {
		cards[c] = card(c)
	}
	sort.SliceStable(out, func(i, j int) bool { return cards[out[i]] > cards[out[j]] })
	return out
}

// Merge merges candidates across queries: identical ones become one, and
// one that is a left prefix of another on the same table is served by the
// longer one. Candidates that an existing index already covers as a left
// prefix are returned separately, with the index that covers them.
func Merge(cands []*Candidate, existing map[string][]Index) (kept []*Candidate, covered map[*Candidate]string) {
	covered = map[*Candidate]string{}
	var pending []*Candidate
	for _, c := range cands {
		found := false
		for _, ix := range existing[c.Key()] {
			base := c.Base
			if base == nil {
				base = c.Columns
			}
			if ix.Covers(base) {
				covered[c] = ix.Name
				found = true
				break
			}
		}
		if !found {
			pending = append(pending, c)
		}
	}
	// Longest first, so a shorter one finds its longer partner.
	sort.SliceStable(pending, func(i, j int) bool { return len(pending[i].Columns) > len(pending[j].Columns) })
	for _, c := range pending {
		merged := false
		for _, k := range kept {
			if k.Key() == c.Key() && len(k.Columns) >= len(c.Columns) && prefixOf(c.Columns, k.Columns) {
				for i, q := range c.Queries {
					if !containsStr(k.Queries, q) {
						k.Queries = append(k.Queries, q)
						k.Reasons = append(k.Reasons, c.Reasons[i])
					}
				}
				merged = true
				break
			}
		}
		if !merged {
			kept = append(kept, c)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool {
		if kept[i].Key() != kept[j].Key() {
			return kept[i].Key() < kept[j].Key()
		}
		return kept[i].Name() < kept[j].Name()
	})
	return kept, covered
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ColumnType returns a column's DATA_TYPE (lower case), "" when the table
// has no such column.
type ColumnType func(schema, table, column string) string

// prefixTypes are the types an index can hold only a prefix of.
var prefixTypes = map[string]bool{
	"tinytext": true, "text": true, "mediumtext": true, "longtext": true, "json": true,
	"tinyblob": true, "blob": true, "mediumblob": true, "longblob": true,
}

// prefixLength is the prefix indexed for TEXT and BLOB columns.
const prefixLength = 255

// FitTypes adapts a candidate to its table's column types: TEXT and BLOB
// key columns get a prefix, a covering variant that would hold one falls
// back to its base columns, and a candidate naming a column the table does
// not have (a name that could not be resolved) is dropped (false).
func FitTypes(c *Candidate, typeOf ColumnType) bool {
	base := c.Base
	if base == nil {
		base = c.Columns
	}
	fit := make([]IndexCol, len(base))
	for i, col := range base {
		t := typeOf(c.Schema, c.Table, col.Name)
		if t == "" {
			return false
		}
		fit[i] = col
		if prefixTypes[t] {
			fit[i].SubPart = prefixLength
		}
	}
	if c.Covering {
		ok := true
		for _, col := range c.Columns[len(base):] {
			if t := typeOf(c.Schema, c.Table, col.Name); t == "" || prefixTypes[t] {
				ok = false
			}
		}
		if ok {
			c.Columns = append(append([]IndexCol(nil), fit...), c.Columns[len(base):]...)
			c.Base = fit
			return true
		}
		c.Covering = false
		for i := range c.Reasons {
			c.Reasons[i] = strings.TrimSuffix(c.Reasons[i], ", covering")
		}
	}
	c.Columns, c.Base = fit, fit
	return true
}
