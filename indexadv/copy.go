package indexadv

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Copy says how a table was copied to the throwaway server.
type Copy struct {
	Table string `json:"table"`
	Rows  int64  `json:"rows"`
	// Sample is set when the table had more rows than the limit and only
	// the first Rows rows (in primary key order) were copied.
	Sample bool   `json:"sample"`
	Note   string `json:"note"`
}

// SQL of the copy.
const (
	sqlShowCreate = "SHOW CREATE TABLE %s"
	sqlSelectAll  = "SELECT * FROM %s LIMIT %d"
	copyBatch     = 500
)

// useConn returns a connection of db with schema selected.
func useConn(ctx context.Context, db *sql.DB, schema string) (*sql.Conn, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if schema != "" {
		if _, err := conn.ExecContext(ctx, "USE "+quoteIdent(schema)); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// copyTable copies schema.table's definition and up to limit rows from src
// to dst.
func copyTable(ctx context.Context, src, dst *sql.DB, schema, table string, limit int64) (Copy, error) {
	full := qualified(schema, table)
	cp := Copy{Table: schema + "." + table}
	rows, err := src.QueryContext(ctx, fmt.Sprintf(sqlShowCreate, full))
	if err != nil {
		return cp, fmt.Errorf("SHOW CREATE TABLE %s: %w", full, err)
	}
	cols, _ := rows.Columns()
	var name, ddl string
	if len(cols) != 2 || !rows.Next() {
		rows.Close()
		return cp, fmt.Errorf("%s is not a base table (a view?)", full)
	}
	if err := rows.Scan(&name, &ddl); err != nil {
		rows.Close()
		return cp, fmt.Errorf("SHOW CREATE TABLE %s: %w", full, err)
	}
	rows.Close()
	if _, err := dst.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(schema)); err != nil {
		return cp, fmt.Errorf("throwaway server: %w", err)
	}
	conn, err := useConn(ctx, dst, schema)
	if err != nil {
		return cp, fmt.Errorf("throwaway server: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET SESSION foreign_key_checks = 0, unique_checks = 0, sql_mode = ''"); err != nil {
		return cp, fmt.Errorf("throwaway server: %w", err)
	}
	if _, err := conn.ExecContext(ctx, ddl); err != nil {
		return cp, fmt.Errorf("throwaway server: creating %s: %w", full, err)
	}
	data, err := src.QueryContext(ctx, fmt.Sprintf(sqlSelectAll, full, limit+1))
	if err != nil {
		return cp, fmt.Errorf("reading %s: %w", full, err)
	}
	defer data.Close()
	dcols, err := data.Columns()
	if err != nil {
		return cp, err
	}
	raw := make([]sql.RawBytes, len(dcols))
	ptrs := make([]any, len(dcols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(dcols)), ",") + ")"
	var args []any
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		q := "INSERT INTO " + quoteIdent(table) + " VALUES " + strings.TrimSuffix(strings.Repeat(one+",", n), ",")
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("throwaway server: loading %s: %w", full, err)
		}
		args, n = args[:0], 0
		return nil
	}
	for data.Next() {
		if cp.Rows == limit {
			cp.Sample = true
			break
		}
		if err := data.Scan(ptrs...); err != nil {
			return cp, fmt.Errorf("reading %s: %w", full, err)
		}
		for _, r := range raw {
			if r == nil {
				args = append(args, nil)
			} else {
				args = append(args, append([]byte(nil), r...))
			}
		}
		n++
		cp.Rows++
		if n == copyBatch {
			if err := flush(); err != nil {
				return cp, err
			}
		}
	}
	if err := data.Err(); err != nil {
		return cp, fmt.Errorf("reading %s: %w", full, err)
	}
	if err := flush(); err != nil {
		return cp, err
	}
	if cp.Sample {
		cp.Note = fmt.Sprintf("a sample: the first %d rows (more than the %d-row limit)", cp.Rows, limit)
	} else {
		cp.Note = fmt.Sprintf("all %d rows", cp.Rows)
	}
	if _, err := conn.ExecContext(ctx, "ANALYZE TABLE "+quoteIdent(table)); err != nil {
		return cp, fmt.Errorf("throwaway server: ANALYZE TABLE %s: %w", full, err)
	}
	return cp, nil
}
