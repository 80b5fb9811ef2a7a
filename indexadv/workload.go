package indexadv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/stacktune/stacktune/digest"
)

// Benefit is what a proposal gives the whole workload over its window:
// for an index added, the calls of the classes it serves and the rows
// examined and time they save (per call on the copy, times the calls);
// for one dropped, the space it frees.
type Benefit struct {
	Queries           int     `json:"queries"`
	Calls             int64   `json:"calls"`
	RowsExaminedSaved int64   `json:"rows_examined_saved"`
	TimeSavedMS       float64 `json:"time_saved_ms"`
	BytesFreed        int64   `json:"bytes_freed,omitempty"`
	// WriteMSSaved is what a drop saves the window's writes (its write
	// cost, measured on the copy).
	WriteMSSaved float64 `json:"write_ms_saved,omitempty"`
}

// WriteCost is what an index costs the window's writes, measured on the
// copy: the window's INSERT, UPDATE and DELETE classes on its table
// replayed (each in a transaction rolled back) without and with the
// index, and its size on disk.
type WriteCost struct {
	// Classes and Statements are the write classes and executions
	// replayed; Failed the executions that failed (on both sides alike).
	Classes    int `json:"classes"`
	Statements int `json:"statements"`
	Failed     int `json:"failed,omitempty"`
	// WithoutMS and WithMS are the replay's total times.
	WithoutMS float64 `json:"without_ms"`
	WithMS    float64 `json:"with_ms"`
	// PerStatementMS is the time the index adds to one write,
	// WindowCalls the write classes' calls in the window, and WindowMS
	// their product: what the index costs the window's writes.
	PerStatementMS float64 `json:"per_statement_ms"`
	WindowCalls    int64   `json:"window_calls"`
	WindowMS       float64 `json:"window_ms"`
	// IndexBytes is its size on disk: the copy's index_length grown by
	// the index, scaled to the source table's rows when the copy is a
	// sample.
	IndexBytes int64 `json:"index_bytes"`
}

// Bounds of the write replay, per side (without and with the index).
const (
	replayPerClass = 100
	replayBudget   = 3 * time.Second
)

// writeClass is a write class of the workload and the tables it writes.
type writeClass struct {
	class  digest.Class
	db     string
	tables []string // "schema.table", lower case
}

// writeClasses are the workload's INSERT, REPLACE, UPDATE and DELETE
// classes with a sample, and the tables each writes.
func writeClasses(classes []digest.Class, defaultDB string) []writeClass {
	var out []writeClass
	p := parser.New()
	for _, c := range classes {
		if strings.TrimSpace(c.Sample) == "" || strings.Contains(c.Sample, "?") {
			continue
		}
		st, err := p.ParseOneStmt(c.Sample, "", "")
		if err != nil {
			continue
		}
		db := c.SampleDB
		if db == "" {
			db = defaultDB
		}
		var refs *ast.TableRefsClause
		switch s := st.(type) {
		case *ast.InsertStmt:
			refs = s.Table
		case *ast.UpdateStmt:
			refs = s.TableRefs
		case *ast.DeleteStmt:
			refs = s.TableRefs
		default:
			continue
		}
		if refs == nil {
			continue
		}
		var names tableNames
		refs.Accept(&names)
		wc := writeClass{class: c, db: db}
		for _, n := range names {
			s := n.Schema.O
			if s == "" {
				s = db
			}
			if k := strings.ToLower(s + "." + n.Name.O); !slices.Contains(wc.tables, k) {
				wc.tables = append(wc.tables, k)
			}
		}
		out = append(out, wc)
	}
	return out
}

// tableNames collects the tables a statement names.
type tableNames []*ast.TableName

func (t *tableNames) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok {
		*t = append(*t, tn)
	}
	return n, false
}

func (t *tableNames) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// writesOf are the write classes that write schema.table.
func writesOf(ws []writeClass, schema, table string) []writeClass {
	var out []writeClass
	k := strings.ToLower(schema + "." + table)
	for _, w := range ws {
		if slices.Contains(w.tables, k) {
			out = append(out, w)
		}
	}
	return out
}

