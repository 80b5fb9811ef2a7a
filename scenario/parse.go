package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/http/httpguts"
	"gopkg.in/yaml.v3"

	"github.com/stacktune/stacktune/loadgen"
)

// parser walks the YAML node tree (TOML is converted to the same tree) and
// collects every problem with its line and field path.
type parser struct {
	file     string
	dir      string
	readFile func(string) ([]byte, error)
	errs     Errors
}

// errf reports a problem at n; URL passwords in the message are masked.
func (p *parser) errf(n *yaml.Node, field, format string, args ...any) {
	line, col := 0, 0
	if n != nil {
		line, col = n.Line, n.Column
	}
	p.errs = append(p.errs, &FieldError{File: p.file, Line: line, Field: field, Msg: loadgen.MaskCredentials(fmt.Sprintf(format, args...)), col: col})
}

func (p *parser) sort() {
	sort.SliceStable(p.errs, func(i, j int) bool {
		a, b := p.errs[i], p.errs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.col < b.col
	})
}

func sub(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

func index(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }

// maxAlias bounds alias chains and merge nesting, which YAML lets form cycles.
const maxAlias = 16

// resolve follows aliases and unwraps a document node; it returns nil for a
// missing node or an alias cycle.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil; i++ {
		switch {
		case i > maxAlias:
			return nil
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		case n.Kind == yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		default:
			return n
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

type entry struct {
	name     string
	key, val *yaml.Node
}

// entries lists a mapping's entries in order, expanding merge keys (<<:
// explicit fields win over merged ones) and reporting duplicate fields.
func (p *parser) entries(n *yaml.Node, field string) []entry {
	return p.entriesDepth(n, field, 0, true)
}

func (p *parser) entriesDepth(n *yaml.Node, field string, depth int, report bool) []entry {
	var out, merged []entry
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			if depth >= maxAlias {
				if report {
					p.errf(k, field, "merge keys nested too deeply")
				}
				continue
			}
			srcs := []*yaml.Node{resolve(v)}
			if s := srcs[0]; s != nil && s.Kind == yaml.SequenceNode {
				srcs = srcs[:0]
				for _, c := range s.Content {
					srcs = append(srcs, resolve(c))
				}
			}
			for _, s := range srcs {
				if s == nil || s.Kind != yaml.MappingNode {
					if report {
						p.errf(k, field, "<< wants a mapping or a list of mappings")
					}
					continue
				}
				merged = append(merged, p.entriesDepth(s, field, depth+1, false)...)
			}
			continue
		}
		kr := resolve(k)
		if kr == nil || kr.Kind != yaml.ScalarNode {
			if report {
				p.errf(k, field, "want a field name, got a %s", kindName(kr))
			}
			continue
		}
		if seen[kr.Value] {
			if report {
				p.errf(k, sub(field, kr.Value), "duplicate field")
			}
			continue
		}
		seen[kr.Value] = true
		out = append(out, entry{name: kr.Value, key: k, val: v})
	}
	for _, e := range merged {
		if !seen[e.name] {
			seen[e.name] = true
			out = append(out, e)
		}
	}
	return out
}

func kindName(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "mapping"
	case n.Kind == yaml.SequenceNode:
		return "list"
	case isNull(n):
		return "null"
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		return "number"
	case "!!bool":
		return "boolean"
	}
	return "string"
}

// object checks that n is a mapping whose fields are all in allowed and
// returns its entries by name; null fields are left out (as if absent).
func (p *parser) object(n *yaml.Node, field string, allowed ...string) (map[string]entry, bool) {
	r := resolve(n)
	if r == nil || r.Kind != yaml.MappingNode {
		p.errf(n, field, "want a mapping, got a %s", kindName(r))
		return nil, false
	}
	out := map[string]entry{}
	for _, e := range p.entries(r, field) {
		if field == "" && strings.HasPrefix(e.name, "x-") {
			continue // extension fields, a place for YAML anchors
		}
		if !contains(allowed, e.name) {
			msg := "unknown field"
			if s := closest(e.name, allowed); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			} else {
				msg += " (want " + strings.Join(allowed, ", ") + ")"
			}
			p.errf(e.key, sub(field, e.name), "%s", msg)
			continue
		}
		if isNull(resolve(e.val)) {
			continue
		}
		out[e.name] = entry{name: e.name, key: e.key, val: resolve(e.val)}
	}
	return out, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// closest returns the allowed name within edit distance 2 of s, if any.
