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

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/sandbox"
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
	// Workload is every class of the window (default: Classes): its
	// write classes are replayed on the copy for each index's write cost,
	// and its reading classes' plans are the evidence of use when the
	// server counts none. WindowSeconds is the window's length.
	Workload      []digest.Class
	WindowSeconds float64
	// MinUsageWindow is the shortest window an index may be called unused
	// from (default DefaultMinUsageWindow).
	MinUsageWindow time.Duration
	// noIgnore advises as on a server that cannot ignore an index: for
	// tests, on servers that can.
	noIgnore bool
	// clock times the runs on the copy (time.Now when nil): for tests,
	// whose clocks show that time proves no index.
	clock func() time.Time
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
	// Usage is the evidence of which indexes the window used; Drops the
	// first step of each drop proposal (the index ignored where the
	// server can: FinalDrop is the second), for tune and apply.
	Usage *Usage             `json:"usage,omitempty"`
	Drops []changeset.Change `json:"drop_changes"`
}

// Proposal is an index to add, proven on the copy (or, in
// Result.Rejected, one that was not), or an existing index to drop.
type Proposal struct {
	// Action is "add" or "drop"; Reason why: "query" (an add, for the
	// classes in Queries), "unused", "duplicate" or "redundant".
	Action  Action   `json:"action"`
	Table   string   `json:"table"`
	Index   string   `json:"index"`
	Columns []string `json:"columns"`
	Reason  Reason   `json:"reason"`
	// Benefit is what it gives the workload over its window; WriteCost
	// what it costs the window's writes (nil when not measured).
	Benefit   *Benefit   `json:"benefit"`
	WriteCost *WriteCost `json:"write_cost"`
	// Evidence is what the advice rests on: the plans on the copy for
	// an add, the usage counters for an unused index, the index that
	// serves instead for a duplicate or redundant one.
	Evidence     ProposalEvidence `json:"evidence"`
	DDL          string           `json:"ddl"`
	Queries      []string         `json:"queries"`
	RowsBefore   int64            `json:"rows_before"`
	RowsAfter    int64            `json:"rows_after"`
	TimeBeforeMS float64          `json:"time_before_ms"`
	TimeAfterMS  float64          `json:"time_after_ms"`
	IndexBytes   int64            `json:"index_bytes"`
	Covering     bool             `json:"covering,omitempty"`
	Reasons      []string         `json:"reasons"`
	// WriteBeforeMS and WriteAfterMS time inserting WriteRows rows into the
	// table without and with the kept indexes of the table (-1: could not
	// be measured).
	WriteRows     int     `json:"write_rows"`
	WriteBeforeMS float64 `json:"write_before_ms"`
	WriteAfterMS  float64 `json:"write_after_ms"`
	Rejected      string  `json:"rejected,omitempty"`
	// Change is the proposal as a change, its evidence in words: for a
	// drop, its first step (the index ignored, where the server can).
	Change changeset.Change `json:"-"`
	// perQueryMS is each query's time on the copy before and after.
	perQueryMS map[string][2]float64
}

// ProposalEvidence is what a proposal rests on.
type ProposalEvidence struct {
	// Plans are the queries' plans on the copy before and after (an add).
	Plans []Evidence `json:"plans,omitempty"`
	// Usage is the window the use of the indexes was counted over, and
	// Reads what it counted of this index (an unused index).
	Usage *Usage      `json:"usage,omitempty"`
	Reads *IndexReads `json:"reads,omitempty"`
	// Of is the index that serves in its place (a duplicate or
	// redundant one), OfColumns its columns.
	Of        string   `json:"of,omitempty"`
	OfColumns []string `json:"of_columns,omitempty"`
	// Staged says how the drop is made safe: "ignore_first" (ignored,
	// measured, then dropped) or "drop_recreate" (this server cannot
	// ignore an index: dropped, and a rollback re-creates it online in
	// about RecreateSeconds).
	Staged          string  `json:"staged,omitempty"`
	RecreateSeconds float64 `json:"recreate_seconds,omitempty"`
}

