package fingerprint

import (
	"bytes"
	"sync"
	"unsafe"
)

// bufPool holds scratch buffers for Fingerprint, so that its only
// allocation is the returned string.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// Fingerprint returns the fingerprint of query: the class that
// pt-query-digest (3.2.1, default options) puts the query in. The rules are
// listed in the package documentation.
func Fingerprint(query string) string {
	bp := bufPool.Get().(*[]byte)
	b := Append((*bp)[:0], unsafe.Slice(unsafe.StringData(query), len(query)))
	fp := string(b)
	if cap(b) <= 64<<10 {
		*bp = b
		bufPool.Put(bp)
	}
	return fp
}

// Append appends the fingerprint of query to dst and returns the extended
// buffer. It does not allocate when dst has spare capacity for
// len(query)+len(query)/2+16 bytes: a fingerprint is usually shorter than
// its query, but "in()" becomes "in(?+)". query is only read; it must not
// overlap dst's spare capacity.
func Append(dst, query []byte) []byte {
	if bytes.HasPrefix(query, mysqldumpPrefix) {
		return append(dst, "mysqldump"...)
	}
	if hasToolkitChecksum(query) {
		return append(dst, "percona-toolkit"...)
	}
	if bytes.HasPrefix(query, adminPrefix) {
		return append(dst, query...)
	}
	if start, end := callPrefix(query); end > 0 {
		for _, c := range query[start:end] {
			dst = append(dst, lower[c])
		}
		return dst
	}
	s := scanner{
		s:            query[:insertCut(query)],
		out:          dst,
		base:         len(dst),
		wordStart:    -1,
		collapseEnd:  -1,
		olcFrom:      -1,
		olcTo:        -1,
		noDoubleFrom: len(query) + 1,
		noSingleFrom: len(query) + 1,
	}
	s.n = len(s.s)
	s.mlcNoClose = s.n
	if s.useStatement() {
		return s.out
	}
	s.run()
	if s.passes&passUnion != 0 {
		s.out = unionPass(s.out, s.base)
	}
	if s.passes&passLimit != 0 {
		s.out = limitPass(s.out, s.base)
	}
	if s.passes&passOrderBy != 0 {
		s.out = orderByPass(s.out, s.base)
	}
	return s.out
}

var (
	mysqldumpPrefix = []byte("SELECT /*!40001 SQL_NO_CACHE */ * FROM `")
	adminPrefix     = []byte("administrator command: ")
	starSlash       = []byte("*/")
	slashStar       = []byte("/*")
)

// Byte classes of the main scanner.
const (
	cOther  = iota
	cLetter // A-Z a-z _
	cDigit  // 0-9
	cSign   // + -
	cSpace  // \t \n \v \f \r and space: Perl's \s on bytes
	cQuote  // ' "
	cQMark  // ?
)

var (
	class   [256]uint8
	isWordB [256]bool // Perl's \w on bytes: [A-Za-z0-9_]
	numB    [256]bool // [0-9a-f.xb+-], the characters of a pt "number"
	special [256]bool // bytes that may start something removed before lexing
	strStop [256]bool // bytes a string scan must look at
	lower   [256]byte
)

func init() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		lower[c] = b
		switch {
		case b >= 'A' && b <= 'Z':
			lower[c] = b + 'a' - 'A'
			class[c], isWordB[c] = cLetter, true
		case b >= 'a' && b <= 'z' || b == '_':
			class[c], isWordB[c] = cLetter, true
		case b >= '0' && b <= '9':
			class[c], isWordB[c] = cDigit, true
		case b == '+' || b == '-':
			class[c] = cSign
		case b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r':
			class[c] = cSpace
		case b == '\'' || b == '"':
			class[c] = cQuote
		case b == '?':
			class[c] = cQMark
		}
		numB[c] = b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b == '.' || b == 'x' || b == 'b' || b == '+' || b == '-'
	}
	for _, b := range []byte("/-#\\") {
		special[b] = true
		strStop[b] = true
	}
	strStop['\''] = true
	strStop['"'] = true
}