func closest(s string, allowed []string) string {
	best, bestD := "", 3
	for _, a := range allowed {
		if d := editDistance(strings.ToLower(s), a); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Scalars. Each reports its own error and returns ok=false on a bad value.

func (p *parser) str(n *yaml.Node, field string) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		p.errf(n, field, "want a string, got a %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) number(n *yaml.Node, field string) (float64, bool) {
	if n != nil && n.Kind == yaml.ScalarNode {
		if t := n.ShortTag(); t == "!!int" || t == "!!float" {
			var f float64
			if err := n.Decode(&f); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f, true
			}
		}
	}
	p.errf(n, field, "want a number, got a %s", kindName(n))
	return 0, false
}

func (p *parser) integer(n *yaml.Node, field string) (int, bool) {
	if n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		var i int
		if err := n.Decode(&i); err == nil {
			return i, true
		}
	}
	p.errf(n, field, "want an integer, got a %s", kindName(n))
	return 0, false
}

func (p *parser) duration(n *yaml.Node, field string) (time.Duration, bool) {
	if n != nil && n.Kind == yaml.ScalarNode && !isNull(n) {
		d, err := time.ParseDuration(n.Value)
		if err == nil && d >= 0 {
			return d, true
		}
		if err == nil {
			p.errf(n, field, "must not be negative")
			return 0, false
		}
		p.errf(n, field, "want a duration like 100ms or 2s, got %q", n.Value)
		return 0, false
	}
	p.errf(n, field, "want a duration like 100ms or 2s, got a %s", kindName(n))
	return 0, false
}

var (
	topFields     = []string{"name", "base_url", "headers", "data", "session", "steps", "scoring"}
	sessionFields = []string{"login"}
	loginFields   = []string{"method", "url", "form", "body", "headers", "expect", "think", "score_weight"}
	stepFields    = []string{"name", "weight", "score_weight", "method", "url", "form", "body", "headers", "expect", "think"}
	expectFields  = []string{"status", "contains", "selector", "min_count"}
	scoringFields = []string{"success", "penalties", "fail_if"}
	penaltyFields = []string{string(PenaltyDefault), string(loadgen.ErrConnect), string(loadgen.ErrTimeout), string(loadgen.ErrReset),
		string(loadgen.ErrProtocol), string(loadgen.ErrStatus), string(loadgen.ErrCheck), string(loadgen.ErrOther)}
	failIfFields = []string{"error_rate", "unfinished", "mean", "p50", "p90", "p99", "max"}
	methods      = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
	listName     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
)

func (p *parser) scenario(root *yaml.Node) *Scenario {
	n := resolve(root)
	if n == nil || n.Kind == 0 || isNull(n) {
		p.errs = append(p.errs, &FieldError{File: p.file, Line: 1, Msg: "empty scenario (want at least steps)"})
		return nil
	}
	f, ok := p.object(n, "", topFields...)
	if !ok {
		return nil
	}
	s := &Scenario{File: p.file, Scoring: DefaultScoring.clone(), userList: -1}
	s.Name = strings.TrimSuffix(filepath.Base(p.file), filepath.Ext(p.file))
	if e, ok := f["name"]; ok {
		if v, ok := p.str(e.val, "name"); ok {
			s.Name = v
		}
	}
	env := tmplEnv{lists: map[string]int{}}
	if e, ok := f["data"]; ok {
		p.data(e.val, "data", s)
	}
	for i, name := range s.listNames {
		env.lists[name] = i
	}
	baseOK := true
	if e, ok := f["base_url"]; ok {
		if v, ok := p.str(e.val, "base_url"); ok {
			s.BaseURL = v
			s.base = p.baseURL(v, "base_url", e.val.Line)
		}
		baseOK = s.base != nil
	}
	if e, ok := f["headers"]; ok {
		genv := env
		genv.noUser = "{{user}} is not available in headers sent with the login; put it in a step's headers"
		s.Headers, s.headers = p.headers(e.val, "headers", genv)
	}
	if e, ok := f["session"]; ok {
		if sf, ok := p.object(e.val, "session", sessionFields...); ok {
			if le, ok := sf["login"]; ok {
				lenv := env
				lenv.noUser = "{{user}} is not available in session.login; use the list itself"
				s.Login = p.step(le.val, "session.login", lenv, true)
				if s.Login != nil {
					var used []int
					used = s.Login.url.lists(used)
					for _, ft := range s.Login.form {
						used = ft.value.lists(used)
					}
					used = s.Login.body.lists(used)
					for _, h := range s.Login.headers {
						used = h.value.lists(used)
					}
					if len(used) > 0 {
						s.userList = used[0]
						env.hasUser = true
					}
				}
			}
		}
	}
	if !env.hasUser {
		if s.Login == nil {
			env.noUser = "{{user}} needs session.login"
		} else {
			env.noUser = "{{user}} needs a {{list}} placeholder in session.login (the list the user logs in with)"
		}
	}
	e, ok := f["steps"]
	switch {
	case !ok:
		p.errf(n, "steps", "required (at least one step)")
	case e.val.Kind != yaml.SequenceNode:
		p.errf(e.val, "steps", "want a list of steps, got a %s", kindName(e.val))
	case len(e.val.Content) == 0:
		p.errf(e.val, "steps", "want at least one step")
	default:
		names := map[string]string{}
		if s.Login != nil {
			names["login"] = "session.login"
		}
		for i, c := range e.val.Content {
			field := index("steps", i)
			st := p.step(c, field, env, false)
			if st == nil {
				continue
			}
			if prev, dup := names[st.Name]; dup && st.Name != "" {
				if nn, named := st.nameNode(c); named {
					p.errf(nn, sub(field, "name"), "duplicate step name %q (also %s)", st.Name, prev)
				} else {
					p.errf(nn, field, "duplicate step name %q (also %s); name the steps", st.Name, prev)
				}
			}
			names[st.Name] = field
			s.Steps = append(s.Steps, *st)
		}
	}
	if e, ok := f["scoring"]; ok {
		p.scoring(e.val, "scoring", &s.Scoring)
	}
	if baseOK {
		for _, st := range s.steps() {
			p.checkURL(s, st, s.base)
		}
	}
	return s
}