// Action is what a proposal does to an index: a stable code.
type Action string

// Reason is why a proposal was made: a stable code.
type Reason string

// The proposals' actions and reasons.
const (
	ActionAdd  Action = "add"
	ActionDrop Action = "drop"

	ReasonQuery     Reason = "query"
	ReasonUnused    Reason = "unused"
	ReasonDuplicate Reason = "duplicate"
	ReasonRedundant Reason = "redundant"
)

// Codes are the actions, as docs/json.md lists them.
func (Action) Codes() []string { return []string{string(ActionAdd), string(ActionDrop)} }

// Codes are the reasons, as docs/json.md lists them.
func (Reason) Codes() []string {
	return []string{string(ReasonQuery), string(ReasonUnused), string(ReasonDuplicate), string(ReasonRedundant)}
}

// TableDDL is the DDL of one table.
type TableDDL struct {
	Table string `json:"table"`
	DDL   string `json:"ddl"`
}

// Evidence is a query's plan on the copy before and after the index,
// with EXPLAIN's estimate of the rows it examines (QueryPlan.Rows).
type Evidence struct {
	Query      string `json:"query"`
	PlanBefore string `json:"plan_before"`
	PlanAfter  string `json:"plan_after"`
	RowsBefore int64  `json:"rows_before"`
	RowsAfter  int64  `json:"rows_after"`
	// Chosen is set when the plan after reads the table through the
	// index (its key, or one of an index_merge's).
	Chosen bool `json:"chosen"`
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
	// NPlusOne is set when the class is an N+1 pattern: a SELECT class
	// called at least Options.NPlusOneCalls times for about one row per
	// call, the signature of a query run once per row of another result
	// (its Calls, RowsPerCall and Problem; Problems holds the Problem
	// too); nil otherwise.
	NPlusOne *nplusone.Pattern `json:"n_plus_one,omitempty"`
}

