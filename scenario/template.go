package scenario

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
)

// A template is a string with {{...}} placeholders, compiled once at load.
// The placeholders are
//
//	{{list}}      a random value of the data list (picked once per request:
//	              every {{list}} of one request gets the same value)
//	{{list.seq}}  the next value of the list in order, shared by all users
//	              of a plan (also picked once per request)
//	{{user}}      the virtual user's own login value (see session.login)
//	{{user.list}} the list's value of the virtual user's own row (user id N
//	              takes value N mod the list's length, as its login does)
//	{{name}}      the session's value of capture name (see Step.Captures)
//	{{rand A B}}  a random integer in [A, B], fresh for each placeholder
//
// In a URL a value is escaped for where it lands: url.PathEscape before the
// first '?', url.QueryEscape after it. Form values are encoded as a form;
// bodies, headers and checks get the value as is.
type template struct {
	src   string
	parts []part
}

type partKind uint8

const (
	partLit partKind = iota
	partList
	partSeq
	partUser
	partRand
	partRow     // {{user.list}}: list's value of the user's row
	partCapture // {{name}}: the session's captured value; list is its index
)

type escMode uint8

const (
	escNone escMode = iota
	escPath
	escQuery
)

type part struct {
	kind   partKind
	lit    string
	list   int
	lo, hi int
	esc    escMode
}

// tmplEnv is what a template may refer to.
type tmplEnv struct {
	lists   map[string]int // list name → index
	url     bool           // escape values for a URL
	hasUser bool           // {{user}} is defined (login binds a list)
	noUser  string         // why {{user}} is not defined, when it is not
	caps    map[string]int // capture name → index
	noCaps  string         // why captures are not available here, when they are not
	noRow   string         // why {{user.list}} is not available here ("is not available in ..."), when it is not
	check   bool           // a check: {{rand}} is refused
}

// compileTemplate parses src. The error message has no position; the caller
// adds the field.
func compileTemplate(src string, env tmplEnv) (template, error) {
	t := template{src: src}
	esc := escNone
	if env.url {
		esc = escPath
	}
	rest := src
	for rest != "" {
		i := strings.Index(rest, "{{")
		if i < 0 {
			t.addLit(rest, &esc, env.url)
			break
		}
		if i > 0 {
			t.addLit(rest[:i], &esc, env.url)
		}
		rest = rest[i+2:]
		j := strings.Index(rest, "}}")
		if j < 0 {
			return template{}, fmt.Errorf("unclosed %q", "{{")
		}
		p, err := parsePlaceholder(strings.TrimSpace(rest[:j]), env)
		if err != nil {
			return template{}, err
		}
		p.esc = esc
		t.parts = append(t.parts, p)
		rest = rest[j+2:]
	}
	return t, nil
}

func (t *template) addLit(s string, esc *escMode, isURL bool) {
	if isURL && *esc == escPath && strings.Contains(s, "?") {
		*esc = escQuery
	}
	if n := len(t.parts); n > 0 && t.parts[n-1].kind == partLit {
		t.parts[n-1].lit += s
		return
	}
	t.parts = append(t.parts, part{kind: partLit, lit: s})
}

func parsePlaceholder(s string, env tmplEnv) (part, error) {
	fields := strings.Fields(s)
	switch {
	case len(fields) == 0:
		return part{}, fmt.Errorf("empty placeholder {{}}")
	case fields[0] == "rand":
		if env.check {
			return part{}, fmt.Errorf("{{%s}}: a check cannot use {{rand}} (it would draw a fresh number); capture the value instead", s)
		}
		if len(fields) != 3 {
			return part{}, fmt.Errorf("{{%s}}: want {{rand MIN MAX}}", s)
		}
		lo, err1 := strconv.Atoi(fields[1])
		hi, err2 := strconv.Atoi(fields[2])
		if err1 != nil || err2 != nil {
			return part{}, fmt.Errorf("{{%s}}: MIN and MAX must be integers", s)
		}
		if lo > hi {
			return part{}, fmt.Errorf("{{%s}}: MIN is greater than MAX", s)
		}
		if uint64(hi-lo) >= 1<<62 {
			return part{}, fmt.Errorf("{{%s}}: range too large", s)
		}
		return part{kind: partRand, lo: lo, hi: hi}, nil
	case len(fields) > 1:
		return part{}, fmt.Errorf("{{%s}}: want {{list}}, {{list.seq}}, {{user}} or {{rand MIN MAX}}", s)
	case s == "user":
		if !env.hasUser {
			return part{}, fmt.Errorf("%s", env.noUser)
		}
		return part{kind: partUser}, nil
	}
	if name, ok := strings.CutPrefix(s, "user."); ok {
		if env.noRow != "" {
			return part{}, fmt.Errorf("{{%s}} %s", s, env.noRow)
		}
		idx, ok := env.lists[name]
		if !ok {
			return part{}, fmt.Errorf("unknown list %q in {{%s}} (define it under data)", name, s)
		}
		return part{kind: partRow, list: idx}, nil
	}
	name, kind := s, partList
	if n, ok := strings.CutSuffix(s, ".seq"); ok {
		name, kind = n, partSeq
	}
	idx, ok := env.lists[name]
	if !ok {
		if c, isCap := env.caps[name]; isCap {
			switch {
			case kind == partSeq:
				return part{}, fmt.Errorf("{{%s}}: %s is a capture, not a data list (use {{%s}})", s, name, name)
			case env.noCaps != "":
				return part{}, fmt.Errorf("{{%s}}: %s", s, env.noCaps)
			}
			return part{kind: partCapture, list: c}, nil
		}
		return part{}, fmt.Errorf("unknown list %q in {{%s}} (define it under data)", name, s)
	}
	return part{kind: kind, list: idx}, nil
}

