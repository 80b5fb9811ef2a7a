package fixplan

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Bounds (see the package documentation).
const (
	MaxCalls     = 5000
	MaxRequests  = 20000
	MaxRows      = 200_000
	MaxStatement = 64 << 10
)

// token is one lexeme of a statement, with its text as written.
type token struct {
	kind byte // 'i' identifier or keyword, 'n' number, 's' string, 'p' punctuation
	text string
}

// lex splits a statement into tokens, comments dropped.
func lex(q string) ([]token, error) {
	var out []token
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return nil, errors.New("an unterminated comment")
			}
			i += end + 4
		case c == '#' || (c == '-' && i+2 < len(q) && q[i+1] == '-' && (q[i+2] == ' ' || q[i+2] == '\t')):
			end := strings.IndexByte(q[i:], '\n')
			if end < 0 {
				i = len(q)
			} else {
				i += end + 1
			}
		case c == '\'' || c == '"':
			j := i + 1
			for ; j < len(q); j++ {
				if q[j] == '\\' {
					j++
					continue
				}
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c {
						j++
						continue
					}
					break
				}
			}
			if j >= len(q) {
				return nil, errors.New("an unterminated string")
			}
			out = append(out, token{'s', q[i : j+1]})
			i = j + 1
		case c == '`':
			end := strings.IndexByte(q[i+1:], '`')
			if end < 0 {
				return nil, errors.New("an unterminated identifier")
			}
			j := i + end + 2
			for j < len(q) && (q[j] == '.' || isWord(q[j]) || q[j] == '`') {
				if q[j] == '`' {
					e := strings.IndexByte(q[j+1:], '`')
					if e < 0 {
						return nil, errors.New("an unterminated identifier")
					}
					j += e + 2
					continue
				}
				j++
			}
			out = append(out, token{'i', q[i:j]})
			i = j
		case c >= '0' && c <= '9' || (c == '-' || c == '.') && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9' && prevAllowsSign(out):
			j := i + 1
			for j < len(q) && (q[j] >= '0' && q[j] <= '9' || q[j] == '.' || q[j] == 'e' || q[j] == 'E' || q[j] == 'x' || isHex(q[j])) {
				j++
			}
			out = append(out, token{'n', q[i:j]})
			i = j
		case isWord(c):
			j := i
			for j < len(q) && (isWord(q[j]) || q[j] == '.' || q[j] == '`') {
				j++
			}
			out = append(out, token{'i', q[i:j]})
			i = j
		default:
			j := i + 1
			if j < len(q) && strings.Contains("<>!=", string(c)) && strings.Contains("=>", string(q[j])) {
				j++
			}
			out = append(out, token{'p', q[i:j]})
			i = j
		}
	}
	return out, nil
}