// nPlusOneProblem is a detected pattern in words, as
// QueryReport.Problems lists it.
func nPlusOneProblem(calls int64) string {
	return fmt.Sprintf("N+1 pattern: called %d times for about one row each; fetch them in one query (IN list or JOIN)", calls)
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
	// plan is its plan on the user's server (nil when EXPLAIN failed).
	plan *QueryPlan
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
	if err := dropProposals(ctx, opt, list, tables, res); err != nil {
		return nil, err
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
	p := &prover{db: box.DB(), runs: opt.Runs, timeout: opt.QueryTimeout, queries: byID, clock: opt.clock,
		writes: writeClasses(opt.Workload, opt.Database), scale: copyScale(ctx, opt.Source, res.Copies)}
	proveAll(ctx, p, kept, res)
	dropCosts(ctx, p, res)
	weigh(opt.Workload, res)
	var adds []Proposal
	for _, pr := range res.Proposals {
		if pr.Action == ActionAdd {
			adds = append(adds, pr)
		}
	}
	// The DDL in table order, whatever the ranking: the same advice
	// writes the same statements.
	sort.SliceStable(adds, func(i, j int) bool { return adds[i].Table < adds[j].Table })
	res.DDL, res.Changes.Changes = tableDDL(adds)
	return res, nil
}

// dropCosts measures what each drop on a copied table saves the
// window's writes: its write cost as the copy shows it (the window's
// writes replayed with and without it).
func dropCosts(ctx context.Context, p *prover, res *Result) {
	copied := map[string]bool{}
	for _, c := range res.Copies {
		copied[c.Table] = true
	}
	for i := range res.Proposals {
		pr := &res.Proposals[i]
		if pr.Action != ActionDrop || !copied[pr.Table] {
			continue
		}
		schema, table, _ := strings.Cut(pr.Table, ".")
		ws := writesOf(p.writes, schema, table)
		ixs, err := Indexes(ctx, p.db, schema, table)
		if err != nil {
			continue
		}
		for _, ix := range ixs {
			if ix.Name != pr.Index {
				continue
			}
			c := &Candidate{Schema: schema, Table: table, Columns: ix.Columns, name: ix.Name}
			if len(ws) > 0 {
				if wc, err := p.marginal(ctx, c, ws, p.scale[pr.Table]); err == nil {
					pr.WriteCost = wc
					pr.Benefit.WriteMSSaved = wc.WindowMS
				}
			}
			if pr.Evidence.Staged == "drop_recreate" {
				p.timeRecreate(ctx, c, pr)
			}
		}
	}
}

// timeRecreate times re-creating a drop's index online on the copy,
// scaled to the source's rows: what a rollback will take on a server
// that cannot ignore the index, said in its change beforehand.
func (p *prover) timeRecreate(ctx context.Context, c *Candidate, pr *Proposal) {
	if err := p.drop(ctx, c); err != nil {
		return
	}
	start := time.Now()
	if err := p.add(ctx, c); err != nil {
		return
	}
	secs := time.Since(start).Seconds() * max(p.scale[pr.Table], 1)
	pr.Evidence.RecreateSeconds = secs
	for i, e := range pr.Change.Evidence {
		if strings.HasPrefix(e, recreateWords) {
			pr.Change.Evidence[i] = fmt.Sprintf("%s %.1f s (timed on the copy, scaled to the table's rows)", recreateWords, secs)
		}
	}
}

// copyScale is per copied table the source's rows over the copy's (1
// for a whole copy).
func copyScale(ctx context.Context, src *sql.DB, copies []Copy) map[string]float64 {
	out := map[string]float64{}
	for _, c := range copies {
		out[c.Table] = 1
		if !c.Sample || c.Rows == 0 {
			continue
		}
		schema, table, _ := strings.Cut(c.Table, ".")
		var rows int64
		if src.QueryRowContext(ctx, "SELECT COALESCE(TABLE_ROWS, 0) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", schema, table).Scan(&rows) == nil && rows > c.Rows {
			out[c.Table] = float64(rows) / float64(c.Rows)
		}
	}
	return out
}

// weigh gives each proven index its benefit across the workload, refuses
// those whose write cost over the window is more than they save, and
// ranks the rest by what they save once their write cost is paid; the
// drops follow the adds.
func weigh(workload []digest.Class, res *Result) {
	classes := map[string]digest.Class{}
	for _, c := range workload {
		classes[c.ID] = c
	}
	var adds, drops []Proposal
	for _, pr := range res.Proposals {
		if pr.Action != ActionAdd {
			drops = append(drops, pr)
			continue
		}
		pr.Benefit = benefitOf(&pr, classes)
		if why := writeVerdict(&pr); why != "" {
			pr.Rejected = why
			res.Rejected = append(res.Rejected, pr)
			continue
		}
		adds = append(adds, pr)
	}
	sort.SliceStable(adds, func(i, j int) bool { return adds[i].net() > adds[j].net() })
	res.Proposals = append(adds, drops...)
}

// dropProposals adds the drops of the indexes of the schemas the classes
// use (and the default database): duplicate, redundant and, on enough
// evidence, unused ones.
func dropProposals(ctx context.Context, opt Options, list []*analyzed, tables map[string][2]string, res *Result) error {
	var schemas []string
	for _, st := range tables {
		if !slices.Contains(schemas, st[0]) {
			schemas = append(schemas, st[0])
		}
	}
	if opt.Database != "" && !slices.Contains(schemas, opt.Database) {
		schemas = append(schemas, opt.Database)
	}
	sort.Strings(schemas)
	plans, coverage := workloadPlans(ctx, opt, list)
	res.Usage = readUsage(ctx, opt.Source, schemas, opt, plans, coverage)
	d := &dropper{db: opt.Source, usage: res.Usage, ignore: canIgnore(ctx, opt.Source) && !opt.noIgnore}
	drops, err := d.drops(ctx, schemas)
	if err != nil {
		return err
	}
	for _, pr := range drops {
		if pr.Rejected != "" {
			res.Rejected = append(res.Rejected, pr)
			continue
		}
		res.Proposals = append(res.Proposals, pr)
		res.Drops = append(res.Drops, pr.Change)
	}
	return nil
}

// maxWorkloadClasses bounds the classes explained for the evidence of
// use.
const maxWorkloadClasses = 2000

// workloadPlans are the indexes ("schema.table.index", and "schema.table."
// for a table read at all) the plans of the workload's reading classes
// use on the user's server, and the share of the reading statements whose
// class was explained.
func workloadPlans(ctx context.Context, opt Options, list []*analyzed) (map[string]bool, float64) {
	done := map[string]*analyzed{}
	for _, a := range list {
		done[a.class.ID] = a
	}
	used := map[string]bool{}
	var all, explained int64
	for i, c := range opt.Workload {
		if st := strings.ToLower(c.StatementType); st == "insert" || st == "replace" {
			continue
		}
		all += c.Count
		if i >= maxWorkloadClasses {
			continue
		}
		a := done[c.ID]
		if a == nil {
			var skip string
			if a, skip = inspect(ctx, opt, c); skip != "" {
				continue
			}
			if conn, err := useConn(ctx, opt.Source, a.db); err == nil {
				a.plan, _ = Explain(ctx, conn, a.q.Explain)
				conn.Close()
			}
		}
		if a.plan == nil {
			continue
		}
		explained += c.Count
		for _, pt := range a.plan.Tables {
			for _, t := range a.q.Tables {
				if !strings.EqualFold(pt.Table, t.Name) && !strings.EqualFold(pt.Table, t.Alias) {
					continue
				}
				base := strings.ToLower(schemaOf(t, a.db) + "." + t.Name + ".")
				used[base] = true
				for _, k := range strings.Split(pt.Key, ",") {
					if k = strings.TrimSpace(k); k != "" {
						used[base+strings.ToLower(k)] = true
					}
				}
			}
		}
	}
	if all == 0 {
		return used, 0
	}
	return used, float64(explained) / float64(all)
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
	if opt.Workload == nil {
		opt.Workload = opt.Classes
	}
	if opt.MinUsageWindow <= 0 {
		opt.MinUsageWindow = DefaultMinUsageWindow
	}
	return opt
}

// newResult is an empty result whose lists are empty, not null, in JSON.
func newResult() *Result {
	return &Result{Proposals: []Proposal{}, Skipped: []Skip{}, Rejected: []Proposal{}, Existing: []Finding{}, Queries: []QueryReport{}, Copies: []Copy{}, DDL: []TableDDL{}, Drops: []changeset.Change{},
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
				if ch := c.Change(); ch.Check() != nil {
					res.Rejected = append(res.Rejected, Proposal{Table: c.Key(), Columns: c.ColumnNames(), DDL: c.DDL(), Queries: c.Queries,
						Rejected: "its names cannot be written as an index change: " + ch.Check().Error()})
					continue
				}
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
		// Every change passed Check before its proof (gather), so SQL
		// cannot fail here; if it did, the table's DDL says why.
		q, err := g.SQL()
		if err != nil {
			q = "-- " + strings.Join(strings.Fields(err.Error()), " ")
		} else {
			q += ";"
		}
		out = append(out, TableDDL{Table: g.Table, DDL: q})
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
			a.plan = plan
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
		r.NPlusOne = &nplusone.Pattern{Calls: c.Count, RowsPerCall: float64(c.RowsSentTotal) / float64(c.Count), Problem: nPlusOneProblem(c.Count)}
		r.Problems = append(r.Problems, r.NPlusOne.Problem)
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
