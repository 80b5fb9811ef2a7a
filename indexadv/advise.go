package indexadv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/internal/sandbox"
	"github.com/stacktune/stacktune/mysqlvar"
)

// Options configure Run.
type Options struct {
	// Classes are the digest classes to advise on, most important first.
	Classes []digest.Class
	// Source is the user's server, used read-only unless Apply is set.
	Source *sql.DB
	// Database is the default database for classes that name none.
	Database string
	// RowLimit is the most rows copied per table; above it a sample is
	// copied (default 200000).
	RowLimit int64
	// Runs is how many timed runs of each query are made, the median kept
	// (default 5).
	Runs int
	// QueryTimeout bounds each timed run on the copy (default 30s); a query
	// that takes longer is counted at the bound and not run again.
	QueryTimeout time.Duration
	// Sandbox configures the throwaway MariaDB.
	Sandbox sandbox.MariaDBOptions
	// NPlusOneCalls is the call count from which a class returning about
	// one row per call is reported as an N+1 pattern (default 1000).
	NPlusOneCalls int64
}

// Result is the advice: the shape of `stacktune indexes --format json`.
type Result struct {
	Proposals []Proposal `json:"proposals"`
	Skipped   []Skip     `json:"skipped"`
	// Rejected are candidates tried on the copy that did not help.
	Rejected []Proposal `json:"rejected"`
	// Existing are duplicate and redundant existing indexes.
	Existing []Finding     `json:"existing_indexes"`
	Queries  []QueryReport `json:"queries"`
	Copies   []Copy        `json:"copies"`
	// Covered are candidates an existing index already serves.
	Covered []string `json:"covered,omitempty"`
	// DDL is one ALTER TABLE per table adding all of its proposals, so
	// each table is rebuilt once: the statements of Changes.
	DDL []TableDDL `json:"ddl"`
	// Changes are the proposals as a change set: what `stacktune apply
	// --ddl` reads from this JSON (or from --format sql).
	Changes *changeset.Set `json:"changes"`
	// Applied lists the DDL the caller ran on the user's server (with
	// stacktune apply's transaction); Run never writes there.
	Applied []string `json:"applied,omitempty"`
	// Server is the throwaway server's version.
	Server string `json:"proof_server,omitempty"`
}

// Proposal is an index proven on the copy (or, in Result.Rejected, one
// that was not).
type Proposal struct {
	Table        string     `json:"table"`
	Columns      []string   `json:"columns"`
	DDL          string     `json:"ddl"`
	Queries      []string   `json:"queries"`
	RowsBefore   int64      `json:"rows_before"`
	RowsAfter    int64      `json:"rows_after"`
	TimeBeforeMS float64    `json:"time_before_ms"`
	TimeAfterMS  float64    `json:"time_after_ms"`
	IndexBytes   int64      `json:"index_bytes"`
	Covering     bool       `json:"covering,omitempty"`
	Reasons      []string   `json:"reasons"`
	Evidence     []Evidence `json:"evidence"`
	// WriteBeforeMS and WriteAfterMS time inserting WriteRows rows into the
	// table without and with the kept indexes of the table (-1: could not
	// be measured).
	WriteRows     int     `json:"write_rows"`
	WriteBeforeMS float64 `json:"write_before_ms"`
	WriteAfterMS  float64 `json:"write_after_ms"`
	Rejected      string  `json:"rejected,omitempty"`
	// Change is the proposal as a change, its evidence in words.
	Change changeset.Change `json:"-"`
}

// TableDDL is the DDL of one table.
type TableDDL struct {
	Table string `json:"table"`
	DDL   string `json:"ddl"`
}

// Evidence is a query's plan on the copy before and after.
type Evidence struct {
	Query      string `json:"query"`
	PlanBefore string `json:"plan_before"`
	PlanAfter  string `json:"plan_after"`
}

// Skip is a class that was not advised on, and why.
type Skip struct {
	ID     string `json:"id"`
	Query  string `json:"query,omitempty"`
	Reason string `json:"reason"`
}

