package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/http/httpguts"
	"gopkg.in/yaml.v3"

	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/loadgen"
)

// parser walks the YAML node tree (TOML is converted to the same tree) and
// collects every problem with its line and field path.
type parser struct {
	file     string
	dir      string
	readFile func(path string, limit int64) ([]byte, error)
	errs     Errors
	// capErr is set when a capture was refused: the steps that use it
	// are then not reported as never running.
	capErr bool
	// dataBytes and dataValues are the data lists' totals so far, held to
	// MaxDataBytes and MaxDataValues.
	dataBytes, dataValues int
}

// errf reports a problem at n; URL passwords in the message are masked.
func (p *parser) errf(n *yaml.Node, field, format string, args ...any) {
	line, col := 0, 0
	if n != nil {
		line, col = n.Line, n.Column
	}
	p.errs = append(p.errs, &FieldError{File: p.file, Line: line, Field: field, Msg: loadgen.MaskCredentials(fmt.Sprintf(format, args...)), col: col})
}

// errLine reports a problem at a line (a node already resolved away).
func (p *parser) errLine(line int, field, format string, args ...any) {
	p.errs = append(p.errs, &FieldError{File: p.file, Line: line, Field: field, Msg: loadgen.MaskCredentials(fmt.Sprintf(format, args...))})
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
	topFields     = []string{"name", "base_url", "headers", "data", "session", "steps", "scoring", "pre_run"}
	sessionFields = []string{"login"}
	loginFields   = []string{"method", "url", "form", "body", "headers", "expect", "think", "score_weight", "capture", "slow_after"}
	stepFields    = []string{"name", "weight", "score_weight", "method", "url", "form", "body", "headers", "expect", "think", "capture", "slow_after"}
	preRunFields  = []string{"method", "url", "form", "body", "headers", "expect", "command", "shell", "timeout"}
	expectFields  = []string{"status", "contains", "selector", "min_count"}
	captureFields = []string{"regexp", "group", "selector", "attr", "json", "header"}
	scoringFields = []string{"success", "penalties", "fail_if"}
	penaltyFields = []string{string(PenaltyDefault), string(loadgen.ErrConnect), string(loadgen.ErrTimeout), string(loadgen.ErrReset),
		string(loadgen.ErrProtocol), string(loadgen.ErrStatus), string(loadgen.ErrCheck), string(loadgen.ErrOther), penaltySlow}
	failIfFields = []string{"error_rate", "unfinished", "slow_rate", "mean", "p50", "p90", "p99", "max"}
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
	env.caps = p.captureNames(f, s)
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
		genv.noCaps = "captured values are not available in headers sent with every request (the login and pre_run too); put it in a step's headers"
		s.Headers, s.headers = p.headers(e.val, "headers", genv)
	}
	if e, ok := f["session"]; ok {
		if sf, ok := p.object(e.val, "session", sessionFields...); ok {
			if le, ok := sf["login"]; ok {
				lenv := env
				lenv.noUser = "{{user}} is not available in session.login; use the list itself"
				lenv.noCaps = "session.login is a session's first request: no value is captured before it"
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
	if e, ok := f["pre_run"]; ok {
		henv := env
		henv.hasUser = false
		henv.noUser = "{{user}} is not available in pre_run: it belongs to no session"
		henv.noRow = "is not available in pre_run: it belongs to no session"
		henv.noCaps = "pre_run belongs to no session: it cannot use captured values"
		s.PreRun = p.preRun(e.val, "pre_run", henv)
	}
	stepsOK := true
	e, ok := f["steps"]
	switch {
	case !ok:
		p.errf(n, "steps", "required (at least one step)")
	case e.val.Kind != yaml.SequenceNode:
		p.errf(e.val, "steps", "want a list of steps, got a %s", kindName(e.val))
	case len(e.val.Content) == 0:
		p.errf(e.val, "steps", "want at least one step")
	case len(e.val.Content) > MaxSteps:
		p.errf(e.val, "steps", "%d steps, more than %d (scenario.MaxSteps)", len(e.val.Content), MaxSteps)
	default:
		names := map[string]string{}
		if s.Login != nil {
			names["login"] = "session.login"
		}
		for i, c := range e.val.Content {
			field := index("steps", i)
			st := p.step(c, field, env, false)
			if st == nil {
				stepsOK = false
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
	if stepsOK && !p.capErr {
		p.reachable(s)
	}
	if e, ok := f["scoring"]; ok {
		p.scoring(e.val, "scoring", &s.Scoring)
	}
	if baseOK {
		for _, st := range s.steps() {
			p.checkURL(s, st, s.base)
		}
		if s.PreRun != nil && s.PreRun.Request != nil {
			p.checkURL(s, s.PreRun.Request, s.base)
		}
	}
	return s
}

// captureNames finds the names the login and the steps capture, before any
// template is compiled: a step may use what a later one captures. A name
// that cannot be a capture's is left out (and reported with the capture).
func (p *parser) captureNames(top map[string]entry, s *Scenario) map[string]int {
	idx := map[string]int{}
	quiet := &parser{} // problems are reported when the steps are parsed
	mapping := func(n *yaml.Node) []entry {
		if r := resolve(n); r != nil && r.Kind == yaml.MappingNode {
			return quiet.entries(r, "")
		}
		return nil
	}
	add := func(step *yaml.Node) {
		for _, e := range mapping(step) {
			if e.name != "capture" {
				continue
			}
			for _, c := range mapping(e.val) {
				_, isList := s.Data[c.name]
				if _, dup := idx[c.name]; !dup && captureNameProblem(c.name, isList) == "" {
					idx[c.name] = len(s.Captures)
					s.Captures = append(s.Captures, c.name)
				}
			}
		}
	}
	if e, ok := top["session"]; ok {
		for _, se := range mapping(e.val) {
			if se.name == "login" {
				add(se.val)
			}
		}
	}
	if e, ok := top["steps"]; ok {
		if r := resolve(e.val); r != nil && r.Kind == yaml.SequenceNode {
			for _, c := range r.Content {
				add(c)
			}
		}
	}
	return idx
}

// captureNameProblem says why name cannot name a capture (isList: a data
// list has it), or "".
func captureNameProblem(name string, isList bool) string {
	switch {
	case !listName.MatchString(name):
		return "capture names are letters, digits, _ and -, starting with a letter or _"
	case name == "user" || name == "rand":
		return fmt.Sprintf("%q is reserved for the {{%s}} placeholder", name, name)
	case isList:
		return fmt.Sprintf("%q is already a data list; give the capture another name", name)
	}
	return ""
}

// reachable reports the steps that can never run: a step runs once its
// session has every value it uses, so some step that can run must capture
// each of them first (the login's captures are there from the start).
func (p *parser) reachable(s *Scenario) {
	have := make([]bool, len(s.Captures))
	if s.Login != nil {
		for _, c := range s.Login.Captures {
			have[c.index] = true
		}
	}
	runs := make([]bool, len(s.Steps))
	for changed := true; changed; {
		changed = false
		for i := range s.Steps {
			st := &s.Steps[i]
			if runs[i] || !hasAll(have, st.needs) {
				continue
			}
			runs[i], changed = true, true
			for _, c := range st.Captures {
				have[c.index] = true
			}
		}
	}
	for i := range s.Steps {
		if runs[i] {
			continue
		}
		st := &s.Steps[i]
		var missing []string
		for _, c := range st.needs {
			if !have[c] && !contains(missing, "{{"+s.Captures[c]+"}}") {
				missing = append(missing, "{{"+s.Captures[c]+"}}")
			}
		}
		p.errLine(st.line, st.field, "never runs: it uses %s, which no step that can run before it captures", strings.Join(missing, " and "))
	}
}

func hasAll(have []bool, needs []int) bool {
	for _, c := range needs {
		if !have[c] {
			return false
		}
	}
	return true
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
// nil after reporting why there are none. Lists are held to MaxListValues
// each, and together to MaxDataValues values and MaxDataBytes of files.
func (p *parser) listValues(e entry, lf string) []string {
	v := resolve(e.val)
	var vals []string
	switch {
	case v != nil && v.Kind == yaml.SequenceNode:
		switch {
		case len(v.Content) == 0:
			p.errf(v, lf, "empty list")
			return nil
		case len(v.Content) > MaxListValues:
			p.errf(v, lf, "%d values, more than %d (scenario.MaxListValues)", len(v.Content), MaxListValues)
			return nil
		case !p.countValues(v, lf, len(v.Content)):
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
		limit := min(MaxDataFileSize, MaxDataBytes-p.dataBytes)
		src, err := p.readFile(path, int64(limit))
		var tl *input.TooLargeError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			msg := "missing data file " + path
			if path != name {
				msg += " (" + name + ", relative to the scenario's directory)"
			}
			p.errf(fe.val, sub(lf, "file"), "%s", msg)
			return nil
		case errors.As(err, &tl) && limit < MaxDataFileSize:
			p.errf(fe.val, sub(lf, "file"), "cannot read %s: it takes the data files of all lists together past %s (scenario.MaxDataBytes)", name, input.SizeText(MaxDataBytes))
			return nil
		case errors.As(err, &tl):
			p.errf(fe.val, sub(lf, "file"), "cannot read %s: larger than %s (scenario.MaxDataFileSize)", name, input.SizeText(MaxDataFileSize))
			return nil
		case err != nil:
			var nr *input.NotRegularError
			msg := err.Error()
			if errors.As(err, &nr) {
				msg = input.FileKind(nr.Mode) + ", not a regular file"
			} else if pe, ok := err.(interface{ Unwrap() error }); ok && pe.Unwrap() != nil {
				msg = pe.Unwrap().Error()
			}
			p.errf(fe.val, sub(lf, "file"), "cannot read %s: %s", name, msg)
			return nil
		}
		p.dataBytes += len(src)
		// Each value is copied out, so the file's bytes (and its blank
		// lines and spaces) are not kept.
		for line := range bytes.SplitSeq(src, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) == 0 {
				continue
			}
			if len(vals) == MaxListValues {
				p.errf(fe.val, sub(lf, "file"), "%s has more than %d values (scenario.MaxListValues)", name, MaxListValues)
				return nil
			}
			vals = append(vals, string(line))
		}
		if len(vals) == 0 {
			p.errf(fe.val, sub(lf, "file"), "%s has no values", name)
			return nil
		}
		if !p.countValues(fe.val, sub(lf, "file"), len(vals)) {
			return nil
		}
		return vals
	}
	p.errf(e.val, lf, "want a list of values or {file: PATH}, got a %s", kindName(v))
	return nil
}

// countValues adds n values to the data lists' total, and reports it at n
// past MaxDataValues.
func (p *parser) countValues(n *yaml.Node, field string, values int) bool {
	if p.dataValues += values; p.dataValues > MaxDataValues {
		p.errf(n, field, "takes the values of all data lists together past %d (scenario.MaxDataValues)", MaxDataValues)
		return false
	}
	return true
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
	p.stepFields(f, r, st, env)
	return st
}

// stepFields fills st from the fields of a step, the login or an HTTP
// pre_run (whichever fields the caller allowed); r is the step's node.
func (p *parser) stepFields(f map[string]entry, r *yaml.Node, st *Step, env tmplEnv) {
	field := st.field
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
		// The template's query is the file's text, and names must stay
		// as distinct as the URLs: only a password is masked.
		st.Name = st.Method + " " + loadgen.MaskUserinfo(st.URL)
	}
	if e, ok := f["headers"]; ok {
		st.Headers, st.headers = p.headers(e.val, sub(field, "headers"), env)
	}
	if e, ok := f["expect"]; ok {
		cenv := env
		cenv.url, cenv.check = false, true
		st.Expect, st.sel, st.contains = p.expect(e.val, sub(field, "expect"), cenv)
	}
	if e, ok := f["think"]; ok {
		if d, ok := p.duration(e.val, sub(field, "think")); ok {
			st.Think = d
		}
	}
	if e, ok := f["slow_after"]; ok {
		sf := sub(field, "slow_after")
		if d, ok := p.duration(e.val, sf); ok {
			if d == 0 {
				p.errf(e.val, sf, "want a positive duration like 3s (leave it out for no threshold)")
			} else {
				st.SlowAfter = d
			}
		}
	}
	if e, ok := f["capture"]; ok {
		st.Captures = p.captures(e.val, sub(field, "capture"), env)
	}
	var needs []int
	needs = st.url.captures(needs)
	for _, ft := range st.form {
		needs = ft.value.captures(needs)
	}
	needs = st.body.captures(needs)
	for _, h := range st.headers {
		needs = h.value.captures(needs)
	}
	for _, c := range st.contains {
		needs = c.captures(needs)
	}
	slices.Sort(needs)
	st.needs = slices.Compact(needs)
}

func (p *parser) expect(n *yaml.Node, field string, env tmplEnv) (Expect, cascadia.Selector, []template) {
	var x Expect
	var sel cascadia.Selector
	var tmpls []template
	f, ok := p.object(n, field, expectFields...)
	if !ok {
		return x, nil, nil
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
				t, err := compileTemplate(v, env)
				if err != nil {
					p.errf(n, field, "%v", err)
					return
				}
				x.Contains = append(x.Contains, v)
				tmpls = append(tmpls, t)
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
	return x, sel, tmpls
}

// captures parses a step's capture section: capture names to their source.
func (p *parser) captures(n *yaml.Node, field string, env tmplEnv) []Capture {
	if n.Kind != yaml.MappingNode {
		p.errf(n, field, "want a mapping of capture names to {regexp: RE}, {selector: CSS}, {json: PATH} or {header: NAME}, got a %s", kindName(n))
		p.capErr = true
		return nil
	}
	var out []Capture
	for _, e := range p.entries(n, field) {
		cf := sub(field, e.name)
		idx, known := env.caps[e.name] // every name captureNames accepted
		if !known {
			p.capErr = true
			_, isList := env.lists[e.name]
			p.errf(e.key, cf, "%s", captureNameProblem(e.name, isList))
			continue
		}
		c, ok := p.capture(e.val, cf)
		if !ok {
			p.capErr = true
			continue
		}
		c.Name, c.index = e.name, idx
		out = append(out, c)
	}
	return out
}

func (p *parser) capture(n *yaml.Node, field string) (Capture, bool) {
	var c Capture
	f, ok := p.object(n, field, captureFields...)
	if !ok {
		return c, false
	}
	var sources []string
	for _, name := range []string{"regexp", "selector", "json", "header"} {
		if _, ok := f[name]; ok {
			sources = append(sources, name)
		}
	}
	switch len(sources) {
	case 0:
		p.errf(resolve(n), field, "want one of regexp, selector, json or header")
		return c, false
	case 1:
	default:
		p.errf(f[sources[1]].key, sub(field, sources[1]), "%s and %s are exclusive: a capture takes one value", sources[0], sources[1])
		return c, false
	}
	ok = true
	str := func(name string) (string, *yaml.Node, bool) {
		e := f[name]
		v, good := p.str(e.val, sub(field, name))
		if good && v == "" {
			p.errf(e.val, sub(field, name), "empty %s", name)
			good = false
		}
		ok = ok && good
		return v, e.val, good
	}
	switch sources[0] {
	case "regexp":
		if v, vn, good := str("regexp"); good {
			re, err := regexp.Compile(v)
			if err != nil {
				p.errf(vn, sub(field, "regexp"), "invalid regexp %q: %v", v, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
				ok = false
				break
			}
			c.Regexp, c.re = v, re
			if re.NumSubexp() > 0 {
				c.Group = 1
			}
		}
	case "selector":
		if v, vn, good := str("selector"); good {
			sel, err := cascadia.Compile(v)
			if err != nil {
				p.errf(vn, sub(field, "selector"), "invalid CSS selector %q: %v", v, err)
				ok = false
				break
			}
			c.Selector, c.sel = v, sel
		}
	case "json":
		if v, vn, good := str("json"); good {
			path, err := parseJSONPath(v)
			if err != nil {
				p.errf(vn, sub(field, "json"), "%v", err)
				ok = false
				break
			}
			c.JSON, c.path = v, path
		}
	case "header":
		if v, vn, good := str("header"); good {
			if !httpguts.ValidHeaderFieldName(v) {
				p.errf(vn, sub(field, "header"), "invalid header name %q", v)
				ok = false
				break
			}
			c.Header = v
		}
	}
	if e, has := f["group"]; has {
		gf := sub(field, "group")
		if g, good := p.integer(e.val, gf); !good {
			ok = false
		} else if c.Regexp == "" {
			if sources[0] != "regexp" {
				p.errf(e.key, gf, "needs a regexp")
			}
			ok = false
		} else if g < 0 || g > c.re.NumSubexp() {
			p.errf(e.val, gf, "regexp %q has %d groups; want 0 (the whole match) to %d", c.Regexp, c.re.NumSubexp(), c.re.NumSubexp())
			ok = false
		} else {
			c.Group = g
		}
	}
	if e, has := f["attr"]; has {
		af := sub(field, "attr")
		if v, good := p.str(e.val, af); !good {
			ok = false
		} else if sources[0] != "selector" {
			p.errf(e.key, af, "needs a selector")
			ok = false
		} else if v == "" {
			p.errf(e.val, af, "empty attribute name (leave it out for the element's text)")
			ok = false
		} else {
			c.Attr = v
		}
	}
	return c, ok
}

// preRun parses the pre_run hook: an HTTP request (url and the step fields
// of a request) or a command.
func (p *parser) preRun(n *yaml.Node, field string, env tmplEnv) *Hook {
	f, ok := p.object(n, field, preRunFields...)
	if !ok {
		return nil
	}
	r := resolve(n)
	h := &Hook{Timeout: DefaultHookTimeout, dir: p.dir}
	if e, ok := f["timeout"]; ok {
		tf := sub(field, "timeout")
		if d, ok := p.duration(e.val, tf); ok {
			switch {
			case d == 0:
				p.errf(e.val, tf, "want a positive duration (default %v)", DefaultHookTimeout)
			case d > MaxHookTimeout:
				p.errf(e.val, tf, "%v is over the %v bound", d, MaxHookTimeout)
			default:
				h.Timeout = d
			}
		}
	}
	_, hasURL := f["url"]
	ce, hasCmd := f["command"]
	switch {
	case hasURL && hasCmd:
		p.errf(ce.key, sub(field, "command"), "url and command are exclusive: the hook is an HTTP request or a command")
		return h
	case !hasURL && !hasCmd:
		p.errf(r, field, "want a url (an HTTP request, relative to base_url) or a command")
		return h
	case hasCmd:
		for _, name := range []string{"method", "form", "body", "headers", "expect"} {
			if e, ok := f[name]; ok {
				p.errf(e.key, sub(field, name), "%s is for an HTTP pre_run (with url), not a command", name)
			}
		}
		p.command(f, field, h)
		return h
	}
	if e, ok := f["shell"]; ok {
		p.errf(e.key, sub(field, "shell"), "shell is for a command, not an HTTP pre_run")
	}
	st := &Step{Name: "pre_run", field: field, line: r.Line}
	p.stepFields(f, r, st, env)
	h.Request = st
	return h
}

func (p *parser) command(f map[string]entry, field string, h *Hook) {
	cf := sub(field, "command")
	ce := f["command"]
	if e, ok := f["shell"]; ok {
		sf := sub(field, "shell")
		var b bool
		if e.val.Kind != yaml.ScalarNode || e.val.ShortTag() != "!!bool" || e.val.Decode(&b) != nil {
			p.errf(e.val, sf, "want true or false, got a %s", kindName(e.val))
		} else {
			h.Shell = b
		}
	}
	if h.Shell {
		if ce.val.Kind != yaml.ScalarNode {
			p.errf(ce.val, cf, "with shell: true, want the command line as one string, got a %s", kindName(ce.val))
			return
		}
		if line, ok := p.str(ce.val, cf); ok {
			if strings.TrimSpace(line) == "" {
				p.errf(ce.val, cf, "empty command")
				return
			}
			h.Command = []string{"/bin/sh", "-c", line}
		}
		return
	}
	if ce.val.Kind != yaml.SequenceNode {
		p.errf(ce.val, cf, "want a list of arguments like [./init.sh, --all] (run without a shell; set shell: true for a command line), got a %s", kindName(ce.val))
		return
	}
	if len(ce.val.Content) == 0 {
		p.errf(ce.val, cf, "empty command")
		return
	}
	var argv []string
	for i, c := range ce.val.Content {
		v, ok := p.str(resolve(c), index(cf, i))
		if !ok {
			return
		}
		if i == 0 && v == "" {
			p.errf(c, index(cf, i), "empty program name")
			return
		}
		if strings.IndexByte(v, 0) >= 0 {
			p.errf(c, index(cf, i), "arguments cannot contain NUL bytes")
			return
		}
		argv = append(argv, v)
	}
	h.Command = argv
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
						if name == penaltySlow {
							s.SlowPenalty = v
						} else {
							s.Penalties[loadgen.ErrKind(name)] = v
						}
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
		if se, ok := fm["slow_rate"]; ok {
			if v, ok := p.rate(se.val, sub(ff, "slow_rate")); ok {
				s.FailIf.SlowRate = v
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
