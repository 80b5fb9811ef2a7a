package indexadv

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions
)

// Query is what Analyze learned from one statement.
type Query struct {
	// Kind is "select", "update" or "delete".
	Kind   string
	Tables []*TableUse
	// Explain is the SELECT to EXPLAIN: the statement itself for a SELECT,
	// a SELECT of the same tables, WHERE, ORDER BY and LIMIT for UPDATE and
	// DELETE, so nothing is ever written.
	Explain string
	// Issues are problems visible in the text alone: functions or casts on
	// columns, leading wildcards, OR across different columns.
	Issues []string
}

// TableUse is how a statement uses one table.
type TableUse struct {
	Schema, Name, Alias string
	// Eq are columns compared to constants for equality (=, <=>, IN,
	// IS NULL), in order of appearance, without repeats.
	Eq []string
	// JoinEq are join keys: columns compared to another table's columns.
	// They make an index's lookup column when the table is read second,
	// which is likely when it has no condition of its own.
	JoinEq []string
	// Range are columns with a range condition (<, >, BETWEEN, LIKE 'x%').
	Range []string
	// Or holds, when the WHERE has an OR whose branches all test this
	// table, one predicate set per branch.
	Or []Branch
	// Order and Group are the ORDER BY and GROUP BY columns of this table,
	// set only when every item is a plain column of this table.
	Order []OrderCol
	Group []string
	// Columns are every column of this table the statement reads; Star is
	// set when it reads them all (SELECT * or t.*).
	Columns []string
	Star    bool
	// Funcs are columns compared through a function or cast.
	Funcs []string
}

// Branch is one side of an OR.
type Branch struct {
	Eq    []string
	Range []string
}

// OrderCol is one ORDER BY item.
type OrderCol struct {
	Column string
	Desc   bool
}

// Errors of Analyze, for the skip reasons.
var (
	ErrUnsupported = errors.New("not a SELECT, UPDATE or DELETE")
	ErrPlaceholder = errors.New("the sample has placeholders (?) instead of values")
	ErrNoTables    = errors.New("reads no table")
)

// Resolver reports whether table (in schema, "" for the default database)
// has column; Analyze uses it to attribute unqualified columns of
// statements that read several tables.
type Resolver func(schema, table, column string) bool

// Analyze parses one statement with the tidb MySQL parser.
func Analyze(sql string) (*Query, error) { return AnalyzeWith(sql, nil) }

// AnalyzeWith is Analyze with a resolver for unqualified columns of
// statements that read several tables (nil: such columns are ignored).
func AnalyzeWith(sql string, resolve Resolver) (q *Query, err error) {
	defer func() {
		// The parser is generated code; a panic on strange input must not
		// take the command down.
		if r := recover(); r != nil {
			q, err = nil, fmt.Errorf("parser failure: %v", r)
		}
	}()
	p := parser.New()
	stmts, _, err := p.Parse(sql, "", "")
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if len(stmts) != 1 {
		return nil, fmt.Errorf("parse: %d statements, want 1", len(stmts))
	}
	a := &analyzer{q: &Query{}, resolve: resolve}
	switch s := stmts[0].(type) {
	case *ast.SelectStmt:
		a.q.Kind = "select"
		if s.SelectIntoOpt != nil {
			// Timing it on the copy would write a file or variables.
			return nil, fmt.Errorf("SELECT ... INTO: %w", ErrUnsupported)
		}
		if hasParam(s) {
			return nil, ErrPlaceholder
		}
		if err := a.selectStmt(s); err != nil {
			return nil, err
		}
		a.q.Explain = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(sql), ";"))
	case *ast.UpdateStmt:
		if err := a.write("update", hasParam(s), s.TableRefs, s.Where, s.Order, s.Limit); err != nil {
			return nil, err
		}
	case *ast.DeleteStmt:
		if err := a.write("delete", hasParam(s), s.TableRefs, s.Where, s.Order, s.Limit); err != nil {
			return nil, err
		}
		if s.TableRefs == nil {
			return nil, ErrUnsupported
		}
		a.from(s.TableRefs.TableRefs)
		a.where(s.Where)
		a.order(s.Order)
		a.q.Explain, err = selectOf(s.TableRefs, s.Where, s.Order, s.Limit)
		if err != nil {
			return nil, err
		}
	default:
		return nil, ErrUnsupported
	}
	if len(a.q.Tables) == 0 {
		return nil, ErrNoTables
	}
	return a.q, nil
}

