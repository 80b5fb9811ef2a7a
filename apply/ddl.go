package apply

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions

	"github.com/stacktune/stacktune/changeset"
)

// Indexes adds, ignores and drops the indexes of a change set (what
// `stacktune indexes` proved, or found unused, duplicate or redundant)
// online: ADD INDEX and DROP INDEX with ALGORITHM=INPLACE, LOCK=NONE, and
// ALTER INDEX ... IGNORED (MariaDB 10.6+) or INVISIBLE (MySQL 8), which
// is instant and keeps the index maintained. Rolling back moves each
// index back to its snapshot: an added one dropped, an ignored one seen
// again, a dropped one re-created online (with its ignored state). It
// never drops or ignores an index that backs the primary key, a unique
// constraint or a foreign key (Plan refuses the change; Activate checks
// again). It writes no files. Its state is, per index
// (schema.table.name), its key parts as the server lists them, followed
// by " ignored" when the optimizer ignores it, or "absent"
// (changeset.IndexState).
type Indexes struct {
	DB DB
	// Schema is the database of changes whose table names none.
	Schema string

	changes []changeset.Change
	// vis is the column of information_schema.STATISTICS that says
	// whether an index is seen: IGNORED (MariaDB), IS_VISIBLE (MySQL),
	// "-" when the server has neither; "" until read.
	vis string
}

// NewIndexes builds the target of the index changes of cs.
func NewIndexes(db DB, schema string, cs []changeset.Change) (*Indexes, error) {
	cs, err := only(changeset.Index, "ddl", cs)
	if err != nil {
		return nil, err
	}
	d := &Indexes{DB: db, Schema: schema}
	for _, c := range cs {
		to, err := changeset.ParseIndexState(c.To)
		if err != nil {
			return nil, fmt.Errorf("ddl: index %s on %s: %w", c.Name, c.Target, err)
		}
		c.To = to.String() // from here on, the parsed parts
		if c.From != "" {
			from, err := changeset.ParseIndexState(c.From)
			if err != nil {
				return nil, fmt.Errorf("ddl: index %s on %s: from: %w", c.Name, c.Target, err)
			}
			c.From = from.String()
		}
		d.changes = append(d.changes, c)
	}
	return d, nil
}

// indexKey is an index's State key, schema.table.name.
func indexKey(schema, table, name string) string { return schema + "." + table + "." + name }

// tableKey is the State key of a table's columns, "schema.table
// columns": Snapshot records them so that a rollback sees a table whose
// columns changed (which dropping an index cannot undo) and says so
// instead of claiming the table is as it was.
func tableKey(schema, table string) string { return schema + "." + table + columnsSuffix }

const columnsSuffix = " columns"

const columnsSQL = `SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COALESCE(COLUMN_DEFAULT, 'NULL'), EXTRA
	FROM information_schema.COLUMNS
	WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ?
	ORDER BY ORDINAL_POSITION`

