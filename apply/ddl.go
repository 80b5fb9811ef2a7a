package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions

	"github.com/stacktune/stacktune/changeset"
)

// Indexes adds the indexes of a change set (what `stacktune indexes`
// proved) online, one ALTER TABLE per index; rolling back drops the ones
// it added. It writes no files. Its state is, per index
// (schema.table.name), its key parts as the server lists them, or
// "absent".
type Indexes struct {
	DB DB
	// Schema is the database of changes whose table names none.
	Schema string

	changes []changeset.Change
}

// NewIndexes builds the target of the index changes of cs.
func NewIndexes(db DB, schema string, cs []changeset.Change) (*Indexes, error) {
	cs, err := only(changeset.Index, "ddl", cs)
	if err != nil {
		return nil, err
	}
	d := &Indexes{DB: db, Schema: schema}
	for _, c := range cs {
		if _, t, ok := strings.Cut(c.Target, "."); !ok || t == "" || c.Name == "" {
			return nil, fmt.Errorf("ddl: index %q on %q: want schema.table and a name", c.Name, c.Target)
		}
		d.changes = append(d.changes, c)
	}
	return d, nil
}

// indexKey is an index's State key, schema.table.name.
func indexKey(schema, table, name string) string { return schema + "." + table + "." + name }

