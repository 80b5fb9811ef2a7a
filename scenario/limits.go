package scenario

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Bounds on what a scenario may hold, each far above what a real one
// needs (a scenario is a few KB with tens of steps; a data file of a
// million user names is about 10 MB), so that a mistaken path, a
// generated file gone wrong or a hostile one is refused with a message
// naming the bound instead of filling memory or spinning.
const (
	// MaxFileSize bounds the scenario file (YAML or TOML).
	MaxFileSize = 1 << 20
	// MaxSteps bounds the steps of a scenario.
	MaxSteps = 10_000
	// MaxDataFileSize bounds one data file ({file: PATH}).
	MaxDataFileSize = 64 << 20
	// MaxListValues bounds the values of one data list, inline or from a
	// file.
	MaxListValues = 1_000_000
	// MaxDataBytes bounds the data files' bytes across all lists (a file
	// named by two lists counts twice).
	MaxDataBytes = 128 << 20
	// MaxDataValues bounds the values of all data lists together.
	MaxDataValues = 4_000_000
	// MaxAliasNodes and MaxAliasBytes bound what YAML aliases and merge
	// keys (<<) add to the document when expanded: the nodes, and the
	// bytes of the scalars, they stand for. A few kilobytes of nested
	// aliases can otherwise stand for billions of nodes.
	MaxAliasNodes = 100_000
	MaxAliasBytes = 16 << 20
	// MaxTOMLNesting bounds the depth of a TOML scenario (tables, dotted
	// keys, arrays and inline tables), checked before the decoder sees the
	// text: the decoder's cost grows with the square of the depth. YAML's
	// parser bounds its own depth (10000 levels), at linear cost.
	MaxTOMLNesting = 64
)

// aliasExpansion walks a YAML document in order and adds up, at each
// alias, the size of the node it stands for (with the aliases inside that
// node expanded in turn): the nodes and scalar bytes the aliases and merge
// keys add. It stops at the first alias that takes the total past
// MaxAliasNodes or MaxAliasBytes and returns that alias (nil: within the
// bounds) with the scalar bytes added so far. Each node's expanded size is computed
// once: an alias can only name an anchor defined before it, whose size is
// then known, so the walk is linear in the document; an alias to a node
// still being walked (a cycle) counts as one node.
func aliasExpansion(root *yaml.Node) (over *yaml.Node, bytes int64) {
	type size struct{ nodes, bytes int64 }
	const huge = 1 << 60
	add := func(a, b size) size {
		return size{min(a.nodes+b.nodes, huge), min(a.bytes+b.bytes, huge)}
	}
	memo := map[*yaml.Node]size{}
	var added size
	var walk func(n *yaml.Node) size
	walk = func(n *yaml.Node) size {
		if n == nil || over != nil {
			return size{}
		}
		s := size{1, int64(len(n.Value))}
		if n.Kind == yaml.AliasNode {
			t, ok := memo[n.Alias]
			if !ok {
				t = size{1, 0}
			}
			added = add(added, t)
			if added.nodes > MaxAliasNodes || added.bytes > MaxAliasBytes {
				over = n
			}
			s = add(s, t)
		}
		for _, c := range n.Content {
			s = add(s, walk(c))
		}
		memo[n] = s
		return s
	}
	walk(root)
	return over, added.bytes
}

// aliasBomb is the problem aliasExpansion found, or nil.
func aliasBomb(name string, root *yaml.Node) *FieldError {
	over, bytes := aliasExpansion(root)
	if over == nil {
		return nil
	}
	what := fmt.Sprintf("more than %d nodes (scenario.MaxAliasNodes)", MaxAliasNodes)
	if bytes > MaxAliasBytes {
		what = fmt.Sprintf("more than %d bytes of values (scenario.MaxAliasBytes)", MaxAliasBytes)
	}
	return &FieldError{File: name, Line: max(over.Line, 1), Msg: fmt.Sprintf(
		"aliases and merge keys (<<) expand to %s by this alias (*%s); write the fields out or share less", what, over.Value)}
}

// tomlNesting scans TOML source for its depth as the decoder will nest
// it: the document is level 1; a table header's segments, the segments of
// a dotted key, an array and an inline table each add one level. It
// returns the line where the depth first goes past limit (0: never) and
// the deepest level seen. It stops, with stopped set, at anything it does
// not follow: the decoder, which reads in order and fails at its first
// error, refuses such a file at or before that point (FuzzTOMLNesting
// checks that it never stops on a file the decoder accepts, and never
// says less than the decoded depth).
func tomlNesting(src string, limit int) (line, deepest int, stopped bool) {
	s := &tomlScan{src: src, line: 1, limit: limit}
	// The decoder skips a byte order mark, UTF-16's too.
	for _, bom := range []string{"\xff\xfe", "\xfe\xff", "\xef\xbb\xbf"} {
		if strings.HasPrefix(src, bom) {
			s.pos = len(bom)
			break
		}
	}
	s.document()
	return s.over, s.deepest, s.stopped && s.over == 0
}

type tomlScan struct {
	src     string
	pos     int
	line    int
	limit   int
	deepest int
	over    int  // line past the limit
	stopped bool // something the scan does not follow
}

func (s *tomlScan) done() bool { return s.over > 0 || s.stopped }

func (s *tomlScan) peek(off int) byte {
	if s.pos+off < len(s.src) {
		return s.src[s.pos+off]
	}
	return 0
}

func (s *tomlScan) stop() { s.stopped = true }

// level records a container at depth d.
func (s *tomlScan) level(d int) {
	s.deepest = max(s.deepest, d)
	if d > s.limit && s.over == 0 {
		s.over = s.line
	}
}

func (s *tomlScan) ws() {
	for s.pos < len(s.src) && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
}