// nameNode is the node to blame for a step's name: its name field, or the
// step itself when the name was defaulted.
func (st *Step) nameNode(n *yaml.Node) (*yaml.Node, bool) {
	if r := resolve(n); r != nil && r.Kind == yaml.MappingNode {
		for _, e := range (&parser{}).entries(r, "") {
			if e.name == "name" {
				return e.val, true
			}
		}
		return r, false
	}
	return n, false
}

func (p *parser) baseURL(raw, field string, line int) *url.URL {
	bad := func(format string, args ...any) *url.URL {
		p.errs = append(p.errs, &FieldError{File: p.file, Line: line, Field: field, Msg: loadgen.MaskCredentials(fmt.Sprintf(format, args...))})
		return nil
	}
	shown := loadgen.MaskURL(raw) // also when raw is not a valid URL
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return bad("invalid URL %q", shown)
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("%q: want an http:// or https:// URL", shown)
	case u.Host == "":
		return bad("%q has no host", shown)
	case strings.Contains(raw, "{{"):
		return bad("templates are not allowed in base_url")
	}
	return u
}

// checkURL fills st's URL template with sample values (the first value of
// each list, the minimum of each rand) and checks that it resolves against
// base to an absolute http(s) URL.
func (p *parser) checkURL(s *Scenario, st *Step, base *url.URL) {
	if st.url.src == "" {
		return // missing or invalid: already reported
	}
	f := sampleFiller(s)
	raw := st.url.string(f)
	bad := func(format string, args ...any) {
		p.errs = append(p.errs, &FieldError{File: p.file, Line: st.urlLine, Field: sub(st.field, "url"), Msg: loadgen.MaskCredentials(fmt.Sprintf(format, args...))})
	}
	u, err := url.Parse(raw)
	if err != nil {
		bad("invalid URL %q", loadgen.MaskURL(raw))
		return
	}
	if !u.IsAbs() {
		if base == nil {
			bad("%q is relative and base_url is not set", loadgen.MaskURL(st.URL))
			return
		}
		u = base.ResolveReference(u)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		bad("%q: want an http:// or https:// URL", loadgen.MaskURL(u.String()))
	case u.Host == "":
		bad("%q has no host", loadgen.MaskURL(u.String()))
	}
}

// sampleFiller resolves every list to its first value and every rand to its
// minimum, for checking templates at load time.
func sampleFiller(s *Scenario) *filler {
	f := newFiller(rand.New(rand.NewPCG(0, 0)), s.lists, make([]atomic.Uint64, len(s.lists)))
	f.bind = 0
	if s.userList >= 0 {
		f.user = s.lists[s.userList][0]
	}
	return f
}