func isWord(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func isHex(c byte) bool { return c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// prevAllowsSign: a '-' or '.' before a digit starts a number only after
// an operator or an opening parenthesis.
func prevAllowsSign(out []token) bool {
	if len(out) == 0 {
		return true
	}
	p := out[len(out)-1]
	return p.kind == 'p' && p.text != ")" || p.kind == 'i' && isKeyword(p.text, "and", "or", "in", "where", "select")
}

func isKeyword(s string, kws ...string) bool {
	for _, k := range kws {
		if strings.EqualFold(s, k) {
			return true
		}
	}
	return false
}

// node is the WHERE as an AND/OR tree of comparisons.
type node struct {
	op   string // "and", "or", "cmp"
	kids []*node
	cmp  int // the comparison's index (cmp)
}

// cmp is `column = literal`.
type cmp struct {
	col string
	lit token
}

// parsed is one statement of the loop.
type parsed struct {
	sel, from string // as written
	where     *node
	cmps      []cmp
	// count: the SELECT list is COUNT(*) or COUNT(1) alone; aggs the
	// aggregate of each item when the list is aggregates only.
	count bool
	aggs  []string
}

var reAggr = regexp.MustCompile(`(?i)^(count|sum|avg|min|max)$`)

// aggregates are the functions of a SELECT list made of aggregate calls
// only (each item NAME(...) [[AS] alias]), nil otherwise.
func aggregates(toks []token) []string {
	var out []string
	for i := 0; i < len(toks); {
		if toks[i].kind != 'i' || !reAggr.MatchString(toks[i].text) || i+1 >= len(toks) || toks[i+1].text != "(" {
			return nil
		}
		out = append(out, strings.ToLower(toks[i].text))
		depth := 0
		j := i + 1
		for ; j < len(toks); j++ {
			if toks[j].text == "(" {
				depth++
			} else if toks[j].text == ")" {
				if depth--; depth == 0 {
					break
				}
			}
		}
		j++
		if j < len(toks) && isKeyword(toks[j].text, "as") {
			j++
		}
		if j < len(toks) && toks[j].kind == 'i' {
			j++
		}
		if j < len(toks) && toks[j].text != "," {
			return nil
		}
		i = j + 1
	}
	return out
}

var reCount = regexp.MustCompile(`(?i)^count\s*\(\s*(\*|1)\s*\)(\s+(as\s+)?\S+)?$`)

// parse reads a SELECT whose WHERE is an AND/OR of column = literal.
func parse(q string) (*parsed, error) {
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	for len(toks) > 0 && toks[len(toks)-1].text == ";" {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 || !isKeyword(toks[0].text, "select") {
		return nil, errors.New("not a SELECT")
	}
	from, where, end := -1, -1, len(toks)
	depth := 0
	for i, t := range toks {
		switch {
		case t.text == "(":
			depth++
		case t.text == ")":
			depth--
		case depth > 0 || t.kind != 'i':
		case isKeyword(t.text, "from") && from < 0:
			from = i
		case isKeyword(t.text, "where") && where < 0:
			where = i
		case isKeyword(t.text, "order", "limit") && where >= 0 && end == len(toks):
			end = i
		case isKeyword(t.text, "group", "having", "union", "into", "for", "lock", "distinct", "join", "straight_join"):
			return nil, fmt.Errorf("a SELECT with %s", strings.ToUpper(t.text))
		}
	}
	if from < 2 || where < from+2 || end <= where+1 {
		return nil, errors.New("no FROM ... WHERE")
	}
	p := &parsed{sel: join(toks[1:from]), from: join(toks[from+1 : where])}
	if reCount.MatchString(p.sel) {
		p.count = true
	}
	if strings.Contains(p.sel, "(") {
		if p.aggs = aggregates(toks[1:from]); p.aggs == nil {
			return nil, errors.New("the SELECT list calls functions other than aggregates alone")
		}
	}
	w := toks[where+1 : end]
	pos := 0
	p.where, err = p.or(w, &pos)
	if err != nil {
		return nil, err
	}
	if pos != len(w) {
		return nil, fmt.Errorf("the WHERE is more than an AND/OR of column = literal (at %q)", w[pos].text)
	}
	return p, nil
}

func (p *parsed) or(w []token, pos *int) (*node, error) {
	return p.list(w, pos, "or", p.and)
}

func (p *parsed) and(w []token, pos *int) (*node, error) {
	return p.list(w, pos, "and", p.primary)
}

func (p *parsed) list(w []token, pos *int, op string, next func([]token, *int) (*node, error)) (*node, error) {
	n, err := next(w, pos)
	if err != nil {
		return nil, err
	}
	out := &node{op: op, kids: []*node{n}}
	for *pos < len(w) && w[*pos].kind == 'i' && isKeyword(w[*pos].text, op) {
		*pos++
		k, err := next(w, pos)
		if err != nil {
			return nil, err
		}
		out.kids = append(out.kids, k)
	}
	if len(out.kids) == 1 {
		return n, nil
	}
	return out, nil
}

func (p *parsed) primary(w []token, pos *int) (*node, error) {
	if *pos >= len(w) {
		return nil, errors.New("the WHERE ends early")
	}
	if w[*pos].text == "(" {
		*pos++
		n, err := p.or(w, pos)
		if err != nil {
			return nil, err
		}
		if *pos >= len(w) || w[*pos].text != ")" {
			return nil, errors.New("an unclosed parenthesis")
		}
		*pos++
		return n, nil
	}
	if *pos+3 > len(w) {
		return nil, errors.New("the WHERE ends early")
	}
	a, op, b := w[*pos], w[*pos+1], w[*pos+2]
	if op.text != "=" {
		return nil, fmt.Errorf("a comparison %q", op.text)
	}
	if a.kind != 'i' {
		a, b = b, a
	}
	if a.kind != 'i' || isKeyword(a.text, "null", "true", "false") || (b.kind != 'n' && b.kind != 's') {
		return nil, errors.New("a comparison that is not column = literal")
	}
	*pos += 3
	p.cmps = append(p.cmps, cmp{col: a.text, lit: b})
	return &node{op: "cmp", cmp: len(p.cmps) - 1}, nil
}

// join writes tokens back, one space between them (none inside
// parentheses' edges and before commas).
func join(toks []token) string {
	var b strings.Builder
	for i, t := range toks {
		if i == 0 {
			b.WriteString(t.text)
			continue
		}
		// A function's parenthesis follows its name.
		call := t.text == "(" && toks[i-1].kind == 'i' && !isKeyword(toks[i-1].text, "and", "or", "in", "where", "from", "on", "as", "select", "join", "not", "exists", "using")
		if t.text != "," && t.text != ")" && toks[i-1].text != "(" && !call {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return b.String()
}

// value is a literal's value as the server returns it in text.
func value(t token) string {
	if t.kind != 's' {
		return strings.TrimPrefix(t.text, "+")
	}
	q := t.text[0]
	s := t.text[1 : len(t.text)-1]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '0':
				b.WriteByte(0)
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		if c == q && i+1 < len(s) && s[i+1] == q {
			i++
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Plan is a loop read: its statements parsed, the one query built.
type Plan struct {
	stmts []string
	calls []*parsed
	// cols are the columns the WHERE compares, in order; keys which
	// comparisons change from call to call.
	cols  []string
	keys  []bool
	query string
	// group: aggregates over an AND of comparisons: the one query groups
	// by the key columns (gcols), one row per key.
	group bool
	gcols []string
}

// Query is the one query that replaces the loop.
func (p *Plan) Query() string { return p.query }

// Build reads a loop's statements (one request's calls, in order) and
// builds the one query that replaces them; an error says why it cannot
// (the UncheckedShape reason).
func Build(stmts []string) (*Plan, error) {
	if len(stmts) < 2 {
		return nil, errors.New("fewer than two calls")
	}
	pl := &Plan{stmts: stmts}
	for i, s := range stmts {
		if len(s) > MaxStatement {
			return nil, fmt.Errorf("call %d is longer than %d bytes", i+1, MaxStatement)
		}
		p, err := parse(s)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			f := pl.calls[0]
			if p.sel != f.sel || p.from != f.from || len(p.cmps) != len(f.cmps) || shapeOf(p.where) != shapeOf(f.where) {
				return nil, fmt.Errorf("call %d is not the same statement as the first", i+1)
			}
			for k := range p.cmps {
				if !strings.EqualFold(p.cmps[k].col, f.cmps[k].col) {
					return nil, fmt.Errorf("call %d compares other columns", i+1)
				}
			}
		}
		pl.calls = append(pl.calls, p)
	}
	f := pl.calls[0]
	pl.keys = make([]bool, len(f.cmps))
	seen := map[string]bool{}
	any := false
	for k, c := range f.cmps {
		for _, p := range pl.calls[1:] {
			if value(p.cmps[k].lit) != value(c.lit) {
				pl.keys[k] = true
				any = true
				break
			}
		}
		if l := strings.ToLower(c.col); !seen[l] {
			seen[l] = true
			pl.cols = append(pl.cols, c.col)
		}
	}
	if !any {
		return nil, errors.New("every call has the same values: the same query run again, not a loop over rows")
	}
	if f.aggs != nil && !hasOr(f.where) {
		pl.group, pl.gcols = true, pl.Keys()
		g := strings.Join(pl.gcols, ", ")
		pl.query = "SELECT " + f.sel + ", " + g + " FROM " + f.from + " WHERE " + pl.where(f.where, true) + " GROUP BY " + g
		return pl, nil
	}
	if f.aggs != nil && !f.count {
		return nil, errors.New("aggregates other than COUNT over an OR of comparisons")
	}
	sel := strings.Join(pl.cols, ", ")
	if !f.count {
		sel = f.sel + ", " + sel
	}
	pl.query = "SELECT " + sel + " FROM " + f.from + " WHERE " + pl.where(f.where, true)
	return pl, nil
}

// Keys are the columns the loop's values change.
func (p *Plan) Keys() []string {
	var out []string
	seen := map[string]bool{}
	for k, c := range p.calls[0].cmps {
		if p.keys[k] && !seen[strings.ToLower(c.col)] {
			seen[strings.ToLower(c.col)] = true
			out = append(out, c.col)
		}
	}
	return out
}

// Distinct is how many distinct key values the loop ran with.
func (p *Plan) Distinct() int {
	seen := map[string]bool{}
	for _, c := range p.calls {
		var b strings.Builder
		for k, x := range c.cmps {
			if p.keys[k] {
				b.WriteString(value(x.lit))
				b.WriteByte(0)
			}
		}
		seen[b.String()] = true
	}
	return len(seen)
}

func hasOr(n *node) bool {
	if n.op == "or" {
		return true
	}
	for _, k := range n.kids {
		if hasOr(k) {
			return true
		}
	}
	return false
}

// groupOf says whether a row's group (its key columns' values, the
// gcols) is call i's.
func (p *Plan) groupOf(i int, keys []*string) bool {
	for j, g := range p.gcols {
		found := false
		for k, c := range p.calls[i].cmps {
			if p.keys[k] && strings.EqualFold(c.col, g) {
				found = true
				if keys[j] == nil || !strings.EqualFold(*keys[j], value(c.lit)) {
					return false
				}
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// shapeOf is the tree's shape (operators and comparison indexes).
func shapeOf(n *node) string {
	if n.op == "cmp" {
		return fmt.Sprint(n.cmp)
	}
	parts := make([]string, len(n.kids))
	for i, k := range n.kids {
		parts[i] = shapeOf(k)
	}
	return n.op + "(" + strings.Join(parts, ",") + ")"
}

// where writes the one query's WHERE: each key comparison as IN (the
// loop's distinct values, in the order first seen).
func (p *Plan) where(n *node, top bool) string {
	if n.op == "cmp" {
		c := p.calls[0].cmps[n.cmp]
		if !p.keys[n.cmp] {
			return c.col + " = " + c.lit.text
		}
		var vals []string
		seen := map[string]bool{}
		for _, call := range p.calls {
			l := call.cmps[n.cmp].lit
			if v := value(l); !seen[v] {
				seen[v] = true
				vals = append(vals, l.text)
			}
		}
		return c.col + " IN (" + strings.Join(vals, ", ") + ")"
	}
	parts := make([]string, len(n.kids))
	for i, k := range n.kids {
		parts[i] = p.where(k, false)
	}
	s := strings.Join(parts, " "+strings.ToUpper(n.op)+" ")
	if !top {
		s = "(" + s + ")"
	}
	return s
}

// match says whether a row of the one query (its WHERE columns' values,
// nil for NULL) answers call i.
func (p *Plan) match(i int, row []*string) bool {
	return p.eval(p.calls[i], p.calls[i].where, row)
}

func (p *Plan) eval(call *parsed, n *node, row []*string) bool {
	switch n.op {
	case "cmp":
		c := call.cmps[n.cmp]
		for j, col := range p.cols {
			if strings.EqualFold(col, c.col) {
				// The server's default collations ignore case.
				return row[j] != nil && strings.EqualFold(*row[j], value(c.lit))
			}
		}
		return false
	case "and":
		for _, k := range n.kids {
			if !p.eval(call, k, row) {
				return false
			}
		}
		return true
	}
	for _, k := range n.kids {
		if p.eval(call, k, row) {
			return true
		}
	}
	return false
}