func isSpace(c byte) bool { return class[c] == cSpace }

// hasPrefixFold reports whether s begins with the lower-case ASCII word p,
// ignoring ASCII case.
func hasPrefixFold(s []byte, p string) bool {
	if len(s) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if lower[s[i]] != p[i] {
			return false
		}
	}
	return true
}

// hasToolkitChecksum reports whether q contains a Percona Toolkit checksum
// comment such as /*db.tbl:1/3*/ anywhere (rule 2).
func hasToolkitChecksum(q []byte) bool {
	for i := 0; ; {
		k := bytes.Index(q[i:], slashStar)
		if k < 0 {
			return false
		}
		i += k + 2
		j := i
		for j < len(q) && isWordB[q[j]] {
			j++
		}
		if j == i || j >= len(q) || q[j] != '.' {
			continue
		}
		j++
		m := j
		for j < len(q) && isWordB[q[j]] {
			j++
		}
		if j == m || len(q)-j < 6 || q[j] != ':' {
			continue
		}
		if class[q[j+1]] == cDigit && q[j+2] == '/' && class[q[j+3]] == cDigit && q[j+4] == '*' && q[j+5] == '/' {
			return true
		}
	}
}

// callPrefix matches "\A\s*(call\s+\S+)\(" case-insensitively and returns
// the bounds of the captured part, or end == 0 (rule 4).
func callPrefix(q []byte) (start, end int) {
	i := 0
	for i < len(q) && isSpace(q[i]) {
		i++
	}
	if !hasPrefixFold(q[i:], "call") {
		return 0, 0
	}
	k := i + 4
	for k < len(q) && isSpace(q[k]) {
		k++
	}
	if k == i+4 {
		return 0, 0
	}
	r := k
	for r < len(q) && !isSpace(q[r]) {
		r++
	}
	if k+1 > r {
		return 0, 0
	}
	p := bytes.LastIndexByte(q[k+1:r], '(')
	if p < 0 {
		return 0, 0
	}
	return i, k + 1 + p
}

// insertCut returns the length of the part of q that pt keeps of a
// multi-row INSERT/REPLACE: everything up to the end of the first row
// (rule 5), or len(q) when the rule does not apply.
func insertCut(q []byte) int {
	n := len(q)
	i := 0
	switch {
	case hasPrefixFold(q, "insert"):
		i = 6
	case hasPrefixFold(q, "replace"):
		i = 7
	default:
		return n
	}
	if hasPrefixFold(q[i:], " ignore") {
		i += 7
	}
	k := i
	for k < n && isSpace(q[k]) {
		k++
	}
	if k == i || !hasPrefixFold(q[k:], "into") {
		return n
	}
	// .+?VALUES\s*\(  -- the first VALUES at least one byte after INTO.
	open := -1
	for v := k + 5; v+6 < n; v++ {
		if lower[q[v]] != 'v' || !hasPrefixFold(q[v:], "values") {
			continue
		}
		p := v + 6
		for p < n && isSpace(q[p]) {
			p++
		}
		if p < n && q[p] == '(' {
			open = p
			break
		}
	}
	if open < 0 {
		return n
	}
	// .*?\)\s*,\s*\(  -- the first ")" followed by another row.
	for c := open + 1; c < n; c++ {
		k := bytes.IndexByte(q[c:], ')')
		if k < 0 {
			return n
		}
		c += k
		p := c + 1
		for p < n && isSpace(q[p]) {
			p++
		}
		if p >= n || q[p] != ',' {
			continue
		}
		p++
		for p < n && isSpace(q[p]) {
			p++
		}
		if p < n && q[p] == '(' {
			return c + 1
		}
	}
	return n
}