func (p *parser) data(n *yaml.Node, field string, s *Scenario) {
	if n.Kind != yaml.MappingNode {
		p.errf(n, field, "want a mapping of list names to lists, got a %s", kindName(n))
		return
	}
	s.Data = map[string][]string{}
	for _, e := range p.entries(n, field) {
		lf := sub(field, e.name)
		switch {
		case !listName.MatchString(e.name):
			p.errf(e.key, lf, "list names are letters, digits, _ and -, starting with a letter or _")
			continue
		case e.name == "user" || e.name == "rand":
			p.errf(e.key, lf, "%q is reserved for the {{%s}} placeholder", e.name, e.name)
			continue
		}
		vals := p.listValues(e, lf)
		if len(vals) == 0 {
			// The list's problem is reported. It still exists for the
			// templates that use it, so they do not report it again as an
			// unknown list (the scenario is refused anyway).
			vals = []string{""}
		}
		s.Data[e.name] = vals
		s.listNames = append(s.listNames, e.name)
		s.lists = append(s.lists, vals)
	}
}

// listValues returns the values of data list e, inline or from its file;
// nil after reporting why there are none.
func (p *parser) listValues(e entry, lf string) []string {
	v := resolve(e.val)
	var vals []string
	switch {
	case v != nil && v.Kind == yaml.SequenceNode:
		if len(v.Content) == 0 {
			p.errf(v, lf, "empty list")
			return nil
		}
		for i, c := range v.Content {
			c = resolve(c)
			if x, ok := p.str(c, index(lf, i)); ok {
				vals = append(vals, x)
			}
		}
		return vals
	case v != nil && v.Kind == yaml.MappingNode:
		ff, ok := p.object(v, lf, "file")
		if !ok {
			return nil
		}
		fe, ok := ff["file"]
		if !ok {
			p.errf(v, sub(lf, "file"), "required (a file with one value per line)")
			return nil
		}
		name, ok := p.str(fe.val, sub(lf, "file"))
		if !ok {
			return nil
		}
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.dir, path)
		}
		src, err := p.readFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			msg := "missing data file " + path
			if path != name {
				msg += " (" + name + ", relative to the scenario's directory)"
			}
			p.errf(fe.val, sub(lf, "file"), "%s", msg)
			return nil
		case err != nil:
			msg := err.Error()
			if pe, ok := err.(interface{ Unwrap() error }); ok && pe.Unwrap() != nil {
				msg = pe.Unwrap().Error()
			}
			p.errf(fe.val, sub(lf, "file"), "cannot read %s: %s", name, msg)
			return nil
		}
		for line := range strings.SplitSeq(string(src), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				vals = append(vals, line)
			}
		}
		if len(vals) == 0 {
			p.errf(fe.val, sub(lf, "file"), "%s has no values", name)
		}
		return vals
	}
	p.errf(e.val, lf, "want a list of values or {file: PATH}, got a %s", kindName(v))
	return nil
}

func (p *parser) template(n *yaml.Node, field string, env tmplEnv) (template, string, bool) {
	v, ok := p.str(n, field)
	if !ok {
		return template{}, "", false
	}
	t, err := compileTemplate(v, env)
	if err != nil {
		p.errf(n, field, "%v", err)
		return template{}, v, false
	}
	return t, v, true
}

func (p *parser) headers(n *yaml.Node, field string, env tmplEnv) (map[string]string, []header) {
	if n.Kind != yaml.MappingNode {
		p.errf(n, field, "want a mapping of header names to values, got a %s", kindName(n))
		return nil, nil
	}
	m := map[string]string{}
	var hs []header
	for _, e := range p.entries(n, field) {
		hf := sub(field, e.name)
		if !httpguts.ValidHeaderFieldName(e.name) {
			p.errf(e.key, hf, "invalid header name")
			continue
		}
		t, v, ok := p.template(resolve(e.val), hf, env)
		if !ok {
			continue
		}
		if strings.ContainsAny(v, "\r\n") {
			p.errf(e.val, hf, "header values cannot contain line breaks")
			continue
		}
		m[e.name] = v
		hs = append(hs, header{name: e.name, value: t})
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].name < hs[j].name })
	return m, hs
}