// selectOf builds SELECT * FROM refs WHERE where ORDER BY order LIMIT limit.
// write analyses an UPDATE or DELETE: its tables, WHERE and ORDER BY, and
// the SELECT of the same rows that EXPLAIN is run on (the statement itself
// never is).
func (a *analyzer) write(kind string, param bool, refs *ast.TableRefsClause, where ast.ExprNode, order *ast.OrderByClause, limit *ast.Limit) error {
	a.q.Kind = kind
	if param {
		return ErrPlaceholder
	}
	if refs == nil {
		return ErrUnsupported
	}
	a.from(refs.TableRefs)
	a.where(where)
	a.order(order)
	var err error
	a.q.Explain, err = selectOf(refs, where, order, limit)
	return err
}

func selectOf(refs *ast.TableRefsClause, where ast.ExprNode, order *ast.OrderByClause, limit *ast.Limit) (string, error) {
	var sb strings.Builder
	ctx := format.NewRestoreCtx(format.DefaultRestoreFlags, &sb)
	sb.WriteString("SELECT * FROM ")
	if err := refs.TableRefs.Restore(ctx); err != nil {
		return "", fmt.Errorf("rewrite to SELECT: %w", err)
	}
	if where != nil {
		sb.WriteString(" WHERE ")
		if err := where.Restore(ctx); err != nil {
			return "", fmt.Errorf("rewrite to SELECT: %w", err)
		}
	}
	if order != nil {
		sb.WriteString(" ")
		if err := order.Restore(ctx); err != nil {
			return "", fmt.Errorf("rewrite to SELECT: %w", err)
		}
	}
	if limit != nil {
		sb.WriteString(" ")
		if err := limit.Restore(ctx); err != nil {
			return "", fmt.Errorf("rewrite to SELECT: %w", err)
		}
	}
	return sb.String(), nil
}

type paramFinder struct{ found bool }