// scanner turns the (possibly shortened) query into the fingerprint in a
// single left-to-right pass. Comments and escaped quotes are skipped on the
// fly (s1next, s2next, s3next); everything else is lexed by run.
type scanner struct {
	s []byte
	n int

	mlcNoClose   int // no "*/" starts at or after this index
	olcFrom      int // "--"/"#" in [olcFrom, olcTo) are known not to be comments
	olcTo        int
	noDoubleFrom int // no '"' at or after this index has a closing '"'
	noSingleFrom int // no '\'' at or after this index has a closing '\''
	prevW        bool

	out         []byte
	base        int  // start of the fingerprint in out
	wordStart   int  // start in out of the current [a-z0-9_]+ run, or -1
	collapseEnd int  // end in out of the last "(?+)" written, or -1
	prev7       byte // the last character emitted before the x?/b?/.? rule
	started     bool // a non-space character has been emitted
	wsRun       int  // length of the trailing run of squeezable whitespace
	lastNL      bool // the last character seen was '\n'
	passes      uint8
}

// Flags for the passes that run on the finished fingerprint: set when a
// five-letter word starting like their keyword was emitted.
const (
	passUnion = 1 << iota
	passLimit
	passOrderBy
)

// s1next skips /*...*/ comments (not /*!...*/) starting at i (rule 6).
func (s *scanner) s1next(i int) int {
	for i+2 < s.n && s.s[i] == '/' && s.s[i+1] == '*' && s.s[i+2] != '!' {
		from := i + 3
		if from >= s.mlcNoClose {
			return i
		}
		k := bytes.Index(s.s[from:], starSlash)
		if k < 0 {
			s.mlcNoClose = from
			return i
		}
		i = from + k + 2
	}
	return i
}

// s1step returns the position of the next character after i that survives
// /* */ comment removal.
func (s *scanner) s1step(i int) int {
	i++
	if i < s.n && s.s[i] == '/' {
		return s.s1next(i)
	}
	return i
}

// olcEnd decides whether the "--" or "#" at i, whose text starts at
// content, is a one-line comment: it is unless a quote follows it on the
// same line (rule 7). It returns the end of the comment.
func (s *scanner) olcEnd(i, content int) (int, bool) {
	if i >= s.olcFrom && i < s.olcTo {
		return 0, false
	}
	j := content
	if j < s.n && s.s[j] == '/' {
		j = s.s1next(j)
	}
	for j < s.n {
		switch s.s[j] {
		case '\n', '\r':
			return j, true
		case '\'', '"':
			s.olcFrom, s.olcTo = i, j
			return 0, false
		}
		j = s.s1step(j)
	}
	return s.n, true
}

// s2next skips comments of both kinds starting at i.
func (s *scanner) s2next(i int) int {
	for {
		i = s.s1next(i)
		if i >= s.n {
			return s.n
		}
		var content int
		switch s.s[i] {
		case '#':
			content = i + 1
		case '-':
			d := s.s1step(i)
			if d >= s.n || s.s[d] != '-' {
				return i
			}
			content = d + 1
		default:
			return i
		}
		end, ok := s.olcEnd(i, content)
		if !ok {
			return i
		}
		i = end
	}
}

// s3next skips comments and backslash-quote pairs starting at i (rule 9).
func (s *scanner) s3next(i int) int {
	for {
		i = s.s2next(i)
		if i >= s.n || s.s[i] != '\\' {
			return i
		}
		j := s.s2next(i + 1)
		if j >= s.n || (s.s[j] != '\'' && s.s[j] != '"') {
			return i
		}
		i = j + 1
	}
}

// adv returns the position of the next lexable character at or after i.
func (s *scanner) adv(i int) int {
	if i < s.n && special[s.s[i]] && s.maySkip(i) {
		return s.s3next(i)
	}
	return i
}

// maySkip is a cheap pre-check for s3next: whether a comment or an escaped
// quote might start at i, whose byte is special.
func (s *scanner) maySkip(i int) bool {
	switch s.s[i] {
	case '-':
		return i+1 < s.n && (s.s[i+1] == '-' || s.s[i+1] == '/')
	case '/':
		return i+1 < s.n && s.s[i+1] == '*'
	}
	return true
}