// step parses a step, or the login when login is set.
func (p *parser) step(n *yaml.Node, field string, env tmplEnv, login bool) *Step {
	allowed := stepFields
	if login {
		allowed = loginFields
	}
	f, ok := p.object(n, field, allowed...)
	if !ok {
		return nil
	}
	r := resolve(n)
	st := &Step{field: field, line: r.Line, Weight: 1, ScoreWeight: -1}
	if login {
		st.Name, st.Weight, st.ScoreWeight = "login", 0, 1
	}
	if e, ok := f["url"]; ok {
		env := env
		env.url = true
		st.urlLine = e.val.Line
		t, v, ok := p.template(e.val, sub(field, "url"), env)
		st.URL = v // also when invalid, for the default name
		if ok {
			st.url = t
			if v == "" {
				p.errf(e.val, sub(field, "url"), "empty URL")
			}
		}
	} else {
		p.errf(r, sub(field, "url"), "required")
	}
	if e, ok := f["name"]; ok {
		if v, ok := p.str(e.val, sub(field, "name")); ok {
			if v == "" {
				p.errf(e.val, sub(field, "name"), "empty name")
			}
			st.Name = v
		}
	}
	if e, ok := f["weight"]; ok {
		if v, ok := p.number(e.val, sub(field, "weight")); ok {
			if v <= 0 {
				p.errf(e.val, sub(field, "weight"), "want a positive number, got %v", v)
			} else {
				st.Weight = v
			}
		}
	}
	if e, ok := f["score_weight"]; ok {
		if v, ok := p.number(e.val, sub(field, "score_weight")); ok {
			if v < 0 {
				p.errf(e.val, sub(field, "score_weight"), "must not be negative")
			} else {
				st.ScoreWeight = v
			}
		}
	}
	if st.ScoreWeight < 0 {
		st.ScoreWeight = st.Weight
	}
	if e, ok := f["form"]; ok {
		ff := sub(field, "form")
		if e.val.Kind != yaml.MappingNode {
			p.errf(e.val, ff, "want a mapping of field names to values, got a %s", kindName(e.val))
		} else {
			for _, fe := range p.entries(e.val, ff) {
				if t, v, ok := p.template(resolve(fe.val), sub(ff, fe.name), env); ok {
					st.Form = append(st.Form, FormField{Name: fe.name, Value: v})
					st.form = append(st.form, formTmpl{name: fe.name, value: t})
				}
			}
		}
	}
	hasBody := false
	if e, ok := f["body"]; ok {
		hasBody = true
		if t, v, ok := p.template(e.val, sub(field, "body"), env); ok {
			st.body, st.Body = t, v
		}
		if _, ok := f["form"]; ok {
			p.errf(e.key, sub(field, "body"), "form and body are exclusive")
		}
	}
	_, hasForm := f["form"]
	st.Method = "GET"
	if hasForm || hasBody {
		st.Method = "POST"
	}
	if e, ok := f["method"]; ok {
		if v, ok := p.str(e.val, sub(field, "method")); ok {
			m := strings.ToUpper(v)
			switch {
			case !contains(methods, m):
				p.errf(e.val, sub(field, "method"), "unknown method %q (want %s)", v, strings.Join(methods, ", "))
			case (m == "GET" || m == "HEAD") && (hasForm || hasBody):
				p.errf(e.val, sub(field, "method"), "%s cannot send a form or a body", m)
			default:
				st.Method = m
			}
		}
	}
	if st.Name == "" && st.URL != "" {
		st.Name = st.Method + " " + loadgen.MaskURL(st.URL)
	}
	if e, ok := f["headers"]; ok {
		st.Headers, st.headers = p.headers(e.val, sub(field, "headers"), env)
	}
	if e, ok := f["expect"]; ok {
		st.Expect, st.sel = p.expect(e.val, sub(field, "expect"))
	}
	if e, ok := f["think"]; ok {
		if d, ok := p.duration(e.val, sub(field, "think")); ok {
			st.Think = d
		}
	}
	return st
}