// replay runs each write class's sample up to replayPerClass times (and
// no more than its calls), each in a transaction rolled back, within
// replayBudget; an INSERT whose row the copy holds already (it was
// copied after the insert) is replayed as REPLACE, which deletes and
// inserts the row's index entries. It returns the total time, the
// executions and the failures.
func (p *prover) replay(ctx context.Context, ws []writeClass) (ms float64, n, failed int) {
	ms, times, failed := p.replayTimes(ctx, ws)
	return ms, len(times), failed
}

// replayTimes is replay with each execution's time.
func (p *prover) replayTimes(ctx context.Context, ws []writeClass) (ms float64, times []float64, failed int) {
	deadline := time.Now().Add(replayBudget)
	for _, w := range ws {
		conn, err := useConn(ctx, p.db, w.db)
		if err != nil {
			failed++
			continue
		}
		// The copy may lack a parent table: the foreign keys' checks
		// are left out on both sides alike. Profiling times each
		// statement on the server.
		if _, err := conn.ExecContext(ctx, "SET SESSION foreign_key_checks = 0"); err != nil {
			conn.Close()
			failed++
			continue
		}
		if _, err := conn.ExecContext(ctx, "SET SESSION profiling = 1"); err != nil {
			conn.Close()
			failed++
			continue
		}
		q := w.class.Sample
		runs := int(min(w.class.Count, replayPerClass))
		for i := 0; i < runs && time.Now().Before(deadline); i++ {
			el, err := p.replayOne(ctx, conn, q)
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == 1062 && isInsert(q) {
				q = "REPLACE" + strings.TrimSpace(q)[len("INSERT"):]
				el, err = p.replayOne(ctx, conn, q)
			}
			if err != nil {
				failed++
				continue
			}
			ms += el
			times = append(times, el)
		}
		conn.Close()
	}
	return ms, times, failed
}

func isInsert(q string) bool {
	f := strings.Fields(q)
	return len(f) > 0 && strings.EqualFold(f[0], "INSERT")
}

// replayOne runs one write in a transaction and rolls it back; the time
// is the server's own for the statement (its profile: no network or
// client scheduling in it), or the client's where the server keeps no
// profile.
func (p *prover) replayOne(ctx context.Context, conn *sql.Conn, q string) (float64, error) {
	if _, err := conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return 0, err
	}
	defer conn.ExecContext(ctx, "ROLLBACK") //nolint:errcheck // the copy is thrown away
	start := time.Now()
	if _, err := conn.ExecContext(ctx, q); err != nil {
		return 0, err
	}
	el := float64(time.Since(start).Microseconds()) / 1000
	if ms, ok := lastProfile(ctx, conn); ok {
		return ms, nil
	}
	return el, nil
}

// lastProfile is the server's time of the connection's last statement
// (SHOW PROFILES, with profiling on), in ms.
func lastProfile(ctx context.Context, conn *sql.Conn) (float64, bool) {
	rows, err := conn.QueryContext(ctx, "SHOW PROFILES")
	if err != nil {
		return 0, false
	}
	defer rows.Close()
	var best int64 = -1
	var dur float64
	for rows.Next() {
		var id int64
		var d float64
		var text string
		if rows.Scan(&id, &d, &text) != nil {
			return 0, false
		}
		if id > best && !strings.EqualFold(strings.TrimSpace(text), "START TRANSACTION") {
			best, dur = id, d
		}
	}
	return dur * 1000, best >= 0 && rows.Err() == nil
}

// trimmedMean is the mean of the middle 80% of xs: one slow execution
// (a page split, a flush) moves it little, and unlike a median it sees
// differences below the timer's resolution.
func trimmedMean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	cut := len(s) / 10
	s = s[cut : len(s)-cut]
	var sum float64
	for _, x := range s {
		sum += x
	}
	return sum / float64(len(s))
}

// sqlIndexLength is a table's index_length on the copy.
const sqlIndexLength = `SELECT COALESCE(INDEX_LENGTH, 0), COALESCE(TABLE_ROWS, 0) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`