// useStatement applies rule 8: "USE db" becomes "use ?".
func (s *scanner) useStatement() bool {
	i := s.s2next(0)
	for k := 0; k < 4; k++ {
		if i >= s.n || lower[s.s[i]] != "use "[k] {
			return false
		}
		i = s.s2next(i + 1)
	}
	if i >= s.n || isSpace(s.s[i]) {
		return false
	}
	for i < s.n && !isSpace(s.s[i]) {
		i = s.s2next(i + 1)
	}
	nl := false
	if i < s.n {
		if s.s[i] != '\n' || s.s2next(i+1) < s.n {
			return false
		}
		nl = true
	}
	s.out = append(s.out, "use ?"...)
	if nl {
		s.out = append(s.out, '\n')
	}
	return true
}

func (s *scanner) run() {
	i := s.adv(0)
	for i < s.n {
		c := s.s[i]
		switch class[c] {
		case cLetter:
			if !s.prevW && (lower[c] == 't' || lower[c] == 'f') {
				if end := s.boolWord(i); end >= 0 {
					s.emitQ()
					s.prevW = true
					i = end
					continue
				}
			}
			// The whole run of letters: no comment can start inside it.
			if s.wordStart < 0 {
				s.wordStart = len(s.out)
			}
			j := i
			for {
				s.out = append(s.out, lower[s.s[j]])
				j++
				if j >= s.n || class[s.s[j]] != cLetter {
					break
				}
			}
			s.prev7 = s.s[j-1]
			s.started, s.wsRun, s.lastNL = true, 0, false
			s.prevW = true
			i = s.adv(j)
			continue
		case cDigit, cSign:
			i = s.number(i)
			continue
		case cSpace:
			s.emitSpace(c)
			s.prevW = false
		case cQuote:
			s.prevW = false
			if end := s.closeString(i); end >= 0 {
				s.emitQ()
				i = s.adv(end + 1)
				continue
			}
			s.emitOther(c)
		case cQMark:
			s.emitQ()
			s.prevW = false
		default:
			s.emitOther(c)
			s.prevW = false
		}
		i = s.adv(i + 1)
	}
	s.endWord()
	if s.lastNL && s.wsRun == 1 {
		// chomp: the query ended with a single '\n', which is dropped.
		s.out = s.out[:len(s.out)-1]
	}
}

// boolWord reports whether a whole word "true" or "false" (any case)
// starts at i (rule 11) and returns the position after it, or -1.
func (s *scanner) boolWord(i int) int {
	w := "false"
	if lower[s.s[i]] == 't' {
		w = "true"
	}
	j := i
	for k := 0; k < len(w); k++ {
		if j >= s.n || lower[s.s[j]] != w[k] {
			return -1
		}
		j = s.adv(j + 1)
	}
	if j < s.n && isWordB[s.s[j]] {
		return -1
	}
	return j
}

// number replaces the pt "number" starting at i by ? (rule 12) and returns
// the position after it.
func (s *scanner) number(i int) int {
	s.emitQ()
	prevW := isWordB[s.s[i]]
	j := s.adv(i + 1)
	for j < s.n {
		c := s.s[j]
		if !numB[c] {
			break
		}
		if c == 'f' && !prevW && s.boolWord(j) >= 0 {
			break
		}
		prevW = isWordB[c]
		j = s.adv(j + 1)
	}
	s.prevW = prevW
	return j
}

// findDouble returns the position of the next '"' at or after j, or -1.
func (s *scanner) findDouble(j int) int {
	for j < s.n {
		c := s.s[j]
		if !strStop[c] {
			j++
			continue
		}
		if special[c] && s.maySkip(j) {
			if k := s.s3next(j); k != j {
				j = k
				continue
			}
		}
		if c == '"' {
			return j
		}
		j++
	}
	return -1
}

