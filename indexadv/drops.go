package indexadv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// Drops: the existing indexes the workload does not need. Duplicate and
// redundant ones (ExistingFindings) and, when the evidence of use is
// enough (Usage.Enough: a long enough window, counters that see every
// statement or EXPLAIN of enough of them), the indexes no statement read
// in the window on a table that was read. Never the primary key, a
// unique index, an index whose first columns a foreign key needs (on
// either side), nor FULLTEXT or SPATIAL ones (their reads are no index
// lookups the counters all see). Each drop is a change whose first step
// ignores the index (MariaDB 10.6+, MySQL 8) so that tune's A/B test can
// measure the workload without it before it goes; on other servers the
// change drops it and says how long re-creating it would take.

// maxDropTables bounds the tables read for drops per schema.
const maxDropTables = 1000

// SQL of the drops.
const (
	sqlBaseTables = `SELECT TABLE_NAME, COALESCE(TABLE_ROWS, 0), COALESCE(DATA_LENGTH, 0) FROM information_schema.TABLES
WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME LIMIT 1000`
	sqlForeignKeys = `SELECT CONSTRAINT_NAME, TABLE_SCHEMA = ? AND TABLE_NAME = ?, COLUMN_NAME, COALESCE(REFERENCED_COLUMN_NAME, '')
FROM information_schema.KEY_COLUMN_USAGE
WHERE REFERENCED_TABLE_NAME IS NOT NULL AND (TABLE_SCHEMA = ? AND TABLE_NAME = ? OR REFERENCED_TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME = ?)
ORDER BY CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`
	sqlCanIgnore = `SELECT COUNT(*) FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = 'STATISTICS' AND COLUMN_NAME IN ('IGNORED', 'IS_VISIBLE')`
	sqlSourceIndexSize = `SELECT COALESCE(SUM(stat_value), 0) * @@innodb_page_size FROM mysql.innodb_index_stats
WHERE database_name = ? AND table_name = ? AND index_name = ? AND stat_name = 'size'`
)

// recreateRate is the rate (bytes of table data per second) assumed for
// re-creating an index online when the copy could not time it.
const recreateRate = 50 << 20

// foreignKeyColumns are the column lists of the foreign keys that need
// an index on schema.table: its own (child side) and those that
// reference it (parent side).
func foreignKeyColumns(ctx context.Context, db queryer, schema, table string) ([][]string, error) {
	rows, err := db.QueryContext(ctx, sqlForeignKeys, schema, table, schema, table, schema, table)
	if err != nil {
		return nil, fmt.Errorf("reading the foreign keys of %s.%s: %w", schema, table, err)
	}
	defer rows.Close()
	byFK := map[string][]string{}
	var order []string
	for rows.Next() {
		var name, col, ref string
		var child bool
		if err := rows.Scan(&name, &child, &col, &ref); err != nil {
			return nil, err
		}
		key := name + "\x00" + fmt.Sprint(child)
		if _, ok := byFK[key]; !ok {
			order = append(order, key)
		}
		if !child {
			col = ref
		}
		byFK[key] = append(byFK[key], strings.ToLower(col))
	}
	out := make([][]string, 0, len(order))
	for _, k := range order {
		out = append(out, byFK[k])
	}
	return out, rows.Err()
}

// backsConstraint says which constraint an index backs ("" for none).
func backsConstraint(ix Index, fks [][]string) string {
	switch {
	case strings.EqualFold(ix.Name, "PRIMARY"):
		return "primary_key"
	case ix.Unique:
		return "unique"
	}
	for _, fk := range fks {
		if len(fk) > len(ix.Columns) {
			continue
		}
		prefix := true
		for i, c := range fk {
			prefix = prefix && ix.Columns[i].Name == c
		}
		if prefix {
			return "foreign_key"
		}
	}
	return ""
}

// canIgnore reports whether the server can ignore an index.
func canIgnore(ctx context.Context, db queryer) bool {
	var n int
	return db.QueryRowContext(ctx, sqlCanIgnore).Scan(&n) == nil && n > 0
}

// dropper gathers the drop proposals.
type dropper struct {
	db     *sql.DB
	usage  *Usage
	ignore bool
}

// recreateWords start a drop's evidence on a server that cannot ignore
// an index; the time follows.
const recreateWords = "this server cannot ignore an index: it is dropped, and a rollback re-creates it online in about"