// indexLength reads a table's index_length after refreshing its
// statistics.
func (p *prover) indexLength(ctx context.Context, schema, table string) int64 {
	_, _ = p.db.ExecContext(ctx, "ANALYZE TABLE "+qualified(schema, table))
	var n, rows int64
	_ = p.db.QueryRowContext(ctx, sqlIndexLength, schema, table).Scan(&n, &rows)
	return n
}

// marginal measures one kept candidate's write cost on the copy: the
// table's write classes replayed with the table's kept indexes, then
// without this one (dropped and added again), and its size from the
// index_length it adds, scaled by scale (source rows / copied rows).
func (p *prover) marginal(ctx context.Context, c *Candidate, ws []writeClass, scale float64) (*WriteCost, error) {
	with := p.indexLength(ctx, c.Schema, c.Table)
	wc := &WriteCost{Classes: len(ws)}
	for _, w := range ws {
		wc.WindowCalls += w.class.Count
	}
	// Each side twice, in the order with, without, without, with, so
	// that a cache warming over the replay favours neither.
	var tWith, tWithout []float64
	ms, ts, failed := p.replayTimes(ctx, ws)
	wc.WithMS, tWith, wc.Failed = ms, ts, failed
	if err := p.drop(ctx, c); err != nil {
		return nil, err
	}
	without := p.indexLength(ctx, c.Schema, c.Table)
	for range 2 {
		ms, ts, _ = p.replayTimes(ctx, ws)
		wc.WithoutMS += ms
		tWithout = append(tWithout, ts...)
	}
	if err := p.add(ctx, c); err != nil {
		return nil, err
	}
	ms, ts, _ = p.replayTimes(ctx, ws)
	wc.WithMS += ms
	tWith = append(tWith, ts...)
	wc.IndexBytes = int64(float64(max(with-without, 0)) * scale)
	wc.Statements = min(len(tWith), len(tWithout))
	wc.PerStatementMS = max(trimmedMean(tWith)-trimmedMean(tWithout), 0)
	wc.WindowMS = wc.PerStatementMS * float64(wc.WindowCalls)
	return wc, nil
}

// benefitOf is a proposal's benefit over the window: per class of its
// queries, the calls times the rows and time saved per call on the copy.
func benefitOf(pr *Proposal, classes map[string]digest.Class) *Benefit {
	b := &Benefit{Queries: len(pr.Queries)}
	for _, ev := range pr.Evidence.Plans {
		c := classes[ev.Query]
		b.Calls += c.Count
		b.RowsExaminedSaved += c.Count * max(ev.RowsBefore-ev.RowsAfter, 0)
	}
	for _, id := range pr.Queries {
		c := classes[id]
		if t, ok := pr.perQueryMS[id]; ok {
			b.TimeSavedMS += float64(c.Count) * max(t[0]-t[1], 0)
		}
	}
	return b
}

// writeVerdict refuses a proposal whose write cost over the window is
// more than the time it saves the window's reads ("" when it is kept).
func writeVerdict(pr *Proposal) string {
	if pr.Benefit == nil || pr.WriteCost == nil || pr.WriteCost.Statements == 0 {
		return ""
	}
	if pr.WriteCost.WindowMS > pr.Benefit.TimeSavedMS {
		return fmt.Sprintf("its write cost is more than it saves: the window's %d writes of the table take %.3f ms more each with it (%.2f ms over the window), its %d reads save %.2f ms",
			pr.WriteCost.WindowCalls, pr.WriteCost.PerStatementMS, pr.WriteCost.WindowMS, pr.Benefit.Calls, pr.Benefit.TimeSavedMS)
	}
	return ""
}

// net is what a proposal saves the window once its write cost is paid.
func (pr *Proposal) net() float64 {
	if pr.Benefit == nil {
		return 0
	}
	n := pr.Benefit.TimeSavedMS
	if pr.WriteCost != nil {
		n -= pr.WriteCost.WindowMS
	}
	return n
}
