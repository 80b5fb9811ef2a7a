package apply

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions
)

// Index is one secondary index the DDL target adds.
type Index struct {
	Schema, Table, Name string
	// Spec is the index definition as ADD INDEX takes it:
	// `name` (col, col).
	Spec string
}

// key is the State key of an index: schema.table.name.
func (ix Index) key() string { return ix.Schema + "." + ix.Table + "." + ix.Name }

func (ix Index) table() string {
	if ix.Schema == "" {
		return quoteIdent(ix.Table)
	}
	return quoteIdent(ix.Schema) + "." + quoteIdent(ix.Table)
}

// DDL adds indexes (from `stacktune indexes`) online, one ALTER TABLE per
// index; rolling back drops the ones it added. It writes no files.
type DDL struct {
	DB      *sql.DB
	Indexes []Index
}

// ParseIndexDDL reads ALTER TABLE ... ADD INDEX statements (what
// `stacktune indexes` prints: several ADD INDEX per table, ALGORITHM and
// LOCK options) and CREATE INDEX statements. Any other statement is an
// error: apply adds indexes, nothing else.
func ParseIndexDDL(sqlText, defaultSchema string) ([]Index, error) {
	stmts, _, err := parser.New().Parse(sqlText, "", "")
	if err != nil {
		return nil, fmt.Errorf("DDL: %w", err)
	}
	var out []Index
	for _, st := range stmts {
		switch s := st.(type) {
		case *ast.AlterTableStmt:
			for _, spec := range s.Specs {
				switch spec.Tp {
				case ast.AlterTableAlgorithm, ast.AlterTableLock:
					continue
				case ast.AlterTableAddConstraint:
					c := spec.Constraint
					if c == nil || (c.Tp != ast.ConstraintIndex && c.Tp != ast.ConstraintKey) {
						return nil, fmt.Errorf("DDL: only ADD INDEX is applied: %s", nodeSQL(st))
					}
					if c.Name == "" {
						return nil, fmt.Errorf("DDL: an index without a name cannot be rolled back: %s", nodeSQL(st))
					}
					out = append(out, newIndex(s.Table, defaultSchema, c.Name, c.Keys))
				default:
					return nil, fmt.Errorf("DDL: only ADD INDEX is applied: %s", nodeSQL(st))
				}
			}
		case *ast.CreateIndexStmt:
			if s.KeyType != ast.IndexKeyTypeNone {
				return nil, fmt.Errorf("DDL: only plain indexes are applied: %s", nodeSQL(st))
			}
			out = append(out, newIndex(s.Table, defaultSchema, s.IndexName, s.IndexPartSpecifications))
		default:
			return nil, fmt.Errorf("DDL: only ALTER TABLE ... ADD INDEX and CREATE INDEX are applied: %s", nodeSQL(st))
		}
	}
	return out, nil
}

// newIndex is the index name on table over parts (a table without a
// schema is in defaultSchema).
func newIndex(table *ast.TableName, defaultSchema, name string, parts []*ast.IndexPartSpecification) Index {
	schema := table.Schema.O
	if schema == "" {
		schema = defaultSchema
	}
	cols := make([]string, len(parts))
	for i, k := range parts {
		cols[i] = nodeSQL(k)
	}
	return Index{Schema: schema, Table: table.Name.O, Name: name, Spec: quoteIdent(name) + " (" + strings.Join(cols, ", ") + ")"}
}

func nodeSQL(n ast.Node) string {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreNameBackQuotes|format.RestoreKeyWordUppercase, &b)); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return b.String()
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func (d *DDL) Name() string                   { return "ddl" }
func (d *DDL) HostWide() bool                 { return false }
func (d *DDL) Files() []File                  { return nil }
func (d *DDL) Validate(context.Context) error { return nil }

// Wanted has every index present.
func (d *DDL) Wanted() State {
	w := State{}
	for _, ix := range d.Indexes {
		w[ix.key()] = "present"
	}
	return w
}

// Snapshot says which of the indexes exist.
func (d *DDL) Snapshot(ctx context.Context) (State, error) {
	out := State{}
	for _, ix := range d.Indexes {
		var n int
		err := d.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.statistics
			WHERE table_schema = COALESCE(NULLIF(?, ''), DATABASE()) AND table_name = ? AND index_name = ?`,
			ix.Schema, ix.Table, ix.Name).Scan(&n)
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", ix.key(), err)
		}
		out[ix.key()] = map[bool]string{true: "present", false: "absent"}[n > 0]
	}
	return out, nil
}

// Activate adds the indexes want has present and drops those it has
// absent, online (ALGORITHM=INPLACE, LOCK=NONE).
func (d *DDL) Activate(ctx context.Context, want State) error {
	have, err := d.Snapshot(ctx)
	if err != nil {
		return err
	}
	for _, ix := range d.Indexes {
		w := want[ix.key()]
		if w == "" || w == have[ix.key()] {
			continue
		}
		var q string
		if w == "present" {
			q = fmt.Sprintf("ALTER TABLE %s ADD INDEX %s, ALGORITHM=INPLACE, LOCK=NONE", ix.table(), ix.Spec)
		} else {
			q = fmt.Sprintf("ALTER TABLE %s DROP INDEX %s, ALGORITHM=INPLACE, LOCK=NONE", ix.table(), quoteIdent(ix.Name))
		}
		if _, err := d.DB.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// Verify reads the indexes back.
func (d *DDL) Verify(ctx context.Context, want State) error {
	have, err := d.Snapshot(ctx)
	if err != nil {
		return err
	}
	return compare("the schema", want, have, func(a, b string) bool { return a == b })
}