// QueryReport is what was found about one class on the user's server.
type QueryReport struct {
	ID          string   `json:"id"`
	Fingerprint string   `json:"fingerprint"`
	Sample      string   `json:"sample"`
	Count       int64    `json:"count"`
	Plan        string   `json:"plan"`
	Problems    []string `json:"problems"`
}

// sqlColumnType reads a column's type on the copy.
const sqlColumnType = `SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?`

// sqlHasColumn checks a column on the user's server.
const sqlHasColumn = `SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?`

func hasColumn(ctx context.Context, db *sql.DB, schema, table, column string) bool {
	var n int
	return db.QueryRowContext(ctx, sqlHasColumn, schema, table, column).Scan(&n) == nil && n > 0
}

// systemSchemas hold the server's own tables.
var systemSchemas = map[string]bool{"mysql": true, "information_schema": true, "performance_schema": true, "sys": true}

// analyzed is a class that parsed and explained.
type analyzed struct {
	class digest.Class
	q     *Query
	db    string
}

// Run advises on opt.Classes: see the package documentation. When the
// throwaway server cannot start, it returns the findings without
// proposals together with the error.
func Run(ctx context.Context, opt Options) (*Result, error) {
	if opt.Source == nil {
		return nil, errors.New("indexadv: no source server")
	}
	if opt.RowLimit <= 0 {
		opt.RowLimit = 200000
	}
	if opt.Runs <= 0 {
		opt.Runs = 5
	}
	if opt.QueryTimeout <= 0 {
		opt.QueryTimeout = 30 * time.Second
	}
	if opt.NPlusOneCalls <= 0 {
		opt.NPlusOneCalls = 1000
	}
	res := &Result{Proposals: []Proposal{}, Skipped: []Skip{}, Rejected: []Proposal{}, Existing: []Finding{}, Queries: []QueryReport{}, Copies: []Copy{}, DDL: []TableDDL{},
		Changes: &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune indexes", Taken: time.Now().UTC(), Changes: []changeset.Change{}}}
	if srv, err := mysqlvar.Detect(ctx, opt.Source); err == nil {
		res.Changes.Server = srv.String()
	}
	var list []*analyzed
	for _, c := range opt.Classes {
		a, skip := inspect(ctx, opt, c)
		if skip != "" {
			res.Skipped = append(res.Skipped, Skip{ID: c.ID, Query: c.Fingerprint, Reason: skip})
			continue
		}
		list = append(list, a)
	}
	// Existing indexes of every table used.
	tables := map[string][2]string{}
	for _, a := range list {
		for _, t := range a.q.Tables {
			s := schemaOf(t, a.db)
			tables[s+"."+t.Name] = [2]string{s, t.Name}
		}
	}
	existing := map[string][]Index{}
	for _, k := range sortedKeys(tables) {
		st := tables[k]
		ixs, err := Indexes(ctx, opt.Source, st[0], st[1])
		if err != nil {
			return nil, err
		}
		existing[k] = ixs
		res.Existing = append(res.Existing, ExistingFindings(st[0], st[1], ixs)...)
	}
	for _, a := range list {
		r := a.report(ctx, opt)
		for _, t := range a.q.Tables {
			for _, col := range t.Funcs {
				for _, ix := range existing[schemaOf(t, a.db)+"."+t.Name] {
					if len(ix.Columns) > 0 && ix.Columns[0].Name == col {
						r.Problems = append(r.Problems, fmt.Sprintf("%s.%s is indexed (%s) but compared through a function or cast, so that index cannot be used", t.Name, col, ix.Name))
						break
					}
				}
			}
		}
		res.Queries = append(res.Queries, r)
	}
	if len(list) == 0 {
		return res, nil
	}

	box, err := sandbox.StartMariaDB(ctx, opt.Sandbox)
	if err != nil {
		// The findings stand; only the proof is missing, so nothing is
		// proposed.
		return res, fmt.Errorf("starting the throwaway MariaDB to prove the indexes: %w", err)
	}
	defer box.Stop()
	res.Server = box.Version()
	broken := map[string]string{}
	for _, k := range sortedKeys(tables) {
		st := tables[k]
		cp, err := copyTable(ctx, opt.Source, box.DB(), st[0], st[1], opt.RowLimit)
		if err != nil {
			broken[k] = err.Error()
			continue
		}
		res.Copies = append(res.Copies, cp)
	}

	cardCache := map[string]int64{}
	card := func(schema, table, col string) int64 {
		k := schema + "." + table + "." + col
		if v, ok := cardCache[k]; ok {
			return v
		}
		var n int64
		_ = box.DB().QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(DISTINCT %s) FROM %s", quoteIdent(col), qualified(schema, table))).Scan(&n)
		cardCache[k] = n
		return n
	}
	typeCache := map[string]string{}
	typeOf := func(schema, table, col string) string {
		k := schema + "." + table + "." + col
		if v, ok := typeCache[k]; ok {
			return v
		}
		var t string
		_ = box.DB().QueryRowContext(ctx, sqlColumnType, schema, table, col).Scan(&t)
		typeCache[k] = strings.ToLower(t)
		return typeCache[k]
	}
	var cands []*Candidate
	byID := map[string]*analyzed{}
	for _, a := range list {
		skip := ""
		for _, t := range a.q.Tables {
			if why, bad := broken[schemaOf(t, a.db)+"."+t.Name]; bad {
				skip = "copying the table failed: " + why
			}
		}
		if skip != "" {
			res.Skipped = append(res.Skipped, Skip{ID: a.class.ID, Query: a.class.Fingerprint, Reason: skip})
			continue
		}
		byID[a.class.ID] = a
		for _, t := range a.q.Tables {
			for _, c := range Candidates(a.class.ID, schemaOf(t, a.db), t, card) {
				if FitTypes(c, typeOf) {
					cands = append(cands, c)
					continue
				}
				res.Rejected = append(res.Rejected, Proposal{Table: c.Key(), Columns: c.ColumnNames(), DDL: c.DDL(), Queries: c.Queries,
					Rejected: "a column is not in the table on the copy (an alias or a name the analysis could not resolve)"})
			}
		}
	}
	kept, covered := Merge(cands, existing)
	Uniquify(kept, existing)
	for c, ix := range covered {
		res.Covered = append(res.Covered, fmt.Sprintf("%s(%s) for %s: already served by index %s", c.Key(), strings.Join(c.ColumnNames(), ", "), strings.Join(c.Queries, ", "), ix))
	}
	sort.Strings(res.Covered)
	p := &prover{db: box.DB(), runs: opt.Runs, timeout: opt.QueryTimeout, queries: byID}
	byTable := map[string][]*Candidate{}
	for _, c := range kept {
		byTable[c.Key()] = append(byTable[c.Key()], c)
	}
	for _, k := range sortedKeys(byTable) {
		cs := byTable[k]
		ok, rej, err := p.proveTable(ctx, cs[0].Schema, cs[0].Table, cs)
		if err != nil {
			for _, c := range cs {
				res.Rejected = append(res.Rejected, Proposal{Table: k, Columns: c.ColumnNames(), DDL: c.DDL(), Queries: c.Queries, Rejected: "the proof failed: " + err.Error()})
			}
			continue
		}
		res.Proposals = append(res.Proposals, ok...)
		res.Rejected = append(res.Rejected, rej...)
	}
	res.DDL, res.Changes.Changes = tableDDL(res.Proposals)
	return res, nil
}

// tableDDL is one ALTER TABLE per table adding its proposals, and the
// proposals' changes.
func tableDDL(ps []Proposal) ([]TableDDL, []changeset.Change) {
	cs := make([]changeset.Change, len(ps))
	for i, p := range ps {
		cs[i] = p.Change
	}
	out := []TableDDL{}
	for _, g := range changeset.ByTable(cs) {
		out = append(out, TableDDL{Table: g.Table, DDL: g.SQL() + ";"})
	}
	return out, cs
}

func schemaOf(t *TableUse, db string) string {
	if t.Schema != "" {
		return t.Schema
	}
	return db
}

// inspect parses a class's sample and checks its tables exist and EXPLAIN
// works on the user's server; it returns a skip reason otherwise.
func inspect(ctx context.Context, opt Options, c digest.Class) (*analyzed, string) {
	if strings.TrimSpace(c.Sample) == "" {
		return nil, "no sample query (the digest has only its fingerprint)"
	}
	if strings.Contains(c.Sample, "(...)") {
		return nil, "no usable sample: the digest text elides a list (for performance_schema digests, enable the events_statements_current and events_statements_history_long consumers)"
	}
	db := c.SampleDB
	if db == "" {
		best := int64(-1)
		for name, n := range c.Databases {
			if n > best || (n == best && name < db) {
				db, best = name, n
			}
		}
	}
	if db == "" {
		db = opt.Database
	}
	q, err := AnalyzeWith(c.Sample, func(schema, table, column string) bool {
		if schema == "" {
			schema = db
		}
		return hasColumn(ctx, opt.Source, schema, table, column)
	})
	switch {
	case errors.Is(err, ErrNoTables):
		return nil, "reads no table: no index to propose"
	case errors.Is(err, ErrUnsupported):
		return nil, "not a SELECT, UPDATE or DELETE: no index to propose"
	case errors.Is(err, ErrPlaceholder):
		return nil, "no usable sample: " + err.Error() + " (for performance_schema digests, enable the events_statements_current and events_statements_history_long consumers)"
	case err != nil:
		return nil, "the parser cannot read the sample: " + err.Error()
	}
	for _, t := range q.Tables {
		s := schemaOf(t, db)
		if systemSchemas[strings.ToLower(s)] {
			return nil, fmt.Sprintf("reads the system schema %s: no index to propose", s)
		}
		if s == "" {
			return nil, fmt.Sprintf("no database for table %s (give --db)", t.Name)
		}
		ok, err := TableExists(ctx, opt.Source, s, t.Name)
		if err != nil {
			return nil, err.Error()
		}
		if !ok {
			return nil, fmt.Sprintf("table %s.%s no longer exists", s, t.Name)
		}
	}
	return &analyzed{class: c, q: q, db: db}, ""
}

// report explains the class on the user's server and lists its problems.
func (a *analyzed) report(ctx context.Context, opt Options) QueryReport {
	c := a.class
	r := QueryReport{ID: c.ID, Fingerprint: c.Fingerprint, Sample: c.Sample, Count: c.Count, Problems: append([]string{}, a.q.Issues...)}
	conn, err := useConn(ctx, opt.Source, a.db)
	if err == nil {
		var plan *QueryPlan
		plan, err = Explain(ctx, conn, a.q.Explain)
		conn.Close()
		if err == nil {
			r.Plan = PlanSummary(plan)
			for _, t := range plan.Tables {
				if t.FullScan() {
					r.Problems = append(r.Problems, fmt.Sprintf("full table scan of %s (%d rows)", t.Table, t.Rows))
				}
				if t.FullIndexScan() {
					r.Problems = append(r.Problems, fmt.Sprintf("full index scan of %s (%s, %d rows)", t.Table, t.Key, t.Rows))
				}
			}
			if plan.Filesort {
				r.Problems = append(r.Problems, "filesort")
			}
			if plan.Temporary {
				r.Problems = append(r.Problems, "temporary table")
			}
		}
	}
	if err != nil {
		r.Plan = "EXPLAIN failed: " + err.Error()
	}
	if c.RowsExaminedTotal > 1000 && c.RowsExaminedTotal > 100*max(c.RowsSentTotal, 1) {
		r.Problems = append(r.Problems, fmt.Sprintf("examines %d rows to return %d", c.RowsExaminedTotal, c.RowsSentTotal))
	}
	if c.Count >= opt.NPlusOneCalls && c.RowsSentTotal <= c.Count*3/2 && a.q.Kind == "select" {
		r.Problems = append(r.Problems, fmt.Sprintf("N+1 pattern: called %d times for about one row each; fetch them in one query (IN list or JOIN)", c.Count))
	}
	if pc := c.Plan; pc != nil && pc.Known > 0 {
		for _, x := range []struct {
			n    int64
			what string
		}{{pc.FullScans, "a full scan"}, {pc.FullJoins, "a full join"}, {pc.Filesorts, "a filesort"}, {pc.TmpTables, "a temporary table"}} {
			if x.n > 0 {
				r.Problems = append(r.Problems, fmt.Sprintf("the digest recorded %s in %d of %d calls", x.what, x.n, pc.Known))
			}
		}
	}
	return r
}
