package mysqlvar

import (
	"context"
	"fmt"
	"math/big"
	"strings"
)

// Meta is what a running server says about one variable, read before
// anything is set so that a plan knows whether SET GLOBAL can change it
// and what the server will make of a value.
type Meta struct {
	Name string `json:"name"`
	// Exists: SHOW GLOBAL VARIABLES lists it (a startup-only option, such
	// as performance-schema-consumer-..., does not).
	Exists  bool   `json:"exists"`
	Running string `json:"running,omitempty"`
	// ReadOnly: SET GLOBAL refuses it, so it changes with a restart that
	// reads the option files. ReadOnlyKnown is false when neither the
	// server nor the version table says.
	ReadOnly      bool `json:"read_only"`
	ReadOnlyKnown bool `json:"read_only_known"`
	// Type is the server's type ("BIGINT UNSIGNED", "BOOLEAN", "ENUM",
	// "DOUBLE", "VARCHAR"); empty where the server does not publish it.
	Type string `json:"type,omitempty"`
	// Min and Max bound numeric values (nil: not published).
	Min *big.Rat `json:"-"`
	Max *big.Rat `json:"-"`
	// Block: integer values are rounded down to a multiple of it (0 or 1:
	// no rounding).
	Block int64 `json:"block,omitempty"`
	// Values are the allowed values of an ENUM or BOOLEAN.
	Values []string `json:"values,omitempty"`
	// Exact says the server published its rules (MariaDB's
	// information_schema.SYSTEM_VARIABLES), so Expect is exact; without
	// them Matches accepts a numeric read-back within 1% (servers round
	// sizes to their block sizes).
	Exact bool `json:"exact"`
}

// Integer reports whether the variable holds an integer.
func (m Meta) Integer() bool { return strings.Contains(m.Type, "INT") }

// Expect is the value the server will hold after name is set to v, as
// the server would show it when the rules are known (a size as its
// bytes, rounded down to the block size; a boolean as ON or OFF; an
// enumeration in the server's spelling). note says what the server does
// to it ("rounded down to 16384, a multiple of 16384"). A value the
// server would refuse or clamp is an error saying why.
func (m Meta) Expect(v string) (expect, note string, err error) {
	t := strings.TrimSpace(v)
	if !m.Exists || strings.EqualFold(t, "default") {
		return t, "", nil
	}
	switch {
	case m.Type == "BOOLEAN":
		b, ok := boolish(fold(t))
		if !ok {
			return "", "", fmt.Errorf("%s is a boolean: %q is not ON or OFF", m.Name, v)
		}
		if b {
			return "ON", "", nil
		}
		return "OFF", "", nil
	case m.Type == "ENUM" && len(m.Values) > 0:
		for _, e := range m.Values {
			if strings.EqualFold(e, t) {
				return e, "", nil
			}
		}
		return "", "", fmt.Errorf("%s takes one of %s, not %q", m.Name, strings.Join(m.Values, ", "), v)
	}
	numeric := m.Integer() || m.Type == "DOUBLE" || (m.Type == "" && (m.Min != nil || m.Max != nil))
	if !numeric {
		return t, "", nil
	}
	var n *big.Rat
	if size, err := ParseSize(t); err == nil {
		n = new(big.Rat).SetInt64(size)
	} else if r, ok := number(t); ok && !m.Integer() {
		n = r
	} else {
		return "", "", fmt.Errorf("%s is a number: %q is not one", m.Name, v)
	}
	if m.Min != nil && n.Cmp(m.Min) < 0 {
		return "", "", fmt.Errorf("%s = %s is below the least value this server takes, %s: it would be set to that instead", m.Name, t, ratString(m.Min))
	}
	if m.Max != nil && n.Cmp(m.Max) > 0 {
		return "", "", fmt.Errorf("%s = %s is above the largest value this server takes, %s: it would be set to that instead", m.Name, t, ratString(m.Max))
	}
	if !m.Integer() {
		return t, "", nil
	}
	out := new(big.Int).Quo(n.Num(), n.Denom())
	if m.Block > 1 {
		b := big.NewInt(m.Block)
		rounded := new(big.Int).Mul(new(big.Int).Quo(out, b), b)
		if rounded.Cmp(out) != 0 {
			note = fmt.Sprintf("the server rounds it down to %s, a multiple of %d", rounded, m.Block)
			if m.Min != nil && new(big.Rat).SetInt(rounded).Cmp(m.Min) < 0 {
				return "", "", fmt.Errorf("%s = %s rounds down to %s, below the least value this server takes (%s)", m.Name, t, rounded, ratString(m.Min))
			}
		}
		out = rounded
	}
	return out.String(), note, nil
}