// closeString returns the position of the quote that closes the string
// opened at i, or -1 if it is not closed (rule 10).
func (s *scanner) closeString(i int) int {
	if s.s[i] == '"' {
		if i >= s.noDoubleFrom {
			return -1
		}
		j := s.findDouble(s.adv(i + 1))
		if j < 0 {
			s.noDoubleFrom = i
		}
		return j
	}
	if i >= s.noSingleFrom {
		return -1
	}
	j := s.adv(i + 1)
	for j < s.n {
		c := s.s[j]
		if !strStop[c] {
			j++
			continue
		}
		if special[c] && s.maySkip(j) {
			if k := s.s3next(j); k != j {
				j = k
				continue
			}
		}
		switch c {
		case '\'':
			return j
		case '"':
			if j < s.noDoubleFrom {
				if k := s.findDouble(s.adv(j + 1)); k >= 0 {
					j = s.adv(k + 1)
					continue
				}
				s.noDoubleFrom = j
			}
		}
		j++
	}
	s.noSingleFrom = i
	return -1
}

func (s *scanner) emitOther(c byte) {
	s.prev7 = c
	s.started, s.wsRun, s.lastNL = true, 0, false
	s.endWord()
	s.out = append(s.out, c)
	if c == ')' {
		s.collapseIn()
	}
}

// emitQ emits a placeholder; an x, b or . right before it is absorbed
// (rule 13).
func (s *scanner) emitQ() {
	if p := s.prev7; p == 'x' || p == 'b' || p == '.' {
		s.out = s.out[:len(s.out)-1]
		if s.wordStart >= len(s.out) {
			s.wordStart = -1
		}
	}
	s.prev7 = '?'
	s.started, s.wsRun, s.lastNL = true, 0, false
	s.endWord()
	s.out = append(s.out, '?')
}

// emitSpace handles rule 14: leading whitespace is dropped, runs of
// [ \t\n\r\f] become one space, \v is kept.
func (s *scanner) emitSpace(c byte) {
	s.prev7 = c
	if !s.started {
		return
	}
	if c == '\v' {
		s.wsRun, s.lastNL = 0, false
		s.endWord()
		s.out = append(s.out, c)
		return
	}
	s.lastNL = c == '\n'
	s.wsRun++
	if s.wsRun == 1 {
		s.endWord()
		s.out = append(s.out, ' ')
	}
}

// endWord closes the current word, replacing it by ? if it is "null"
// (rule 16).
func (s *scanner) endWord() {
	if w := s.wordStart; w >= 0 {
		s.wordStart = -1
		switch len(s.out) - w {
		case 4:
			if string(s.out[w:]) == "null" {
				s.out = append(s.out[:w], '?')
			}
		case 5:
			// Note the keywords of the passes that run afterwards.
			switch s.out[w] {
			case 'u':
				s.passes |= passUnion
			case 'l':
				s.passes |= passLimit
			case 'o':
				s.passes |= passOrderBy
			}
		}
	}
}

func isGroupByte(c byte) bool { return c == '?' || c == ',' || isSpace(c) }

// collapseIn is called after a ')' is emitted and applies rule 17:
// in (...) / value(s) (...) lists of placeholders become "(?+)".
func (s *scanner) collapseIn() {
	o := s.out
	j := len(o) - 2
	for j >= s.base && isGroupByte(o[j]) {
		j--
	}
	if j < s.base || o[j] != '(' {
		return
	}
	j--
	for j >= s.base && (o[j] == ',' || isSpace(o[j])) {
		j--
	}
	e := j + 1
	if e == s.collapseEnd {
		s.out = o[:e]
		return
	}
	if !s.keywordBefore(e, "in") && !s.keywordBefore(e, "values") && !s.keywordBefore(e, "value") {
		return
	}
	s.out = append(o[:e], "(?+)"...)
	s.collapseEnd = len(s.out)
}

// keywordBefore reports whether out[:e] ends with the whole word kw.
func (s *scanner) keywordBefore(e int, kw string) bool {
	k := e - len(kw)
	if k < s.base || string(s.out[k:e]) != kw {
		return false
	}
	return k == s.base || !isWordB[s.out[k-1]]
}