func (f *paramFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(ast.ParamMarkerExpr); ok {
		f.found = true
		return n, true
	}
	return n, false
}
func (f *paramFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func hasParam(n ast.Node) bool {
	f := &paramFinder{}
	n.Accept(f)
	return f.found
}

type analyzer struct {
	q       *Query
	resolve Resolver
	// aliases are the select list's names, which GROUP BY, ORDER BY and
	// HAVING see before the tables' columns: an alias of a plain column
	// maps to it, one of an expression (MAX(created_at) AS updated) to
	// nil, so it is no column of any table.
	aliases map[string]*ast.ColumnName
}

func (a *analyzer) issue(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	for _, v := range a.q.Issues {
		if v == s {
			return
		}
	}
	a.q.Issues = append(a.q.Issues, s)
}

func (a *analyzer) selectStmt(s *ast.SelectStmt) error {
	if s.From == nil || s.From.TableRefs == nil {
		return ErrNoTables
	}
	a.from(s.From.TableRefs)
	if s.Fields != nil {
		for _, f := range s.Fields.Fields {
			if f.WildCard != nil {
				for _, t := range a.q.Tables {
					if f.WildCard.Table.L == "" || strings.EqualFold(f.WildCard.Table.O, t.ref()) {
						t.Star = true
					}
				}
				continue
			}
			a.columns(f.Expr)
		}
	}
	a.where(s.Where)
	if s.Fields != nil {
		for _, f := range s.Fields.Fields {
			if f.AsName.L == "" {
				continue
			}
			if a.aliases == nil {
				a.aliases = map[string]*ast.ColumnName{}
			}
			var col *ast.ColumnName
			if c, ok := f.Expr.(*ast.ColumnNameExpr); ok {
				col = c.Name
			}
			a.aliases[f.AsName.L] = col
		}
	}
	if s.GroupBy != nil {
		var cols []string
		t := a.byItems(s.GroupBy.Items, func(c string, _ bool) { cols = append(cols, c) })
		if t != nil {
			t.Group = cols
		}
	}
	a.order(s.OrderBy)
	if s.Having != nil {
		a.columns(s.Having.Expr)
	}
	return nil
}

func (a *analyzer) order(o *ast.OrderByClause) {
	if o == nil {
		return
	}
	var cols []OrderCol
	t := a.byItems(o.Items, func(c string, desc bool) { cols = append(cols, OrderCol{c, desc}) })
	if t != nil {
		t.Order = cols
	}
}

// byItems calls add for each item when they are all plain columns of one
// table, and returns that table.
func (a *analyzer) byItems(items []*ast.ByItem, add func(string, bool)) *TableUse {
	var table *TableUse
	for _, it := range items {
		a.columns(it.Expr)
	}
	names := make([]string, len(items))
	for i, it := range items {
		c, ok := it.Expr.(*ast.ColumnNameExpr)
		if !ok {
			return nil
		}
		t, name := a.column(c.Name)
		if t == nil || (table != nil && t != table) {
			return nil
		}
		table, names[i] = t, name
	}
	for i, it := range items {
		add(names[i], it.Desc)
	}
	return table
}

// column resolves a column reference to its table and column name,
// seeing the select list's aliases first (a.aliases: set once the WHERE
// clause, which cannot see them, is done); an alias of an expression is
// no table's column.
func (a *analyzer) column(c *ast.ColumnName) (*TableUse, string) {
	if c == nil {
		return nil, ""
	}
	if c.Table.L == "" {
		if col, ok := a.aliases[c.Name.L]; ok {
			if col == nil {
				return nil, ""
			}
			if col != c {
				return a.table(col), col.Name.L
			}
		}
	}
	return a.table(c), c.Name.L
}

func (t *TableUse) ref() string {
	if t.Alias != "" {
		return t.Alias
	}
	return t.Name
}

// from collects the tables of a FROM clause and the join keys of ON.
func (a *analyzer) from(n ast.ResultSetNode) {
	switch n := n.(type) {
	case *ast.Join:
		if n.Left != nil {
			a.from(n.Left)
		}
		if n.Right != nil {
			a.from(n.Right)
		}
		if n.On != nil {
			a.where(n.On.Expr)
		}
	case *ast.TableSource:
		switch src := n.Source.(type) {
		case *ast.TableName:
			a.q.Tables = append(a.q.Tables, &TableUse{Schema: src.Schema.O, Name: src.Name.O, Alias: n.AsName.O})
		case *ast.SelectStmt:
			// A derived table: its own tables are analysed as if they were
			// part of this statement, which is close enough for indexes.
			_ = a.selectStmt(src)
		default:
			if n.Source != nil {
				a.from(n.Source)
			}
		}
	case *ast.SelectStmt:
		_ = a.selectStmt(n)
	}
}

// table resolves a column reference to a table of the statement.
func (a *analyzer) table(c *ast.ColumnName) *TableUse {
	if c == nil {
		return nil
	}
	if c.Table.L == "" {
		if len(a.q.Tables) == 1 {
			return a.q.Tables[0]
		}
		if a.resolve == nil {
			return nil
		}
		var found *TableUse
		for _, t := range a.q.Tables {
			if a.resolve(t.Schema, t.Name, c.Name.L) {
				if found != nil {
					return nil // ambiguous
				}
				found = t
			}
		}
		return found
	}
	for _, t := range a.q.Tables {
		if strings.EqualFold(t.ref(), c.Table.O) && (c.Schema.L == "" || strings.EqualFold(c.Schema.O, t.Schema)) {
			return t
		}
	}
	for _, t := range a.q.Tables {
		if strings.EqualFold(t.Name, c.Table.O) {
			return t
		}
	}
	return nil
}

// colFinder records every column an expression reads.
type colFinder struct {
	a *analyzer
}

func (f colFinder) Enter(n ast.Node) (ast.Node, bool) {
	if c, ok := n.(*ast.ColumnNameExpr); ok {
		if t, name := f.a.column(c.Name); t != nil {
			t.Columns = addCol(t.Columns, name)
		}
	}
	if _, ok := n.(*ast.SubqueryExpr); ok {
		return n, true
	}
	return n, false
}
func (f colFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func (a *analyzer) columns(e ast.ExprNode) {
	if e != nil {
		e.Accept(colFinder{a})
	}
}

func addCol(list []string, c string) []string {
	for _, v := range list {
		if v == c {
			return list
		}
	}
	return append(list, c)
}

// where records the predicates of a WHERE (or ON) expression.
func (a *analyzer) where(e ast.ExprNode) {
	if e == nil {
		return
	}
	a.columns(e)
	for _, c := range conjuncts(e, opcode.LogicAnd) {
		if b, ok := unparen(c).(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicOr {
			a.or(b)
			continue
		}
		a.predicate(c, func(t *TableUse, col string, eq bool) {
			if eq {
				t.Eq = addCol(t.Eq, col)
			} else {
				t.Range = addCol(t.Range, col)
			}
		})
	}
}

// or records an OR: one branch per side when every branch tests columns of
// one and the same table.
func (a *analyzer) or(e *ast.BinaryOperationExpr) {
	var table *TableUse
	var branches []Branch
	cols := map[string]bool{}
	ok := true
	for _, side := range conjuncts(e, opcode.LogicOr) {
		var br Branch
		for _, c := range conjuncts(side, opcode.LogicAnd) {
			a.predicate(c, func(t *TableUse, col string, eq bool) {
				if table != nil && t != table {
					ok = false
				}
				table = t
				cols[col] = true
				if eq {
					br.Eq = addCol(br.Eq, col)
				} else {
					br.Range = addCol(br.Range, col)
				}
			})
		}
		if len(br.Eq)+len(br.Range) == 0 {
			ok = false
		}
		branches = append(branches, br)
	}
	if !ok || table == nil {
		return
	}
	if len(cols) > 1 {
		a.issue("OR across different columns (%s): one index cannot serve it; an index per branch lets the optimizer union them", strings.Join(sortedKeys(cols), ", "))
		table.Or = append(table.Or, branches...)
		return
	}
	// OR on one column is an IN list.
	for _, br := range branches {
		for _, c := range br.Eq {
			table.Eq = addCol(table.Eq, c)
		}
		for _, c := range br.Range {
			table.Range = addCol(table.Range, c)
		}
	}
}

// predicate classifies one conjunct and calls add for an indexable column.
func (a *analyzer) predicate(e ast.ExprNode, add func(t *TableUse, col string, eq bool)) {
	col := func(x ast.ExprNode) (*TableUse, string) {
		if c, ok := unparen(x).(*ast.ColumnNameExpr); ok {
			if t := a.table(c.Name); t != nil {
				return t, c.Name.Name.L
			}
		}
		return nil, ""
	}
	switch e := unparen(e).(type) {
	case *ast.BinaryOperationExpr:
		switch e.Op {
		case opcode.EQ, opcode.NullEQ, opcode.LT, opcode.LE, opcode.GT, opcode.GE:
			eq := e.Op == opcode.EQ || e.Op == opcode.NullEQ
			lt, lc := col(e.L)
			rt, rc := col(e.R)
			switch {
			case lt != nil && rt != nil:
				if eq && lt != rt { // a join key: either side can use an index
					lt.JoinEq = addCol(lt.JoinEq, lc)
					rt.JoinEq = addCol(rt.JoinEq, rc)
				}
			case lt != nil && constant(e.R):
				add(lt, lc, eq)
			case rt != nil && constant(e.L):
				add(rt, rc, eq)
			default:
				a.funcOn(e.L)
				a.funcOn(e.R)
			}
		}
	case *ast.PatternInExpr:
		if t, c := col(e.Expr); t != nil && !e.Not && e.Sel == nil {
			add(t, c, true)
		} else {
			a.funcOn(e.Expr)
		}
	case *ast.BetweenExpr:
		if t, c := col(e.Expr); t != nil && !e.Not {
			add(t, c, false)
		} else {
			a.funcOn(e.Expr)
		}
	case *ast.IsNullExpr:
		if t, c := col(e.Expr); t != nil && !e.Not {
			add(t, c, true)
		}
	case *ast.PatternLikeOrIlikeExpr:
		t, c := col(e.Expr)
		if t == nil {
			a.funcOn(e.Expr)
			return
		}
		if v, ok := unparen(e.Pattern).(ast.ValueExpr); ok {
			p := v.GetString()
			if strings.HasPrefix(p, "%") || strings.HasPrefix(p, "_") {
				a.issue("leading wildcard on %s.%s (LIKE '%s'): no index can seek it", t.Name, c, p)
				return
			}
			if !e.Not && e.IsLike {
				add(t, c, false)
			}
		}
	}
}

// funcOn reports a function or cast wrapping a column.
func (a *analyzer) funcOn(e ast.ExprNode) {
	var name string
	var args []ast.ExprNode
	switch f := unparen(e).(type) {
	case *ast.FuncCallExpr:
		name, args = f.FnName.O, f.Args
	case *ast.FuncCastExpr:
		name, args = "CAST", []ast.ExprNode{f.Expr}
	case *ast.BinaryOperationExpr:
		name, args = f.Op.String(), []ast.ExprNode{f.L, f.R}
	default:
		return
	}
	for _, x := range args {
		if c, ok := unparen(x).(*ast.ColumnNameExpr); ok {
			if t := a.table(c.Name); t != nil {
				t.Funcs = addCol(t.Funcs, c.Name.Name.L)
				a.issue("function or cast on column %s.%s (%s(...)): an index on it cannot be used; compare the bare column", t.Name, c.Name.Name.L, strings.ToUpper(name))
			}
		}
	}
}

func constant(e ast.ExprNode) bool {
	switch x := unparen(e).(type) {
	case ast.ValueExpr:
		return true
	case *ast.UnaryOperationExpr:
		return constant(x.V)
	case *ast.FuncCallExpr:
		for _, arg := range x.Args {
			if !constant(arg) {
				return false
			}
		}
		return true
	case *ast.FuncCastExpr:
		return constant(x.Expr)
	}
	return false
}

func unparen(e ast.ExprNode) ast.ExprNode {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// conjuncts splits e at top-level op (AND or OR).
func conjuncts(e ast.ExprNode, op opcode.Op) []ast.ExprNode {
	e = unparen(e)
	if b, ok := e.(*ast.BinaryOperationExpr); ok && b.Op == op {
		return append(conjuncts(b.L, op), conjuncts(b.R, op)...)
	}
	return []ast.ExprNode{e}
}
