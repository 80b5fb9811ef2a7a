package indexadv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// measurement is one query on the copy: EXPLAIN's rows and plan, and the
// median time.
type measurement struct {
	rows int64
	ms   float64
	plan string
	// tables are the plan's table accesses, for the index it uses.
	tables []QueryPlanTable
}

// prover runs queries on the throwaway copy.
type prover struct {
	db      *sql.DB
	runs    int
	timeout time.Duration        // per timed run
	queries map[string]*analyzed // by class id
	// clock times the runs (time.Now when nil); tests give one whose
	// runs get faster, to show that time proves nothing.
	clock func() time.Time
	// writes are the workload's write classes, replayed for each kept
	// index's write cost; scale is per table (schema.table) the source's
	// rows over the copy's.
	writes []writeClass
	scale  map[string]float64
}

func (p *prover) now() time.Time {
	if p.clock != nil {
		return p.clock()
	}
	return time.Now()
}

// measure EXPLAINs and times a query: the median of p.runs runs.
func (p *prover) measure(ctx context.Context, q *analyzed) (measurement, error) {
	conn, err := useConn(ctx, p.db, q.db)
	if err != nil {
		return measurement{}, err
	}
	defer conn.Close()
	plan, err := Explain(ctx, conn, q.q.Explain)
	if err != nil {
		return measurement{}, err
	}
	times := make([]float64, 0, p.runs)
	for i := 0; i < p.runs; i++ {
		el, err := p.timed(ctx, conn, q.q.Explain)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			// Too slow to time again: count the bound, once.
			return measurement{rows: plan.Rows, ms: float64(p.timeout.Milliseconds()), plan: PlanSummary(plan) + fmt.Sprintf("; timed out after %s", p.timeout), tables: plan.Tables}, nil
		}
		if err != nil {
			return measurement{}, err
		}
		times = append(times, el)
	}
	sort.Float64s(times)
	return measurement{rows: plan.Rows, ms: times[len(times)/2], plan: PlanSummary(plan), tables: plan.Tables}, nil
}

// timed runs a query once, reading every row, within p.timeout; it
// returns the time in ms.
func (p *prover) timed(ctx context.Context, conn *sql.Conn, query string) (float64, error) {
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	start := p.now()
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
	}
	err = rows.Err()
	rows.Close()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return float64(p.now().Sub(start).Microseconds()) / 1000, err
}

// PlanSummary is a one-line description of a plan.
func PlanSummary(p *QueryPlan) string {
	var parts []string
	for _, t := range p.Tables {
		s := t.Table + ": " + t.Access
		if t.Key != "" {
			s += "(" + t.Key + ")"
		}
		parts = append(parts, fmt.Sprintf("%s, %d rows", s, t.Rows))
	}
	s := strings.Join(parts, "; ")
	if p.Filesort {
		s += "; filesort"
	}
	if p.Temporary {
		s += "; temporary table"
	}
	return s
}

func (p *prover) exec(ctx context.Context, q string) error {
	_, err := p.db.ExecContext(ctx, q)
	return err
}

func (p *prover) add(ctx context.Context, c *Candidate) error {
	if err := p.exec(ctx, fmt.Sprintf("ALTER TABLE %s ADD INDEX %s (%s)", qualified(c.Schema, c.Table), quoteIdent(c.Name()), strings.Join(colStrings(c.Columns), ", "))); err != nil {
		return err
	}
	return p.exec(ctx, "ANALYZE TABLE "+qualified(c.Schema, c.Table))
}

func (p *prover) drop(ctx context.Context, c *Candidate) error {
	if err := p.exec(ctx, fmt.Sprintf("ALTER TABLE %s DROP INDEX %s", qualified(c.Schema, c.Table), quoteIdent(c.Name()))); err != nil {
		return err
	}
	return p.exec(ctx, "ANALYZE TABLE "+qualified(c.Schema, c.Table))
}

func colStrings(cs []IndexCol) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

