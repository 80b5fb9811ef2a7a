package indexadv

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// QueryPlan is what EXPLAIN said about a statement.
type QueryPlan struct {
	// Format is "json" or "tabular", the EXPLAIN that produced it.
	Format string           `json:"format"`
	Tables []QueryPlanTable `json:"tables"`
	// Filesort and Temporary are set when any step sorts or uses a
	// temporary table.
	Filesort  bool `json:"filesort"`
	Temporary bool `json:"temporary"`
	// Rows estimates the rows examined: over the tables in join order, the
	// sum of the running product of each table's rows.
	Rows int64 `json:"rows"`
}

// QueryPlanTable is one table access of a plan.
type QueryPlanTable struct {
	// Table is the name EXPLAIN shows: the alias when there is one.
	Table  string `json:"table"`
	Access string `json:"access"`
	// Key is the index used; for index_merge the indexes, comma-separated.
	Key  string `json:"key,omitempty"`
	Rows int64  `json:"rows"`
}

// FullScan reports a full table scan.
func (t QueryPlanTable) FullScan() bool { return strings.EqualFold(t.Access, "ALL") }

// FullIndexScan reports a full index scan.
func (t QueryPlanTable) FullIndexScan() bool { return strings.EqualFold(t.Access, "index") }

// SQL run by Explain.
const (
	explainJSON    = "EXPLAIN FORMAT=JSON "
	explainTabular = "EXPLAIN "
)

// Explain runs EXPLAIN FORMAT=JSON on conn (tabular EXPLAIN when the server
// has no JSON format). query must be a SELECT: Analyze's Query.Explain.
func Explain(ctx context.Context, conn *sql.Conn, query string) (*QueryPlan, error) {
	if !isSelect(query) {
		return nil, errors.New("explain: only SELECT statements are explained")
	}
	var js string
	err := conn.QueryRowContext(ctx, explainJSON+query).Scan(&js)
	if err == nil {
		return ParseJSONPlan([]byte(js))
	}
	jsonErr := err
	rows, err := conn.QueryContext(ctx, explainTabular+query)
	if err != nil {
		return nil, fmt.Errorf("explain: %w (JSON: %v)", err, jsonErr)
	}
	defer rows.Close()
	return scanTabular(rows)
}

func isSelect(q string) bool {
	f := strings.Fields(strings.TrimLeft(q, "( \t\r\n"))
	return len(f) > 0 && (strings.EqualFold(f[0], "SELECT") || strings.EqualFold(f[0], "WITH"))
}

// ParseJSONPlan reads EXPLAIN FORMAT=JSON output, MariaDB's shape
// (read_sorted_file, filesort, temporary_table, "rows") or MySQL's
// (ordering_operation, using_filesort, using_temporary_table,
// "rows_examined_per_scan").
func ParseJSONPlan(b []byte) (*QueryPlan, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("explain: bad JSON: %w", err)
	}
	p := &QueryPlan{Format: "json"}
	p.walk(v)
	if len(p.Tables) == 0 {
		return nil, errors.New("explain: no table in the plan")
	}
	p.total()
	return p, nil
}

func (p *QueryPlan) total() {
	var sum, prod int64 = 0, 1
	for _, t := range p.Tables {
		r := t.Rows
		if r < 1 {
			r = 1
		}
		if prod < 1<<40 {
			prod *= r
		}
		sum += prod
	}
	p.Rows = sum
}

func (p *QueryPlan) walk(v any) {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			p.walk(x)
		}
	case map[string]any:
		for k, x := range v {
			switch k {
			case "filesort":
				p.Filesort = true
			case "temporary_table":
				p.Temporary = true
			case "using_filesort":
				if b, _ := x.(bool); b {
					p.Filesort = true
				}
			case "using_temporary_table":
				if b, _ := x.(bool); b {
					p.Temporary = true
				}
			}
		}
		if t, ok := v["table"].(map[string]any); ok && t["table_name"] != nil {
			p.Tables = append(p.Tables, planTable(t))
			// Subqueries hang below a table (attached_subqueries).
			for k, x := range t {
				if k != "index_merge" {
					p.walk(x)
				}
			}
		}
		// Walk in a fixed order so the table order follows the plan.
		for _, k := range sortedKeys(v) {
			if k != "table" {
				p.walk(v[k])
			}
		}
	}
}

func planTable(t map[string]any) QueryPlanTable {
	pt := QueryPlanTable{}
	pt.Table, _ = t["table_name"].(string)
	pt.Access, _ = t["access_type"].(string)
	pt.Key, _ = t["key"].(string)
	if pt.Key == "" {
		if im, ok := t["index_merge"]; ok {
			pt.Key = strings.Join(mergeKeys(im, nil), ",")
		}
	}
	for _, k := range []string{"rows", "rows_examined_per_scan"} {
		if n, ok := number(t[k]); ok {
			pt.Rows = n
			break
		}
	}
	return pt
}

func mergeKeys(v any, keys []string) []string {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			keys = mergeKeys(x, keys)
		}
	case map[string]any:
		if k, ok := v["key"].(string); ok {
			keys = append(keys, k)
		}
		for _, k := range sortedKeys(v) {
			if k != "key" {
				keys = mergeKeys(v[k], keys)
			}
		}
	}
	return keys
}

func number(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}

// scanTabular reads a classic EXPLAIN by column name.
func scanTabular(rows *sql.Rows) (*QueryPlan, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	p := &QueryPlan{Format: "tabular"}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("explain: %w", err)
		}
		var t QueryPlanTable
		for i, c := range cols {
			s := vals[i].String
			switch strings.ToLower(c) {
			case "table":
				t.Table = s
			case "type":
				t.Access = s
			case "key":
				t.Key = s
			case "rows":
				t.Rows, _ = strconv.ParseInt(s, 10, 64)
			case "extra":
				if strings.Contains(s, "Using filesort") {
					p.Filesort = true
				}
				if strings.Contains(s, "Using temporary") {
					p.Temporary = true
				}
			}
		}
		if t.Table != "" {
			p.Tables = append(p.Tables, t)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	if len(p.Tables) == 0 {
		return nil, errors.New("explain: no table in the plan")
	}
	p.total()
	return p, nil
}