// Matches reports whether a read-back value got is the expected one:
// Equal, or without published rules (Exact false) a number within 1% of
// it.
func (m Meta) Matches(expect, got string) bool {
	if Equal(expect, got) {
		return true
	}
	if m.Exact {
		return false
	}
	a, ok1 := number(fold(expect))
	b, ok2 := number(fold(got))
	if !ok1 || !ok2 {
		return false
	}
	diff := new(big.Rat).Sub(a, b)
	diff.Abs(diff)
	limit := new(big.Rat).Abs(a)
	limit.Mul(limit, big.NewRat(1, 100))
	if limit.Cmp(big.NewRat(1, 1)) < 0 {
		limit = big.NewRat(1, 1)
	}
	return diff.Cmp(limit) <= 0
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return r.FloatString(6)
}

const (
	showVariablesSQL = "SHOW GLOBAL VARIABLES"
	// MariaDB 10.1 and later publish every variable's rules.
	mariadbMetaSQL = `SELECT LOWER(VARIABLE_NAME), READ_ONLY, VARIABLE_TYPE, NUMERIC_MIN_VALUE, NUMERIC_MAX_VALUE,
		NUMERIC_BLOCK_SIZE, ENUM_VALUE_LIST FROM information_schema.SYSTEM_VARIABLES`
	// MySQL 8.0 publishes ranges only.
	mysqlRangeSQL = `SELECT LOWER(VARIABLE_NAME), MIN_VALUE, MAX_VALUE FROM performance_schema.variables_info`
)

// ReadMeta reads what the server says about the variables names (in any
// spelling; the map is keyed by Norm(name)). It reads SHOW GLOBAL
// VARIABLES for presence and running values; on MariaDB
// information_schema.SYSTEM_VARIABLES for read-only, type, range, block
// size and allowed values; on MySQL the version table for read-only and
// performance_schema.variables_info for ranges where it can be read.
func ReadMeta(ctx context.Context, q Queryer, srv Server, names []string) (map[string]Meta, error) {
	out := map[string]Meta{}
	for _, n := range names {
		k := Norm(n)
		out[k] = Meta{Name: k}
	}
	if len(out) == 0 {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, showVariablesSQL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", showVariablesSQL, err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return nil, err
		}
		if m, ok := out[Norm(k)]; ok {
			m.Exists, m.Running = true, v
			out[Norm(k)] = m
		}
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	published := false
	if srv.IsMariaDB() {
		published = readMariaDBMeta(ctx, q, out) == nil
	} else {
		_ = readMySQLRanges(ctx, q, out) // a missing privilege only costs the range check
	}
	for k, m := range out {
		if !m.Exists {
			continue
		}
		if published && m.Type != "" {
			m.ReadOnlyKnown, m.Exact = true, true
		} else if dyn, known := Dynamic(srv.Flavor, srv.Version, k); known {
			m.ReadOnly, m.ReadOnlyKnown = !dyn, true
		}
		out[k] = m
	}
	return out, nil
}

func readMariaDBMeta(ctx context.Context, q Queryer, out map[string]Meta) error {
	rows, err := q.QueryContext(ctx, mariadbMetaSQL)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name, ro, typ string
		var min, max, block, enum *string
		if err := rows.Scan(&name, &ro, &typ, &min, &max, &block, &enum); err != nil {
			return err
		}
		m, ok := out[name]
		if !ok || !m.Exists {
			continue
		}
		m.ReadOnly, m.Type = ro == "YES", strings.ToUpper(typ)
		m.Min, m.Max = rat(min), rat(max)
		if b := rat(block); b != nil && b.IsInt() && b.Num().IsInt64() {
			m.Block = b.Num().Int64()
		}
		if enum != nil && *enum != "" {
			m.Values = strings.Split(*enum, ",")
		}
		out[name] = m
	}
	return rows.Err()
}

func readMySQLRanges(ctx context.Context, q Queryer, out map[string]Meta) error {
	rows, err := q.QueryContext(ctx, mysqlRangeSQL)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var min, max *string
		if err := rows.Scan(&name, &min, &max); err != nil {
			return err
		}
		m, ok := out[name]
		if !ok || !m.Exists {
			continue
		}
		// MySQL gives 0 0 for variables without a range.
		lo, hi := rat(min), rat(max)
		if lo != nil && hi != nil && hi.Sign() > 0 {
			m.Min, m.Max = lo, hi
		}
		out[name] = m
	}
	return rows.Err()
}

func rat(s *string) *big.Rat {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	r, ok := new(big.Rat).SetString(strings.TrimSpace(*s))
	if !ok {
		return nil
	}
	return r
}
