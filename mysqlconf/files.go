package mysqlconf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/mysqlvar"
)

// Setting is one option the server reads, where it reads it.
type Setting struct {
	// File and Line are where it is set; File is "" for the server's
	// command line.
	File  string `json:"file,omitempty"`
	Line  int    `json:"line,omitempty"`
	Group string `json:"group,omitempty"`
	// Key is the option's name as the file writes it, folded (dashes as
	// underscores, lower case); Value is "" for a bare key.
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
	pos   int    // its place in the reading order
}

// String says where the setting is: "/etc/mysql/conf.d/zz.cnf:3 sets
// innodb_buffer_pool_size = 1G", or "its command line sets
// --innodb-buffer-pool-size=64M".
func (s Setting) String() string {
	set := s.Key
	if s.Value != "" {
		set += " = " + s.Value
	}
	if s.File == "" {
		return "its command line sets " + set
	}
	return fmt.Sprintf("%s:%d sets %s", s.File, s.Line, set)
}

// Include is an "!include FILE" or "!includedir DIR" line the server
// followed.
type Include struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Dir  bool   `json:"dir,omitempty"`
	// Path is the file or directory it names (made absolute).
	Path string `json:"path"`
	// From is the include that brought File in (nil when File is one of
	// the files the server reads first).
	From *Include `json:"from,omitempty"`

	entries []dirEntry // for a directory: its *.cnf files, sorted, where each was read
	end     int        // the reading position after it
}

// Chain says how the server comes to read Path: "'!includedir' in
// /x/my.cnf:12", with the includes above it ("..., included from
// /x/my.cnf:20").
func (in *Include) Chain() string {
	kind := "!include"
	if in.Dir {
		kind = "!includedir"
	}
	s := fmt.Sprintf("'%s' in %s:%d", kind, in.File, in.Line)
	for f := in.From; f != nil; f = f.From {
		s += fmt.Sprintf(", included from %s:%d", f.File, f.Line)
	}
	return s
}

type dirEntry struct {
	name string
	pos  int // the reading position where the file starts
}

// Bounds of reading the option files: a looping or hostile "!include"
// cannot take memory or time without bound. The server's own limit on
// include depth is 10.
const (
	maxOptionFileBytes = 1 << 20
	maxOptionFiles     = 64
	maxIncludeDepth    = 10
)

// reader reads option files as the server does, in order, following
// includes where they stand.
type reader struct {
	format   changeset.Format
	cwd      string // against which relative include paths are read
	files    []string
	settings []Setting
	includes []*Include
	notes    []string
	skipped  int // files not read (over the bounds, unreadable, unparsable)
	pos      int
	starts   map[string]int // where each file starts in the reading order (its first read)
}

// newReader reads the settings of groups.
func newReader(groups []string, cwd string) *reader {
	f := changeset.ClientCnf // its reading rules; the server's groups
	f.Name = "option file"
	f.Section = groups[0]
	f.Sections = nil
	for _, g := range groups {
		f.Sections = append(f.Sections, strings.ToLower(g))
	}
	return &reader{format: f, cwd: cwd, starts: map[string]int{}}
}

