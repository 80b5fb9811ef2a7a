package fixplan

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// errBound stops a check past MaxRows.
var errBound = errors.New("past the bound of rows")

// Check runs the loop's statements and the one query on db in a
// read-only transaction and compares, call by call, what the loop
// returned with the one query's rows that match the call (see the
// package documentation). rw gets the figures and the Check code.
func Check(ctx context.Context, db *sql.DB, p *Plan, rw *Rewrite) {
	rw.Query, rw.Keys, rw.Calls, rw.Distinct, rw.Count = p.query, p.Keys(), len(p.calls), p.Distinct(), p.calls[0].count
	if db == nil {
		rw.Check, rw.Unchecked = CheckUnchecked, UncheckedNoDatabase
		return
	}
	fail := func(err error) {
		rw.Check, rw.Unchecked = CheckUnchecked, UncheckedError
		if errors.Is(err, errBound) {
			rw.Unchecked = UncheckedBound
		}
		rw.Error = err.Error()
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		fail(err)
		return
	}
	defer tx.Rollback()
	budget := int64(MaxRows)
	one, err := rows(ctx, tx, p.query, &budget)
	if err != nil {
		fail(fmt.Errorf("the one query: %w", err))
		return
	}
	rw.Rows = int64(len(one))
	k := len(p.cols)
	if p.group {
		k = len(p.gcols)
	}
	for i, call := range p.calls {
		got, err := rows(ctx, tx, p.stmts[i], &budget)
		if err != nil {
			fail(fmt.Errorf("call %d: %w", i+1, err))
			return
		}
		rw.LoopRows += int64(len(got))
		if p.group {
			if !sameGroup(p, i, got, one) {
				rw.Check, rw.Differs = CheckDifferentRows, i+1
				return
			}
			continue
		}
		var want [][]*string
		for _, r := range one {
			if len(r) < k {
				fail(errors.New("the one query returned fewer columns than it selects"))
				return
			}
			if p.match(i, r[len(r)-k:]) {
				want = append(want, r[:len(r)-k])
			}
		}
		if !same(call.count, got, want) {
			rw.Check, rw.Differs = CheckDifferentRows, i+1
			return
		}
	}
	rw.Check = CheckSameRows
}

// sameGroup compares a call's one row of aggregates with the one query's
// row of its key; no such row means the aggregates of no rows (COUNT 0,
// the others NULL).
func sameGroup(p *Plan, i int, got, one [][]*string) bool {
	if len(got) != 1 {
		return false
	}
	k := len(p.gcols)
	for _, r := range one {
		if len(r) == len(got[0])+k && p.groupOf(i, r[len(r)-k:]) {
			return key(r[:len(r)-k]) == key(got[0])
		}
	}
	aggs := p.calls[i].aggs
	if len(aggs) != len(got[0]) {
		return false
	}
	for j, a := range aggs {
		v := got[0][j]
		if a == "count" && (v == nil || *v != "0") || a != "count" && v != nil {
			return false
		}
	}
	return true
}

// same compares a call's rows with the one query's rows that match it:
// for a count, its one value with their number; else as multisets.
func same(count bool, got, want [][]*string) bool {
	if count {
		if len(got) != 1 || len(got[0]) != 1 || got[0][0] == nil {
			return false
		}
		n, err := strconv.ParseInt(*got[0][0], 10, 64)
		return err == nil && n == int64(len(want))
	}
	if len(got) != len(want) {
		return false
	}
	m := map[string]int{}
	for _, r := range got {
		m[key(r)]++
	}
	for _, r := range want {
		m[key(r)]--
		if m[key(r)] < 0 {
			return false
		}
	}
	return true
}

func key(r []*string) string {
	var b strings.Builder
	for _, v := range r {
		if v == nil {
			b.WriteString("\x00N")
		} else {
			b.WriteString("\x00v" + *v)
		}
	}
	return b.String()
}

// rows reads a query's rows as text (nil for NULL), within budget.
func rows(ctx context.Context, tx *sql.Tx, q string, budget *int64) ([][]*string, error) {
	rs, err := tx.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]*string
	for rs.Next() {
		if *budget--; *budget < 0 {
			return nil, errBound
		}
		raw := make([]sql.RawBytes, len(cols))
		dst := make([]any, len(cols))
		for i := range raw {
			dst[i] = &raw[i]
		}
		if err := rs.Scan(dst...); err != nil {
			return nil, err
		}
		r := make([]*string, len(cols))
		for i, b := range raw {
			if b != nil {
				s := string(b)
				r[i] = &s
			}
		}
		out = append(out, r)
	}
	return out, rs.Err()
}