// SQL of the size and write-cost measurements.
const (
	sqlIndexSize = `SELECT stat_value * @@innodb_page_size FROM mysql.innodb_index_stats
WHERE database_name = ? AND table_name = ? AND index_name = ? AND stat_name = 'size'`
	sqlWritableColumns = `SELECT COLUMN_NAME FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND EXTRA NOT LIKE '%auto_increment%' AND EXTRA NOT LIKE '%GENERATED%'
AND EXTRA NOT LIKE '%VIRTUAL%' AND EXTRA NOT LIKE '%PERSISTENT%' AND EXTRA NOT LIKE '%STORED%' ORDER BY ORDINAL_POSITION`
	// writeRows is how many rows the write-cost measurement inserts.
	writeRows = 1000
)

func (p *prover) indexSize(ctx context.Context, c *Candidate) int64 {
	var n sql.NullFloat64
	if err := p.db.QueryRowContext(ctx, sqlIndexSize, c.Schema, c.Table, c.Name()).Scan(&n); err != nil {
		return 0
	}
	return int64(n.Float64)
}

// writeCost times inserting writeRows copies of existing rows in a
// transaction that is rolled back (median of 3), in ms; -1 when the table
// cannot take such rows (unique keys, no rows).
func (p *prover) writeCost(ctx context.Context, schema, table string) float64 {
	rows, err := p.db.QueryContext(ctx, sqlWritableColumns, schema, table)
	if err != nil {
		return -1
	}
	var cols []string
	for rows.Next() {
		var c string
		if rows.Scan(&c) == nil {
			cols = append(cols, quoteIdent(c))
		}
	}
	rows.Close()
	if len(cols) == 0 {
		return -1
	}
	list := strings.Join(cols, ", ")
	q := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s LIMIT %d", qualified(schema, table), list, list, qualified(schema, table), writeRows)
	var times []float64
	for i := 0; i < 3; i++ {
		tx, err := p.db.BeginTx(ctx, nil)
		if err != nil {
			return -1
		}
		start := time.Now()
		_, err = tx.ExecContext(ctx, q)
		el := float64(time.Since(start).Microseconds()) / 1000
		_ = tx.Rollback()
		if err != nil {
			return -1
		}
		times = append(times, el)
	}
	sort.Float64s(times)
	return times[1]
}

// rowsFactor is how many times fewer rows EXPLAIN must estimate for a
// query with an index than without it for the index to be proven.
const rowsFactor = 2

// indexRef names a candidate index as plans show it: its name, and the
// names its table has in a query (the aliases; nil: any table).
type indexRef struct {
	name   string
	tables map[string]bool
}

// judge says whether an index helped one query on the copy, and why not
// when it did not. The plan is the proof: EXPLAIN on the copy must choose
// the index for the query (its key, or one of an index_merge's) and
// estimate at most 1/rowsFactor of the rows examined without it. Time
// never proves an index: a query timed faster with the same plan, or
// with the same rows, is noise or a warmer cache (a user saw "proofs"
// at 14 -> 14 rows on an unchanged plan). It can still veto one: a plan
// that examines fewer rows through random lookups can be the slower one.
// "Longer" allows the timing's noise: 10%, or 0.2 ms on a query that
// fast.
func judge(before, after measurement, ix indexRef) (why string, ok bool) {
	chosen := usesIndex(after.tables, ix)
	cut := after.rows*rowsFactor <= before.rows
	slower := after.ms > before.ms*1.1 && after.ms-before.ms > 0.2
	switch {
	case !chosen && samePlan(before.tables, after.tables):
		return fmt.Sprintf("the plan did not change: key %s, rows %d → %d", planKeys(before.tables), before.rows, after.rows), false
	case !chosen:
		return fmt.Sprintf("EXPLAIN did not choose %s: key %s → %s, rows %d → %d", ix.name, planKeys(before.tables), planKeys(after.tables), before.rows, after.rows), false
	case !cut:
		return fmt.Sprintf("did not halve the rows examined: EXPLAIN chose %s, rows %d → %d", ix.name, before.rows, after.rows), false
	case slower:
		return fmt.Sprintf("halved the rows examined (%d -> %d) but took longer on the copy (%.2f ms -> %.2f ms)",
			before.rows, after.rows, before.ms, after.ms), false
	}
	return "", true
}

// usesIndex reports whether a plan reads one of ix's tables through ix:
// as its key, or as one of the keys of an index_merge.
func usesIndex(tables []QueryPlanTable, ix indexRef) bool {
	for _, t := range tables {
		if ix.tables != nil && !ix.tables[strings.ToLower(t.Table)] {
			continue
		}
		for _, k := range strings.Split(t.Key, ",") {
			if strings.EqualFold(strings.TrimSpace(k), ix.name) {
				return true
			}
		}
	}
	return false
}