// columns describes a table's columns in one line: "`a` int(11) NO NULL,
// `b` ..." ("absent" for no table).
func (d *Indexes) columns(ctx context.Context, schema, table string) (string, error) {
	rows, err := d.DB.QueryContext(ctx, columnsSQL, schema, table)
	if err != nil {
		return "", fmt.Errorf("columns of %s.%s: %w", schema, table, err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var name, typ, null, def, extra string
		if err := rows.Scan(&name, &typ, &null, &def, &extra); err != nil {
			return "", err
		}
		cols = append(cols, strings.Join([]string{changeset.QuoteIdent(name), typ, null, def, extra}, " "))
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if len(cols) == 0 {
		return changeset.Absent, nil
	}
	return strings.Join(cols, ", "), nil
}

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

// Wanted has every index in its wanted state.
func (d *Indexes) Wanted() State {
	w := State{}
	for _, c := range d.changes {
		s, t := d.schemaOf(c.Target)
		w[indexKey(s, t, c.Name)] = c.To
	}
	return w
}

// tables are the tables the changes touch, as schema.table keys.
func (d *Indexes) tables() []string {
	var out []string
	for _, c := range d.changes {
		s, t := d.schemaOf(c.Target)
		if k := tableKey(s, t); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

const indexPartsSQL = `SELECT COLUMN_NAME, COALESCE(SUB_PART, 0), COALESCE(COLLATION, 'A'), %s
	FROM information_schema.STATISTICS
	WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ? AND INDEX_NAME = ?
	ORDER BY SEQ_IN_INDEX`

const tableExistsSQL = `SELECT COUNT(*) FROM information_schema.TABLES
	WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ?`

// visibilitySQL finds the column of information_schema.STATISTICS that
// says whether an index is ignored.
const visibilitySQL = `SELECT COLUMN_NAME FROM information_schema.COLUMNS
	WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = 'STATISTICS' AND COLUMN_NAME IN ('IGNORED', 'IS_VISIBLE')`

// visibility reads (once) how this server says an index is ignored.
func (d *Indexes) visibility(ctx context.Context) (string, error) {
	if d.vis != "" {
		return d.vis, nil
	}
	var col string
	switch err := d.DB.QueryRowContext(ctx, visibilitySQL).Scan(&col); {
	case errors.Is(err, sql.ErrNoRows):
		d.vis = "-"
	case err != nil:
		return "", fmt.Errorf("reading information_schema: %w", err)
	default:
		d.vis = strings.ToUpper(col)
	}
	return d.vis, nil
}

// CanIgnore reports whether the server can ignore an index (MariaDB
// 10.6+: IGNORED; MySQL 8: INVISIBLE), and whether it speaks MySQL's
// words.
func (d *Indexes) CanIgnore(ctx context.Context) (can, mysql bool, err error) {
	v, err := d.visibility(ctx)
	if err != nil {
		return false, false, err
	}
	return v != "-", v == "IS_VISIBLE", nil
}

// parts reads an index's state: "(`a`, `b`(10) DESC)", the same followed
// by " ignored", or "absent".
func (d *Indexes) parts(ctx context.Context, schema, table, name string) (string, error) {
	vis, err := d.visibility(ctx)
	if err != nil {
		return "", err
	}
	ignoredExpr := "'NO'"
	switch vis {
	case "IGNORED":
		ignoredExpr = "IGNORED"
	case "IS_VISIBLE":
		ignoredExpr = "IF(IS_VISIBLE = 'NO', 'YES', 'NO')"
	}
	rows, err := d.DB.QueryContext(ctx, fmt.Sprintf(indexPartsSQL, ignoredExpr), schema, table, name)
	if err != nil {
		return "", fmt.Errorf("index %s: %w", indexKey(schema, table, name), err)
	}
	defer rows.Close()
	var cols []string
	ignored := false
	for rows.Next() {
		var col, coll, ign string
		var sub int
		if err := rows.Scan(&col, &sub, &coll, &ign); err != nil {
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
		ignored = ignored || strings.EqualFold(ign, "YES")
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if len(cols) == 0 {
		return changeset.Absent, nil
	}
	out := "(" + strings.Join(cols, ", ") + ")"
	if ignored {
		out += " " + changeset.Ignored
	}
	return out, nil
}

// Snapshot reads each index's state, and the columns of each table
// (which no index change may alter).
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
	for _, k := range d.tables() {
		s, t, _ := strings.Cut(strings.TrimSuffix(k, columnsSuffix), ".")
		cols, err := d.columns(ctx, s, t)
		if err != nil {
			return nil, err
		}
		out[k] = cols
	}
	return out, nil
}

// sameParts compares index states however they are quoted and spaced.
func sameParts(a, b string) bool {
	norm := func(s string) string {
		s = strings.ReplaceAll(strings.ToLower(s), " asc", "")
		return strings.NewReplacer("`", "", " ", "", "\t", "").Replace(s)
	}
	return norm(a) == norm(b)
}

// sameKey compares the key parts of two states, seen or ignored.
func sameKey(a, b string) bool {
	return sameParts(strings.TrimSuffix(a, " "+changeset.Ignored), strings.TrimSuffix(b, " "+changeset.Ignored))
}

// Plan: the table must exist; an added index must be absent (or already
// the wanted one); an ignored or dropped one must be there with the key
// parts the change starts from, and back no constraint; an ignore needs
// a server that can ignore an index.
func (d *Indexes) Plan(ctx context.Context, running State) ([]Step, error) {
	can, mysql, err := d.CanIgnore(ctx)
	if err != nil {
		return nil, err
	}
	var steps []Step
	for _, c := range d.changes {
		s, t := d.schemaOf(c.Target)
		k := indexKey(s, t, c.Name)
		q, err := changeset.IndexStatement(d.qualified(c), mysql)
		if err != nil {
			return nil, err
		}
		st := Step{Key: k, From: c.From, Running: running[k], To: c.To, How: HowSet, Command: q}
		to, _ := changeset.ParseIndexState(c.To)
		var n int
		if err := d.DB.QueryRowContext(ctx, tableExistsSQL, s, t).Scan(&n); err != nil {
			return nil, err
		}
		switch {
		case n == 0:
			st.Problem = fmt.Sprintf("%s: no table %s.%s", k, s, t)
		case sameParts(st.Running, st.To):
			st.How, st.Command = HowNone, ""
		case to.Absent || to.Ignored:
			switch {
			case st.Running == changeset.Absent:
				st.Drift = true
				st.Problem = fmt.Sprintf("%s: no such index (any more); re-run the advice", k)
			case c.From != "" && !sameKey(st.Running, c.From):
				st.Drift = true
				st.Problem = fmt.Sprintf("%s: the index is on %s, not %s; re-run the advice", k, st.Running, c.From)
			case to.Ignored && !can:
				st.Problem = fmt.Sprintf("%s: this server cannot ignore an index (MariaDB 10.6+ and MySQL 8 can): drop it instead, and a rollback re-creates it", k)
			default:
				if why, err := d.backs(ctx, s, t, c.Name); err != nil {
					return nil, err
				} else if why != "" {
					st.Problem = fmt.Sprintf("%s: it backs %s: never dropped or ignored", k, why)
				}
			}
		case st.Running != changeset.Absent && !sameKey(st.Running, st.To):
			st.Drift = true
			st.Problem = fmt.Sprintf("%s: an index of that name exists on %s, not %s; re-run the advice", k, st.Running, st.To)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// SQL of the constraint check: whether an index is the primary key or
// unique, and the foreign keys of its table (as the child, and as the
// parent), each with its columns in order.
const (
	indexUniqueSQL = `SELECT MIN(NON_UNIQUE) FROM information_schema.STATISTICS
	WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND INDEX_NAME = ?`
	foreignKeysSQL = `SELECT CONSTRAINT_NAME, IF(TABLE_SCHEMA = ? AND TABLE_NAME = ?, COLUMN_NAME, REFERENCED_COLUMN_NAME)
	FROM information_schema.KEY_COLUMN_USAGE
	WHERE REFERENCED_TABLE_NAME IS NOT NULL AND (TABLE_SCHEMA = ? AND TABLE_NAME = ? OR REFERENCED_TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME = ?)
	ORDER BY CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`
)

// backs says which constraint an index backs ("" for none): the
// primary key, a unique constraint, or a foreign key whose columns (on
// either side) are a left prefix of the index's.
func (d *Indexes) backs(ctx context.Context, schema, table, name string) (string, error) {
	if strings.EqualFold(name, "PRIMARY") {
		return "the primary key", nil
	}
	var nonUnique sql.NullInt64
	if err := d.DB.QueryRowContext(ctx, indexUniqueSQL, schema, table, name).Scan(&nonUnique); err != nil {
		return "", fmt.Errorf("index %s: %w", indexKey(schema, table, name), err)
	}
	if nonUnique.Valid && nonUnique.Int64 == 0 {
		return "a unique constraint", nil
	}
	p, err := d.parts(ctx, schema, table, name)
	if err != nil {
		return "", err
	}
	st, err := changeset.ParseIndexState(p)
	if err != nil || st.Absent {
		return "", err
	}
	rows, err := d.DB.QueryContext(ctx, foreignKeysSQL, schema, table, schema, table, schema, table)
	if err != nil {
		return "", fmt.Errorf("foreign keys of %s.%s: %w", schema, table, err)
	}
	defer rows.Close()
	fks := map[string][]string{}
	var order []string
	for rows.Next() {
		var fk, col string
		if err := rows.Scan(&fk, &col); err != nil {
			return "", err
		}
		if _, ok := fks[fk]; !ok {
			order = append(order, fk)
		}
		fks[fk] = append(fks[fk], col)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	for _, fk := range order {
		cols := fks[fk]
		if len(cols) > len(st.Parts) {
			continue
		}
		prefix := true
		for i, c := range cols {
			prefix = prefix && strings.EqualFold(st.Parts[i].Column, c)
		}
		if prefix {
			return "the foreign key " + fk, nil
		}
	}
	return "", nil
}

// qualified is c with its table in its schema.
func (d *Indexes) qualified(c changeset.Change) changeset.Change {
	s, t := d.schemaOf(c.Target)
	c.Target = s + "." + t
	return c
}

// Activate moves each index to the state want has, online, going on
// past a failure: absent ones added (then ignored when wanted), ignored
// ones seen again or the reverse, dropped ones dropped (never one that
// backs a constraint).
func (d *Indexes) Activate(ctx context.Context, want State) error {
	have, err := d.Snapshot(ctx)
	if err != nil {
		return err
	}
	_, mysql, err := d.CanIgnore(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, k := range want.Keys() {
		w, h := want[k], have[k]
		if strings.HasSuffix(k, columnsSuffix) {
			// A table's columns are never changed here: when they differ
			// from the snapshot, Verify says so.
			continue
		}
		if w == "" || sameParts(w, h) {
			continue
		}
		qs, err := d.statements(ctx, k, h, w, mysql)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, q := range qs {
			if _, err := d.DB.ExecContext(ctx, q); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", q, err))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// statements move the index of key k from state have to want, built
// from the parsed states.
func (d *Indexes) statements(ctx context.Context, k, have, want string, mysql bool) ([]string, error) {
	s, t, n, ok := splitIndexKey(k)
	if !ok {
		return nil, fmt.Errorf("ddl: %q is not an index", k)
	}
	h, err := changeset.ParseIndexState(have)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k, err)
	}
	w, err := changeset.ParseIndexState(want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k, err)
	}
	c := changeset.Change{Kind: changeset.Index, Target: s + "." + t, Name: n}
	switch {
	case w.Absent:
		if why, err := d.backs(ctx, s, t, n); err != nil {
			return nil, err
		} else if why != "" {
			return nil, fmt.Errorf("%s backs %s: never dropped", k, why)
		}
		return []string{changeset.DropIndexSQL(c)}, nil
	case h.Absent:
		c.From, c.To = changeset.Absent, changeset.IndexState{Parts: w.Parts}.String()
		q, err := changeset.AddIndexSQL(c)
		if err != nil {
			return nil, err
		}
		out := []string{q}
		if w.Ignored {
			out = append(out, changeset.VisibilitySQL(c.Target, n, true, mysql))
		}
		return out, nil
	case !sameKey(have, want):
		return nil, fmt.Errorf("%s: an index of that name exists on %s", k, have)
	}
	return []string{changeset.VisibilitySQL(c.Target, n, w.Ignored, mysql)}, nil
}

// Verify reads the indexes back, and the tables' columns when want has
// them (a rollback's snapshot): a table whose columns differ is a
// mismatch that no index change can put back.
func (d *Indexes) Verify(ctx context.Context, want State) error {
	have, err := d.Snapshot(ctx)
	if err != nil {
		return err
	}
	return compare("the schema", want, have, func(k, a, b string) bool {
		if strings.HasSuffix(k, columnsSuffix) {
			return a == b
		}
		return sameParts(a, b)
	})
}

// HandFix is the DDL that brings the index to want; a table whose
// columns changed has none: its data must come from a backup.
func (d *Indexes) HandFix(key, want string) string {
	if key == "" {
		return "check the indexes with SHOW INDEX"
	}
	if strings.HasSuffix(key, columnsSuffix) {
		return "the table's columns changed and no DDL of stacktune's brings their data back: restore the table from a backup (the columns were: " + want + ")"
	}
	s, t, n, ok := splitIndexKey(key)
	w, err := changeset.ParseIndexState(want)
	if !ok || err != nil {
		return "check the indexes with SHOW INDEX"
	}
	c := changeset.Change{Kind: changeset.Index, Target: s + "." + t, Name: n}
	if w.Absent {
		return changeset.DropIndexSQL(c) + ";"
	}
	c.From, c.To = changeset.Absent, changeset.IndexState{Parts: w.Parts}.String()
	add, err := changeset.AddIndexSQL(c)
	if err != nil {
		return "check the indexes with SHOW INDEX"
	}
	return fmt.Sprintf("if it is missing: %s; then, on MariaDB: %s; (MySQL 8: %s;)", add,
		changeset.VisibilitySQL(c.Target, n, w.Ignored, false), changeset.VisibilitySQL(c.Target, n, w.Ignored, true))
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
					ch, err := indexChange(s.Table, defaultSchema, c.Name, c.Keys)
					if err != nil {
						return nil, err
					}
					out = append(out, ch)
				default:
					return nil, fmt.Errorf("DDL: only ADD INDEX is applied: %s", nodeSQL(st))
				}
			}
		case *ast.CreateIndexStmt:
			if s.KeyType != ast.IndexKeyTypeNone {
				return nil, fmt.Errorf("DDL: only plain indexes are applied: %s", nodeSQL(st))
			}
			ch, err := indexChange(s.Table, defaultSchema, s.IndexName, s.IndexPartSpecifications)
			if err != nil {
				return nil, err
			}
			out = append(out, ch)
		default:
			return nil, fmt.Errorf("DDL: only ALTER TABLE ... ADD INDEX and CREATE INDEX are applied: %s", nodeSQL(st))
		}
	}
	return out, nil
}

// indexChange is the change adding index name on table over parts (a
// table without a schema is in defaultSchema), its key parts taken from
// the parsed statement: columns with their prefix length and order;
// an expression part is an error.
func indexChange(table *ast.TableName, defaultSchema, name string, parts []*ast.IndexPartSpecification) (changeset.Change, error) {
	schema := table.Schema.O
	if schema == "" {
		schema = defaultSchema
	}
	kps := make([]changeset.KeyPart, len(parts))
	for i, k := range parts {
		if k.Expr != nil || k.Column == nil {
			return changeset.Change{}, fmt.Errorf("DDL: index %s: only columns are applied, not the expression %s", name, nodeSQL(k))
		}
		kps[i] = changeset.KeyPart{Column: k.Column.Name.O, Length: max(k.Length, 0), Desc: k.Desc}
	}
	c := changeset.Change{Kind: changeset.Index, Target: schema + "." + table.Name.O, Name: name,
		From: changeset.Absent, To: changeset.FormatKeyParts(kps), Activation: changeset.Dynamic, Finding: "index"}
	if err := c.Check(); err != nil {
		return changeset.Change{}, fmt.Errorf("DDL: %w", err)
	}
	return c, nil
}

func nodeSQL(n ast.Node) string {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreNameBackQuotes|format.RestoreKeyWordUppercase, &b)); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return b.String()
}