// split reads a key back (names holding dots are not told apart).
func splitIndexKey(k string) (schema, table, name string, ok bool) {
	parts := strings.Split(k, ".")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

func (d *Indexes) schemaOf(target string) (string, string) {
	schema, table, _ := strings.Cut(target, ".")
	if schema == "" {
		schema = d.Schema
	}
	return schema, table
}

func (d *Indexes) Name() string { return "ddl" }

// Wanted has every index present with its key parts.
func (d *Indexes) Wanted() State {
	w := State{}
	for _, c := range d.changes {
		s, t := d.schemaOf(c.Target)
		w[indexKey(s, t, c.Name)] = strings.TrimSpace(c.To)
	}
	return w
}

const indexPartsSQL = `SELECT COLUMN_NAME, COALESCE(SUB_PART, 0), COALESCE(COLLATION, 'A')
	FROM information_schema.STATISTICS
	WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ? AND INDEX_NAME = ?
	ORDER BY SEQ_IN_INDEX`

const tableExistsSQL = `SELECT COUNT(*) FROM information_schema.TABLES
	WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ?`

// parts reads an index's key parts: "(`a`, `b`(10) DESC)", or "absent".
func (d *Indexes) parts(ctx context.Context, schema, table, name string) (string, error) {
	rows, err := d.DB.QueryContext(ctx, indexPartsSQL, schema, table, name)
	if err != nil {
		return "", fmt.Errorf("index %s: %w", indexKey(schema, table, name), err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var col, coll string
		var sub int
		if err := rows.Scan(&col, &sub, &coll); err != nil {
			return "", err
		}
		p := changeset.QuoteIdent(col)
		if sub > 0 {
			p += fmt.Sprintf("(%d)", sub)
		}
		if coll == "D" {
			p += " DESC"
		}
		cols = append(cols, p)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if len(cols) == 0 {
		return changeset.Absent, nil
	}
	return "(" + strings.Join(cols, ", ") + ")", nil
}

// Snapshot reads each index's key parts.
func (d *Indexes) Snapshot(ctx context.Context) (State, error) {
	out := State{}
	for k := range d.Wanted() {
		s, t, n, _ := splitIndexKey(k)
		p, err := d.parts(ctx, s, t, n)
		if err != nil {
			return nil, err
		}
		out[k] = p
	}
	return out, nil
}

// sameParts compares key parts however they are quoted and spaced.
func sameParts(a, b string) bool {
	norm := func(s string) string {
		s = strings.ReplaceAll(strings.ToLower(s), " asc", "")
		return strings.NewReplacer("`", "", " ", "", "\t", "").Replace(s)
	}
	return norm(a) == norm(b)
}

// Plan: the table must exist, and an index of that name must be absent
// (or already the wanted one).
func (d *Indexes) Plan(ctx context.Context, running State) ([]Step, error) {
	var steps []Step
	for _, c := range d.changes {
		s, t := d.schemaOf(c.Target)
		k := indexKey(s, t, c.Name)
		st := Step{Key: k, From: c.From, Running: running[k], To: strings.TrimSpace(c.To), How: HowSet, Command: changeset.AddIndexSQL(d.qualified(c))}
		var n int
		if err := d.DB.QueryRowContext(ctx, tableExistsSQL, s, t).Scan(&n); err != nil {
			return nil, err
		}
		switch {
		case n == 0:
			st.Problem = fmt.Sprintf("%s: no table %s.%s", k, s, t)
		case sameParts(st.Running, st.To):
			st.How, st.Command = HowNone, ""
		case st.Running != changeset.Absent:
			st.Drift = true
			st.Problem = fmt.Sprintf("%s: an index of that name exists on %s, not %s; re-run the advice", k, st.Running, st.To)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// qualified is c with its table in its schema.
func (d *Indexes) qualified(c changeset.Change) changeset.Change {
	s, t := d.schemaOf(c.Target)
	c.Target = s + "." + t
	return c
}

// Activate adds the indexes want has with key parts and drops those it
// has absent, online (ALGORITHM=INPLACE, LOCK=NONE), going on past a
// failure.
func (d *Indexes) Activate(ctx context.Context, want State) error {
	have, err := d.Snapshot(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, k := range want.Keys() {
		w, h := want[k], have[k]
		if w == "" || sameParts(w, h) {
			continue
		}
		q := d.statement(k, w)
		if h != changeset.Absent && w != changeset.Absent {
			errs = append(errs, fmt.Errorf("%s: an index of that name exists on %s", k, h))
			continue
		}
		if _, err := d.DB.ExecContext(ctx, q); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", q, err))
		}
	}
	return errors.Join(errs...)
}

// statement adds (parts) or drops (absent) the index of key k.
func (d *Indexes) statement(k, parts string) string {
	s, t, n, _ := splitIndexKey(k)
	c := changeset.Change{Kind: changeset.Index, Target: s + "." + t, Name: n, To: parts}
	if parts == changeset.Absent {
		return changeset.DropIndexSQL(c)
	}
	return changeset.AddIndexSQL(c)
}

// Verify reads the indexes back.
func (d *Indexes) Verify(ctx context.Context, want State) error {
	have, err := d.Snapshot(ctx)
	if err != nil {
		return err
	}
	return compare("the schema", want, have, func(_, a, b string) bool { return sameParts(a, b) })
}

// HandFix is the DDL that adds or drops the index.
func (d *Indexes) HandFix(key, want string) string {
	if key == "" {
		return "check the indexes with SHOW INDEX"
	}
	return d.statement(key, want) + ";"
}

// ReadIndexChanges reads the index changes of what `stacktune indexes`
// writes: its SQL (--format sql: ALTER TABLE ... ADD INDEX and CREATE
// INDEX statements, comments ignored) or its JSON report (--format json,
// whose "changes" is a change set), or a change set file. Any other
// statement is an error: apply adds indexes, nothing else.
func ReadIndexChanges(data []byte, defaultSchema string) ([]changeset.Change, error) {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && t[0] == '{' {
		var probe struct {
			Format  int             `json:"format"`
			Changes json.RawMessage `json:"changes"`
		}
		if err := json.Unmarshal(t, &probe); err != nil {
			return nil, fmt.Errorf("JSON: %w", err)
		}
		raw := t
		if probe.Format == 0 {
			if len(probe.Changes) == 0 || probe.Changes[0] != '{' {
				return nil, errors.New(`JSON without a change set: give the output of stacktune indexes --format json (its "changes") or --format sql`)
			}
			raw = probe.Changes
		}
		set, err := changeset.Decode(bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		cs := set.Of(changeset.Index)
		if len(cs) != len(set.Changes) {
			return nil, fmt.Errorf("the change set holds %d changes that are no index: apply them from their directory", len(set.Changes)-len(cs))
		}
		return cs, nil
	}
	cs, err := ParseIndexDDL(string(data), defaultSchema)
	if err != nil && bytes.Contains(data, []byte("Proven on a throwaway")) {
		return nil, fmt.Errorf("%w (this is the text report of stacktune indexes: write it with --format sql or --format json)", err)
	}
	return cs, err
}

// ParseIndexDDL reads ALTER TABLE ... ADD INDEX statements (several ADD
// INDEX per table, ALGORITHM and LOCK options) and CREATE INDEX
// statements into index changes. Any other statement is an error.
func ParseIndexDDL(sqlText, defaultSchema string) ([]changeset.Change, error) {
	stmts, _, err := parser.New().Parse(sqlText, "", "")
	if err != nil {
		return nil, fmt.Errorf("DDL: %w", err)
	}
	var out []changeset.Change
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
					out = append(out, indexChange(s.Table, defaultSchema, c.Name, c.Keys))
				default:
					return nil, fmt.Errorf("DDL: only ADD INDEX is applied: %s", nodeSQL(st))
				}
			}
		case *ast.CreateIndexStmt:
			if s.KeyType != ast.IndexKeyTypeNone {
				return nil, fmt.Errorf("DDL: only plain indexes are applied: %s", nodeSQL(st))
			}
			out = append(out, indexChange(s.Table, defaultSchema, s.IndexName, s.IndexPartSpecifications))
		default:
			return nil, fmt.Errorf("DDL: only ALTER TABLE ... ADD INDEX and CREATE INDEX are applied: %s", nodeSQL(st))
		}
	}
	return out, nil
}

// indexChange is the change adding index name on table over parts (a
// table without a schema is in defaultSchema).
func indexChange(table *ast.TableName, defaultSchema, name string, parts []*ast.IndexPartSpecification) changeset.Change {
	schema := table.Schema.O
	if schema == "" {
		schema = defaultSchema
	}
	cols := make([]string, len(parts))
	for i, k := range parts {
		cols[i] = nodeSQL(k)
	}
	return changeset.Change{Kind: changeset.Index, Target: schema + "." + table.Name.O, Name: name,
		From: changeset.Absent, To: "(" + strings.Join(cols, ", ") + ")", Activation: changeset.Dynamic, Finding: "index"}
}

func nodeSQL(n ast.Node) string {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreNameBackQuotes|format.RestoreKeyWordUppercase, &b)); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return b.String()
}