// newline consumes one newline ("\n", "\r\n" or a lone "\r", as the
// decoder's lexer takes it) and reports whether there was one.
func (s *tomlScan) newline() bool {
	switch s.peek(0) {
	case '\n':
		s.pos++
	case '\r':
		s.pos++
		if s.peek(0) == '\n' {
			s.pos++
		}
	default:
		return false
	}
	s.line++
	return true
}

func (s *tomlScan) comment() {
	for s.pos < len(s.src) && s.src[s.pos] != '\n' && s.src[s.pos] != '\r' {
		s.pos++
	}
}

// blank skips whitespace, newlines and comments (inside arrays and inline
// tables).
func (s *tomlScan) blank() {
	for !s.done() {
		s.ws()
		switch {
		case s.peek(0) == '#':
			s.comment()
		case s.newline():
		default:
			return
		}
	}
}

// endOfLine expects the rest of a line to be blank or a comment.
func (s *tomlScan) endOfLine() {
	s.ws()
	if s.peek(0) == '#' {
		s.comment()
	}
	if s.pos < len(s.src) && !s.newline() {
		s.stop()
	}
}

func (s *tomlScan) document() {
	base := 1
	s.level(1)
	for s.pos < len(s.src) && !s.done() {
		s.ws()
		switch c := s.peek(0); {
		case c == 0 && s.pos >= len(s.src):
		case c == '#':
			s.comment()
		case s.newline():
		case c == '[':
			s.pos++
			array := s.peek(0) == '['
			if array {
				s.pos++
			}
			segs := s.key()
			s.ws()
			if s.peek(0) != ']' || (array && s.peek(1) != ']') {
				s.stop()
				return
			}
			s.pos++
			base = 1 + segs
			if array {
				s.pos++
				base++ // the array of tables, then its table
			}
			s.level(base)
			s.endOfLine()
		default:
			s.keyval(base)
			s.endOfLine()
		}
	}
}

// key scans a dotted key and returns its segments (0 after stopping).
func (s *tomlScan) key() int {
	segs := 0
	for !s.done() {
		s.ws()
		switch c := s.peek(0); {
		case c == '"':
			s.pos++
			s.basicString()
		case c == '\'':
			s.pos++
			s.literalString()
		case bareKeyChar(c):
			for s.pos < len(s.src) && bareKeyChar(s.src[s.pos]) {
				s.pos++
			}
		default:
			s.stop()
			return 0
		}
		segs++
		s.ws()
		if s.peek(0) != '.' {
			return segs
		}
		s.pos++
	}
	return 0
}

func bareKeyChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// keyval scans "key = value" in a table at depth d.
func (s *tomlScan) keyval(d int) {
	segs := s.key()
	if s.done() {
		return
	}
	s.level(d + segs - 1) // the tables a dotted key makes
	s.ws()
	if s.peek(0) != '=' {
		s.stop()
		return
	}
	s.pos++
	s.value(d + segs)
}

// value scans a value whose level, if it is an array or inline table, is d.
func (s *tomlScan) value(d int) {
	s.ws()
	switch c := s.peek(0); c {
	case '"':
		if s.peek(1) == '"' && s.peek(2) == '"' {
			s.pos += 3
			s.multiline('"')
			return
		}
		s.pos++
		s.basicString()
	case '\'':
		if s.peek(1) == '\'' && s.peek(2) == '\'' {
			s.pos += 3
			s.multiline('\'')
			return
		}
		s.pos++
		s.literalString()
	case '[':
		s.pos++
		s.level(d)
		for !s.done() {
			s.blank()
			if s.peek(0) == ']' {
				s.pos++
				return
			}
			s.value(d + 1)
			s.blank()
			switch s.peek(0) {
			case ',':
				s.pos++
			case ']':
			default:
				s.stop()
			}
		}
	case '{':
		s.pos++
		s.level(d)
		for !s.done() {
			s.blank()
			if s.peek(0) == '}' {
				s.pos++
				return
			}
			s.keyval(d)
			s.blank()
			switch s.peek(0) {
			case ',':
				s.pos++
			case '}':
			default:
				s.stop()
			}
		}
	default:
		// A number, boolean or date-time: up to a delimiter; a date and a
		// time may be separated by one space.
		start := s.pos
		for s.pos < len(s.src) {
			c := s.src[s.pos]
			if c == ' ' && s.pos-start == 10 && s.src[start+4] == '-' && s.src[start+7] == '-' && s.peek(1) >= '0' && s.peek(1) <= '9' {
				s.pos++
				continue
			}
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ']' || c == '}' || c == '#' {
				break
			}
			s.pos++
		}
		if s.pos == start {
			s.stop()
		}
	}
}

// basicString scans a one-line "string" after its opening quote.
func (s *tomlScan) basicString() {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case '\\':
			s.pos += 2
			continue
		case '"':
			s.pos++
			return
		case '\n', '\r':
			s.stop()
			return
		}
		s.pos++
	}
	s.stop()
}

// literalString scans a one-line 'string' after its opening quote.
func (s *tomlScan) literalString() {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case '\'':
			s.pos++
			return
		case '\n', '\r':
			s.stop()
			return
		}
		s.pos++
	}
	s.stop()
}

// multiline scans a multi-line string after its opening triple quote q:
// it ends at three quotes, and up to two more quotes before them belong to
// the string.
func (s *tomlScan) multiline(q byte) {
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == '\\' && q == '"':
			s.pos++
			if !s.newline() {
				s.pos++
			}
			continue
		case c == q && s.peek(1) == q && s.peek(2) == q:
			s.pos += 3
			for i := 0; i < 2 && s.peek(0) == q; i++ {
				s.pos++
			}
			return
		case s.newline():
			continue
		}
		s.pos++
	}
	s.stop()
}
