package changeset

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/stacktune/stacktune/mysqlvar"
)

// Format is a file of key = value settings: a my.cnf drop-in, a sysctl.d
// file, a systemd drop-in. Parse reads one; Edit writes settings into
// one, keeping every other byte.
type Format struct {
	// Name says what the file is, in messages.
	Name string
	// Section is the section settings go in ("mysqld", "Service"); empty
	// for a file without sections.
	Section string
	// Sections are the section names whose settings Parse reads (my.cnf's
	// mysqld, mariadb, mariadbd, server); Section when empty.
	Sections []string
	// Sep goes between key and value when written.
	Sep string
	// NeedValue refuses a bare key (my.cnf allows "skip-name-resolve").
	NeedValue bool
	// NoIncludes refuses "!include" lines (a drop-in must not pull in
	// other files).
	NoIncludes bool
	// Fold is how keys compare (nil: as written).
	Fold func(string) string
	// clean tidies a key and value as read.
	clean func(k, v string) (string, string)
}

// The formats.
var (
	MyCnf = Format{Name: "my.cnf drop-in", Section: "mysqld", Sections: []string{"mysqld", "mariadb", "mariadbd", "server"},
		Sep: " = ", NoIncludes: true, Fold: mysqlvar.Norm, clean: optionClean}
	// ClientCnf is the client groups of a MySQL option file (my.cnf,
	// ~/.my.cnf), as the mysql client reads them: [client], and MariaDB's
	// [client-server] and [client-mariadb]; includes are allowed (the
	// reader follows them).
	ClientCnf = Format{Name: "MySQL option file", Section: "client", Sections: []string{"client", "client-server", "client-mariadb"},
		Sep: " = ", Fold: mysqlvar.Norm, clean: optionClean}
	SysctlD = Format{Name: "sysctl.d file", Sep: " = ", NeedValue: true,
		clean: func(k, v string) (string, string) {
			return strings.TrimPrefix(strings.TrimSpace(k), "-"), strings.Join(strings.Fields(v), " ")
		}}
	SystemdDropIn = Format{Name: "systemd drop-in", Section: "Service", Sep: "=", NeedValue: true,
		clean: func(k, v string) (string, string) { return strings.TrimSpace(k), strings.TrimSpace(v) }}
)

// optionClean reads a MySQL option line's key and value: the key
// normalised (dashes as underscores), the value without its quotes.
func optionClean(k, v string) (string, string) {
	return mysqlvar.Norm(k), strings.Trim(strings.TrimSpace(v), `"'`)
}

// Setting is one key = value line of a file.
type Setting struct {
	Key   string // as clean reads it: my.cnf keys folded
	Value string
	Line  int
}

// Line is a setting to write, with the comment lines that go above it
// (each starting with '#').
type Line struct {
	Key, Value string
	Comments   []string
}

// maxLine bounds one line of a settings file.
const maxLine = 1 << 20

// line is one line of a file as Edit and Parse see it.
type line struct {
	text    string // without its line end
	kind    byte   // 0 blank, '#' comment, '[' section, '=' setting, '!' include
	section string // the section it is in (lower case)
	key     string // folded, for settings
	value   string
}

// lines splits data into lines and classifies them; it returns the line
// end the file uses ("\r\n" when its first line has one).
func (f Format) lines(data []byte) ([]line, string, error) {
	eol := "\n"
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		eol = "\r\n"
	}
	text := strings.TrimSuffix(string(data), "\n")
	if text == "" {
		return nil, eol, nil
	}
	var out []line
	section := ""
	for n, raw := range strings.Split(text, "\n") {
		raw = strings.TrimSuffix(raw, "\r")
		if len(raw) > maxLine {
			return nil, eol, fmt.Errorf("line %d: longer than %d bytes", n+1, maxLine)
		}
		l := line{text: raw}
		t := strings.TrimSpace(raw)
		switch {
		case t == "":
		case t[0] == '#' || t[0] == ';':
			l.kind = '#'
		case t[0] == '[':
			end := strings.IndexByte(t, ']')
			if end < 0 {
				return nil, eol, fmt.Errorf("line %d: unclosed section header %q", n+1, t)
			}
			if f.Section == "" {
				return nil, eol, fmt.Errorf("line %d: a %s has no sections: %q", n+1, f.Name, t)
			}
			l.kind = '['
			section = strings.ToLower(strings.TrimSpace(t[1:end]))
		case t[0] == '!':
			if f.NoIncludes {
				return nil, eol, fmt.Errorf("line %d: %q: a drop-in must not include other files", n+1, t)
			}
			l.kind = '!'
		default:
			k, v, hasValue := strings.Cut(t, "=")
			if f.clean != nil {
				k, v = f.clean(k, v)
			}
			if k == "" || strings.ContainsAny(k, " \t") || (f.NeedValue && !hasValue) || strings.Contains(k, "/") && f.Section == "" {
				return nil, eol, fmt.Errorf("line %d: %q is not key = value", n+1, t)
			}
			l.kind, l.key, l.value = '=', k, v
		}
		l.section = section
		out = append(out, l)
	}
	return out, eol, nil
}