// drops are the drop proposals of every base table of the schemas.
func (d *dropper) drops(ctx context.Context, schemas []string) ([]Proposal, error) {
	var out []Proposal
	for _, schema := range schemas {
		if systemSchemas[strings.ToLower(schema)] {
			continue
		}
		type tbl struct {
			name       string
			rows, data int64
		}
		rows, err := d.db.QueryContext(ctx, sqlBaseTables, schema)
		if err != nil {
			return nil, fmt.Errorf("listing the tables of %s: %w", schema, err)
		}
		var tables []tbl
		for rows.Next() {
			var t tbl
			if err := rows.Scan(&t.name, &t.rows, &t.data); err != nil {
				rows.Close()
				return nil, err
			}
			tables = append(tables, t)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
		for _, t := range tables[:min(len(tables), maxDropTables)] {
			ixs, err := Indexes(ctx, d.db, schema, t.name)
			if err != nil {
				return nil, err
			}
			fks, err := foreignKeyColumns(ctx, d.db, schema, t.name)
			if err != nil {
				return nil, err
			}
			out = append(out, d.tableDrops(ctx, schema, t.name, t.data, ixs, fks)...)
		}
	}
	return out, nil
}

// tableDrops are one table's drop proposals: duplicate and redundant
// indexes first, then unused ones.
func (d *dropper) tableDrops(ctx context.Context, schema, table string, dataBytes int64, ixs []Index, fks [][]string) []Proposal {
	var out []Proposal
	byName := map[string]Index{}
	for _, ix := range ixs {
		byName[ix.Name] = ix
	}
	done := map[string]bool{}
	for _, f := range ExistingFindings(schema, table, ixs) {
		ix := byName[f.Index]
		if backsConstraint(ix, fks) != "" {
			continue
		}
		pr := d.proposal(ctx, schema, table, dataBytes, ix, Reason(f.Kind))
		pr.Evidence.Of = f.Of
		for _, c := range byName[f.Of].Columns {
			pr.Evidence.OfColumns = append(pr.Evidence.OfColumns, c.Name)
		}
		pr.Reasons = []string{f.Detail}
		pr.Change.Evidence = append([]string{f.Detail}, pr.Change.Evidence...)
		out = append(out, pr)
		done[f.Index] = true
	}
	// The index a duplicate or redundant one gives way to stays, even
	// when the optimizer read its twin instead and the counters call it
	// unused: dropping both would leave the columns without an index.
	serving := map[string]bool{}
	for _, pr := range out {
		serving[pr.Evidence.Of] = true
	}
	for _, ix := range ixs {
		if done[ix.Name] || serving[ix.Name] || ix.Type == "FULLTEXT" || ix.Type == "SPATIAL" || backsConstraint(ix, fks) != "" {
			continue
		}
		r, unused := d.usage.unused(schema, table, ix.Name)
		if !unused {
			continue
		}
		pr := d.proposal(ctx, schema, table, dataBytes, ix, ReasonUnused)
		pr.Evidence.Usage, pr.Evidence.Reads = d.usage, &r
		line := fmt.Sprintf("no read of %s in the window (%s); its table was accessed %d times", ix.Name, d.usage, r.TableReads)
		pr.Reasons = []string{line}
		pr.Change.Evidence = append([]string{line}, pr.Change.Evidence...)
		out = append(out, pr)
	}
	return out
}

// proposal is the drop of ix for reason, with its change: ignored first
// where the server can, else dropped with the time a re-creation takes.
func (d *dropper) proposal(ctx context.Context, schema, table string, dataBytes int64, ix Index, reason Reason) Proposal {
	parts := make([]changeset.KeyPart, len(ix.Columns))
	cols := make([]string, len(ix.Columns))
	for i, c := range ix.Columns {
		parts[i] = changeset.KeyPart{Column: c.Name, Length: c.SubPart, Desc: c.Desc}
		cols[i] = c.Name
	}
	from := changeset.IndexState{Parts: parts}
	var size float64
	_ = d.db.QueryRowContext(ctx, sqlSourceIndexSize, schema, table, ix.Name).Scan(&size)
	pr := Proposal{Action: ActionDrop, Table: schema + "." + table, Index: ix.Name, Columns: cols, Reason: reason,
		Benefit: &Benefit{BytesFreed: int64(size)}, IndexBytes: int64(size), Queries: []string{}, Reasons: []string{}}
	ch := changeset.Change{Kind: changeset.Index, Target: schema + "." + table, Name: ix.Name, From: from.String(),
		Direction: "drop", Activation: changeset.Dynamic, Finding: "index-" + string(reason),
		Title: fmt.Sprintf("drop %s %s on %s.%s", reason, ix.Name, schema, table)}
	if d.ignore {
		ch.To = changeset.IndexState{Parts: parts, Ignored: true}.String()
		pr.Evidence.Staged = "ignore_first"
		ch.Evidence = []string{"first ignored (the optimizer no longer uses it; it is still maintained), measured, and only then dropped; rollback makes it seen again at once"}
	} else {
		ch.To = changeset.Absent
		pr.Evidence.Staged = "drop_recreate"
		// An estimate from the table's size; a table copied to the
		// throwaway server has it timed there (timeRecreate).
		secs := float64(dataBytes) / recreateRate
		pr.Evidence.RecreateSeconds = secs
		ch.Evidence = []string{fmt.Sprintf("%s %.1f s (estimated from the table's %d bytes at %d MB/s)", recreateWords, secs, dataBytes, recreateRate>>20)}
	}
	if err := ch.Check(); err != nil {
		pr.Rejected = "its names cannot be written as an index change: " + err.Error()
	}
	pr.Change = ch
	q, err := changeset.IndexStatement(ch, false)
	if err != nil {
		q = "-- " + strings.Join(strings.Fields(err.Error()), " ")
	} else {
		q += ";"
	}
	pr.DDL = q
	return pr
}

// FinalDrop is the second step of a drop that was ignored first: the
// change that drops it, from its ignored state. An error for a change
// that is no ignore.
func FinalDrop(c changeset.Change) (changeset.Change, error) {
	to, err := changeset.ParseIndexState(c.To)
	if err != nil {
		return changeset.Change{}, err
	}
	if c.Kind != changeset.Index || !to.Ignored {
		return changeset.Change{}, errors.New("not the first step of a drop (an index ignored)")
	}
	c.From, c.To = c.To, changeset.Absent
	c.Evidence = slices.Clone(c.Evidence)
	return c, c.Check()
}
