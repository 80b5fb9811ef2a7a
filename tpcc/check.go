package tpcc

import (
	"context"
	"database/sql"
	"fmt"
)

// Condition is one consistency condition of clause 3.3.2 checked on the
// database.
type Condition struct {
	Number int    `json:"number"`
	Rule   string `json:"rule"`
	// Checked is the warehouses or districts looked at, Violations how
	// many broke the rule, Examples a few of them.
	Checked    int64    `json:"checked"`
	Violations int64    `json:"violations"`
	Examples   []string `json:"examples,omitempty"`
}

// OK reports whether the condition holds.
func (c Condition) OK() bool { return c.Violations == 0 }

// CheckResult is the outcome of Check.
type CheckResult struct {
	Warehouses int         `json:"warehouses"`
	Conditions []Condition `json:"conditions"`
	// Holds is OK() when Check returned.
	Holds bool `json:"ok"`
}

// OK reports whether every condition holds.
func (r *CheckResult) OK() bool {
	for _, c := range r.Conditions {
		if !c.OK() {
			return false
		}
	}
	return true
}

// The consistency conditions 1-4 (clause 3.3.2.1-4), each as a query
// returning one row per warehouse or district: its id, and whether it
// holds. They hold after a load and must hold after any run.
var conditions = []struct {
	number   int
	rule     string
	checkSQL string
}{
	{1, "W_YTD = sum(D_YTD) for each warehouse",
		`SELECT CONCAT('warehouse ', w.w_id, ': w_ytd ', w.w_ytd, ', sum(d_ytd) ', IFNULL(d.s, 'none')), w.w_ytd = IFNULL(d.s, -1)
  FROM warehouse w LEFT JOIN (SELECT d_w_id, SUM(d_ytd) s FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id`},
	{2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each district",
		`SELECT CONCAT('warehouse ', d.d_w_id, ' district ', d.d_id, ': d_next_o_id - 1 = ', d.d_next_o_id - 1, ', max(o_id) ', IFNULL(o.m, 'none'), ', max(no_o_id) ', IFNULL(n.m, 'none')),
       d.d_next_o_id - 1 = IFNULL(o.m, -1) AND (n.m IS NULL OR n.m = d.d_next_o_id - 1)
  FROM district d
  LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) m FROM orders GROUP BY o_w_id, o_d_id) o ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
  LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) m FROM new_orders GROUP BY no_w_id, no_d_id) n ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id`},
	{3, "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER for each district",
		`SELECT CONCAT('warehouse ', no_w_id, ' district ', no_d_id, ': max ', MAX(no_o_id), ' - min ', MIN(no_o_id), ' + 1 = ', MAX(no_o_id) - MIN(no_o_id) + 1, ', rows ', COUNT(*)),
       MAX(no_o_id) - MIN(no_o_id) + 1 = COUNT(*)
  FROM new_orders GROUP BY no_w_id, no_d_id`},
	{4, "sum(O_OL_CNT) = rows in ORDER-LINE for each district",
		`SELECT CONCAT('warehouse ', o.o_w_id, ' district ', o.o_d_id, ': sum(o_ol_cnt) ', o.s, ', order lines ', IFNULL(l.n, 0)), o.s = IFNULL(l.n, 0)
  FROM (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) s FROM orders GROUP BY o_w_id, o_d_id) o
  LEFT JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) n FROM order_line GROUP BY ol_w_id, ol_d_id) l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id`},
}

// Check runs the consistency conditions 1-4 on db's current database.
// The queries read every order and order line: on a large scale they
// take a while (a few seconds per 10 warehouses) and should not run
// during a measured interval.
func Check(ctx context.Context, db *sql.DB) (*CheckResult, error) {
	info, err := ReadInfo(ctx, db)
	if err != nil {
		return nil, err
	}
	res := &CheckResult{Warehouses: info.Warehouses}
	for _, c := range conditions {
		cond := Condition{Number: c.number, Rule: c.rule}
		rows, err := db.QueryContext(ctx, c.checkSQL)
		if err != nil {
			return res, fmt.Errorf("tpcc: consistency condition %d: %w", c.number, err)
		}
		for rows.Next() {
			var what string
			var ok sql.NullBool
			if err := rows.Scan(&what, &ok); err != nil {
				rows.Close()
				return res, fmt.Errorf("tpcc: consistency condition %d: %w", c.number, err)
			}
			cond.Checked++
			if !ok.Valid || !ok.Bool {
				cond.Violations++
				if len(cond.Examples) < maxErrSamples {
					cond.Examples = append(cond.Examples, what)
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return res, fmt.Errorf("tpcc: consistency condition %d: %w", c.number, err)
		}
		res.Conditions = append(res.Conditions, cond)
	}
	res.Holds = res.OK()
	return res, nil
}