// inTarget reports whether a line's section is one Parse reads.
func (f Format) inTarget(section string) bool {
	if f.Section == "" {
		return true
	}
	names := f.Sections
	if len(names) == 0 {
		names = []string{f.Section}
	}
	return slices.Contains(names, section) || strings.EqualFold(section, f.Section)
}

func (f Format) fold(k string) string {
	if f.Fold != nil {
		return f.Fold(k)
	}
	return k
}

// writable reports whether a setting's line reads back as that setting.
func (f Format) writable(s Line) bool {
	if s.Key == "" || strings.ContainsAny(s.Key+s.Value, "\r\n\x00") || strings.ContainsAny(s.Key, " \t=") {
		return false
	}
	text := s.Key + f.Sep + s.Value
	if f.Section != "" {
		text = "[" + f.Section + "]\n" + text
	}
	ls, _, err := f.lines([]byte(text))
	if err != nil || len(ls) == 0 {
		return false
	}
	l := ls[len(ls)-1]
	k, v := s.Key, s.Value
	if f.clean != nil {
		k, v = f.clean(k, v)
	}
	return l.kind == '=' && l.key == k && l.value == v
}

// Parse reads the settings of the sections Parse reads; other sections,
// comments and blank lines are skipped. A line that is none of these is an
// error naming it.
func (f Format) Parse(data []byte) ([]Setting, error) {
	ls, _, err := f.lines(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	var out []Setting
	for i, l := range ls {
		if l.kind == '=' && f.inTarget(l.section) {
			out = append(out, Setting{Key: l.key, Value: l.value, Line: i + 1})
		}
	}
	return out, nil
}

// Values is what settings ask for: the last of a repeated key wins.
func Values(ss []Setting) map[string]string {
	out := map[string]string{}
	for _, s := range ss {
		out[s.Key] = s.Value
	}
	return out
}

// Edit writes settings into a file's content (old; nil for a new file,
// which gets header first): a key already set in the file's section has
// its line, and the comment block right above it, replaced in place, and
// later lines setting it again are removed (with their comments); other
// keys are appended at the end of the last such section (a new section
// when there is none). Everything else stays byte for byte, with the
// file's own line ends.
func (f Format) Edit(old []byte, header []string, settings []Line) ([]byte, error) {
	ls, eol, err := f.lines(old)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	for _, s := range settings {
		if !f.writable(s) {
			return nil, fmt.Errorf("%s: %q = %q cannot be written as one setting line", f.Name, s.Key, s.Value)
		}
		for _, c := range s.Comments {
			if !strings.HasPrefix(c, "#") || strings.ContainsAny(c, "\r\n") {
				return nil, fmt.Errorf("%s: comment %q", f.Name, c)
			}
		}
	}
	render := func(s Line) []string {
		return append(slices.Clone(s.Comments), s.Key+f.Sep+s.Value)
	}
	// Where each key is set now, and where its comment block starts.
	type place struct{ start, at int }
	found := map[string][]place{}
	lastTarget := -1 // index of the last line of the last target section
	for i, l := range ls {
		if f.inTarget(l.section) && l.kind != '[' || l.kind == '[' && f.inTarget(l.section) {
			lastTarget = i
		}
		if l.kind != '=' || !f.inTarget(l.section) {
			continue
		}
		start := i
		for start > 0 && ls[start-1].kind == '#' {
			start--
		}
		k := f.fold(l.key)
		found[k] = append(found[k], place{start, i})
	}
	replace := map[int][]string{} // first line of a replaced block -> new lines
	drop := map[int]bool{}
	var appended []string
	done := map[string]bool{}
	for _, s := range settings {
		k := f.fold(s.Key)
		if done[k] {
			return nil, fmt.Errorf("%s: %s is written twice", f.Name, s.Key)
		}
		done[k] = true
		ps := found[k]
		if len(ps) == 0 {
			appended = append(appended, render(s)...)
			continue
		}
		for j, p := range ps {
			for i := p.start; i <= p.at; i++ {
				drop[i] = true
			}
			if j == 0 {
				replace[p.start] = render(s)
			}
		}
	}
	var out []string
	if len(ls) == 0 {
		out = append(out, header...)
	}
	emitAppended := func() {
		out = append(out, appended...)
		appended = nil
	}
	if lastTarget < 0 && len(appended) > 0 {
		// No target section yet: one at the end.
		for _, l := range ls {
			out = append(out, l.text)
		}
		if f.Section != "" {
			if len(out) > 0 && strings.TrimSpace(out[len(out)-1]) != "" && len(ls) > 0 {
				out = append(out, "")
			}
			out = append(out, "["+f.Section+"]")
		}
		emitAppended()
		return []byte(strings.Join(out, eol) + eol), nil
	}
	// Append after the last non-blank line of the last target section.
	insertAfter := lastTarget
	for insertAfter > 0 && ls[insertAfter].kind == 0 {
		insertAfter--
	}
	for i, l := range ls {
		if nl, ok := replace[i]; ok {
			out = append(out, nl...)
		}
		if !drop[i] {
			out = append(out, l.text)
		}
		if i == insertAfter {
			emitAppended()
		}
	}
	emitAppended()
	if len(out) == 0 {
		return nil, nil
	}
	return []byte(strings.Join(out, eol) + eol), nil
}
