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
	// Source is the user's server, used read-only.
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
	// NPlusOne is set when the class is an N+1 pattern (Problems then
	// holds its Problem text too); nil otherwise.
	NPlusOne *NPlusOne `json:"n_plus_one,omitempty"`
}

// NPlusOne is an N+1 pattern: a SELECT class called at least
// Options.NPlusOneCalls times for about one row per call, the signature
// of a query run once per row of another result.
type NPlusOne struct {
	// Calls is the class's call count in the digest.
	Calls int64 `json:"calls"`
	// RowsPerCall is the rows sent per call, on average.
	RowsPerCall float64 `json:"rows_per_call"`
}

// Problem is the pattern in words, as QueryReport.Problems lists it.
func (n *NPlusOne) Problem() string {
	return fmt.Sprintf("N+1 pattern: called %d times for about one row each; fetch them in one query (IN list or JOIN)", n.Calls)
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
	opt = opt.withDefaults()
	res := newResult()
	if srv, err := mysqlvar.Detect(ctx, opt.Source); err == nil {
		res.Changes.Server = srv.String()
	}
	list := inspectAll(ctx, opt, res)
	tables := tablesOf(list)
	existing, err := existingIndexes(ctx, opt.Source, tables, res)
	if err != nil {
		return nil, err
	}
	for _, a := range list {
		r := a.report(ctx, opt)
		r.Problems = append(r.Problems, a.unusableIndexes(existing)...)
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
	broken := copyTables(ctx, opt, box.DB(), tables, res)
	cands, byID := propose(list, broken, newCopyFacts(ctx, box.DB()), res)
	kept, covered := Merge(cands, existing)
	Uniquify(kept, existing)
	res.Covered = coveredNotes(covered)
	p := &prover{db: box.DB(), runs: opt.Runs, timeout: opt.QueryTimeout, queries: byID}
	proveAll(ctx, p, kept, res)
	res.DDL, res.Changes.Changes = tableDDL(res.Proposals)
	return res, nil
}

// withDefaults fills the options left zero with their documented
// defaults.
func (opt Options) withDefaults() Options {
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
	return opt
}

// newResult is an empty result whose lists are empty, not null, in JSON.
func newResult() *Result {
	return &Result{Proposals: []Proposal{}, Skipped: []Skip{}, Rejected: []Proposal{}, Existing: []Finding{}, Queries: []QueryReport{}, Copies: []Copy{}, DDL: []TableDDL{},
		Changes: &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune indexes", Taken: time.Now().UTC(), Changes: []changeset.Change{}}}
}

// inspectAll is the analysis on the user's server: the classes that
// parse and explain, the others recorded in res.Skipped with the reason.
func inspectAll(ctx context.Context, opt Options, res *Result) []*analyzed {
	var list []*analyzed
	for _, c := range opt.Classes {
		a, skip := inspect(ctx, opt, c)
		if skip != "" {
			res.Skipped = append(res.Skipped, Skip{ID: c.ID, Query: c.Fingerprint, Reason: skip})
			continue
		}
		list = append(list, a)
	}
	return list
}

// tablesOf are the tables the analysed classes use, as [schema, table]
// by "schema.table".
func tablesOf(list []*analyzed) map[string][2]string {
	tables := map[string][2]string{}
	for _, a := range list {
		for _, t := range a.q.Tables {
			s := schemaOf(t, a.db)
			tables[s+"."+t.Name] = [2]string{s, t.Name}
		}
	}
	return tables
}

// existingIndexes reads the indexes the user's server has on each table
// (by "schema.table") and records its duplicate and redundant ones in
// res.Existing.
func existingIndexes(ctx context.Context, db *sql.DB, tables map[string][2]string, res *Result) (map[string][]Index, error) {
	existing := map[string][]Index{}
	for _, k := range sortedKeys(tables) {
		st := tables[k]
		ixs, err := Indexes(ctx, db, st[0], st[1])
		if err != nil {
			return nil, err
		}
		existing[k] = ixs
		res.Existing = append(res.Existing, ExistingFindings(st[0], st[1], ixs)...)
	}
	return existing, nil
}

// unusableIndexes are the problems of existing indexes the class cannot
// use because it compares their first column through a function or cast.
func (a *analyzed) unusableIndexes(existing map[string][]Index) []string {
	var out []string
	for _, t := range a.q.Tables {
		for _, col := range t.Funcs {
			for _, ix := range existing[schemaOf(t, a.db)+"."+t.Name] {
				if len(ix.Columns) > 0 && ix.Columns[0].Name == col {
					out = append(out, fmt.Sprintf("%s.%s is indexed (%s) but compared through a function or cast, so that index cannot be used", t.Name, col, ix.Name))
					break
				}
			}
		}
	}
	return out
}

// copyTables copies each table (by "schema.table") to the throwaway
// server, recording the copies in res.Copies; it returns the tables that
// could not be copied, with the error.
func copyTables(ctx context.Context, opt Options, dst *sql.DB, tables map[string][2]string, res *Result) map[string]string {
	broken := map[string]string{}
	for _, k := range sortedKeys(tables) {
		st := tables[k]
		cp, err := copyTable(ctx, opt.Source, dst, st[0], st[1], opt.RowLimit)
		if err != nil {
			broken[k] = err.Error()
			continue
		}
		res.Copies = append(res.Copies, cp)
	}
	return broken
}

// copyFacts are the column facts the candidates are shaped by, read once
// each from the copy: cardinalities and types.
type copyFacts struct {
	ctx   context.Context
	db    *sql.DB
	cards map[string]int64
	types map[string]string
}

func newCopyFacts(ctx context.Context, db *sql.DB) *copyFacts {
	return &copyFacts{ctx: ctx, db: db, cards: map[string]int64{}, types: map[string]string{}}
}

// card is a column's distinct values on the copy (0 when it cannot be
// read): a Cardinality.
func (f *copyFacts) card(schema, table, col string) int64 {
	k := schema + "." + table + "." + col
	if v, ok := f.cards[k]; ok {
		return v
	}
	var n int64
	_ = f.db.QueryRowContext(f.ctx, fmt.Sprintf("SELECT COUNT(DISTINCT %s) FROM %s", quoteIdent(col), qualified(schema, table))).Scan(&n)
	f.cards[k] = n
	return n
}

// typeOf is a column's type on the copy, lower case ("" when it has
// none): a ColumnType.
func (f *copyFacts) typeOf(schema, table, col string) string {
	k := schema + "." + table + "." + col
	if v, ok := f.types[k]; ok {
		return v
	}
	var t string
	_ = f.db.QueryRowContext(f.ctx, sqlColumnType, schema, table, col).Scan(&t)
	f.types[k] = strings.ToLower(t)
	return f.types[k]
}

// propose is the candidate indexes of the classes whose tables were
// copied, shaped by the copy's column facts, and those classes by id. A
// class with a table that was not copied is skipped; a candidate naming
// a column the copy lacks is rejected.
func propose(list []*analyzed, broken map[string]string, facts *copyFacts, res *Result) ([]*Candidate, map[string]*analyzed) {
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
			for _, c := range Candidates(a.class.ID, schemaOf(t, a.db), t, facts.card) {
				if FitTypes(c, facts.typeOf) {
					cands = append(cands, c)
					continue
				}
				res.Rejected = append(res.Rejected, Proposal{Table: c.Key(), Columns: c.ColumnNames(), DDL: c.DDL(), Queries: c.Queries,
					Rejected: "a column is not in the table on the copy (an alias or a name the analysis could not resolve)"})
			}
		}
	}
	return cands, byID
}

// coveredNotes says, sorted, which candidates an existing index already
// serves (nil when none).
func coveredNotes(covered map[*Candidate]string) []string {
	var out []string
	for c, ix := range covered {
		out = append(out, fmt.Sprintf("%s(%s) for %s: already served by index %s", c.Key(), strings.Join(c.ColumnNames(), ", "), strings.Join(c.Queries, ", "), ix))
	}
	sort.Strings(out)
	return out
}

// proveAll proves the kept candidates table by table on the copy: those
// that help go to res.Proposals, the others to res.Rejected, and a table
// whose proof failed has all its candidates rejected with the error.
func proveAll(ctx context.Context, p *prover, kept []*Candidate, res *Result) {
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
		r.NPlusOne = &NPlusOne{Calls: c.Count, RowsPerCall: float64(c.RowsSentTotal) / float64(c.Count)}
		r.Problems = append(r.Problems, r.NPlusOne.Problem())
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