// lists returns the indexes of the lists t refers to, in order of appearance.
func (t template) lists(dst []int) []int {
	for _, p := range t.parts {
		if p.kind == partList || p.kind == partSeq {
			dst = append(dst, p.list)
		}
	}
	return dst
}

// captures returns the indexes of the captures t refers to.
func (t template) captures(dst []int) []int {
	for _, p := range t.parts {
		if p.kind == partCapture {
			dst = append(dst, p.list)
		}
	}
	return dst
}

// constant reports whether t has no placeholders.
func (t template) constant() bool {
	return len(t.parts) == 0 || (len(t.parts) == 1 && t.parts[0].kind == partLit)
}

// filler resolves placeholders for one user; reset it before each request.
type filler struct {
	rng   *rand.Rand
	lists [][]string
	seq   []atomic.Uint64 // shared by all users of a plan, one per list
	picks []int           // per request: [list] random pick, [n+list] seq pick; -1 = none yet
	user  string
	// bind, when ≥ 0, makes every list resolve to value bind mod len
	// (the login request: each user logs in with its own row).
	bind int
	// row is the user's own row, for {{user.list}}.
	row int
	// caps are the session's captured values, by capture index ("" until
	// captured: a step using one runs only once it is).
	caps []string
}

func newFiller(rng *rand.Rand, lists [][]string, seq []atomic.Uint64) *filler {
	return &filler{rng: rng, lists: lists, seq: seq, picks: make([]int, 2*len(lists)), bind: -1}
}

func (f *filler) reset() {
	for i := range f.picks {
		f.picks[i] = -1
	}
}

func (f *filler) value(p part) string {
	switch p.kind {
	case partUser:
		return f.user
	case partRand:
		return strconv.Itoa(p.lo + int(f.rng.Uint64N(uint64(p.hi-p.lo)+1)))
	case partCapture:
		if p.list < len(f.caps) {
			return f.caps[p.list]
		}
		return ""
	case partRow:
		vals := f.lists[p.list]
		return vals[f.row%len(vals)]
	}
	vals := f.lists[p.list]
	if f.bind >= 0 {
		return vals[f.bind%len(vals)]
	}
	slot := p.list
	if p.kind == partSeq {
		slot += len(f.lists)
	}
	i := f.picks[slot]
	if i < 0 {
		if p.kind == partSeq {
			i = int((f.seq[p.list].Add(1) - 1) % uint64(len(vals)))
		} else {
			i = f.rng.IntN(len(vals))
		}
		f.picks[slot] = i
	}
	return vals[i]
}

// fill appends t with its placeholders resolved to dst.
func (t template) fill(dst []byte, f *filler) []byte {
	for _, p := range t.parts {
		if p.kind == partLit {
			dst = append(dst, p.lit...)
			continue
		}
		v := f.value(p)
		switch p.esc {
		case escPath:
			v = url.PathEscape(v)
		case escQuery:
			v = url.QueryEscape(v)
		}
		dst = append(dst, v...)
	}
	return dst
}

// String fills t into a new string.
func (t template) string(f *filler) string {
	if t.constant() {
		if len(t.parts) == 0 {
			return ""
		}
		return t.parts[0].lit
	}
	return string(t.fill(nil, f))
}