func (p *parser) expect(n *yaml.Node, field string) (Expect, cascadia.Selector) {
	var x Expect
	var sel cascadia.Selector
	f, ok := p.object(n, field, expectFields...)
	if !ok {
		return x, nil
	}
	if e, ok := f["status"]; ok {
		sf := sub(field, "status")
		var nodes []*yaml.Node
		switch v := e.val; {
		case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!int":
			nodes = []*yaml.Node{v}
		case v.Kind == yaml.SequenceNode && len(v.Content) > 0:
			nodes = v.Content
		default:
			p.errf(v, sf, "want an integer or a list of integers")
		}
		for i, c := range nodes {
			cf := sf
			if e.val.Kind == yaml.SequenceNode {
				cf = index(sf, i)
			}
			if code, ok := p.integer(resolve(c), cf); ok {
				if code < 100 || code > 599 {
					p.errf(c, cf, "%d is not an HTTP status (100-599)", code)
					continue
				}
				x.Status = append(x.Status, code)
			}
		}
	}
	if e, ok := f["contains"]; ok {
		cf := sub(field, "contains")
		add := func(n *yaml.Node, field string) {
			if v, ok := p.str(n, field); ok {
				if v == "" {
					p.errf(n, field, "empty string (it matches every body)")
					return
				}
				x.Contains = append(x.Contains, v)
			}
		}
		switch v := e.val; {
		case v.Kind == yaml.SequenceNode && len(v.Content) > 0:
			for i, c := range v.Content {
				add(resolve(c), index(cf, i))
			}
		case v.Kind == yaml.ScalarNode:
			add(v, cf)
		default:
			p.errf(v, cf, "want a string or a list of strings")
		}
	}
	if e, ok := f["selector"]; ok {
		sf := sub(field, "selector")
		if v, ok := p.str(e.val, sf); ok {
			s, err := cascadia.Compile(v)
			if err != nil {
				p.errf(e.val, sf, "invalid CSS selector %q: %v", v, err)
			} else {
				x.Selector, sel = v, s
				x.MinCount = 1
			}
		}
	}
	if e, ok := f["min_count"]; ok {
		mf := sub(field, "min_count")
		if v, ok := p.integer(e.val, mf); ok {
			switch {
			case v < 1:
				p.errf(e.val, mf, "want at least 1, got %d", v)
			case x.Selector == "":
				if _, had := f["selector"]; !had {
					p.errf(e.key, mf, "needs a selector")
				}
			default:
				x.MinCount = v
			}
		}
	}
	return x, sel
}

func (p *parser) scoring(n *yaml.Node, field string, s *Scoring) {
	f, ok := p.object(n, field, scoringFields...)
	if !ok {
		return
	}
	nonNeg := func(n *yaml.Node, field string) (float64, bool) {
		v, ok := p.number(n, field)
		if ok && v < 0 {
			p.errf(n, field, "must not be negative")
			return 0, false
		}
		return v, ok
	}
	if e, ok := f["success"]; ok {
		if v, ok := nonNeg(e.val, sub(field, "success")); ok {
			s.Success = v
		}
	}
	if e, ok := f["penalties"]; ok {
		pf := sub(field, "penalties")
		if pm, ok := p.object(e.val, pf, penaltyFields...); ok {
			for _, name := range penaltyFields {
				if pe, ok := pm[name]; ok {
					if v, ok := nonNeg(pe.val, sub(pf, name)); ok {
						s.Penalties[loadgen.ErrKind(name)] = v
					}
				}
			}
		}
	}
	if e, ok := f["fail_if"]; ok {
		ff := sub(field, "fail_if")
		fm, ok := p.object(e.val, ff, failIfFields...)
		if !ok {
			return
		}
		if re, ok := fm["error_rate"]; ok {
			if v, ok := p.rate(re.val, sub(ff, "error_rate")); ok {
				s.FailIf.ErrorRate = v
			}
		}
		if ue, ok := fm["unfinished"]; ok {
			if v, ok := p.rate(ue.val, sub(ff, "unfinished")); ok {
				s.FailIf.Unfinished = v
			}
		}
		for _, d := range []struct {
			name string
			dst  *time.Duration
		}{{"mean", &s.FailIf.Mean}, {"p50", &s.FailIf.P50}, {"p90", &s.FailIf.P90}, {"p99", &s.FailIf.P99}, {"max", &s.FailIf.Max}} {
			if de, ok := fm[d.name]; ok {
				if v, ok := p.duration(de.val, sub(ff, d.name)); ok {
					*d.dst = v
				}
			}
		}
	}
}

// rate reads a fraction in [0, 1], written as a number (0.01) or a
// percentage ("1%").
func (p *parser) rate(n *yaml.Node, field string) (float64, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && strings.HasSuffix(n.Value, "%") {
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(n.Value, "%")), 64)
		if err != nil || v < 0 || v > 100 || math.IsNaN(v) {
			p.errf(n, field, "want a percentage between 0%% and 100%%, got %q", n.Value)
			return 0, false
		}
		return v / 100, true
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		p.errf(n, field, "want a fraction like 0.01 or a percentage like \"1%%\", got %q", n.Value)
		return 0, false
	}
	v, ok := p.number(n, field)
	if ok && (v < 0 || v > 1) {
		p.errf(n, field, "want a fraction between 0 and 1, got %v", v)
		return 0, false
	}
	return v, ok
}
