package indexadv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// Index is an index of a table.
type Index struct {
	Name    string     `json:"name"`
	Columns []IndexCol `json:"columns"`
	Unique  bool       `json:"unique"`
	// Type is BTREE, HASH, FULLTEXT, SPATIAL...; only BTREE and HASH
	// indexes can cover a candidate.
	Type string `json:"type,omitempty"`
}

// IndexCol is one column of an index.
type IndexCol struct {
	Name string `json:"name"`
	Desc bool   `json:"desc,omitempty"`
	// SubPart is the prefix length of a prefix index, 0 for the whole
	// column.
	SubPart int `json:"sub_part,omitempty"`
}

func (c IndexCol) String() string {
	s := changeset.QuoteIdent(c.Name)
	if c.SubPart > 0 {
		s += fmt.Sprintf("(%d)", c.SubPart)
	}
	if c.Desc {
		s += " DESC"
	}
	return s
}

// ErrNoTable is returned for a table that does not exist (any more).
var ErrNoTable = errors.New("table does not exist")

// SQL of the schema readers.
const (
	sqlTableExists = `SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`
	sqlStatistics  = `SELECT INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, SUB_PART, INDEX_TYPE
FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX`
)

// queryer is *sql.DB or *sql.Conn.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// TableExists reports whether schema.table exists.
func TableExists(ctx context.Context, db queryer, schema, table string) (bool, error) {
	var n int
	if err := db.QueryRowContext(ctx, sqlTableExists, schema, table).Scan(&n); err != nil {
		return false, fmt.Errorf("reading information_schema.TABLES: %w", err)
	}
	return n > 0, nil
}

// Indexes reads the indexes of schema.table, PRIMARY first, then by name.
func Indexes(ctx context.Context, db queryer, schema, table string) ([]Index, error) {
	rows, err := db.QueryContext(ctx, sqlStatistics, schema, table)
	if err != nil {
		return nil, fmt.Errorf("reading information_schema.STATISTICS: %w", err)
	}
	defer rows.Close()
	byName := map[string]*Index{}
	var order []string
	for rows.Next() {
		var name, col, typ string
		var seq, nonUnique int
		var sub sql.NullInt64
		if err := rows.Scan(&name, &seq, &col, &nonUnique, &sub, &typ); err != nil {
			return nil, fmt.Errorf("reading information_schema.STATISTICS: %w", err)
		}
		ix := byName[name]
		if ix == nil {
			ix = &Index{Name: name, Unique: nonUnique == 0, Type: typ}
			byName[name] = ix
			order = append(order, name)
		}
		ix.Columns = append(ix.Columns, IndexCol{Name: strings.ToLower(col), SubPart: int(sub.Int64)})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(order, func(i, j int) bool {
		if (order[i] == "PRIMARY") != (order[j] == "PRIMARY") {
			return order[i] == "PRIMARY"
		}
		return order[i] < order[j]
	})
	out := make([]Index, 0, len(order))
	for _, n := range order {
		out = append(out, *byName[n])
	}
	return out, nil
}

// Covers reports whether ix serves cols as a left prefix: its first
// len(cols) columns are cols, whole (not prefix) columns.
func (ix Index) Covers(cols []IndexCol) bool {
	if ix.Type == "FULLTEXT" || ix.Type == "SPATIAL" || len(ix.Columns) < len(cols) {
		return false
	}
	for i, c := range cols {
		have := ix.Columns[i].SubPart
		if ix.Columns[i].Name != c.Name || (have != 0 && (c.SubPart == 0 || have < c.SubPart)) {
			return false
		}
	}
	return true
}

// Finding is a duplicate or redundant existing index.
type Finding struct {
	Table  string `json:"table"`
	Index  string `json:"index"`
	Kind   string `json:"kind"` // "duplicate" or "redundant"
	Of     string `json:"of"`
	Detail string `json:"detail"`
	DDL    string `json:"ddl"`
}

// ExistingFindings reports duplicate indexes (same columns as another) and
// redundant ones (a left prefix of another), never the primary key or a
// unique index that enforces a constraint the longer index does not.
func ExistingFindings(schema, table string, ixs []Index) []Finding {
	var out []Finding
	full := qualified(schema, table)
	for i, a := range ixs {
		if a.Name == "PRIMARY" || a.Type == "FULLTEXT" || a.Type == "SPATIAL" {
			continue
		}
		for j, b := range ixs {
			if i == j || b.Type == "FULLTEXT" || b.Type == "SPATIAL" || len(b.Columns) < len(a.Columns) {
				continue
			}
			if !prefixOf(a.Columns, b.Columns) {
				continue
			}
			same := len(a.Columns) == len(b.Columns)
			if a.Unique && !(same && b.Unique) {
				continue // a enforces uniqueness b does not
			}
			if same && j > i && b.Name != "PRIMARY" && !(b.Unique && !a.Unique) {
				continue // report the pair once, on the later index
			}
			kind, detail := "redundant", fmt.Sprintf("%s(%s) is a left prefix of %s(%s)", a.Name, colList(a.Columns), b.Name, colList(b.Columns))
			if same {
				kind, detail = "duplicate", fmt.Sprintf("%s(%s) has the same columns as %s", a.Name, colList(a.Columns), b.Name)
			}
			out = append(out, Finding{Table: schema + "." + table, Index: a.Name, Kind: kind, Of: b.Name, Detail: detail,
				DDL: fmt.Sprintf("ALTER TABLE %s DROP INDEX %s, ALGORITHM=INPLACE, LOCK=NONE;", full, quoteIdent(a.Name))})
			break
		}
	}
	return out
}

func prefixOf(a, b []IndexCol) bool {
	for i, c := range a {
		if b[i].Name != c.Name || b[i].SubPart != c.SubPart {
			return false
		}
	}
	return true
}

func colList(cs []IndexCol) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Name
		if c.Desc {
			parts[i] += " DESC"
		}
	}
	return strings.Join(parts, ", ")
}

func quoteIdent(s string) string { return changeset.QuoteIdent(s) }

func qualified(schema, table string) string { return changeset.QuoteTable(schema + "." + table) }