// samePlan reports whether two plans read the same tables in the same
// order, the same way through the same keys (the rows may differ: the
// copy's statistics are read again after each index change).
func samePlan(a, b []QueryPlanTable) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Table != b[i].Table || !strings.EqualFold(a[i].Access, b[i].Access) || !strings.EqualFold(a[i].Key, b[i].Key) {
			return false
		}
	}
	return true
}

// planKeys names the keys of a plan: the key of its one table ("none
// (full scan)" without one), or each table's, "table key", joined.
func planKeys(tables []QueryPlanTable) string {
	var out []string
	for _, t := range tables {
		k := t.Key
		switch {
		case k != "" && strings.EqualFold(t.Access, "index_merge"):
			k = "index_merge(" + k + ")"
		case k == "" && t.FullScan():
			k = "none (full scan)"
		case k == "":
			k = "none (" + t.Access + ")"
		}
		if len(tables) > 1 {
			k = t.Table + " " + k
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return "unknown"
	}
	return strings.Join(out, ", ")
}

// notNeeded says a candidate can go: without it, its queries are within
// 10% of the rows and 20% (or 0.2 ms) of the time they take with it.
func notNeeded(with, without measurement) bool {
	return float64(without.rows) <= float64(with.rows)*1.1 && (without.ms <= with.ms*1.2 || without.ms-with.ms < 0.2)
}

// proveTable tries the candidates of one table on the copy. It returns the
// proposals kept and the rejected ones with their reasons.
func (p *prover) proveTable(ctx context.Context, schema, table string, cands []*Candidate) (kept, rejected []Proposal, err error) {
	ids := map[string]bool{}
	for _, c := range cands {
		for _, q := range c.Queries {
			ids[q] = true
		}
	}
	before := map[string]measurement{}
	for _, id := range sortedKeys(ids) {
		m, err := p.measure(ctx, p.queries[id])
		if err != nil {
			return nil, nil, fmt.Errorf("measuring %s before: %w", id, err)
		}
		before[id] = m
	}
	writeBefore := p.writeCost(ctx, schema, table)
	active := map[*Candidate]bool{}
	reason := map[*Candidate]string{}
	for _, c := range cands {
		if err := p.add(ctx, c); err != nil {
			reason[c] = "could not be created on the copy: " + err.Error()
			continue
		}
		active[c] = true
	}
	measureAll := func(cs []string) (map[string]measurement, error) {
		out := map[string]measurement{}
		for _, id := range cs {
			m, err := p.measure(ctx, p.queries[id])
			if err != nil {
				return nil, err
			}
			out[id] = m
		}
		return out, nil
	}
	with, err := measureAll(sortedKeys(ids))
	if err != nil {
		return nil, nil, err
	}
	if len(active) > 1 {
		for _, c := range cands {
			// One that no plan chose is left to judge, which says so with
			// the plans: without it the plans are as they were.
			if !active[c] || !p.chosen(c, with) {
				continue
			}
			if err := p.drop(ctx, c); err != nil {
				return nil, nil, err
			}
			without, err := measureAll(c.Queries)
			if err != nil {
				return nil, nil, err
			}
			needed := false
			for _, id := range c.Queries {
				if !notNeeded(with[id], without[id]) {
					needed = true
				}
			}
			if needed {
				if err := p.add(ctx, c); err != nil {
					return nil, nil, err
				}
			} else {
				active[c] = false
				reason[c] = "not needed: the other candidates serve its queries as well without it"
			}
		}
	}
	after, err := measureAll(sortedKeys(ids))
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cands {
		if !active[c] {
			continue
		}
		ok, whys := false, []string{}
		for _, id := range c.Queries {
			why, h := judge(before[id], after[id], p.ref(c, id))
			if len(c.Queries) > 1 {
				why = id + ": " + why
			}
			if h {
				ok = true
			} else if !slices.Contains(whys, why) {
				whys = append(whys, why)
			}
		}
		if !ok {
			active[c] = false
			reason[c] = strings.Join(whys, "; ")
			if err := p.drop(ctx, c); err != nil {
				return nil, nil, err
			}
		}
	}
	writeAfter := p.writeCost(ctx, schema, table)
	for _, c := range cands {
		pr := Proposal{
			Action: ActionAdd, Index: c.Name(), Reason: ReasonQuery, perQueryMS: map[string][2]float64{},
			Table: schema + "." + table, Columns: c.ColumnNames(), DDL: c.DDL(), Queries: c.Queries,
			Covering: c.Covering, Reasons: c.Reasons, WriteRows: writeRows,
			WriteBeforeMS: writeBefore, WriteAfterMS: writeAfter,
		}
		for _, id := range c.Queries {
			pr.RowsBefore += before[id].rows
			pr.RowsAfter += after[id].rows
			pr.TimeBeforeMS += before[id].ms
			pr.TimeAfterMS += after[id].ms
			pr.perQueryMS[id] = [2]float64{before[id].ms, after[id].ms}
			pr.Evidence.Plans = append(pr.Evidence.Plans, Evidence{Query: id, PlanBefore: before[id].plan, PlanAfter: after[id].plan,
				RowsBefore: before[id].rows, RowsAfter: after[id].rows, Chosen: usesIndex(after[id].tables, p.ref(c, id))})
		}
		if active[c] {
			pr.IndexBytes = p.indexSize(ctx, c)
			if ws := writesOf(p.writes, schema, table); len(ws) > 0 {
				wc, err := p.marginal(ctx, c, ws, p.scale[schema+"."+table])
				if err != nil {
					return nil, nil, err
				}
				pr.WriteCost = wc
			} else {
				pr.WriteCost = &WriteCost{IndexBytes: int64(float64(pr.IndexBytes) * max(p.scale[schema+"."+table], 1))}
			}
			pr.Change = c.Change()
			pr.Change.Evidence = pr.evidence()
			kept = append(kept, pr)
		} else {
			pr.Rejected = reason[c]
			rejected = append(rejected, pr)
		}
	}
	return kept, rejected, nil
}

// chosen reports whether the plan of any of c's queries in ms uses c.
func (p *prover) chosen(c *Candidate, ms map[string]measurement) bool {
	for _, id := range c.Queries {
		if usesIndex(ms[id].tables, p.ref(c, id)) {
			return true
		}
	}
	return false
}

// ref is candidate c as the plans of query id name it: its index name
// and the names (aliases) its table has in the query; any table when
// the query's tables are not known.
func (p *prover) ref(c *Candidate, id string) indexRef {
	ix := indexRef{name: c.Name()}
	q := p.queries[id]
	if q == nil {
		return ix
	}
	for _, t := range q.q.Tables {
		if !strings.EqualFold(t.Name, c.Table) || !strings.EqualFold(schemaOf(t, q.db), c.Schema) {
			continue
		}
		if ix.tables == nil {
			ix.tables = map[string]bool{}
		}
		name := t.Name
		if t.Alias != "" {
			name = t.Alias
		}
		ix.tables[strings.ToLower(name)] = true
	}
	return ix
}

// evidence is what the copy showed, in words, for the change's comments:
// the plans and EXPLAIN's rows before and after, then the time.
func (p Proposal) evidence() []string {
	out := []string{fmt.Sprintf("proven on a copy: rows examined %d -> %d in plans that use the index (EXPLAIN); time %.2f ms -> %.2f ms, index %d bytes",
		p.RowsBefore, p.RowsAfter, p.TimeBeforeMS, p.TimeAfterMS, p.IndexBytes)}
	if p.WriteBeforeMS >= 0 && p.WriteAfterMS >= 0 {
		out = append(out, fmt.Sprintf("write cost: %d inserts %.2f ms -> %.2f ms with the table's proposals", p.WriteRows, p.WriteBeforeMS, p.WriteAfterMS))
	}
	for _, why := range p.Reasons {
		out = append(out, "why: "+why)
	}
	for _, ev := range p.Evidence.Plans {
		out = append(out, fmt.Sprintf("%s plan before: %s (rows examined %d)", ev.Query, ev.PlanBefore, ev.RowsBefore),
			fmt.Sprintf("%s plan after: %s (rows examined %d)", ev.Query, ev.PlanAfter, ev.RowsAfter))
	}
	return out
}