func (r *reader) notef(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// read reads one option file and what it includes; from is the include
// that names it (nil for a file of the search order). A missing file of
// the search order is skipped, as the server skips it.
func (r *reader) read(path string, from *Include, depth int) {
	if len(r.files) >= maxOptionFiles {
		r.skipped++
		r.notef("%s not read: more than %d option files (an include loop?)", path, maxOptionFiles)
		return
	}
	data, err := input.ReadFile(path, maxOptionFileBytes)
	if err != nil {
		switch {
		case from == nil && errors.Is(err, os.ErrNotExist):
		case errors.Is(err, os.ErrNotExist):
			r.skipped++
			r.notef("%s (%s) does not exist", path, from.Chain())
		default:
			r.skipped++
			r.notef("%s not read: %v", path, err)
		}
		return
	}
	r.files = append(r.files, path)
	if _, ok := r.starts[path]; !ok {
		r.starts[path] = r.pos + 1
	}
	settings, err := r.format.Parse(data)
	if err != nil {
		// The server read it when it started (or it would not run): a
		// line this reader does not take. Its includes are still followed.
		r.skipped++
		r.notef("%s: its settings not read: %v", path, err)
		settings = nil
	}
	byLine := map[int]changeset.Setting{}
	for _, s := range settings {
		byLine[s.Line] = s
	}
	group := ""
	for i, raw := range strings.Split(string(data), "\n") {
		n := i + 1
		t := strings.TrimSpace(raw)
		if strings.HasPrefix(t, "[") {
			if end := strings.IndexByte(t, ']'); end > 0 {
				group = strings.ToLower(strings.TrimSpace(t[1:end]))
			}
		}
		if s, ok := byLine[n]; ok {
			r.pos++
			r.settings = append(r.settings, Setting{File: path, Line: n, Group: group, Key: s.Key, Value: s.Value, pos: r.pos})
			continue
		}
		kind, arg, ok := includeLine(t)
		if !ok {
			continue
		}
		in := &Include{File: path, Line: n, Dir: kind == "!includedir", Path: r.abs(arg), From: from}
		if depth+1 >= maxIncludeDepth {
			r.skipped++
			r.notef("%s:%d: %s %s not followed: deeper than %d includes, as the server would skip it", path, n, kind, arg, maxIncludeDepth)
			continue
		}
		r.includes = append(r.includes, in)
		if in.Dir {
			r.readDir(in, depth+1)
		} else {
			r.read(in.Path, in, depth+1)
		}
		in.end = r.pos + 1
	}
}

// includeLine splits an "!include PATH" or "!includedir PATH" line.
func includeLine(t string) (kind, arg string, ok bool) {
	for _, k := range []string{"!includedir", "!include"} {
		rest, found := strings.CutPrefix(t, k)
		if found && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			if arg = strings.TrimSpace(rest); arg != "" {
				return k, arg, true
			}
		}
	}
	return "", "", false
}

// readDir reads the *.cnf files of an "!includedir", sorted by name as
// the server reads them.
func (r *reader) readDir(in *Include, depth int) {
	ents, err := os.ReadDir(in.Path)
	if err != nil {
		r.skipped++
		r.notef("%s (%s) not read: %v", in.Path, in.Chain(), err)
		return
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".cnf") && !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		in.entries = append(in.entries, dirEntry{name: n, pos: r.pos + 1})
		r.read(filepath.Join(in.Path, n), in, depth)
	}
}

// abs reads a relative include path against the server's working
// directory, as the server does.
func (r *reader) abs(p string) string {
	if filepath.IsAbs(p) || r.cwd == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(r.cwd, p)
}

// dropInPos is where a file named name in the directory of in would be
// read: before the first of its files sorted after name, else right
// after the directory.
func (in *Include) dropInPos(name string) int {
	for _, e := range in.entries {
		if e.name > name {
			return e.pos
		}
	}
	return in.end
}

// commandLine turns the server's command-line options into settings,
// read after every file.
func commandLine(opts []string, pos int) []Setting {
	var out []Setting
	for _, o := range opts {
		k, v, _ := strings.Cut(strings.TrimPrefix(o, "--"), "=")
		pos++
		out = append(out, Setting{Key: mysqlvar.Norm(k), Value: v, pos: pos})
	}
	return out
}

// sameOption reports whether a setting's key sets the variable key: the
// same name, or it with loose-, skip-, enable- or disable- before it.
func sameOption(setting, key string) bool {
	s, k := mysqlvar.Norm(setting), mysqlvar.Norm(key)
	s = strings.TrimPrefix(s, "loose_")
	if s == k {
		return true
	}
	for _, p := range []string{"skip_", "enable_", "disable_"} {
		if rest, ok := strings.CutPrefix(s, p); ok && rest == k {
			return true
		}
	}
	return false
}
